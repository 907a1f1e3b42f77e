"""Which side of a train/holdout split a task is on.

One fixed hash of the task id (sha256, the function holdout datasets were first pushed
with), so a task lands on the same side in every command that splits (`push --holdout`,
`cut`, `export --env`), run after run and machine after machine.
"""

from __future__ import annotations

import hashlib


def task_hash(task: str) -> int:
    """The task id's fixed 64-bit hash: the split below, and any order a split fills in
    (`traces.split`), must rank tasks by the same number to agree run after run."""
    return int.from_bytes(hashlib.sha256(task.encode()).digest()[:8], "big")


def holdout_side(task: str, share: float) -> bool:
    """True when `task` belongs to the held-out share."""
    if share <= 0:
        return False
    return task_hash(task) / 2**64 < share
