"""logprobs: coverage and confidence, reference scoring, mean KL, off-policy staleness."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Annotated, Any

import typer

from ..options import Inputs, JsonOpt, OnErrorOpt, Output, ReportFile, SpecOpt

logprobs_app = typer.Typer(
    help="Logprob checks: coverage, a reference model's scores, mean KL, staleness.",
    no_args_is_help=True,
)


def _emit(
    data: dict[str, Any],
    lines: list[str],
    json: bool,
    report: str | None,
    rows_on_stdout: bool = False,
) -> None:
    from ..console import emit_report, print_lines, say, warn

    if not emit_report(data, json=json, report_file=report, data_on_stdout=rows_on_stdout):
        if rows_on_stdout:
            for line in lines:
                say(line)
        else:
            print_lines(lines)
    for message in data.get("warnings", []):
        warn(message)


@logprobs_app.command("report")
def report(
    inputs: Inputs = None,
    on_error: OnErrorOpt = "fail",
    json: JsonOpt = False,
    report_file: ReportFile = None,
) -> None:
    """How many rows carry the policy's logprobs, and whether reward tracks its confidence."""
    from whileai_core.compare.logprobs import logprob_report

    _rows_report(inputs, on_error, json, report_file, logprob_report)


def _rows_report(
    inputs: list[str] | None,
    on_error: Any,
    json: bool,
    report_file: str | None,
    build: Callable[[Iterable[dict[str, Any]]], Any],
) -> None:
    """Read the rows once into `build`'s report and print it (bad lines counted)."""
    from whileai_core.jsonl import ReadStats, read_rows

    from ..console import check_report_path
    from ..options import resolve_inputs

    check_report_path(report_file)
    stats = ReadStats()
    result = build(read_rows(resolve_inputs(inputs), on_error=on_error, stats=stats))
    data = result.as_dict()
    if stats.skipped:
        data["warnings"].insert(0, stats.skipped_warning())
    _emit(data, result.lines(), json, report_file)


@logprobs_app.command("ref")
def ref(
    inputs: Inputs = None,
    model: Annotated[
        str,
        typer.Option(
            "--model",
            envvar="WHILEAI_REF_MODEL",
            help="The reference model: vllm:MODEL@URL, openai:MODEL, ollama:MODEL or a URL.",
        ),
    ] = ...,  # type: ignore[assignment]
    served_model: Annotated[
        str | None,
        typer.Option("--served-model", help="The model name when --model is a bare URL."),
    ] = None,
    route: Annotated[
        str,
        typer.Option(
            "--route",
            envvar="WHILEAI_REF_ROUTE",
            help="echo (/completions, echo + logprobs; --template, else ChatML), "
            "prompt-logprobs (vLLM, the model's own template), or auto (prompt-logprobs "
            "for vllm:, else echo).",
        ),
    ] = "auto",
    template: Annotated[
        str | None,
        typer.Option(
            "--template",
            envvar="WHILEAI_REF_TEMPLATE",
            help="echo: render with the reference model's chat template: its tokenizer "
            "folder (apply_chat_template with transformers) or a Jinja template file.",
        ),
    ] = None,
    spec: SpecOpt = None,
    concurrency: Annotated[
        int,
        typer.Option(
            "--concurrency",
            "-c",
            min=1,
            envvar="WHILEAI_REF_CONCURRENCY",
            help="Rows scored at once.",
        ),
    ] = 8,
    timeout: Annotated[
        float, typer.Option("--timeout", min=1, help="Seconds per model call.")
    ] = 120.0,
    output: Output = None,
    on_error: OnErrorOpt = "fail",
    json: JsonOpt = False,
    report_file: ReportFile = None,
) -> None:
    """Score the agent's turns under a reference model: ref_logprob per turn step and row.

    Rows leave the system prompt and tools out: give --spec so the reference scores the
    conversation the policy saw."""
    from whileai_core.compare.reference import ROUTES, reference_files
    from whileai_core.models.options import ModelOptions

    from ..console import check_report_path
    from ..options import bad_flag, resolve_inputs

    if route not in ROUTES:
        bad_flag("--route", f"{route!r}: expected one of {', '.join(ROUTES)}")
    check_report_path(report_file)
    system = tools = None
    if spec:
        from whileai_core.spec import load_spec

        loaded = load_spec(spec)
        system, tools = loaded.policy or None, loaded.openai_tools() or None
    options = ModelOptions(model=served_model, concurrency=concurrency, timeout=timeout)
    result = reference_files(
        resolve_inputs(inputs),
        model,
        output=output,
        options=options,
        route=route,
        system=system,
        tools=tools,
        on_error=on_error,
        template=template,
    )
    _emit(result.as_dict(), result.lines(), json, report_file, rows_on_stdout=output is None)
    if result.rows and not result.scored:
        from whileai_core.errors import WhileaiError

        raise WhileaiError(f"{result.model}: scored none of {result.rows} rows (see above)")


@logprobs_app.command("kl")
def kl(
    inputs: Inputs = None,
    ref_key: Annotated[
        str, typer.Option("--ref", help="The row and step key holding the reference logprob.")
    ] = "ref_logprob",
    output: Annotated[
        str | None,
        typer.Option(
            "--output",
            "-o",
            help="Also write the rows with calibration.mean_kl (their task's) here ('-': stdout).",
        ),
    ] = None,
    on_error: OnErrorOpt = "fail",
    json: JsonOpt = False,
    report_file: ReportFile = None,
) -> None:
    """Sampled KL(policy || reference) per generated token, overall and per task."""
    from whileai_core.compare.logprobs import kl_files

    from ..console import check_report_path
    from ..options import resolve_inputs

    check_report_path(report_file)
    result = kl_files(resolve_inputs(inputs), ref=ref_key, output=output, on_error=on_error)
    _emit(result.as_dict(), result.lines(), json, report_file, rows_on_stdout=output == "-")


@logprobs_app.command("staleness")
def staleness(
    inputs: Inputs = None,
    base_model: Annotated[
        str | None,
        typer.Option(
            "--base-model",
            envvar="WHILEAI_BASE_MODEL",
            help="The model about to be trained: rows another model sampled are stale.",
        ),
    ] = None,
    on_error: OnErrorOpt = "fail",
    json: JsonOpt = False,
    report_file: ReportFile = None,
) -> None:
    """Policy versions present, stale rows, logprob coverage; stale rows without logprobs named."""
    from functools import partial

    from whileai_core.compare.staleness import staleness_report

    _rows_report(
        inputs, on_error, json, report_file, partial(staleness_report, base_model=base_model)
    )
