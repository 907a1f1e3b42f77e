"""Shards: one run split into N disjoint parts by task id, the unit an executor hands out.

A shard `I/N` (I from 1 to N) owns every task whose id hashes to it (SHA-256 of the
id, so every machine and every process agrees; a situation's phrasings share its id and
stay together). simulate plays a shard's asks on its budget share (`simulate/shards.py`);
grade and evaluate judge the rows a shard owns (`shard_rows`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError


@dataclass(frozen=True)
class Shard:
    """Shard `index` (1-based) of `count`."""

    index: int
    count: int

    @property
    def label(self) -> str:
        return f"{self.index}/{self.count}"


def parse_shard(text: str) -> Shard:
    """`I/N` with 1 <= I <= N; anything else is a one-line ConfigError."""
    head, sep, tail = text.strip().partition("/")
    try:
        index, count = int(head), int(tail)
    except ValueError:
        index = count = 0
    if not sep or count < 1 or not 1 <= index <= count:
        raise ConfigError(f"--shard must be I/N with 1 <= I <= N (e.g. 2/4), not {text!r}")
    return Shard(index, count)


def shard_of(task_id: str, count: int) -> int:
    """The shard (1-based) of N that owns this task id: SHA-256, the same on every machine."""
    digest = hashlib.sha256(task_id.encode()).digest()
    return int.from_bytes(digest[:8], "big") % count + 1


def task_key(item: dict[str, Any]) -> str:
    """The id a situation or row is sharded by: its situation (all phrasings together)."""
    key = item.get("situation_id") or item.get("scenario_id")
    return str(key)


def shard_rows(rows: Iterable[dict[str, Any]], shard: Shard) -> Iterator[dict[str, Any]]:
    """The rows whose task this shard owns, stamped with it (grade and evaluate --shard)."""
    for row in rows:
        if shard_of(task_key(row), shard.count) == shard.index:
            row["shard"] = shard.label
            lineage = row.get("lineage")
            row["lineage"] = {
                **(lineage if isinstance(lineage, dict) else {}),
                "shard": shard.label,
            }
            yield row
