"""The grade stage end to end: read rows, judge them, write them, and count as they pass.

The CLI's `whileai grade` is this function plus flag parsing and printing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ..jsonl import OnError, ReadStats, RowWriter, read_rows
from ..metrics.passat import PassReport
from .contract import Judge, grade_rows


@dataclass
class GradeResult:
    report: dict[str, Any]
    read: ReadStats
    judge: str
    notes: list[str] = field(default_factory=list)


def grade_files(
    inputs: Iterable[str],
    judge: Judge,
    *,
    output: str | None = None,
    on_error: OnError = "fail",
    concurrency: int = 8,
    timeout: float | None = 60.0,
    k: int | None = None,
    seed: int = 0,
    on_row: Callable[[int], None] | None = None,
) -> GradeResult:
    """Grade every row of `inputs` into `output` (stdout when None), streaming."""
    stats = ReadStats()
    report = PassReport(k=k, seed=seed)
    rows = read_rows(inputs, on_error=on_error, stats=stats)
    policies: set[str] = set()
    with RowWriter(output) as writer:
        for graded in grade_rows(rows, judge, concurrency=concurrency, timeout=timeout):
            writer.write(graded)
            report.add(graded)
            version = graded.get("model_version")
            if isinstance(version, str) and len(policies) < 256:
                policies.add(version)
            if on_row is not None:
                on_row(writer.count)
    notes = judge.notes() if judge.notes is not None else []
    result = report.result()
    _self_judged(result, judge, policies)
    return GradeResult(report=result, read=stats, judge=judge.name, notes=notes)


def _bare(model: str) -> str:
    """A model's name without its provider prefix: `vllm:Qwen/Qwen3-4B` -> `qwen/qwen3-4b`."""
    head, sep, rest = model.partition(":")
    return (rest if sep and head in ("openai", "vllm", "ollama") else model).strip().casefold()


def _self_judged(report: dict[str, Any], judge: Judge, policies: set[str]) -> None:
    """A judge grading its own model's writing prefers it: say so when the judge's model is
    the rows' model_version."""
    model = judge.meta.get("model")
    if not isinstance(model, str):
        return
    same = sorted(p for p in policies if _bare(p) == _bare(model))
    report["self_judged"] = bool(same)
    if same:
        report.setdefault("warnings", []).append(
            f"self_judged: the judge model {model} also wrote these rows (model_version "
            f"{same[0]}); a judge grading its own model's writing tends to prefer it"
        )
