"""Splitting one simulate run into N disjoint shards, each with its budget share.

A shard `I/N` (I from 1 to N) owns every situation whose `situation_id` hashes to it
(`scale/shards.py`: SHA-256, so every machine agrees; all phrasings of a situation stay
together; grade and evaluate split rows the same way). It plays
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

from typing import Any

from ..scale.shards import Shard, parse_shard, shard_of, shard_rows, task_key
from .tasks import Situation, TaskSource

__all__ = [
    "Shard",
    "ShardTasks",
    "ask_cost",
    "budget_shares",
    "parse_shard",
    "shard_count_error",
    "shard_of",
    "shard_rows",
    "task_key",
]


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
