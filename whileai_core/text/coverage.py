"""One n-gram coverage measure: does a stored text account for most of a new text's words?

A text is a **verbatim** copy of a stored one when their words are the same
(`tokens.exact_key`), and a **near** copy when one stored text covers at least `overlap` of
its words with word `n`-grams the two share (the Llama 2 rule: 8-grams, 0.8). One shared
n-gram is not enough: situations written from the same templates share whole sentences
without sharing the question. A text shorter than `n` words matches verbatim only.

The index holds the stored side and answers a query in time linear in its shared n-grams:
stored texts are found through the n-grams they share with the query, and each is measured
from the positions it shares (the union of their n-word spans). An n-gram more
than `COMMON` stored texts share is template, not evidence: it finds no candidates (a text
made only of such n-grams is found verbatim or not at all), though it still counts toward
the coverage of a candidate found another way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from .levels import COVERAGE_NGRAM
from .tokens import exact_key, ngrams, words

COMMON = 1000


@dataclass(frozen=True)
class CoverageMatch:
    kind: Literal["verbatim", "near"]
    coverage: float  # the share of the query's words the stored text covers
    index: int  # the stored text's position


@dataclass
class CoverageIndex:
    """Stored texts by their word n-grams, each with a label saying where it came from."""

    n: int = COVERAGE_NGRAM
    labels: list[str] = field(default_factory=list)
    _verbatim: dict[str, int] = field(default_factory=dict)
    _grams: list[set[int]] = field(default_factory=list)
    _postings: dict[int, list[int]] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.labels)

    def add(self, text: str, label: str) -> None:
        """Store a text (one with no words is left out: it cannot be copied)."""
        toks = words(text)
        if not toks:
            return
        idx = len(self.labels)
        self.labels.append(label)
        self._verbatim.setdefault(exact_key(text), idx)
        grams = {hash(g) for g in ngrams(toks, self.n)}
        self._grams.append(grams)
        for g in grams:
            bucket = self._postings.setdefault(g, [])
            if len(bucket) <= COMMON:
                bucket.append(idx)

    def match(self, text: str, overlap: float) -> CoverageMatch | None:
        """The best stored text `text` copies, verbatim or at `overlap` or more, else None."""
        toks = words(text)
        if not toks:
            return None
        hit = self._verbatim.get(exact_key(text))
        if hit is not None:
            return CoverageMatch("verbatim", 1.0, hit)
        if len(toks) < self.n:
            return None
        grams = [hash(g) for g in ngrams(toks, self.n)]
        hits: dict[int, list[int]] = {}  # stored text -> the query positions it shares
        common: list[int] = []  # positions whose n-gram is template: checked per candidate
        for pos, g in enumerate(grams):
            bucket = self._postings.get(g)
            if bucket is None:
                continue
            if len(bucket) > COMMON:
                common.append(pos)
                continue
            for idx in bucket:
                hits.setdefault(idx, []).append(pos)
        best: tuple[float, int] | None = None
        for idx in sorted(hits):
            positions = hits[idx]
            if (len(positions) + len(common)) * self.n < overlap * len(toks):
                continue  # cannot reach the overlap even if no two n-grams overlapped
            if common:
                mine = self._grams[idx]
                positions = sorted(positions + [p for p in common if grams[p] in mine])
            coverage = _covered(positions, self.n) / len(toks)
            if coverage >= overlap and (best is None or coverage > best[0]):
                best = (coverage, idx)
        return CoverageMatch("near", round(best[0], 4), best[1]) if best else None


def _covered(positions: list[int], n: int) -> int:
    """Words covered by the `n`-grams starting at `positions` (ascending)."""
    covered, end = 0, 0
    for p in positions:
        start = max(p, end)
        if p + n > start:
            covered += p + n - start
            end = p + n
    return covered
