"""One MinHash index: near-duplicate sets of features found in near-linear time.

Each text's feature set (`tokens.gram_features`, `tokens.shingles`) gets a MinHash
signature of `bands * rows` values, cut into bands; a band hashes to one integer key. Two
sets whose Jaccard similarity is J share a whole band with probability 1 - (1 - J^rows)^bands,
so a check is a few set look-ups and a run's cost stays linear in its texts. The index is a
filter: callers that need an exact answer confirm a candidate pair on the sets themselves.

Signatures are stable across processes and machines (CRC-32 salts, tuple hashes of ints),
so a resumed or sharded run rebuilds the same keys.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Iterator
from typing import Any, Generic, TypeVar

from .tokens import stable_hash

_MASK = (1 << 61) - 1
K = TypeVar("K", bound=Hashable)


class MinHashIndex(Generic[K]):
    """Band keys of the feature sets added so far; with `members`, which items hold each."""

    def __init__(self, bands: int, rows: int, *, seed: int = 0, members: bool = False) -> None:
        self.bands = bands
        self.rows = rows
        self._salts = [
            ((stable_hash(f"a{seed}:{i}") << 32) | stable_hash(f"b{seed}:{i}")) | 1
            for i in range(bands * rows)
        ]
        self._salt_array: Any = None
        self._keys: set[int] = set()
        self._members: dict[int, list[K]] | None = {} if members else None

    def signature(self, features: Iterable[int]) -> list[int]:
        """MinHash: per salt, the least (salt * feature) mod 2^61 over the feature set.

        One numpy outer product: uint64 multiplication wraps modulo 2^64, and the low 61
        bits of a product are the same whether the high bits were kept or not, so the values
        are exactly those of `min((a * f) & _MASK for f in feats)` over Python ints, at
        about a tenth of the cost per text (features are 32-bit hashes, salts 64-bit)."""
        import numpy as np

        if self._salt_array is None:
            self._salt_array = np.array(self._salts, dtype=np.uint64)
        feats = np.fromiter(features, dtype=np.uint64)
        feats = feats + np.uint64(1) if feats.size else np.ones(1, dtype=np.uint64)
        products = np.multiply.outer(self._salt_array, feats) & np.uint64(_MASK)
        return [int(v) for v in products.min(axis=1).tolist()]

    def keys(self, features: Iterable[int]) -> list[int]:
        """One integer per band (tuples of ints hash the same in every process)."""
        sig = self.signature(features)
        r = self.rows
        return [hash((i, *sig[i * r : (i + 1) * r])) for i in range(self.bands)]

    def seen(self, keys: Iterable[int]) -> bool:
        """Whether any of these band keys was added before: a likely near duplicate."""
        return any(key in self._keys for key in keys)

    def add(self, keys: Iterable[int], item: K | None = None) -> None:
        """Remember the keys (and, when the index keeps members, `item` under each)."""
        for key in keys:
            self._keys.add(key)
            if self._members is not None and item is not None:
                self._members.setdefault(key, []).append(item)

    def candidate_pairs(self, largest: int) -> Iterator[tuple[K, K]]:
        """Pairs of items that share a band, each once in the order first met; a band more
        than `largest` items share is skipped (a template every text has, not a pair)."""
        seen: set[tuple[K, K]] = set()
        for items in (self._members or {}).values():
            if len(items) < 2 or len(items) > largest:
                continue
            for i, a in enumerate(items):
                for b in items[i + 1 :]:
                    if (a, b) not in seen:
                        seen.add((a, b))
                        yield a, b
