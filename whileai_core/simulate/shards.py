"""Splitting one run into N disjoint shards, chosen from task ids, each with its budget share.

A shard `I/N` (I from 1 to N) owns every situation whose `situation_id` hashes to it
(SHA-256, so every machine agrees; all phrasings of a situation stay together). It plays
the run's asks in the run's own order, keeping those it owns: a pure function of the task
source, so it never depends on which rollout finished first.

The budget share: an ask of a fixed-size group (explore, sft, `--repeat-policy fixed`)
costs exactly k rows, so the unsharded run of budget B plays the first ceil(B / k) asks
(the last one cut to what is left). Each shard's share is what those asks cost in it, so
the shards' rows together are the unsharded run's rows. rl and adaptive allocation spend a
varying number of rows per ask; there the same rule is applied with the probe (the least
an ask costs) in place of k, which is deterministic but not what the unsharded run spent:
a sharded run there equals an unsharded run with `--blocks N`, which runs the N blocks as
the N shards would, each with its own allocation state.

The near-duplicate filter remembers every opener of the run in ask order. With an offline
writer (the template) a shard replays the other shards' openers too (each a few
microseconds), so its filter holds the run-wide state; a model writer would pay for every
other shard's openers, so there each shard's filter holds its own openers only (the
`--blocks N` equality still holds, the plain one does not).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError
from .tasks import Situation, TaskSource


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


def ask_cost(mode_k: int, probe: int, fixed_groups: bool) -> int:
    """Rows one ask is counted at when splitting the budget (k for fixed-size groups)."""
    return mode_k if fixed_groups else max(1, min(probe, mode_k))


def budget_shares(
    tasks: TaskSource,
    *,
    budget: int,
    count: int,
    phrasings: int,
    cost: int,
    max_asks: int | None = None,
) -> list[int]:
    """Rows each of `count` shards gets: the cost of the unsharded run's first asks, summed
    by the shard that owns each (the last ask cut to what is left of the budget)."""
    shares = [0] * count
    left = budget
    index = 0
    while left > 0 and (max_asks is None or index < max_asks):
        situation = tasks.situation(index, phrasings)
        if situation is None:
            break
        take = min(cost, left)
        shares[shard_of(task_key(situation), count) - 1] += take
        left -= take
        index += 1
    return shares


class ShardTasks:
    """The asks of `inner` a shard owns, in the run's order; the others are passed over
    (`passed_over()` hands them out once, for the novelty replay)."""

    def __init__(self, inner: TaskSource, shard: Shard, *, max_asks: int | None = None) -> None:
        self.inner = inner
        self.shard = shard
        self.cells = inner.cells
        self.done_reason = inner.done_reason
        self.max_asks = max_asks
        self._owned: list[int] = []  # global ask index of each of this shard's asks
        self._scanned = 0  # global asks looked at so far
        self._passed: list[Situation] = []
        self._cells: set[str] = set()  # cells of the asks this shard owns
        self._exhausted = False

    def situation(self, index: int, phrasings: int) -> Situation | None:
        while len(self._owned) <= index and not self._exhausted:
            if self.max_asks is not None and self._scanned >= self.max_asks:
                self._exhausted = True
                break
            drawn = self.inner.situation(self._scanned, phrasings)
            if drawn is None:
                self._exhausted = True
                break
            if shard_of(task_key(drawn), self.shard.count) == self.shard.index:
                self._owned.append(self._scanned)
                self._cells.add(str(drawn.get("cell_id")))
                found = drawn
            else:
                self._passed.append(drawn)
            self._scanned += 1
            if len(self._owned) > index:
                return found
        if index < len(self._owned):
            return self.inner.situation(self._owned[index], phrasings)
        self.done_reason = self.inner.done_reason
        return None

    def passed_over(self) -> list[Situation]:
        """Other shards' asks drawn since the last call, in the run's order."""
        passed, self._passed = self._passed, []
        return passed

    def cells_visited(self, asks: int, phrasings: int) -> int:
        return len(self._cells)

    def describe(self) -> dict[str, Any]:
        return {**self.inner.describe(), "shard": self.shard.label}


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


def shard_count_error(shares: list[int], count: int, budget: int) -> str | None:
    """Why these shares cannot run (a shard without a row), or None."""
    empty = [str(i + 1) for i, share in enumerate(shares) if share == 0]
    if not empty:
        return None
    most = max(1, sum(1 for s in shares if s))
    return (
        f"--budget {budget} leaves shard {', '.join(empty)} of {count} without a row: "
        f"use a larger budget or at most {most} shards"
    )
