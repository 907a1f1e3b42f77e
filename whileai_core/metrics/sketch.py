"""Bounded-memory counting: the most common items of a stream too varied to count whole.

`TopCounts` keeps at most `2 * capacity` counters; when it fills it drops the half with
the lowest counts (lossy counting). An item frequent enough to rank in the top
`capacity` survives every prune, so `most_common(k)` for k well under `capacity` is the
true top k on any stream where the top items are not a vanishing share of it; the
counts of survivors are lower bounds, off by at most what a prune discarded.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable


class TopCounts:
    def __init__(self, capacity: int = 20_000) -> None:
        self.capacity = max(1, capacity)
        self.counts: dict[Hashable, int] = {}
        self.pruned = 0  # how many times the table was cut back

    def update(self, items: Iterable[Hashable]) -> None:
        counts = self.counts
        for item in items:
            counts[item] = counts.get(item, 0) + 1
        if len(counts) > 2 * self.capacity:
            self._prune()

    def _prune(self) -> None:
        keep = sorted(self.counts.items(), key=lambda kv: kv[1], reverse=True)[: self.capacity]
        self.counts = dict(keep)
        self.pruned += 1

    def most_common(self, k: int) -> list[tuple[Hashable, int]]:
        return sorted(self.counts.items(), key=lambda kv: (-kv[1], str(kv[0])))[:k]
