"""The grade stage end to end: read rows, judge them, write them, and count as they pass.

The CLI's `whileai grade` is this function plus flag parsing and printing.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..jsonl import OnError, ReadStats, RowWriter, read_rows
from ..metrics.passat import PassReport, summary_line
from ..scale.executor import Executor, LocalExecutor
from ..scale.shards import Shard, shard_rows
from .contract import Judge, grade_rows
from .registry import JudgeRecipe


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
    executor: Executor | None = None,
    prepare: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
    on_graded: Callable[[dict[str, Any]], None] | None = None,
    advisor: Judge | None = None,
) -> GradeResult:
    """Grade every row of `inputs` into `output` (stdout when None), streaming.

    `executor` says where the judging runs: this process (the default; with a shard, only
    the rows whose task that shard owns, stamped with it) or a cluster's workers, each
    judging one shard with the judge rebuilt from its recipe. Two hooks, run in this
    process whatever the executor: `prepare` rewrites each row before it is judged
    (evaluate stamps its lineage there; it travels to the workers, so give a picklable
    one), `on_graded` sees each graded row after it is written (progress, evaluate's failed
    traces). `advisor` adds its verdict beside the judge's (`advisory.advise`: `llm_reward`);
    it holds a model client, so it judges in this process only."""
    executor = executor or LocalExecutor()
    files = list(inputs)
    chosen: Judge | JudgeRecipe = judge
    if executor.remote:
        if "-" in files:
            raise ConfigError(
                f"--executor {executor.name} reads files in its workers: give FILES, not stdin"
            )
        files = [str(Path(f).resolve()) for f in files]
        if isinstance(judge.recipe, JudgeRecipe):
            chosen = judge.recipe.portable()
        if advisor is not None:
            raise ConfigError(f"an advisory judge runs in this process: not on {executor.name}")
    share = executor.concurrency(concurrency)  # parts on this machine share it
    work = GradeWork(tuple(files), chosen, on_error, share, timeout, prepare, advisor)
    tally = GradeTally(PassReport(k=k, seed=seed), on_graded=on_graded)
    stats = ReadStats()
    parts = executor.parts()
    with RowWriter(output) as writer:

        def emit(graded: dict[str, Any]) -> None:
            writer.write(graded)
            tally.add(graded)

        before = 0
        runs = executor.run(functools.partial(grade_part, work), parts, emit)
        for finished, (part, read) in enumerate(runs, 1):
            _merge_reads(stats, read)
            label = part.label if part is not None else "1/1"
            executor.say(
                f"shard {label} done: {tally.count - before} rows ({finished}/{len(parts)} "
                f"shards, {tally.count} rows)"
            )
            before = tally.count
    return tally.result(judge, stats)


@dataclass(frozen=True)
class GradeWork:
    """What judging one part needs, whichever process does it (pickled for a worker)."""

    inputs: tuple[str, ...]
    judge: Judge | JudgeRecipe
    on_error: OnError
    concurrency: int
    timeout: float | None
    prepare: Callable[[dict[str, Any]], dict[str, Any]] | None
    advisor: Judge | None = None


def grade_part(
    work: GradeWork, part: Shard | None, sink: Callable[[dict[str, Any]], None]
) -> ReadStats:
    """Judge the rows `part` owns (every row when None) into `sink`; what was read."""
    judge = work.judge.build() if isinstance(work.judge, JudgeRecipe) else work.judge
    stats = ReadStats()
    rows: Iterable[dict[str, Any]] = read_rows(work.inputs, on_error=work.on_error, stats=stats)
    if part is not None:
        rows = shard_rows(rows, part)
    if work.prepare is not None:
        rows = map(work.prepare, rows)
    graded_rows = grade_rows(rows, judge, concurrency=work.concurrency, timeout=work.timeout)
    if work.advisor is not None:
        from .advisory import advise

        graded_rows = advise(
            graded_rows, work.advisor, concurrency=work.concurrency, timeout=work.timeout
        )
    for graded in graded_rows:
        sink(graded)
    return stats


def _merge_reads(stats: ReadStats, read: ReadStats) -> None:
    """Every part reads every line (each keeps the rows it owns), so a run read what its
    most-read part did; the first bad line is the first part's to report it."""
    stats.rows = max(stats.rows, read.rows)
    stats.skipped = max(stats.skipped, read.skipped)
    stats.first_error = stats.first_error or read.first_error
    stats.errors = stats.errors or read.errors


class GradeTally:
    """What a grade run counts of the rows it wrote: the pass report (which also says when
    the judge's model wrote the rows it graded) and the `on_graded` hook."""

    def __init__(
        self, report: PassReport, *, on_graded: Callable[[dict[str, Any]], None] | None = None
    ) -> None:
        self.report = report
        self.on_graded = on_graded
        self.count = 0

    def add(self, graded: dict[str, Any]) -> None:
        self.count += 1
        self.report.add(graded)
        if self.on_graded is not None:
            self.on_graded(graded)

    def result(self, judge: Judge, stats: ReadStats, notes: list[str] | None = None) -> GradeResult:
        if notes is None:
            notes = judge.notes() if judge.notes is not None else []
        result = self.report.result()
        return GradeResult(report=result, read=stats, judge=judge.name, notes=notes)
