"""grade (rows in, graded rows out) and report (pass@1, pass^k, pass@k and the rest)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from contextvars import ContextVar
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer

if TYPE_CHECKING:
    from rich.table import Table

from ..options import (
    ExecutorOpt,
    Inputs,
    JsonOpt,
    JudgeConcurrencyOpt,
    JudgeTimeoutOpt,
    OnErrorOpt,
    Output,
    RayAddressOpt,
    ReportFile,
    ShardOpt,
    ShardsOpt,
    SpecOpt,
    check_executor,
    load_spec_flag,
    read_rubric,
    scoped_env,
    warn_renamed_env,
)

# `whileai evaluate` runs grade's body with evaluate_files in place of grade_files (same
# flags, same judge, same executor, lineage stamped): see commands/evaluate.py.
GRADE_RUNNER: ContextVar[Callable[..., Any] | None] = ContextVar("grade_runner", default=None)

KOpt = Annotated[
    int | None,
    typer.Option("--k", min=1, help="k for pass^k / pass@k (default: the smallest group)."),
]
SeedOpt = Annotated[
    int,
    typer.Option(
        "--seed",
        envvar=scoped_env("WHILEAI_SEED", "report"),
        help="Bootstrap seed (reproducible).",
    ),
]


def grade(
    inputs: Inputs = None,
    judge: Annotated[
        str | None,
        typer.Option(
            "--judge",
            "-j",
            envvar="WHILEAI_JUDGE",
            help="exact-match, numeric(tolerance=0.01), all:a,b, weighted:a=0.7,b=0.3, "
            "code-exec, conduct, checklist, openai:MODEL, vllm:MODEL@URL, a URL, "
            "module:function, path.py:function, cmd:COMMAND or rm:RUN (a trained reward "
            "model). Default: conduct × checklist.",
        ),
    ] = None,
    llm_judge: Annotated[
        str | None,
        typer.Option(
            "--llm-judge",
            envvar="WHILEAI_LLM_JUDGE",
            help="Also ask this LLM (openai:MODEL, vllm:MODEL@URL or a URL) with the rubric: "
            "its advisory verdict goes in llm_reward beside reward, never in its place.",
            show_default=False,
        ),
    ] = None,
    spec: SpecOpt = None,
    rubric: Annotated[
        str | None,
        typer.Option("--rubric", envvar="WHILEAI_RUBRIC", help="Rubric file for an LLM judge."),
    ] = None,
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            envvar="WHILEAI_JUDGE_MODEL",
            help="Model name for a judge given as a bare URL.",
        ),
    ] = None,
    use_privileged: Annotated[
        bool, typer.Option("--use-privileged", help="Let an LLM judge read the privileged block.")
    ] = False,
    field: Annotated[
        str | None, typer.Option("--field", help="Read the gold from this field (dotted path).")
    ] = None,
    schema: Annotated[
        str | None, typer.Option("--schema", help="JSON Schema file for json-schema.")
    ] = None,
    tolerance: Annotated[
        float | None,
        typer.Option(
            "--tolerance", help="Absolute tolerance for numeric and for code-exec's float cases."
        ),
    ] = None,
    sandbox: Annotated[
        Literal["bubblewrap", "none"] | None,
        typer.Option(
            "--sandbox",
            envvar="WHILEAI_SANDBOX",
            help="Isolation for code-exec: bubblewrap (the default; refuses to run without "
            "it) or none (only for code you trust: it runs unisolated). [default: bubblewrap]",
        ),
    ] = None,
    scale: Annotated[
        str | None,
        typer.Option(
            "--scale",
            envvar="WHILEAI_GRADE_SCALE",
            help="The judge rates on LO,HI (e.g. 1,5): the rating is kept in "
            "judge_meta.rating and reward = (rating - LO) / (HI - LO). Without it a verdict "
            "outside [0, 1] is invalid_result.",
        ),
    ] = None,
    concurrency: JudgeConcurrencyOpt = 8,
    timeout: JudgeTimeoutOpt = 60.0,
    cache: Annotated[
        bool,
        typer.Option(
            "--cache",
            envvar="WHILEAI_CACHE",
            help="LLM judge: keep completions in WHILEAI_HOME/cache (the simulate cache).",
        ),
    ] = False,
    output: Output = None,
    on_error: OnErrorOpt = "fail",
    k: KOpt = None,
    seed: SeedOpt = 0,
    json: JsonOpt = False,
    report_file: ReportFile = None,
    shard: ShardOpt = None,
    executor: ExecutorOpt = "local",
    ray_address: RayAddressOpt = None,
    shards: ShardsOpt = None,
) -> None:
    """Judge every row: reward, reason, judge_name, judge_status, judge_meta, markers.

    Exits 1 when rows came in and the judge could judge none of them (it raised, timed out
    or answered no verdict on every row): the graded rows are still written, reward null."""
    warn_renamed_env("grade")
    from whileai_core.errors import WhileaiError
    from whileai_core.judges import JudgeOptions, parse_judge
    from whileai_core.judges.run import grade_files
    from whileai_core.models.options import ModelOptions
    from whileai_core.scale.executor import make_executor

    from ..console import check_report_path, emit_report, progress_bar, say, warn
    from ..options import resolve_inputs

    check_report_path(report_file)
    picked = check_executor(shard, executor, ray_address, shards)
    files = resolve_inputs(inputs)
    loaded = load_spec_flag(spec)
    rubric_text = read_rubric(rubric)
    rating_scale = None
    if scale:
        from whileai_core.errors import ConfigError
        from whileai_core.judges.contract import parse_scale

        from ..options import bad_flag

        try:
            rating_scale = parse_scale(scale)
        except ConfigError as exc:
            bad_flag("--scale", str(exc))
    opts = JudgeOptions(
        scale=rating_scale,
        field=field,
        schema=schema,
        tolerance=tolerance,
        timeout=timeout,
        spec=loaded,
        rubric=rubric_text,
        use_privileged=use_privileged,
        sandbox=sandbox,
        models=ModelOptions(
            model=model, concurrency=concurrency, timeout=timeout or 60.0, cache=cache
        ),
    )
    chosen = parse_judge(judge, opts)
    extra: dict[str, Any] = {}
    if llm_judge:
        from whileai_core.errors import ConfigError
        from whileai_core.registry import is_model_ref

        if not is_model_ref(llm_judge):
            raise ConfigError(
                f"--llm-judge {llm_judge!r}: give a model (openai:MODEL, vllm:MODEL@URL, a URL)"
            )
        if executor != "local":
            raise ConfigError(f"--llm-judge runs in this process: not with --executor {executor}")
        extra["advisor"] = parse_judge(llm_judge, opts)
    run_on = make_executor(executor, shard=picked, shards=shards, address=ray_address, say=say)
    with progress_bar("grading") as update:
        graded = 0

        def on_graded(_row: dict[str, Any]) -> None:
            nonlocal graded
            graded += 1
            if update is not None and graded % 100 == 0:
                update(graded)

        runner = GRADE_RUNNER.get() or grade_files
        result = runner(
            files,
            chosen,
            output=output,
            on_error=on_error,
            concurrency=concurrency,
            timeout=timeout or None,
            k=k,
            seed=seed,
            executor=run_on,
            on_graded=on_graded,
            **extra,
        )
    result.default_judge = judge is None
    data = result.report
    json_printed = emit_report(
        data, json=json, report_file=report_file, data_on_stdout=output is None
    )
    for line in [] if json_printed else result.lines()[:-1]:
        say(line)
    for message in result.warnings():
        warn(message)
    if not json_printed:
        say(result.lines()[-1])
    if data["rows"] and not data["judged"]:
        raise WhileaiError(f"{result.judge}: judged none of {data['rows']} rows (see above)")


def report(
    inputs: Inputs = None,
    json: JsonOpt = False,
    k: KOpt = None,
    seed: SeedOpt = 0,
    on_error: OnErrorOpt = "fail",
    report_file: ReportFile = None,
) -> None:
    """pass@1 with its interval, pass^k, pass@k and headroom over graded rows.

    Also the per-task pass-rate histogram, judge status counts and every marker's mean
    with its interval."""
    warn_renamed_env("report")
    from whileai_core.jsonl import ReadStats, read_rows
    from whileai_core.metrics.passat import pass_report

    from ..console import check_report_path, emit_report, warn
    from ..options import resolve_inputs

    check_report_path(report_file)
    stats = ReadStats()
    result = pass_report(
        read_rows(resolve_inputs(inputs), on_error=on_error, stats=stats), k=k, seed=seed
    )
    if stats.skipped:
        warn(stats.skipped_warning())
    for message in result.get("warnings", []):
        warn(message)
    if not emit_report(result, json=json, report_file=report_file, data_on_stdout=False):
        _print_report(result)
    if result["rows"] and not result["judged"]:
        from whileai_core.errors import WhileaiError

        raise WhileaiError(f"none of {result['rows']} rows is judged: grade them first")


def _print_report(r: dict[str, Any]) -> None:
    from whileai_core.metrics.passat import report_text

    from ..console import out

    console = out()
    lines, tables = report_text(r)
    for line in lines:
        console.print(line)
    for title, header, rows in tables:
        console.print(_table(title, header, rows))


def _table(title: str, header: tuple[str, ...], rows: Iterable[Iterable[Any]]) -> Table:
    """A titled table: the first column left-aligned, the figures right-aligned."""
    from rich.table import Table

    table = Table(title=title, title_justify="left")
    for i, name in enumerate(header):
        table.add_column(name, justify="left" if i == 0 else "right")
    for row in rows:
        table.add_row(*(str(cell) for cell in row))
    return table
