"""Keeping a batch spread out: an embedder seam and a near-linear near-duplicate filter.

The original novelty search compared every opener with every other (quadratic: 1,000
situations took minutes). Here each opener's word n-gram features get a MinHash
signature cut into bands; two openers are near-duplicates when a whole band collides,
which for 3 bands of 6 hashes catches Jaccard >= 0.9 about nine times in ten and
Jaccard 0.5 about one time in twenty. Each check is a few set look-ups, so a run's cost
stays linear in its rows, and memory holds three integers per accepted opener.
"""

from __future__ import annotations

import math
import re
import zlib
from collections.abc import Iterable
from typing import Protocol

_MASK = (1 << 61) - 1


class Embedder(Protocol):
    """Turns text into a sparse vector ({feature: weight}); `name` goes in selection_reason."""

    name: str

    def embed(self, text: str) -> dict[int, float]: ...


def _h(value: str) -> int:
    """A stable 32-bit hash (CRC-32 runs in C; Python's own `hash` is salted per process)."""
    return zlib.crc32(value.encode())


class HashingEmbedder:
    """Word uni- and bigrams hashed into `dim` buckets, L2-normalised. No model, no state."""

    name = "hash-word-ngram-v1"

    def __init__(self, dim: int = 1 << 18, ngrams: tuple[int, ...] = (1, 2)) -> None:
        self.dim = dim
        self.ngrams = ngrams

    def features(self, text: str) -> list[str]:
        words = re.findall(r"[a-z0-9]+", text.lower())
        grams: list[str] = []
        for n in self.ngrams:
            grams.extend(" ".join(words[i : i + n]) for i in range(len(words) - n + 1))
        return grams

    def embed(self, text: str) -> dict[int, float]:
        vec: dict[int, float] = {}
        for gram in self.features(text):
            key = _h(gram) % self.dim
            vec[key] = vec.get(key, 0.0) + 1.0
        norm = math.sqrt(sum(v * v for v in vec.values())) or 1.0
        return {k: v / norm for k, v in vec.items()}


def cosine(a: dict[int, float], b: dict[int, float]) -> float:
    if len(a) > len(b):
        a, b = b, a
    return sum(v * b.get(k, 0.0) for k, v in a.items())


class NearDuplicateFilter:
    """Remembers accepted texts by MinHash band keys; `admit` rejects a near-copy."""

    def __init__(
        self, embedder: Embedder | None = None, *, bands: int = 3, rows: int = 6, seed: int = 0
    ) -> None:
        self.embedder = embedder or HashingEmbedder()
        self.bands = bands
        self.rows = rows
        self._salts = [
            ((_h(f"a{seed}:{i}") << 32) | _h(f"b{seed}:{i}")) | 1 for i in range(bands * rows)
        ]
        self._seen: set[int] = set()
        self.accepted = 0
        self.rejected = 0

    def signature(self, features: Iterable[int]) -> list[int]:
        """MinHash: per salt, the least (salt * feature) mod 2^61 over the feature set."""
        feats = [f + 1 for f in features] or [1]
        return [min([(a * f) & _MASK for f in feats]) for a in self._salts]

    def _bands(self, text: str) -> list[int]:
        """One integer per band (tuples of ints hash the same in every process)."""
        sig = self.signature(self.embedder.embed(text).keys())
        r = self.rows
        return [hash((i, *sig[i * r : (i + 1) * r])) for i in range(self.bands)]

    def is_duplicate(self, text: str) -> bool:
        return any(key in self._seen for key in self._bands(text))

    def admit(self, text: str, *, force: bool = False) -> bool:
        """Accept and remember `text` unless it is a near-duplicate (or `force` is set)."""
        keys = self._bands(text)
        if not force and any(key in self._seen for key in keys):
            self.rejected += 1
            return False
        self._seen.update(keys)
        self.accepted += 1
        return True
