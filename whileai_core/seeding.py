"""Seeds from names: the one way a run turns "this rollout of this task" into a number.

Everything a run draws at random (the grid, the world's faults and records, the seeded
agent's choices, the writer's openers) seeds a `random.Random` from `seed_int(...)` of
what it is drawing for, so a run replays exactly on any machine and in any process.
Below every package that draws: the agents and the simulation share it.
"""

from __future__ import annotations

import hashlib
from typing import Any

import orjson


def seed_int(*parts: Any) -> int:
    """A 64-bit integer seed from any JSON-able parts (never Python's salted `hash`)."""
    raw = orjson.dumps(list(parts), option=orjson.OPT_SORT_KEYS)
    return int.from_bytes(hashlib.blake2b(raw, digest_size=8).digest(), "big")
