"""split, leakage: keep source traces out of the data made from them."""

from __future__ import annotations

from typing import Annotated

import typer

from whileai_core.text.levels import NEAR_COPY_COSINE

from ..options import Inputs, JsonOpt, Output, ReportFile


def split(
    inputs: Inputs = None,
    pseudo_production: Annotated[
        float,
        typer.Option(
            "--pseudo-production",
            min=0.0,
            max=1.0,
            envvar="WHILEAI_PSEUDO_PRODUCTION",
            help="Share of tasks to hold out as stand-in production traces (every flaw "
            "signature is held out at least once, even past this share).",
        ),
    ] = 0.2,
    production: Annotated[
        str,
        typer.Option(
            "--production",
            help="Write the held-out tasks' rows here (the traces for simulate --traces).",
        ),
    ] = "production.jsonl",
    output: Output = None,
    json: JsonOpt = False,
    report: ReportFile = None,
) -> None:
    """Hold out a task-disjoint slice of a run as pseudo-production; the rest to stdout or -o."""
    from whileai_core.traces.split import split_files

    from ..console import check_report_path, emit_report, err
    from ..options import resolve_inputs

    check_report_path(report)
    result = split_files(resolve_inputs(inputs), production, output, pseudo_production)
    on_stdout = output in (None, "-")
    if not emit_report(result.as_dict(), json=json, report_file=report, data_on_stdout=on_stdout):
        for line in result.lines():
            err().print(line, markup=False, highlight=False)


def leakage(
    inputs: Inputs = None,
    sources: Annotated[
        str,
        typer.Option(
            "--sources",
            help="The source traces: a JSONL file, a dataset id, agent:NAME or platform.",
        ),
    ] = "",
    drop: Annotated[
        bool, typer.Option("--drop", help="Write the rows that copy no source (unchanged).")
    ] = False,
    threshold: Annotated[
        float,
        typer.Option(
            "--threshold",
            min=0.0,
            max=1.0,
            envvar="WHILEAI_LEAKAGE_THRESHOLD",
            help="Cosine similarity of prompt embeddings at which a row is a near copy.",
        ),
    ] = NEAR_COPY_COSINE,
    embedder: Annotated[
        str,
        typer.Option(
            "--embedder",
            envvar="WHILEAI_EMBEDDER",
            help="hash (built in) or an embedding model on an OpenAI-compatible /embeddings "
            "endpoint: openai:MODEL, vllm:MODEL@URL, ollama:MODEL or a URL with --model.",
        ),
    ] = "hash",
    model: Annotated[
        str | None, typer.Option("--model", help="Model name for a bare --embedder URL.")
    ] = None,
    since: Annotated[
        str | None, typer.Option("--since", help="With --sources agent:NAME: this recent only.")
    ] = None,
    output: Output = None,
    json: JsonOpt = False,
    report: ReportFile = None,
) -> None:
    """Flag generated rows whose prompt near-copies a source trace; --drop removes them."""
    from whileai_core.models.options import ModelOptions
    from whileai_core.traces.leakage import check_files

    from ..console import check_report_path, emit_report, err, out
    from ..options import bad_flag, resolve_inputs

    if not sources:
        bad_flag("--sources", "give the source traces the rows were made from")
    if threshold <= 0:
        bad_flag("--threshold", "must be above 0")
    if output and not drop:
        bad_flag("--output", "rows are written only with --drop")
    check_report_path(report)
    result = check_files(
        resolve_inputs(inputs), sources, drop=drop, output=output, since=since,
        threshold=threshold, embedder=embedder, options=ModelOptions(model=model),
    )  # fmt: skip
    on_stdout = drop and output in (None, "-")
    if emit_report(result.as_dict(), json=json, report_file=report, data_on_stdout=on_stdout):
        return
    console = err() if drop else out()  # the report is the output, unless rows are
    for line in result.lines():
        console.print(line, markup=False, highlight=False)
