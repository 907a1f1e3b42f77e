"""`whileai optimize`: graded rows in, the rows a trainer should see out, a report on stderr."""

from __future__ import annotations

from typing import Annotated, Literal

import typer

from ..options import (
    BandOpt,
    EndorsedOpt,
    Inputs,
    JsonOpt,
    OnErrorOpt,
    Output,
    ReportFile,
    scoped_env,
    warn_renamed_env,
)


def optimize(
    inputs: Inputs = None,
    mode: Annotated[
        Literal["rl", "sft"],
        typer.Option(
            "--mode",
            envvar="WHILEAI_OPTIMIZE_MODE",
            help="rl: whole groups in the band; sft: rejection sampling.",
        ),
    ] = "rl",
    band: BandOpt = "0.2,0.8",
    enforce_band: Annotated[
        bool,
        typer.Option(
            "--enforce-band/--no-enforce-band",
            help="Drop out-of-band asks, or keep them ranked after the in-band ones.",
        ),
    ] = True,
    truncated: Annotated[
        Literal["drop", "keep", "penalize"],
        typer.Option(
            "--truncated",
            envvar="WHILEAI_TRUNCATED",
            help="Rollouts cut at a cap: drop, keep (marked overlong), "
            "or penalize (reward 0, judged score in reward_before_penalty).",
        ),
    ] = "drop",
    max_groups: Annotated[
        int | None,
        typer.Option(
            "--max-groups",
            min=0,
            envvar="WHILEAI_MAX_GROUPS",
            help="RL: keep at most this many groups, taken round-robin across fault kinds.",
        ),
    ] = None,
    select: Annotated[
        Literal["top_per_prompt", "top_k_overall", "random_per_prompt", "random_k_overall"],
        typer.Option(
            "--select",
            envvar="WHILEAI_SELECT",
            help="SFT selection rule; random_* are chance controls.",
        ),
    ] = "top_per_prompt",
    min_reward: Annotated[
        float,
        typer.Option(
            "--min-reward",
            envvar="WHILEAI_MIN_REWARD",
            help="SFT: lowest reward a kept completion may have.",
        ),
    ] = 1.0,
    k: Annotated[
        int | None,
        typer.Option(
            "--k",
            min=1,
            help="SFT: completions per prompt (*_per_prompt, default 1) or "
            "in total (*_overall, required).",
        ),
    ] = None,
    keep_tics: Annotated[
        bool,
        typer.Option(
            "--keep-tics",
            envvar="WHILEAI_KEEP_TICS",
            help="SFT: keep replies that hedge, flatter, apologise or pad (by default they "
            "are kept out of the training set, and counted).",
        ),
    ] = False,
    seed: Annotated[
        int,
        typer.Option(
            "--seed",
            envvar=scoped_env("WHILEAI_SEED", "optimize"),
            help="Seed for the random_* rules.",
        ),
    ] = 0,
    endorsed: EndorsedOpt = None,
    output: Output = None,
    on_error: OnErrorOpt = "fail",
    json: JsonOpt = False,
    report_file: ReportFile = None,
) -> None:
    """Select training rows: RL groups in the difficulty band, or SFT rejection sampling.

    SFT keeps replies with a style tic (hedging, sycophancy, apology, boilerplate) out of
    the training set and reports how many (--keep-tics keeps them). With --endorsed the
    hack scan runs over the kept rows (its own pass over the input) and rides in the
    report as hack_scan, its warnings among the hygiene warnings."""
    warn_renamed_env("optimize")
    from whileai_core.select.optimize import OptimizeOptions, optimize_files

    from ..console import check_report_path, emit_report, exit_if_nothing, say, warn
    from ..options import bad_flag, parse_band, resolve_inputs, split_endorsed

    lo, hi = parse_band(band)
    if mode == "sft" and select.endswith("_overall") and k is None:
        bad_flag("--k", f"--select {select} needs --k (how many rows to keep overall)")
    check_report_path(report_file)
    options = OptimizeOptions(
        mode=mode,
        band=(lo, hi),
        enforce_band=enforce_band,
        truncated=truncated,
        max_groups=max_groups,
        select=select,
        min_reward=min_reward,
        k=k,
        seed=seed,
        keep_tics=keep_tics,
        endorsed=split_endorsed(endorsed),
    )
    options.check()
    report = optimize_files(resolve_inputs(inputs), options, output=output, on_error=on_error)
    data = report.as_dict()
    if not emit_report(data, json=json, report_file=report_file, data_on_stdout=output is None):
        for line in report.lines():
            say(line)
        for message in report.warnings_all():
            warn(message)
    exit_if_nothing(report.rows_out, "rows")
