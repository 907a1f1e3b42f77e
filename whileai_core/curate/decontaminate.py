"""Decontamination: training rows that copy an evaluation set, by task or by text.

Rules, in this order (SDK 0.131's `decontaminate`); a row flagged by one is counted under
that one only, so `contaminated` is the number of rows dropped:

- **same task**: the row's `scenario_id` (else `task_id`) is an eval row's. A task is a
  situation, not a string: a rephrasing of an eval situation is the eval situation. The
  rule needs ids on both sides; `rules_skipped` says when it could not run.
- **verbatim** and **near**: one of the row's `fields` copies an eval text, by the one
  coverage measure (`text.coverage`): the same words, or one eval text covering at least
  `overlap` (0.8, the Llama 2 rule) of its words with shared word `n`-grams (8). One
  shared 8-gram is not enough: situations written from the same templates share whole
  sentences without sharing the question. Texts shorter than `n` words match verbatim only.

The eval texts are each eval row's prompt and its answers and references (`answer`,
`reference`, `expected`, `gold`, the privileged `reference`), never its `final_text`: on a
rollout-shaped eval set that is a policy's reply, and tool boilerplate two replies share
("Nothing was changed; please try again shortly.") would flag training rows that never
saw the eval question. Every field is checked against every eval text. `prompt` and
`final_text` read a row's ask and reply wherever the row keeps them (`row.ask_text`,
`row.reply_text`); any other field is read as the key's string value.

Evals come from row files or platform dataset ids (read through the one store interface).
The index holds the eval side; the rows stream. `export --env` decontaminates its train
asks against its holdout asks with this same index and level, so the two agree.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from ..errors import ConfigError
from ..jsonl import OnError, ReadStats, RowWriter, iter_lines, read_rows
from ..row import ask_text, reply_text
from ..text.coverage import CoverageIndex
from ..text.levels import COVERAGE_NGRAM, COVERAGE_OVERLAP

ANSWER_KEYS = ("answer", "reference", "expected", "gold")
KINDS = ("same_task", "verbatim", "near")


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


def task_of(row: dict[str, Any]) -> str | None:
    """The task a row records (`scenario_id`, else `task_id`), or None."""
    for key in ("scenario_id", "task_id"):
        value = row.get(key)
        if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value):
            return str(value)
    return None


@dataclass
class EvalIndex:
    """The eval side: its texts in one coverage index, and the tasks it records."""

    n: int = COVERAGE_NGRAM
    texts: CoverageIndex = field(init=False)
    tasks: set[str] = field(default_factory=set)
    rows: int = 0
    sources: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.texts = CoverageIndex(self.n)

    def add_row(self, row: dict[str, Any], label: str) -> None:
        self.rows += 1
        task = task_of(row)
        if task is not None:
            self.tasks.add(task)
        for text in (ask_text(row), *answers_of(row)):
            self.texts.add(text, label)

    @classmethod
    def of(cls, rows: Iterable[dict[str, Any]], n: int = COVERAGE_NGRAM,
           name: str = "eval") -> EvalIndex:  # fmt: skip
        """An index over eval rows you already hold."""
        index = cls(n)
        for i, row in enumerate(rows, start=1):
            index.add_row(row, f"{name}:{i}")
        return index


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


def load_evals(sources: Sequence[str], n: int = COVERAGE_NGRAM) -> EvalIndex:
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
    same_task: int = 0
    per_field: dict[str, dict[str, int]] = field(default_factory=dict)
    offenders: list[dict[str, Any]] = field(default_factory=list)
    eval_rows: int = 0
    rules_skipped: dict[str, str] = field(default_factory=dict)
    keep: int = 10
    skipped_lines: int = 0
    _row_tasks: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "rows": self.rows,
            "clean": self.clean,
            "contaminated": self.contaminated,
            "same_task": self.same_task,
            "verbatim": sum(f["verbatim"] for f in self.per_field.values()),
            "near": sum(f["near"] for f in self.per_field.values()),
            "per_field": self.per_field,
            "fields": list(self.fields),
            "overlap": self.overlap,
            "ngram": self.n,
            "eval_rows": self.eval_rows,
            "rules_skipped": self.rules_skipped,
            "offenders": self.offenders,
            "skipped_lines": self.skipped_lines,
        }

    def lines(self) -> list[str]:
        out = [
            f"decontaminate: {self.rows} rows against {self.eval_rows} eval rows -> "
            f"{self.clean} clean, {self.contaminated} contaminated ({self.n}-grams, overlap "
            f">= {self.overlap:g})"
        ]
        out.append(f"  same task: {self.same_task}")
        for name, counts in self.per_field.items():
            out.append(f"  {name}: {counts['verbatim']} verbatim, {counts['near']} near copies")
        for rule, why in self.rules_skipped.items():
            out.append(f"  {rule} rule not applied: {why}")
        for o in self.offenders:
            out.append(
                f"  {o['row']} {o['field']}: {o['kind']} ({o['coverage']:.0%}) of {o['eval']}"
            )
        return out

    def _note_skipped(self, index: EvalIndex) -> None:
        """Say when the same-task rule could not run: a zero there is not a clearance."""
        if not index.rows or not self.rows:
            return
        if not index.tasks:
            why = f"0 of {index.rows} eval rows carry a scenario_id or task_id"
        elif not self._row_tasks:
            why = f"0 of {self.rows} rows carry a scenario_id or task_id"
        else:
            return
        self.rules_skipped["same_task"] = why


def first_hit(
    row: dict[str, Any], index: EvalIndex, fields: Sequence[str], overlap: float
) -> dict[str, Any] | None:
    """The rule that flags `row` first (same task, then each field in order), or None."""
    task = task_of(row)
    if task is not None and task in index.tasks:
        return {"field": "task", "kind": "same_task", "coverage": 1.0, "eval": task}
    for name in fields:
        hit = index.texts.match(field_text(row, name), overlap)
        if hit is not None:
            label = index.texts.labels[hit.index]
            return {"field": name, "kind": hit.kind, "coverage": hit.coverage, "eval": label}
    return None


def decontaminate(
    rows: Iterable[dict[str, Any]],
    index: EvalIndex,
    *,
    fields: Sequence[str] = ("prompt",),
    overlap: float = COVERAGE_OVERLAP,
    report: DecontaminationReport | None = None,
) -> Iterator[dict[str, Any]]:
    """The clean rows (those no rule flags), streamed; counts go to `report`."""
    if not 0 < overlap <= 1:
        raise ConfigError(f"--overlap {overlap}: must be in (0, 1]")
    rep = report or DecontaminationReport(tuple(fields), overlap, index.n)
    rep.eval_rows = index.rows
    for name in fields:
        rep.per_field.setdefault(name, {"verbatim": 0, "near": 0})
    for i, row in enumerate(rows, start=1):
        rep.rows += 1
        rep._row_tasks += task_of(row) is not None
        hit = first_hit(row, index, fields, overlap)
        if hit is None:
            rep.clean += 1
            yield row
            continue
        rep.contaminated += 1
        if hit["kind"] == "same_task":
            rep.same_task += 1
        else:
            rep.per_field[hit["field"]][hit["kind"]] += 1
        if len(rep.offenders) < rep.keep:
            rep.offenders.append({"row": str(row.get("scenario_id") or f"row {i}"), **hit})
    rep._note_skipped(index)


def copies_an_eval(prompts: Sequence[str], eval_prompts: Iterable[str]) -> list[bool]:
    """Which of `prompts` a `decontaminate` of rows with these prompts against eval rows
    with `eval_prompts` would flag: what `export --env` drops from its train asks."""
    index = EvalIndex.of({"prompt": p} for p in eval_prompts)
    return [
        first_hit({"prompt": p}, index, ("prompt",), COVERAGE_OVERLAP) is not None for p in prompts
    ]


def decontaminate_files(
    inputs: Sequence[str],
    against: Sequence[str],
    *,
    fields: Sequence[str] = ("prompt",),
    overlap: float = COVERAGE_OVERLAP,
    n: int = COVERAGE_NGRAM,
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
