"""One similarity for prompts: a hash embedding, and an exact search over it.

`PromptEmbedder` is SDK 0.131's `hash-word-bigram-v2`, so `leakage` and the SDK's
`leakage_report` give the same answer on the same rows: the words (`tokens.words`) cut
where letters meet digits, every number read as `<num>` (an ask is its wording, not its
order id), each word and each adjacent pair hashed (BLAKE2b) into 256 buckets, and the
counts L2-normalised. Two prompts are as alike as the cosine of their vectors; an exact
match (case and spacing aside) scores 1.0 whatever the vectors say.

`WordNgramEmbedder` is the wider, unmasked space (word uni- and bigrams in 2^18 CRC-32
buckets) the opener novelty filter hashes its MinHash features from and the voice check
compares lines in.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import re
from collections.abc import Iterable, Sequence
from typing import Protocol

from .levels import NEAR_COPY_COSINE
from .tokens import FEATURE_DIM, MAX_TEXT_CHARS, exact_key, gram_features, stable_hash, words

PROMPT_DIM = 256
_PIECE = re.compile(r"([^\W\d_]+)|(\d+)")


class Embedder(Protocol):
    """Turns text into a sparse vector ({feature: weight}); `name` goes in reports."""

    name: str

    def embed(self, text: str) -> dict[int, float]: ...


def _unit(counts: dict[int, float]) -> dict[int, float]:
    norm = math.sqrt(math.fsum(v * v for v in counts.values())) or 1.0
    return {k: v / norm for k, v in counts.items()}


def prompt_tokens(text: str) -> list[str]:
    """The prompt embedding's tokens: `w:word` for each word and `b:a>b` for each adjacent
    pair, a word cut where letters meet digits and every number masked as `<num>`."""
    found = _PIECE.findall(text[:MAX_TEXT_CHARS].lower())
    pieces = [word or "<num>" for word, _number in found]
    return [f"w:{w}" for w in pieces] + [f"b:{a}>{b}" for a, b in itertools.pairwise(pieces)]


class PromptEmbedder:
    """SDK 0.131's hash embedding of a prompt (256 buckets; no model, no state)."""

    name = "hash-word-bigram-v2"

    def __init__(self, dim: int = PROMPT_DIM) -> None:
        self.dim = dim

    def embed(self, text: str) -> dict[int, float]:
        vec: dict[int, float] = {}
        for token in prompt_tokens(text):
            digest = hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest()
            key = int.from_bytes(digest, "big") % self.dim
            vec[key] = vec.get(key, 0.0) + 1.0
        return _unit(vec)


class WordNgramEmbedder:
    """Word n-grams (uni- and bigrams by default) hashed into `dim` buckets, L2-normalised."""

    name = "hash-word-ngram-v1"

    def __init__(self, dim: int = FEATURE_DIM, ngrams: tuple[int, ...] = (1, 2)) -> None:
        self.dim = dim
        self.ngrams = ngrams

    def features(self, text: str) -> set[int]:
        """The distinct buckets `text` fills: the set MinHash compares."""
        return gram_features(text, self.ngrams, self.dim)

    def embed(self, text: str) -> dict[int, float]:
        vec: dict[int, float] = {}
        toks = words(text)
        for n in self.ngrams:
            for i in range(len(toks) - n + 1):
                key = stable_hash(" ".join(toks[i : i + n])) % self.dim
                vec[key] = vec.get(key, 0.0) + 1.0
        return _unit(vec)


def cosine(a: dict[int, float], b: dict[int, float]) -> float:
    """Cosine of two unit sparse vectors."""
    if len(a) > len(b):
        a, b = b, a
    return sum(v * b.get(k, 0.0) for k, v in a.items())


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
                 threshold: float = NEAR_COPY_COSINE) -> None:  # fmt: skip
        self.embedder = embedder or PromptEmbedder()
        self.threshold = threshold
        self.texts = list(texts)
        self.vectors = [self.embedder.embed(t) for t in self.texts]
        self._exact: dict[str, int] = {}
        for i, text in enumerate(self.texts):
            if text.strip():
                self._exact.setdefault(exact_key(text), i)
        df: dict[int, int] = {}
        for vec in self.vectors:
            for key in vec:
                df[key] = df.get(key, 0) + 1
        self._postings: dict[int, list[int]] = {}
        limit = threshold * threshold
        for i, vec in enumerate(self.vectors):
            rest = sum(v * v for v in vec.values())
            for key in sorted(vec, key=lambda k: (df[k], k)):
                if rest < limit - 1e-9:
                    break
                self._postings.setdefault(key, []).append(i)
                rest -= vec[key] * vec[key]

    def __len__(self) -> int:
        return len(self.texts)

    def exact(self, text: str) -> int | None:
        """The stored text `text` is, verbatim (case, spacing and punctuation aside)."""
        return self._exact.get(exact_key(text)) if text.strip() else None

    def nearest(self, text: str) -> tuple[int, float] | None:
        """(index, similarity) of the closest stored text at or over the threshold (an
        exact match scores 1.0), or None."""
        exact = self.exact(text)
        if exact is not None:
            return exact, 1.0
        query = self.embedder.embed(text)
        candidates = {i for key in query for i in self._postings.get(key, ())}
        best: tuple[int, float] | None = None
        for i in sorted(candidates):
            score = cosine(query, self.vectors[i])
            if score >= self.threshold - 1e-9 and (best is None or score > best[1]):
                best = (i, score)
        return best


def _dense_unit(vector: Sequence[float]) -> list[float]:
    norm = sum(v * v for v in vector) ** 0.5 or 1.0
    return [v / norm for v in vector]


def best_matches(
    queries: Sequence[Sequence[float]], stored: Sequence[Sequence[float]], threshold: float
) -> list[tuple[int, float] | None]:
    """For each dense query vector (a model's embedding), the most similar stored vector at
    or over `threshold`: all pairs, with numpy when it is installed."""
    if not stored:
        return [None] * len(queries)
    try:
        import numpy as np
    except ImportError:  # pure Python: slower, the same answers
        units = [_dense_unit(v) for v in stored]
        out: list[tuple[int, float] | None] = []
        for q in queries:
            qu = _dense_unit(q)
            scores = [sum(a * b for a, b in zip(qu, s, strict=False)) for s in units]
            best = max(range(len(scores)), key=scores.__getitem__)
            out.append((best, scores[best]) if scores[best] >= threshold - 1e-9 else None)
        return out
    matrix = np.asarray([_dense_unit(v) for v in stored], dtype=float)
    result: list[tuple[int, float] | None] = []
    for at in range(0, len(queries), 256):
        block = np.asarray([_dense_unit(q) for q in queries[at : at + 256]], dtype=float)
        sims = block @ matrix.T
        for row in sims:
            best = int(row.argmax())
            score = float(row[best])
            result.append((best, score) if score >= threshold - 1e-9 else None)
    return result
