"""How text is cut into the units every comparison counts: words, n-grams, features.

A word is a run of letters and digits, lower-cased (Unicode letters included; `_` and
punctuation separate words), so case, spacing, punctuation and JSON quoting never decide a
match. On ASCII text this is exactly SDK 0.131's `[a-z0-9]+`. Texts are cut at
`MAX_TEXT_CHARS` before any regex sees them.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterable, Sequence

MAX_TEXT_CHARS = 1 << 20  # a million characters: more than any prompt or reply
_WORD = re.compile(r"[^\W_]+")
FEATURE_DIM = 1 << 18


def words(text: str) -> list[str]:
    """Lower-cased runs of letters and digits."""
    return _WORD.findall(text[:MAX_TEXT_CHARS].lower())


def normal_text(text: str) -> str:
    """A text as compared for an exact match: case and spacing do not count."""
    return " ".join(text.lower().split())


def exact_key(text: str) -> str:
    """What two texts share when one is the other verbatim: the same words in order (case,
    spacing and punctuation aside); a text with no words is keyed by its normal form."""
    found = words(text)
    return " ".join(found) if found else "\0" + normal_text(text)


def ngrams(tokens: Sequence[str], n: int) -> list[tuple[str, ...]]:
    """Every run of `n` consecutive tokens, in order (none when there are fewer)."""
    return [tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)]


def stable_hash(value: str) -> int:
    """A stable 32-bit hash (CRC-32 runs in C; Python's own `hash` is salted per process)."""
    return zlib.crc32(value.encode())


def gram_features(text: str, sizes: Iterable[int], dim: int | None = FEATURE_DIM) -> set[int]:
    """The word n-grams of `text` for each size in `sizes`, hashed (into `dim` buckets, or
    the full 32 bits with None): the feature set MinHash compares."""
    return _hashed(words(text), sizes, dim)


def _hashed(toks: Sequence[str], sizes: Iterable[int], dim: int | None) -> set[int]:
    out: set[int] = set()
    for n in sizes:
        for gram in ngrams(toks, n):
            h = stable_hash(" ".join(gram))
            out.add(h % dim if dim else h)
    return out


def shingles(text: str, n: int) -> set[int]:
    """Hashed word `n`-gram shingles; a text shorter than `n` words is one shingle of all
    of them (so two short prompts still compare), an empty one has none."""
    toks = words(text)
    if len(toks) < n:
        return {stable_hash(" ".join(toks))} if toks else set()
    return _hashed(toks, (n,), None)
