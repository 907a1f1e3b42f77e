"""curriculum (tasks easy to hard, the solved retired) and decontaminate (rows that copy
an eval text, dropped)."""

from __future__ import annotations

from typing import Annotated

import typer

from whileai_core.text.levels import COVERAGE_NGRAM, COVERAGE_OVERLAP

from ..options import BandOpt, Inputs, JsonOpt, OnErrorOpt, Output, ReportFile


def curriculum(
    inputs: Inputs = None,
    solved: Annotated[
        float,
        typer.Option(
            "--solved",
            min=0.0,
            max=1.0,
            envvar="WHILEAI_CURRICULUM_SOLVED",
            help="Pass rate at or above which a task is retired.",
        ),
    ] = 0.9,
    floor: Annotated[
        float,
        typer.Option(
            "--floor",
            min=0.0,
            max=1.0,
            envvar="WHILEAI_CURRICULUM_FLOOR",
            help="Pass rate at or below which a task is not ready.",
        ),
    ] = 0.0,
    tiers: Annotated[
        int,
        typer.Option(
            "--tiers", min=1, envvar="WHILEAI_CURRICULUM_TIERS", help="Stages of the schedule."
        ),
    ] = 3,
    band: BandOpt = "0.2,0.8",
    retire_solved: Annotated[
        bool,
        typer.Option("--retire-solved", help="Write the rows without the retired tasks."),
    ] = False,
    output: Output = None,
    on_error: OnErrorOpt = "fail",
    json: JsonOpt = False,
    report_file: ReportFile = None,
) -> None:
    """Order graded tasks easy to hard in tiers; --retire-solved drops the solved ones.

    A task's difficulty is its pass rate over its rollouts. Trainable tasks lie strictly
    between --floor and --solved; the report counts how many sit in the --band."""
    from whileai_core.curate.curriculum import CurriculumOptions, curriculum_files

    from ..console import check_report_path, emit_report, exit_if_nothing, print_lines, say
    from ..options import parse_band, resolve_inputs

    check_report_path(report_file)
    options = CurriculumOptions(solved=solved, floor=floor, tiers=tiers, band=parse_band(band))
    options.check()
    rows_out = retire_solved and output is None
    cur = curriculum_files(
        resolve_inputs(inputs), options, retire=retire_solved, output=output, on_error=on_error
    )
    if not emit_report(cur.as_dict(), json=json, report_file=report_file, data_on_stdout=rows_out):
        if rows_out:
            for line in cur.lines():
                say(line)
        else:
            print_lines(cur.lines())
    if retire_solved:
        exit_if_nothing(cur.rows_written or 0, "rows")


def decontaminate(
    inputs: Inputs = None,
    against: Annotated[
        list[str] | None,
        typer.Option(
            "--against",
            help="Eval rows: a JSONL file or a platform dataset id (ds_...); repeatable.",
        ),
    ] = None,
    fields: Annotated[
        str,
        typer.Option(
            "--fields",
            envvar="WHILEAI_DECONTAMINATE_FIELDS",
            help="Row fields to check, comma-separated (prompt, final_text, or any key); "
            "each against every eval prompt, answer and reference.",
        ),
    ] = "prompt",
    overlap: Annotated[
        float,
        typer.Option(
            "--overlap",
            min=0.01,
            max=1.0,
            envvar="WHILEAI_DECONTAMINATE_OVERLAP",
            help="Share of a row's words one eval text must cover to make it a near copy.",
        ),
    ] = COVERAGE_OVERLAP,
    ngram: Annotated[
        int, typer.Option("--ngram", min=2, help="Words per shared n-gram.")
    ] = COVERAGE_NGRAM,
    output: Output = None,
    on_error: OnErrorOpt = "fail",
    json: JsonOpt = False,
    report_file: ReportFile = None,
) -> None:
    """Drop rows that copy an eval set (same task, verbatim, or 8-gram coverage >= 80%).

    A row whose scenario_id (or task_id) is an eval row's is the eval task, whatever its
    words. Short texts (under --ngram words) match verbatim only: templated situations
    share whole sentences without sharing the question."""
    from whileai_core.curate.decontaminate import decontaminate_files

    from ..console import check_report_path, emit_report, exit_if_nothing, say
    from ..options import bad_flag, resolve_inputs

    check_report_path(report_file)
    if not against:
        bad_flag("--against", "give at least one eval file or dataset id")
    names = tuple(f.strip() for f in fields.split(",") if f.strip())
    if not names:
        bad_flag("--fields", "name at least one field, e.g. prompt,final_text")
    report = decontaminate_files(
        resolve_inputs(inputs),
        against,
        fields=names,
        overlap=overlap,
        n=ngram,
        output=output,
        on_error=on_error,
    )
    if not emit_report(
        report.as_dict(), json=json, report_file=report_file, data_on_stdout=output is None
    ):
        for line in report.lines():
            say(line)
    exit_if_nothing(report.clean, "rows")
