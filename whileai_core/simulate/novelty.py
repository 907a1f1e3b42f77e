"""Keeping a batch spread out: the near-duplicate filter over a run's openers.

The original novelty search compared every opener with every other (quadratic: 1,000
situations took minutes). Here each opener's word uni- and bigram features
(`text.similarity.WordNgramEmbedder`) go into the one MinHash index (`text.minhash`) at the
novelty level (`text.levels.NOVELTY_BANDS`, 3 bands of 6): two openers are near-duplicates
when a whole band collides, which catches Jaccard >= 0.9 about nine times in ten and
Jaccard 0.5 about one time in twenty. Each check is a few set look-ups, so a run's cost
stays linear in its rows, and memory holds three integers per accepted opener.
"""

from __future__ import annotations

from ..text.levels import NOVELTY_BANDS
from ..text.minhash import MinHashIndex
from ..text.similarity import WordNgramEmbedder


class NearDuplicateFilter:
    """Remembers accepted texts by MinHash band keys; `admit` rejects a near-copy."""

    def __init__(self, embedder: WordNgramEmbedder | None = None, *, seed: int = 0) -> None:
        self.embedder = embedder or WordNgramEmbedder()
        bands, rows = NOVELTY_BANDS
        self._index: MinHashIndex[str] = MinHashIndex(bands, rows, seed=seed)
        self.accepted = 0
        self.rejected = 0

    def _keys(self, text: str) -> list[int]:
        return self._index.keys(self.embedder.features(text))

    def is_duplicate(self, text: str) -> bool:
        return self._index.seen(self._keys(text))

    def admit(self, text: str, *, force: bool = False) -> bool:
        """Accept and remember `text` unless it is a near-duplicate (or `force` is set)."""
        keys = self._keys(text)
        if not force and self._index.seen(keys):
            self.rejected += 1
            return False
        self._index.add(keys)
        self.accepted += 1
        return True
