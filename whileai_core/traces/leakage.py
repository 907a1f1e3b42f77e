"""Did a generated prompt come back a near copy of a source trace?

Source traces shape the grid and must never enter the generated data, or a held-out
trace set stops measuring anything. A generated row is **leaky** when its prompt's
embedding has a cosine similarity of at least `threshold` (`text.levels.NEAR_COPY_COSINE`,
0.9) with a source prompt's, or when the two are the same text (case, spacing and
punctuation aside), which is always flagged. Flagged rows are removed, never rewritten: a
rewritten near copy is still a near copy.

The embedder is the one similarity for prompts (`text.similarity.PromptEmbedder`, SDK
0.131's hash embedding, so this answers as the SDK's `leakage_report` does on the same
rows, and as the `simulate --traces` near-copy guard does, by construction), searched
exactly with `SimilarityIndex`. An embedding model on an OpenAI-compatible `/embeddings`
endpoint (vLLM, Ollama, llama.cpp, OpenAI) catches paraphrases the hashing one cannot:
any model reference `--agent` takes works, and its vectors are compared exactly too (all
pairs, with numpy when it is installed).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigError
from ..models.options import ModelOptions
from ..row import ask_text
from ..text.levels import NEAR_COPY_COSINE
from ..text.similarity import PromptEmbedder, SimilarityIndex, best_matches

DEFAULT_THRESHOLD = NEAR_COPY_COSINE
EXAMPLES = 20


@dataclass
class Leak:
    index: int  # the generated row's position
    source: int  # the source prompt it copies
    similarity: float
    exact: bool


@dataclass
class LeakageReport:
    n_generated: int
    n_sources: int
    threshold: float
    embedder: str
    n_leaky: int = 0
    n_exact: int = 0
    n_near: int = 0
    examples: list[dict[str, Any]] = field(default_factory=list)
    kept: int | None = None  # with drop: the rows written

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    def lines(self) -> list[str]:
        out = [
            f"leaky rows: {self.n_leaky} of {self.n_generated} ({self.n_exact} exact, "
            f"{self.n_near} near copies at cosine >= {self.threshold}) against "
            f"{self.n_sources} source prompts, embedder {self.embedder}"
        ]
        for ex in self.examples[:5]:
            out.append(
                f"  row {ex['row']}: {ex['similarity']:.3f} {ex['prompt'][:70]!r} ~ "
                f"{ex['source'][:70]!r}"
            )
        if self.kept is not None:
            out.append(f"kept {self.kept} rows, dropped {self.n_leaky}")
        return out


def prompt_of(row: dict[str, Any]) -> str:
    """What a row asked: its prompt, else its first user message."""
    return ask_text(row)


def _dense_leaks(
    prompts: Sequence[str], sources: Sequence[str], ref: str, options: ModelOptions,
    threshold: float,
) -> list[tuple[int, float] | None]:  # fmt: skip
    from ..models.factory import client_for

    async def embed_all() -> tuple[list[list[float]], list[list[float]]]:
        client = client_for(ref, options)
        try:
            return await client.embed(list(sources)), await client.embed(list(prompts))
        finally:
            await client.aclose()

    source_vecs, prompt_vecs = asyncio.run(embed_all())
    return best_matches(prompt_vecs, source_vecs, threshold)


def find_leaks(
    prompts: Sequence[str],
    sources: Sequence[str],
    *,
    threshold: float = DEFAULT_THRESHOLD,
    embedder: str = "hash",
    options: ModelOptions | None = None,
) -> list[Leak]:
    """Every generated prompt that copies a source, exactly or within the threshold."""
    if not 0.0 < threshold <= 1.0:
        raise ConfigError("--threshold must be in (0, 1]")
    index = SimilarityIndex(sources, threshold=threshold)
    if embedder == "hash":
        matches = [index.nearest(p) for p in prompts]
    else:
        matches = _dense_leaks(prompts, sources, embedder, options or ModelOptions(), threshold)
    leaks = []
    for i, (prompt, match) in enumerate(zip(prompts, matches, strict=True)):
        exact = index.exact(prompt)
        if exact is not None:
            leaks.append(Leak(i, exact, 1.0, True))
        elif match is not None:
            leaks.append(Leak(i, match[0], round(match[1], 6), False))
    return leaks


def _prompts(sources: Any) -> list[str]:
    """Source prompts from the shapes SDK 0.131's `leakage_report` takes: prompt strings,
    trace rows of any shape load_traces reads, a list of row lists (`[holdout]`,
    flattened), or a single row."""
    items = [sources] if isinstance(sources, (str, dict)) else list(sources)
    flat: list[Any] = []
    for item in items:
        if isinstance(item, (list, tuple)):
            flat.extend(item)
        else:
            flat.append(item)
    texts = [s for s in flat if isinstance(s, str)]
    rows = [s for s in flat if isinstance(s, dict)]
    if rows:
        from .load import load_traces

        texts.extend(load_traces(rows).prompts())
    return texts


def leakage_report(
    generated: Iterable[dict[str, Any]], sources: Iterable[Any], **kwargs: Any
) -> LeakageReport:
    """How many generated rows near-copy a source (prompts, or trace rows)."""
    return scan_leaks(generated, _prompts(sources), **kwargs)[0]


def scan_leaks(
    generated: Iterable[dict[str, Any]],
    sources: Sequence[str],
    *,
    threshold: float = DEFAULT_THRESHOLD,
    embedder: str = "hash",
    options: ModelOptions | None = None,
) -> tuple[LeakageReport, list[Leak]]:
    """The report, and the leaks (by generated row position)."""
    prompts = [prompt_of(row) for row in generated]
    leaks = find_leaks(prompts, sources, threshold=threshold, embedder=embedder, options=options)
    name = PromptEmbedder.name if embedder == "hash" else embedder
    report = LeakageReport(len(prompts), len(sources), threshold, name)
    report.n_leaky = len(leaks)
    report.n_exact = sum(1 for leak in leaks if leak.exact)
    report.n_near = report.n_leaky - report.n_exact
    report.examples = [
        {"row": leak.index + 1, "prompt": prompts[leak.index], "source": sources[leak.source],
         "similarity": leak.similarity, "exact": leak.exact}
        for leak in leaks[:EXAMPLES]
    ]  # fmt: skip
    return report, leaks


def drop_leaky_rows(
    rows: Sequence[dict[str, Any]], sources: Iterable[Any], **kwargs: Any
) -> tuple[list[dict[str, Any]], LeakageReport]:
    """The rows that copy no source, unchanged, and the report."""
    report, leaks = scan_leaks(rows, _prompts(sources), **kwargs)
    flagged = {leak.index for leak in leaks}
    kept = [row for i, row in enumerate(rows) if i not in flagged]
    report.kept = len(kept)
    return kept, report


def check_files(
    inputs: list[str],
    sources_from: str,
    *,
    drop: bool = False,
    output: str | None = None,
    since: str | None = None,
    **kwargs: Any,
) -> LeakageReport:
    """`whileai leakage`: check JSONL rows against a trace source; with `drop`, write the
    rows that copy no source to `output` (stdout when None), in order, unchanged."""
    from ..jsonl import RowWriter, read_rows, spooled
    from .load import load_traces

    sources = load_traces(sources_from, since=since).prompts()
    with spooled(inputs) as (paths, _labels):
        report, leaks = scan_leaks(read_rows(paths), sources, **kwargs)
        if drop:
            flagged = {leak.index for leak in leaks}
            with RowWriter(output) as writer:
                kept = 0
                for i, row in enumerate(read_rows(paths)):
                    if i not in flagged:
                        writer.write(row)
                        kept += 1
            report.kept = kept
    return report
