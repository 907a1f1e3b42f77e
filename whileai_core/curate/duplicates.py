"""Repeats: the same trajectory twice inside an ask, and two asks that are one ask.

`DuplicateGroups` counts rollouts of an ask that repeat an earlier one step for step (the
digest selection drops them by, `select.records.trajectory_key`): a repeat adds nothing
to a group-relative advantage and overweights that trajectory. `NearDuplicatePrompts`
finds different asks whose prompts are near copies (Jaccard of word 3-gram shingles at
`threshold`, `text.levels.NEAR_DUPLICATE_JACCARD`, found with the one MinHash index at
`NEAR_DUPLICATE_BANDS`, then confirmed on the shingles): they count as two tasks where
there is one, and can straddle a train/holdout split.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..metrics.tally import task_key
from ..select.records import trajectory_key
from ..text.levels import NEAR_DUPLICATE_BANDS, NEAR_DUPLICATE_JACCARD, SHINGLE_WORDS
from ..text.minhash import MinHashIndex
from ..text.tokens import shingles

TEMPLATE_BAND = 500  # a band this many asks share is a template every ask has: not a pair


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


@dataclass
class NearDuplicatePrompts:
    """Asks whose prompts are near copies of another ask's (one prompt per ask)."""

    threshold: float = NEAR_DUPLICATE_JACCARD
    keep: int = 10
    asks: int = 0
    _shingles: dict[str, set[int]] = field(default_factory=dict)
    _index: MinHashIndex[str] = field(
        default_factory=lambda: MinHashIndex(*NEAR_DUPLICATE_BANDS, members=True)
    )
    _prompts: dict[str, str] = field(default_factory=dict)

    def add(self, task: str, prompt: str | None) -> None:
        if task in self._shingles or not isinstance(prompt, str) or not prompt.strip():
            return
        self.asks += 1
        items = shingles(prompt, SHINGLE_WORDS)
        self._shingles[task] = items
        self._prompts[task] = prompt[:80]
        self._index.add(self._index.keys(items), task)

    def pairs(self) -> list[tuple[str, str, float]]:
        found: dict[tuple[str, str], float] = {}
        for a, b in self._index.candidate_pairs(TEMPLATE_BAND):
            sa, sb = self._shingles[a], self._shingles[b]
            jaccard = len(sa & sb) / len(sa | sb) if sa or sb else 1.0
            if jaccard >= self.threshold:
                found[(a, b) if a < b else (b, a)] = jaccard
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
