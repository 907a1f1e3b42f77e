"""`whileai mark`: rows in, the same rows with behaviour markers stamped out."""

from __future__ import annotations

from typing import Annotated, Literal

import typer

from ..options import (
    AllowOpt,
    IgnoreKeysOpt,
    Inputs,
    JsonOpt,
    JudgeConcurrencyOpt,
    JudgeTimeoutOpt,
    KindsOpt,
    OnErrorOpt,
    Output,
    PhrasesOpt,
    ReportFile,
    SpecsOpt,
    warn_renamed_env,
)

StageName = Literal["sft", "rm", "rl", "eval", "mid"]


def mark(
    inputs: Inputs = None,
    style: Annotated[bool, typer.Option("--style", help="Style markers.")] = False,
    trace: Annotated[
        bool, typer.Option("--trace", help="Trajectory flags and their seven markers.")
    ] = False,
    grounding: Annotated[
        bool, typer.Option("--grounding", help="The argument_grounding marker.")
    ] = False,
    stage: Annotated[
        StageName | None,
        typer.Option("--stage", envvar="WHILEAI_MARK_STAGE", help="Stamp the stage rows feed."),
    ] = None,
    spec: SpecsOpt = None,
    judge: Annotated[
        str | None,
        typer.Option(
            "--judge",
            envvar="WHILEAI_MARK_JUDGE",
            help="Scores a model spec's traits: openai:MODEL, vllm:MODEL@URL, a URL, or "
            "module:function called as fn(row, trait).",
        ),
    ] = None,
    model: Annotated[
        str | None,
        typer.Option(
            "--model", envvar="WHILEAI_JUDGE_MODEL", help="Model name for a judge given as a URL."
        ),
    ] = None,
    phrases: PhrasesOpt = None,
    kinds: KindsOpt = None,
    ignore_keys: IgnoreKeysOpt = None,
    allow: AllowOpt = None,
    concurrency: JudgeConcurrencyOpt = 8,
    timeout: JudgeTimeoutOpt = 60.0,
    output: Output = None,
    on_error: OnErrorOpt = "fail",
    json: JsonOpt = False,
    report_file: ReportFile = None,
) -> None:
    """Stamp behaviour markers: style, trajectory flags, argument grounding, spec traits.

    With none of --style/--trace/--grounding, all three run. Every marker is 1.0 for the
    good outcome, and its source (mark:style, mark:trace, mark:grounding, mark:spec) is
    kept in marker_sources, so a later `whileai grade` keeps it."""
    warn_renamed_env("mark")
    from whileai_core.markers.mark import FAMILIES, MarkOptions, mark_files, resolve_flags
    from whileai_core.models.options import ModelOptions

    from ..console import check_report_path, emit_report, say, warn
    from ..options import resolve_inputs

    check_report_path(report_file)
    flags = resolve_flags(spec or (), phrases, kinds, ignore_keys, allow)
    chosen = tuple(f for f, on in zip(FAMILIES, (style, trace, grounding), strict=True) if on)
    options = MarkOptions(
        families=chosen or FAMILIES,
        stage=stage,
        phrases=flags.phrases,
        trace=flags.trace,
        grounding=flags.grounding,
        constitution=flags.constitution,
        trait_judge=judge,
        models=ModelOptions(model=model, concurrency=concurrency, timeout=timeout or 60.0),
        concurrency=concurrency,
        timeout=timeout or None,
    )
    options.check()
    report = mark_files(resolve_inputs(inputs), options, output=output, on_error=on_error)
    if not emit_report(
        report.as_dict(), json=json, report_file=report_file, data_on_stdout=output is None
    ):
        for line in report.lines():
            say(line)
    for message in report.warnings():
        warn(message)


def rank(
    inputs: Inputs = None,
    output: Output = None,
    sort: Annotated[
        bool, typer.Option("--sort", help="Write the best rows first (holds all rows in memory).")
    ] = False,
    on_error: OnErrorOpt = "fail",
    json: JsonOpt = False,
) -> None:
    """Add quality (0-1, the mean of mark's behaviour markers) to every row; reward unchanged.

    quality is how the agent conducted itself (style, trajectory, argument grounding),
    not whether it did the task: it tells two passing rows apart."""
    from whileai_core.markers.rank import rank_files

    from ..console import err, print_json
    from ..options import resolve_inputs

    report = rank_files(resolve_inputs(inputs), output=output, sort=sort, on_error=on_error)
    if json and output is not None:
        print_json(report.as_dict())
        return
    for line in report.lines():
        err().print(line, markup=False, highlight=False)
