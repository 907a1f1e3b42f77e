"""evaluate: grade held-out rollouts under the grade contract, stamped as an eval.

It takes every flag `grade` takes (one judge contract, one flag set: a flag added to
grade is an evaluate flag too) plus its own, and runs grade's body with
`whileai_core.compare.evaluate.evaluate_files` as the stage function."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Annotated, Any, get_type_hints

import typer

from . import grade as grade_cmd


def _with_grade_flags(fn: Callable[..., None]) -> Callable[..., None]:
    """Give `fn` grade's parameters followed by its own keyword-only ones, for Typer."""
    base = inspect.signature(grade_cmd.grade, eval_str=True)
    own = inspect.signature(fn, eval_str=True)
    extra = [p for p in own.parameters.values() if p.kind is inspect.Parameter.KEYWORD_ONLY]
    fn.__signature__ = base.replace(  # type: ignore[attr-defined]
        parameters=[*base.parameters.values(), *extra]
    )
    fn.__annotations__ = {
        **get_type_hints(grade_cmd.grade, include_extras=True),
        **get_type_hints(fn, include_extras=True),
    }
    return fn


@_with_grade_flags
def evaluate(
    *args: Any,
    failed_traces: Annotated[
        str | None,
        typer.Option(
            "--failed-traces",
            envvar="WHILEAI_EVALUATE_FAILED_TRACES",
            help="Also write the rollouts the judge failed here, as traces for simulate --traces.",
        ),
    ] = None,
    run_id: Annotated[
        str | None,
        typer.Option(
            "--run-id", help="The scoring run's id in lineage.scoring_run_id (default: fresh)."
        ),
    ] = None,
    model_version: Annotated[
        str | None,
        typer.Option(
            "--model-version",
            envvar="WHILEAI_EVALUATE_MODEL_VERSION",
            help="The evaluated model's name for lineage.model (default: each row's "
            "model_version).",
        ),
    ] = None,
    **flags: Any,
) -> None:
    """Grade held-out rollouts like grade, stamped lineage.source = "eval"; failures as traces.

    Rows an eval scored are counted (eval_sourced) and warned about by optimize and the
    pairs export: a held-out scorer used as a training reward is no longer held out."""
    from whileai_core.compare.evaluate import EvalResult, evaluate_files
    from whileai_core.errors import ConfigError

    from ..console import say

    if failed_traces is not None and failed_traces == "-" and flags.get("output") is None:
        raise ConfigError("--failed-traces -: stdout already carries the graded rows; give -o")
    results: list[EvalResult] = []

    def runner(files: list[str], judge: Any, **kw: Any) -> Any:
        done = evaluate_files(
            files, judge, failed_traces=failed_traces, run_id=run_id, model=model_version, **kw
        )
        results.append(done)
        return done.grade

    token = grade_cmd.GRADE_RUNNER.set(runner)
    try:
        grade_cmd.grade(*args, **flags)
    finally:
        grade_cmd.GRADE_RUNNER.reset(token)
        for line in results[0].lines() if results else []:
            say(line)
