"""The grade stage end to end: read rows, judge them, write them, and count as they pass.

The CLI's `whileai grade` is this function plus flag parsing and printing.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..jsonl import OnError, ReadStats, RowWriter, read_rows
from ..metrics.passat import PassReport, summary_line
from .contract import Judge, grade_rows

if TYPE_CHECKING:
    from ..simulate.shards import Shard


@dataclass
class GradeResult:
    report: dict[str, Any]
    read: ReadStats
    judge: str
    notes: list[str] = field(default_factory=list)
    default_judge: bool = False

    def lines(self) -> list[str]:
        """The summary a person reads on stderr."""
        out = []
        if self.default_judge:
            out.append(
                "no --judge: graded only the conduct floor and the task checklist "
                "(pass --judge for a verifier, a rubric judge or your own)"
            )
        out.append(f"{self.judge}: {summary_line(self.report)}")
        return out

    def warnings(self) -> list[str]:
        found = [*self.notes, *self.report.get("warnings", [])]
        for status, reason in self.report["first_reasons"].items():
            count = self.report["judge_status"].get(status, 0)
            found.append(f"{count} row(s) not judged ({status}); first: {reason}")
        if self.read.skipped:
            found.append(self.read.skipped_warning())
        return found


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
    prepare: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
    on_graded: Callable[[dict[str, Any]], None] | None = None,
    shard: Shard | None = None,
    sink: Callable[[dict[str, Any]], None] | None = None,
    advisor: Judge | None = None,
) -> GradeResult:
    """Grade every row of `inputs` into `output` (stdout when None), streaming.

    `prepare` rewrites each row before it is judged (evaluate stamps its lineage there);
    `on_graded` sees each graded row after it is written (evaluate's failed traces);
    `shard` keeps only the rows whose task that shard owns (stamped with it); `sink`, when
    given, receives each graded row instead of `output` (a Ray worker hands them back);
    `advisor` adds its verdict beside the judge's (`advisory.advise`: `llm_reward`)."""
    stats = ReadStats()
    report = PassReport(k=k, seed=seed)
    rows: Iterable[dict[str, Any]] = read_rows(inputs, on_error=on_error, stats=stats)
    if shard is not None:
        from ..simulate.shards import shard_rows

        rows = shard_rows(rows, shard)
    if prepare is not None:
        rows = map(prepare, rows)
    tally = GradeTally(report, on_graded=on_graded, on_row=on_row)
    with contextlib.ExitStack() as stack:
        write = sink or stack.enter_context(RowWriter(output)).write
        graded_rows = grade_rows(rows, judge, concurrency=concurrency, timeout=timeout)
        if advisor is not None:
            from .advisory import advise

            graded_rows = advise(graded_rows, advisor, concurrency=concurrency, timeout=timeout)
        for graded in graded_rows:
            write(graded)
            tally.add(graded)
    return tally.result(judge, stats)


class GradeTally:
    """What a grade run counts of the rows it wrote: the pass report, the policies seen
    (for the self-judged warning) and the callbacks; shared by `grade_files` and the Ray
    driver, which tallies rows as each shard's come back."""

    def __init__(
        self,
        report: PassReport,
        *,
        on_graded: Callable[[dict[str, Any]], None] | None = None,
        on_row: Callable[[int], None] | None = None,
    ) -> None:
        self.report = report
        self.on_graded = on_graded
        self.on_row = on_row
        self.policies: set[str] = set()
        self.count = 0

    def add(self, graded: dict[str, Any]) -> None:
        self.count += 1
        self.report.add(graded)
        if self.on_graded is not None:
            self.on_graded(graded)
        version = graded.get("model_version")
        if isinstance(version, str) and len(self.policies) < 256:
            self.policies.add(version)
        if self.on_row is not None:
            self.on_row(self.count)

    def result(self, judge: Judge, stats: ReadStats, notes: list[str] | None = None) -> GradeResult:
        if notes is None:
            notes = judge.notes() if judge.notes is not None else []
        result = self.report.result()
        _self_judged(result, judge, self.policies)
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
