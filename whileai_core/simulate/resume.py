"""Reading back a partly written output, so `--resume` finishes a killed run.

A run writes whole groups as they settle, so a file cut by `kill -9` holds finished asks
and at most half a line. Resuming cuts that half line, then hands the engine what it
replays for every ask already in the file: the report tallies, the rl allocation's
evidence (behaviour signatures) and the openers the novelty filter must remember. The
rest of each row stays on disk: a resumed 100k-row file must not sit in memory.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..jsonl import read_rows, repair_tail

_REPLAYED = (
    "prompt", "situation_id", "rollout_index", "faults_fired", "seeded", "behavior_signature",
    "group_cut", "shard",
)  # fmt: skip


def load_done(path: str) -> dict[str, list[dict[str, Any]]]:
    """Rows already in `path`, by scenario_id (a half-written last line is cut first)."""
    target = Path(path)
    if not target.exists():
        return {}
    repair_tail(target)
    done: dict[str, list[dict[str, Any]]] = {}
    for row in read_rows([str(target)]):
        sid = row.get("scenario_id")
        if isinstance(sid, str):
            group = done.setdefault(sid, [])
            # Keep what the engine replays (report tallies, the allocation, the novelty
            # filter), not whole rows: a resumed 100k-row file must not sit in memory.
            keep = {k: row[k] for k in _REPLAYED if k in row}
            if group:
                keep.pop("prompt", None)
            group.append(keep)
    return done
