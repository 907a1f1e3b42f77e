"""Grading held-out rollouts as an eval, and handing their failures back as traces.

`evaluate` is `grade` (the same judge contract, `judges.run.grade_files`) with one
difference on every row: `lineage.source = "eval"`, plus the scoring run's id, the judge
and the evaluated model. The stamp is what keeps an eval out of training: every selector
and the pairs export count `eval_sourced` rows and warn, since a held-out scorer used as
a training reward is no longer held out.

`--failed-traces FILE` writes the rollouts the judge failed in the trace shape
`simulate --traces` reads: plain row dicts with `prompt` (or `messages`), `steps`,
`final_text` and `reward`, plus what explains the failure (`reason`, `failure_class`,
`faults`) and where it came from (`scenario_id`). Unjudged rows are not failures and are
not written. The privileged block never leaves, at any depth.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ..jsonl import OnError, RowWriter
from ..judges.contract import Judge
from ..judges.run import GradeResult, grade_files
from ..metrics.tally import passed, reward_of
from ..row.privileged import strip_privileged
from ..scale.executor import Executor
from .lineage import EVAL_SOURCE

TRACE_KEYS = (
    "prompt",
    "messages",
    "steps",
    "final_text",
    "reward",
    "reason",
    "failure_class",
    "scenario_id",
    "faults",
    "world_state",
)


def new_run_id() -> str:
    return f"eval-{uuid.uuid4().hex[:12]}"


@dataclass
class EvalStamp:
    """Stamps the eval lineage on each row before it is judged (`grade_files(prepare=)`)."""

    judge: str
    run_id: str = field(default_factory=new_run_id)
    model: str | None = None

    def __call__(self, row: dict[str, Any]) -> dict[str, Any]:
        old = row.get("lineage")
        lineage = dict(old) if isinstance(old, dict) else {}
        prior = lineage.get("scoring_run_id")
        lineage.update(source=EVAL_SOURCE, scoring_run_id=self.run_id, judge=self.judge)
        model = self.model or row.get("model_version")
        if isinstance(model, str) and model:
            lineage["model"] = model
        if prior and prior != self.run_id:
            lineage["prior_scoring_run_id"] = prior
        return {**row, "lineage": lineage}


def trace_of(row: dict[str, Any]) -> dict[str, Any]:
    """A failed rollout as a trace: the keys a trace reader uses, privileged removed."""
    trace = {k: row[k] for k in TRACE_KEYS if row.get(k) is not None}
    return strip_privileged(trace)


class FailedTraces:
    """Writes each graded row the judge failed as a trace (`grade_files(on_graded=)`)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.writer = RowWriter(path)
        self.written = 0

    def __call__(self, row: dict[str, Any]) -> None:
        reward = reward_of(row)
        if reward is not None and not passed(reward):
            self.writer.write(trace_of(row))
            self.written += 1

    def close(self, ok: bool = True) -> None:
        self.writer.close(ok=ok)


@dataclass
class EvalResult:
    grade: GradeResult
    run_id: str
    failed_traces: str | None
    failed: int

    def lines(self) -> list[str]:
        out = [f"evaluate: lineage.source = eval, scoring_run_id {self.run_id}"]
        if self.failed_traces is not None:
            out.append(
                f"{self.failed} failed rollout(s) written as traces to {self.failed_traces} "
                "(feed them to simulate --traces)"
            )
        return out


def evaluate_files(
    inputs: Iterable[str],
    judge: Judge,
    *,
    output: str | None = None,
    failed_traces: str | None = None,
    run_id: str | None = None,
    model: str | None = None,
    on_error: OnError = "fail",
    concurrency: int = 8,
    timeout: float | None = 60.0,
    k: int | None = None,
    seed: int = 0,
    executor: Executor | None = None,
    on_graded: Callable[[dict[str, Any]], None] | None = None,
    advisor: Judge | None = None,
) -> EvalResult:
    """Grade `inputs` as an eval into `output`, failures as traces into `failed_traces`:
    `grade_files` with the eval stamp, on whichever `executor` it is given (with a shard,
    only the rows that shard owns). `on_graded` sees each graded row too (progress)."""
    stamp = EvalStamp(judge=judge.name, run_id=run_id or new_run_id(), model=model)
    traces = FailedTraces(failed_traces) if failed_traces is not None else None
    hooks = [hook for hook in (traces, on_graded) if hook is not None]

    def graded(row: dict[str, Any]) -> None:
        for hook in hooks:
            hook(row)

    ok = False
    try:
        result = grade_files(
            inputs,
            judge,
            output=output,
            on_error=on_error,
            concurrency=concurrency,
            timeout=timeout,
            k=k,
            seed=seed,
            executor=executor,
            prepare=stamp,
            on_graded=graded,
            **({"advisor": advisor} if advisor is not None else {}),
        )
        ok = True
    finally:
        if traces is not None:
            traces.close(ok=ok)
    return EvalResult(result, stamp.run_id, failed_traces, traces.written if traces else 0)
