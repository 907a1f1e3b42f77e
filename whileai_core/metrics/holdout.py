"""Which side of a train/holdout split a task is on.

One fixed hash of the task id (sha256, the function holdout datasets were first pushed
with), so a task lands on the same side in every command that splits (`push --holdout`,
`cut`, `export --env`), run after run and machine after machine.
"""

from __future__ import annotations

import hashlib


def holdout_side(task: str, share: float) -> bool:
    """True when `task` belongs to the held-out share."""
    if share <= 0:
        return False
    digest = hashlib.sha256(task.encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < share
