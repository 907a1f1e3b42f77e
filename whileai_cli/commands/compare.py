"""compare (one metric, A against B), delta (before/after on every metric) and variance
(the eval's own re-run noise). Each prints its report on stdout, warnings on stderr."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from ..options import JsonOpt, OnErrorOpt, ReportFile

SeedOpt = Annotated[
    int,
    typer.Option(
        "--seed",
        envvar="WHILEAI_BOOTSTRAP_SEED",
        help="Seed of the bootstrap and the permutation draws (reproducible).",
    ),
]


def _emit(
    data: dict[str, Any], lines: list[str], warnings: list[str], json: bool, report: str | None
) -> None:
    from ..console import emit_report, print_lines, warn

    if not emit_report(data, json=json, report_file=report, data_on_stdout=False):
        print_lines(lines)
    for message in warnings:
        warn(message)


def _check_metric(flag: str, name: str) -> None:
    """A metric name that cannot be one is a usage error (exit 2), before any row is read."""
    from whileai_core.errors import ConfigError
    from whileai_core.metrics.taskvalues import metric_key

    from ..options import bad_flag

    try:
        metric_key(name)
    except ConfigError as exc:
        bad_flag(flag, str(exc))


def compare(
    a: Annotated[str, typer.Argument(help="Run A (the baseline): graded JSONL, '-' for stdin.")],
    b: Annotated[str, typer.Argument(help="Run B (the candidate): graded JSONL.")],
    metric: Annotated[
        str,
        typer.Option(
            "--metric",
            "-m",
            envvar="WHILEAI_COMPARE_METRIC",
            help="pass_at_1, or marker:NAME for a marker (1.0 = good).",
        ),
    ] = "pass_at_1",
    seed: SeedOpt = 0,
    on_error: OnErrorOpt = "fail",
    json: JsonOpt = False,
    report_file: ReportFile = None,
) -> None:
    """Paired A/B on one metric: delta B - A, 95% interval, sign-flip p-value, verdict.

    Tasks pair by scenario_id. With fewer than 5 shared tasks the comparison is unpaired
    and says so. `no_difference_detected` means the interval covers zero, not that the
    runs are equal."""
    from whileai_core.compare.compare import compare_files

    from ..console import check_report_path

    _check_metric("--metric", metric)
    check_report_path(report_file)
    result = compare_files([a], [b], metric=metric, seed=seed, on_error=on_error)
    _emit(result.as_dict(), result.lines(), result.warnings(), json, report_file)


def delta(
    before: Annotated[
        str, typer.Option("--before", help="Graded rows before the change (JSONL, '-').")
    ],
    after: Annotated[str, typer.Option("--after", help="Graded rows after the change (JSONL).")],
    target: Annotated[
        str,
        typer.Option(
            "--target",
            envvar="WHILEAI_DELTA_TARGET",
            help="The metric the change set out to move: pass_at_1 or marker:NAME.",
        ),
    ] = "pass_at_1",
    must_not_regress: Annotated[
        str | None,
        typer.Option(
            "--must-not-regress",
            envvar="WHILEAI_DELTA_MUST_NOT_REGRESS",
            help="Comma-separated metrics (marker names or pass_at_1) whose significant "
            "drop fails the report (exit 1).",
        ),
    ] = None,
    by: Annotated[
        str | None,
        typer.Option(
            "--by",
            envvar="WHILEAI_DELTA_BY",
            help="Compare the target within groups: a row key (dotted for nested) or marker:NAME.",
        ),
    ] = None,
    run_std: Annotated[
        str | None,
        typer.Option(
            "--run-std",
            envvar="WHILEAI_DELTA_RUN_STD",
            help="The eval's re-run std: a number, or a `whileai variance --report` file "
            "(a floor per metric). Deltas inside 2 x run_std are within_noise.",
        ),
    ] = None,
    proxy: Annotated[
        str | None,
        typer.Option(
            "--proxy",
            envvar="WHILEAI_DELTA_PROXY",
            help="The training reward as marker:NAME: up while the target did not follow "
            "fails the report (over-optimization).",
        ),
    ] = None,
    mde: Annotated[
        float | None,
        typer.Option(
            "--mde",
            envvar="WHILEAI_DELTA_MDE",
            help="Delta the holdout should detect, for the sizing line (default: the delta "
            "seen, else 0.05).",
        ),
    ] = None,
    seed: SeedOpt = 0,
    on_error: OnErrorOpt = "fail",
    json: JsonOpt = False,
    report_file: ReportFile = None,
) -> None:
    """Before/after on pass@1 and every shared marker; exit 1 when a guard fails.

    Fails on a significant drop of a --must-not-regress metric or of the target, a
    guard not measured on both sides, over-optimization (--proxy), or fewer than half the
    tasks on both sides. Any other drop is a warning."""
    from whileai_core.compare.delta import DeltaOptions, check_options, delta_files
    from whileai_core.compare.variance import load_run_std
    from whileai_core.errors import ConfigError

    from ..console import check_report_path

    check_report_path(report_file)
    guards = [m.strip() for m in (must_not_regress or "").split(",") if m.strip()]
    _check_metric("--target", target)
    for name in guards:
        _check_metric("--must-not-regress", name)
    if proxy is not None:
        _check_metric("--proxy", proxy)
    try:
        floors = load_run_std(run_std) if run_std is not None else None
        opts = DeltaOptions(
            target=target,
            must_not_regress=guards,
            by=by,
            run_std=floors,
            proxy=proxy,
            mde=mde,
            seed=seed,
        )
        check_options(opts)
    except ConfigError as exc:
        raise typer.BadParameter(str(exc)) from None
    result = delta_files([before], [after], opts, on_error=on_error)
    _emit(result.as_dict(), result.lines(), result.warnings, json, report_file)
    if not result.ok:
        raise typer.Exit(1)


def variance(
    runs: Annotated[
        list[str],
        typer.Argument(help="Three or more graded runs of the same model on the same eval."),
    ],
    metric: Annotated[
        str,
        typer.Option(
            "--metric",
            "-m",
            envvar="WHILEAI_VARIANCE_METRIC",
            help="The headline metric: pass_at_1 or marker:NAME.",
        ),
    ] = "pass_at_1",
    by: Annotated[
        str | None,
        typer.Option(
            "--by",
            envvar="WHILEAI_VARIANCE_BY",
            help="Also per group: a row key (dotted for nested) or marker:NAME.",
        ),
    ] = None,
    on_error: OnErrorOpt = "fail",
    json: JsonOpt = False,
    report_file: ReportFile = None,
) -> None:
    """The eval's own re-run standard deviation, overall and --by; feeds delta --run-std.

    Pass each re-run as its own file; every shared marker gets its own floor. Fewer than
    three runs is a usage error: two give a difference, not a distribution."""
    from whileai_core.compare.variance import MIN_RUNS, variance_files

    from ..console import check_report_path

    _check_metric("--metric", metric)

    if len(runs) < MIN_RUNS:
        raise typer.BadParameter(
            f"got {len(runs)} run(s); give {MIN_RUNS} or more evaluations of the same model "
            "(two give a difference, not a distribution)",
            param_hint="'RUNS...'",
        )
    check_report_path(report_file)
    result = variance_files(runs, metric=metric, by=by, on_error=on_error)
    _emit(result.as_dict(), result.lines(), result.warnings, json, report_file)
