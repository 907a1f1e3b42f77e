"""Keeping a batch spread out: an embedder seam and a near-linear near-duplicate filter.

The original novelty search compared every opener with every other (quadratic: 1,000
situations took minutes). Here each opener's word n-gram features get a MinHash
signature cut into bands; two openers are near-duplicates when a whole band collides,
which for 3 bands of 6 hashes catches Jaccard >= 0.9 about nine times in ten and
Jaccard 0.5 about one time in twenty. Each check is a few set look-ups, so a run's cost
stays linear in its rows, and memory holds three integers per accepted opener.
"""

from __future__ import annotations

import itertools
import math
import re
import zlib
from collections.abc import Iterable
from typing import Any, Protocol

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
            if n == 1:  # the same strings as the general form, built without a join each
                grams.extend(words)
            elif n == 2:
                grams.extend([f"{a} {b}" for a, b in itertools.pairwise(words)])
            else:
                grams.extend(" ".join(words[i : i + n]) for i in range(len(words) - n + 1))
        return grams

    def keys(self, text: str) -> set[int]:
        """The buckets `embed` would weigh, without the weights: all MinHash needs
        (`_h` of every gram, mapped in C rather than called once a gram)."""
        dim = self.dim
        return {h % dim for h in map(zlib.crc32, map(str.encode, self.features(text)))}

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
        self._salt_array: Any = None
        self.accepted = 0
        self.rejected = 0

    def signature(self, features: Iterable[int]) -> list[int]:
        """MinHash: per salt, the least (salt * feature) mod 2^61 over the feature set.

        Computed as one numpy outer product: uint64 multiplication wraps modulo 2^64,
        and the low 61 bits of a product are the same whether the high bits were kept or
        not, so the values are exactly those of the Python-int form
        `min((a * f) & _MASK for f in feats)`, at about a tenth of its cost per opener."""
        import numpy as np

        if self._salt_array is None:
            self._salt_array = np.array(self._salts, dtype=np.uint64)
        feats = np.fromiter(features, dtype=np.uint64)
        feats = feats + np.uint64(1) if feats.size else np.ones(1, dtype=np.uint64)
        products = np.multiply.outer(self._salt_array, feats) & np.uint64(_MASK)
        return [int(v) for v in products.min(axis=1).tolist()]

    def _bands(self, text: str) -> list[int]:
        """One integer per band (tuples of ints hash the same in every process)."""
        keys = getattr(self.embedder, "keys", None)
        sig = self.signature(keys(text) if keys is not None else self.embedder.embed(text).keys())
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


def normal_text(text: str) -> str:
    """A text as compared for an exact match: case and spacing do not count."""
    return " ".join(text.lower().split())


class SimilarityIndex:
    """Which of a fixed set of texts a new text is near: cosine of embeddings at or over
    `threshold`, or the same text exactly. Exact, not approximate, and fast.

    All-pairs prefix filtering: features are ordered rarest first over the set; each
    stored vector is indexed only on the prefix of its features whose remaining suffix
    still has squared weight of at least threshold^2. A query whose cosine with a stored
    vector reaches the threshold must share a feature with that vector's prefix (else the
    whole dot product lies in a suffix of norm below the threshold), so only those
    candidates are scored, in full. Prefixes hold the rare features, so postings are short.
    """

    def __init__(self, texts: Iterable[str], embedder: Embedder | None = None, *,
                 threshold: float = 0.9) -> None:  # fmt: skip
        self.embedder = embedder or HashingEmbedder()
        self.threshold = threshold
        self.texts = list(texts)
        self.vectors = [self.embedder.embed(t) for t in self.texts]
        self._exact: dict[str, int] = {}
        for i, text in enumerate(self.texts):
            self._exact.setdefault(normal_text(text), i)
        df: dict[int, int] = {}
        for vec in self.vectors:
            for key in vec:
                df[key] = df.get(key, 0) + 1
        self._postings: dict[int, list[int]] = {}
        limit = threshold * threshold
        for i, vec in enumerate(self.vectors):
            rest = sum(v * v for v in vec.values())
            for key in sorted(vec, key=lambda k: (df[k], k)):
                if rest < limit:
                    break
                self._postings.setdefault(key, []).append(i)
                rest -= vec[key] * vec[key]

    def __len__(self) -> int:
        return len(self.texts)

    def nearest(self, text: str) -> tuple[int, float] | None:
        """(index, similarity) of the closest stored text at or over the threshold (an
        exact match scores 1.0), or None."""
        exact = self._exact.get(normal_text(text))
        if exact is not None:
            return exact, 1.0
        query = self.embedder.embed(text)
        candidates = {i for key in query for i in self._postings.get(key, ())}
        best: tuple[int, float] | None = None
        for i in sorted(candidates):
            score = cosine(query, self.vectors[i])
            if score >= self.threshold - 1e-12 and (best is None or score > best[1]):
                best = (i, score)
        return best
