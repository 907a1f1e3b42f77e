"""`whileai scan`: what a grouped update would learn from this reward."""

from __future__ import annotations

from typing import Annotated

import typer

from ..options import (
    EndorsedOpt,
    Inputs,
    JsonOpt,
    KindsOpt,
    OnErrorOpt,
    ReportFile,
    scoped_env,
    warn_renamed_env,
)


def scan(
    inputs: Inputs = None,
    endorsed: EndorsedOpt = None,
    diff: Annotated[
        bool,
        typer.Option("--diff", help="Two files, BEFORE AFTER: what the update moved toward."),
    ] = False,
    shuffles: Annotated[
        int,
        typer.Option(
            "--shuffles",
            min=5,
            envvar="WHILEAI_SCAN_SHUFFLES",
            help="Reshuffles of reward within ask for the noise floor.",
        ),
    ] = 50,
    seed: Annotated[
        int,
        typer.Option(
            "--seed", envvar=scoped_env("WHILEAI_SEED", "scan"), help="Seed for the shuffles."
        ),
    ] = 0,
    feature: Annotated[
        list[str] | None,
        typer.Option(
            "--feature",
            help="Your own feature, NAME=module:function (row -> number); repeatable.",
        ),
    ] = None,
    kinds: KindsOpt = None,
    top: Annotated[int, typer.Option("--top", min=1, help="Features listed in the report.")] = 25,
    on_error: OnErrorOpt = "fail",
    json: JsonOpt = False,
    report_file: ReportFile = None,
) -> None:
    """Hack scan: reward vs every candidate feature within ask, against a shuffled noise floor.

    Regimes: train, reward_hack, unknown, no_signal, pool_exhausted, degenerate. With
    --endorsed the scan says whether what the reward pays for most is what it should."""
    warn_renamed_env("scan")
    from whileai_core.errors import ConfigError
    from whileai_core.markers.actions import parse_kinds
    from whileai_core.markers.flags import TraceOptions
    from whileai_core.scan.engine import ScanOptions, format_scan
    from whileai_core.scan.features import FeatureOptions, user_features
    from whileai_core.scan.run import diff_files, format_diff, scan_files

    from ..console import check_report_path, emit_report, print_lines, warn
    from ..options import resolve_inputs, split_endorsed

    check_report_path(report_file)
    options = ScanOptions(
        endorsed=split_endorsed(endorsed),
        shuffles=shuffles,
        seed=seed,
        top=top,
        features=FeatureOptions(
            user=user_features(feature or []), trace=TraceOptions(kinds=parse_kinds(kinds))
        ),
    )
    if diff:
        if not inputs or len(inputs) != 2 or "-" in inputs:
            raise ConfigError("scan --diff takes two files: BEFORE AFTER")
        data = diff_files(inputs[0], inputs[1], options, on_error=on_error)
        lines, warnings = format_diff(data), []
    else:
        data = scan_files(resolve_inputs(inputs), options, on_error=on_error)
        lines, warnings = format_scan(data), data["warnings"]
    if not emit_report(data, json=json, report_file=report_file, data_on_stdout=False):
        print_lines(lines)
    for message in warnings:
        warn(message)
    if data.get("skipped_lines"):
        warn(f"skipped {data['skipped_lines']} bad line(s)")
