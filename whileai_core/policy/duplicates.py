"""Repeats: the same trajectory twice inside an ask, and two asks that are one ask.

`DuplicateGroups` counts rollouts of an ask that repeat an earlier one step for step (the
digest selection drops them by, `select.records.trajectory_key`): a repeat adds nothing
to a group-relative advantage and overweights that trajectory. `NearDuplicatePrompts`
finds different asks whose prompts are near copies (Jaccard of word 3-gram shingles at
`threshold`, found with MinHash and banded LSH, then confirmed on the shingles): they
count as two tasks where there is one, and can straddle a train/holdout split.
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from ..metrics.tally import task_key
from ..select.records import trajectory_key

_WORD = re.compile(r"\w+")
SHINGLE = 3
BANDS, ROWS = 8, 4  # 32 hashes: pairs at Jaccard 0.8 meet in some band ~99.9% of the time
_MASKS = tuple(
    int.from_bytes(hashlib.blake2b(bytes([i]), digest_size=8).digest(), "big")
    for i in range(BANDS * ROWS)
)
_MIX = 0x9E3779B97F4A7C15
_U64 = (1 << 64) - 1


@dataclass
class DuplicateGroups:
    rows: int = 0
    duplicates: int = 0
    keep: int = 10
    _seen: dict[str, dict[bytes, int]] = field(default_factory=dict)

    def add(self, row: dict[str, Any]) -> None:
        self.rows += 1
        digests = self._seen.setdefault(task_key(row), {})
        key = trajectory_key(row)
        digests[key] = digests.get(key, 0) + 1
        if digests[key] > 1:
            self.duplicates += 1

    def as_dict(self) -> dict[str, Any]:
        groups = [
            {"task": task, "rollouts": sum(d.values()), "distinct": len(d)}
            for task, d in self._seen.items()
            if sum(d.values()) > len(d)
        ]
        return {
            "rows": self.rows,
            "asks": len(self._seen),
            "duplicate_rows": self.duplicates,
            "asks_with_duplicates": len(groups),
            "groups": groups[: self.keep],
        }

    def lines(self) -> list[str]:
        d = self.as_dict()
        out = [
            f"duplicates: {d['duplicate_rows']} of {d['rows']} rows repeat an earlier rollout "
            f"of their ask ({d['asks_with_duplicates']} of {d['asks']} asks)"
        ]
        out += [
            f"  {g['task']}: {g['rollouts']} rollouts, {g['distinct']} distinct"
            for g in d["groups"]
        ]
        return out


def shingles(text: str) -> set[int]:
    words = _WORD.findall(text.lower())
    if len(words) < SHINGLE:
        return {hash_text(" ".join(words))} if words else set()
    return {hash_text(" ".join(words[i : i + SHINGLE])) for i in range(len(words) - SHINGLE + 1)}


def hash_text(text: str) -> int:
    """A stable 64-bit hash (Python's `hash` is salted per process)."""
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")


def signature(items: set[int]) -> tuple[int, ...]:
    return tuple(min(((x ^ m) * _MIX) & _U64 for x in items) for m in _MASKS)


@dataclass
class NearDuplicatePrompts:
    """Asks whose prompts are near copies of another ask's (one prompt per ask)."""

    threshold: float = 0.8
    keep: int = 10
    asks: int = 0
    _shingles: dict[str, set[int]] = field(default_factory=dict)
    _buckets: dict[tuple[int, tuple[int, ...]], list[str]] = field(
        default_factory=lambda: defaultdict(list)
    )
    _prompts: dict[str, str] = field(default_factory=dict)

    def add(self, task: str, prompt: str | None) -> None:
        if task in self._shingles or not isinstance(prompt, str) or not prompt.strip():
            return
        self.asks += 1
        items = shingles(prompt)
        self._shingles[task] = items
        self._prompts[task] = prompt[:80]
        sig = signature(items)
        for band in range(BANDS):
            self._buckets[(band, sig[band * ROWS : (band + 1) * ROWS])].append(task)

    def pairs(self) -> list[tuple[str, str, float]]:
        found: dict[tuple[str, str], float] = {}
        for tasks in self._buckets.values():
            if len(tasks) < 2 or len(tasks) > 500:
                continue  # a bucket that large is a template every ask shares: not a pair
            for i, a in enumerate(tasks):
                for b in tasks[i + 1 :]:
                    key = (a, b) if a < b else (b, a)
                    if key in found:
                        continue
                    sa, sb = self._shingles[a], self._shingles[b]
                    jaccard = len(sa & sb) / len(sa | sb) if sa or sb else 1.0
                    if jaccard >= self.threshold:
                        found[key] = jaccard
        return sorted(((a, b, j) for (a, b), j in found.items()), key=lambda p: (-p[2], p[0]))

    def as_dict(self) -> dict[str, Any]:
        pairs = self.pairs()
        involved = {t for a, b, _ in pairs for t in (a, b)}
        return {
            "asks": self.asks,
            "threshold": self.threshold,
            "near_duplicate_pairs": len(pairs),
            "asks_involved": len(involved),
            "examples": [
                {"a": a, "b": b, "jaccard": round(j, 3), "prompt_a": self._prompts[a]}
                for a, b, j in pairs[: self.keep]
            ],
        }

    def lines(self) -> list[str]:
        d = self.as_dict()
        out = [
            f"near-duplicate prompts: {d['near_duplicate_pairs']} pairs over "
            f"{d['asks_involved']} of {d['asks']} asks (word 3-gram Jaccard >= {self.threshold:g})"
        ]
        out += [
            f"  {e['a']} ~ {e['b']} ({e['jaccard']:.2f}): {e['prompt_a']!r}" for e in d["examples"]
        ]
        return out
