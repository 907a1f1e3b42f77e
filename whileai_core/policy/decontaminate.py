"""Decontamination: training rows that copy an evaluation text, verbatim or nearly.

Texts are compared as lower-cased words. A row's field is a verbatim hit when its words
equal an eval text's; a near copy when one eval text covers at least `overlap` (0.8, the
Llama 2 rule) of the row's words with shared word `n`-grams (8). One shared 8-gram is
not enough: situations written from the same templates share whole sentences without
sharing the question. Texts shorter than `n` words match verbatim only.

`prompt` is checked against eval prompts; any other field (`final_text`) against eval
answers and references (`final_text`, `answer`, `reference`, `expected`, `gold`, the
privileged `reference`). Evals come from row files or platform dataset ids (read through
the one store interface). The index holds the eval side; the rows stream.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from ..errors import ConfigError
from ..jsonl import OnError, ReadStats, RowWriter, iter_lines, read_rows
from ..row import ask_text, reply_text
from .view import words

ANSWER_KEYS = ("final_text", "answer", "reference", "expected", "gold")
COMMON = 1000  # an n-gram in more eval texts than this is template, not evidence


def field_text(row: dict[str, Any], name: str) -> str:
    if name == "prompt":
        return ask_text(row)
    if name == "final_text":
        return reply_text(row)
    value = row.get(name)
    return value if isinstance(value, str) else ""


def answers_of(row: dict[str, Any]) -> list[str]:
    found = [row[k] for k in ANSWER_KEYS if isinstance(row.get(k), str) and row[k].strip()]
    block = row.get("privileged")
    if isinstance(block, dict) and isinstance(block.get("reference"), str):
        found.append(block["reference"])
    return found


@dataclass
class _Side:
    """The eval texts of one kind (prompts, or answers) with their n-gram index."""

    n: int
    labels: list[str] = field(default_factory=list)
    verbatim: dict[tuple[str, ...], int] = field(default_factory=dict)
    grams: list[set[int]] = field(default_factory=list)
    postings: dict[int, list[int]] = field(default_factory=dict)

    def add(self, text: str, label: str) -> None:
        toks = tuple(words(text))
        if not toks:
            return
        idx = len(self.labels)
        self.labels.append(label)
        self.verbatim.setdefault(toks, idx)
        grams = {hash(toks[i : i + self.n]) for i in range(len(toks) - self.n + 1)}
        self.grams.append(grams)
        for g in grams:
            bucket = self.postings.setdefault(g, [])
            if len(bucket) <= COMMON:
                bucket.append(idx)

    def match(self, text: str, overlap: float) -> tuple[str, float, int] | None:
        """("verbatim" | "near", coverage, eval index) for the best hit, or None."""
        toks = tuple(words(text))
        if not toks:
            return None
        hit = self.verbatim.get(toks)
        if hit is not None:
            return ("verbatim", 1.0, hit)
        if len(toks) < self.n:
            return None
        grams = [hash(toks[i : i + self.n]) for i in range(len(toks) - self.n + 1)]
        counts: Counter[int] = Counter()
        for g in set(grams):
            bucket = self.postings.get(g)
            if bucket and len(bucket) <= COMMON:
                counts.update(bucket)
        need = max(1, math.ceil(overlap * len(toks)) - self.n + 1)
        best: tuple[float, int] | None = None
        for idx, shared in counts.most_common():
            if shared < need:
                break
            mine = self.grams[idx]
            covered = [False] * len(toks)
            for pos, g in enumerate(grams):
                if g in mine:
                    covered[pos : pos + self.n] = [True] * self.n
            coverage = sum(covered) / len(toks)
            if coverage >= overlap and (best is None or coverage > best[0]):
                best = (coverage, idx)
        return ("near", round(best[0], 4), best[1]) if best else None


@dataclass
class EvalIndex:
    n: int = 8
    prompts: _Side = field(init=False)
    answers: _Side = field(init=False)
    rows: int = 0
    sources: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.prompts, self.answers = _Side(self.n), _Side(self.n)

    def add_row(self, row: dict[str, Any], label: str) -> None:
        self.rows += 1
        prompt = ask_text(row)
        if prompt.strip():
            self.prompts.add(prompt, label)
        for text in answers_of(row):
            self.answers.add(text, label)

    @classmethod
    def of(cls, rows: Iterable[dict[str, Any]], n: int = 8, name: str = "eval") -> EvalIndex:
        """An index over eval rows you already hold."""
        index = cls(n)
        for i, row in enumerate(rows, start=1):
            index.add_row(row, f"{name}:{i}")
        return index

    def side(self, field_name: str) -> _Side:
        return self.prompts if field_name == "prompt" else self.answers


def _store_rows(dataset_id: str) -> Iterator[tuple[str, dict[str, Any]]]:
    from ..store import open_store

    store = open_store()
    try:
        buffer, lineno = b"", 0
        for chunk in store.download(dataset_id):
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                lineno += 1
                if line.strip():
                    yield f"{dataset_id}:{lineno}", orjson.loads(line)
        if buffer.strip():
            yield f"{dataset_id}:{lineno + 1}", orjson.loads(buffer)
    finally:
        store.close()


def load_evals(sources: Sequence[str], n: int = 8) -> EvalIndex:
    """An index over eval row files and/or platform dataset ids (`ds_...`)."""
    index = EvalIndex(n)
    for source in sources:
        index.sources.append(source)
        if Path(source).is_file():
            for where, lineno, row in iter_lines([source], on_error="fail"):
                index.add_row(row, f"{where}:{lineno}")
        elif source.startswith("ds_"):
            for label, row in _store_rows(source):
                if isinstance(row, dict):
                    index.add_row(row, label)
        else:
            raise ConfigError(f"--against {source}: no such file, and not a dataset id (ds_...)")
    return index


@dataclass
class DecontaminationReport:
    fields: tuple[str, ...]
    overlap: float
    n: int
    rows: int = 0
    clean: int = 0
    contaminated: int = 0
    per_field: dict[str, dict[str, int]] = field(default_factory=dict)
    offenders: list[dict[str, Any]] = field(default_factory=list)
    eval_rows: int = 0
    keep: int = 10
    skipped_lines: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "rows": self.rows,
            "clean": self.clean,
            "contaminated": self.contaminated,
            "verbatim": sum(f["verbatim"] for f in self.per_field.values()),
            "near": sum(f["near"] for f in self.per_field.values()),
            "per_field": self.per_field,
            "fields": list(self.fields),
            "overlap": self.overlap,
            "ngram": self.n,
            "eval_rows": self.eval_rows,
            "offenders": self.offenders,
            "skipped_lines": self.skipped_lines,
        }

    def lines(self) -> list[str]:
        out = [
            f"decontaminate: {self.rows} rows against {self.eval_rows} eval rows -> "
            f"{self.clean} clean, {self.contaminated} contaminated ({self.n}-grams, overlap "
            f">= {self.overlap:g})"
        ]
        for name, counts in self.per_field.items():
            out.append(f"  {name}: {counts['verbatim']} verbatim, {counts['near']} near copies")
        for o in self.offenders:
            out.append(
                f"  {o['row']} {o['field']}: {o['kind']} ({o['coverage']:.0%}) of {o['eval']}"
            )
        return out


def decontaminate(
    rows: Iterable[dict[str, Any]],
    index: EvalIndex,
    *,
    fields: Sequence[str] = ("prompt",),
    overlap: float = 0.8,
    report: DecontaminationReport | None = None,
) -> Iterator[dict[str, Any]]:
    """The clean rows (those with no hit in any field), streamed; counts go to `report`."""
    if not 0 < overlap <= 1:
        raise ConfigError(f"--overlap {overlap}: must be in (0, 1]")
    rep = report or DecontaminationReport(tuple(fields), overlap, index.n)
    rep.eval_rows = index.rows
    for name in fields:
        rep.per_field.setdefault(name, {"verbatim": 0, "near": 0})
    for i, row in enumerate(rows, start=1):
        rep.rows += 1
        hit_any = False
        for name in fields:
            hit = index.side(name).match(field_text(row, name), overlap)
            if hit is None:
                continue
            kind, coverage, idx = hit
            rep.per_field[name][kind] += 1
            if not hit_any and len(rep.offenders) < rep.keep:
                label = row.get("scenario_id") or f"row {i}"
                rep.offenders.append(
                    {
                        "row": str(label),
                        "field": name,
                        "kind": kind,
                        "coverage": coverage,
                        "eval": index.side(name).labels[idx],
                    }
                )
            hit_any = True
        if hit_any:
            rep.contaminated += 1
            continue
        rep.clean += 1
        yield row


def decontaminate_files(
    inputs: Sequence[str],
    against: Sequence[str],
    *,
    fields: Sequence[str] = ("prompt",),
    overlap: float = 0.8,
    n: int = 8,
    output: str | None = None,
    on_error: OnError = "fail",
) -> DecontaminationReport:
    index = load_evals(against, n)
    report = DecontaminationReport(tuple(fields), overlap, n)
    stats = ReadStats()
    with RowWriter(output) as writer:
        rows = read_rows(inputs, on_error=on_error, stats=stats)
        writer.write_many(decontaminate(rows, index, fields=fields, overlap=overlap, report=report))
    report.skipped_lines = stats.skipped
    return report
