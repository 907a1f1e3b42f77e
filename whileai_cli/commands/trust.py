"""Trust the numbers: label, trust, probes, agreement, pairs, rubrics.

Each is one core function (`whileai_core.trust`) plus flag parsing and printing. Reports
that stand alone (trust, probes, agreement) print on stdout; commands that write rows
(label, pairs, rubrics) keep stdout for the rows and report on stderr.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from ..options import (
    Inputs,
    JsonOpt,
    JudgeConcurrencyOpt,
    JudgeTimeoutOpt,
    OnErrorOpt,
    Output,
    ReportFile,
    SpecOpt,
    load_spec_flag,
    read_rubric,
    scoped_env,
    warn_renamed_env,
)

if TYPE_CHECKING:
    from whileai_core.judges.contract import Judge
    from whileai_core.spec import Spec

JudgeOpt = Annotated[
    str | None,
    typer.Option(
        "--judge",
        "-j",
        envvar="WHILEAI_JUDGE",
        help="The judge to measure: any --judge value grade takes (checklist, conduct, "
        "openai:MODEL, module:function, cmd:...).",
    ),
]
RubricOpt = Annotated[
    str | None,
    typer.Option("--rubric", envvar="WHILEAI_RUBRIC", help="Rubric file for an LLM judge."),
]
ModelOpt = Annotated[
    str | None,
    typer.Option(
        "--model", envvar="WHILEAI_JUDGE_MODEL", help="Model name for a judge given as a bare URL."
    ),
]
SeedOpt = Annotated[
    int,
    typer.Option(
        "--seed", envvar=scoped_env("WHILEAI_SEED", "trust"), help="Seed for the samples drawn."
    ),
]


def _judge(
    ref: str | None,
    spec: Spec | None,
    rubric: str | None,
    model: str | None,
    concurrency: int,
    timeout: float,
) -> Judge:
    from whileai_core.judges import JudgeOptions, parse_judge
    from whileai_core.models.options import ModelOptions

    opts = JudgeOptions(
        timeout=timeout,
        spec=spec,
        rubric=rubric,
        models=ModelOptions(model=model, concurrency=concurrency, timeout=timeout or 60.0),
    )
    return parse_judge(ref, opts)


def _setup(
    inputs: list[str] | None,
    judge: str | None,
    spec: str | None,
    rubric: str | None,
    model: str | None,
    concurrency: int,
    timeout: float,
    on_error: Any,
) -> tuple[list[dict[str, Any]], Judge | None, Spec | None, str | None]:
    """Rows, the judge named (None when none was), the spec, and the rubric text to use:
    --rubric, else the spec's rubric.md."""
    loaded = load_spec_flag(spec)
    rubric_text = read_rubric(rubric)
    rows = _rows(inputs, on_error)
    chosen = _judge(judge, loaded, rubric_text, model, concurrency, timeout) if judge else None
    return rows, chosen, loaded, rubric_text or (loaded.rubric if loaded else None)


def _show(report: Any, json: bool, report_file: str | None, rows_on_stdout: bool) -> None:
    """--json / --report FILE, else the report's lines: on stdout when it is the output,
    on stderr when rows are."""
    from ..console import emit_report, print_lines

    if not emit_report(
        report.as_dict(), json=json, report_file=report_file, data_on_stdout=rows_on_stdout
    ):
        (_tell if rows_on_stdout else print_lines)(report.lines())


def _rows(inputs: list[str] | None, on_error: Any) -> list[dict[str, Any]]:
    from whileai_core.jsonl import ReadStats, read_rows

    from ..console import warn
    from ..options import resolve_inputs

    stats = ReadStats()
    rows = list(read_rows(resolve_inputs(inputs), on_error=on_error, stats=stats))
    if stats.skipped:
        warn(stats.skipped_warning())
    return rows


def _pair_lines(inputs: list[str] | None, on_error: Any) -> list[Any]:
    """Pair lines: JSON objects read without the row rules (a TRL pair's `prompt` is a
    message list, an OpenAI preference line has no row keys at all)."""
    from whileai_core.jsonl import ReadStats, iter_lines

    from ..console import warn
    from ..options import resolve_inputs

    stats = ReadStats()
    lines = [row for _, _, row in iter_lines(
        resolve_inputs(inputs), on_error=on_error, stats=stats, check=False)]  # fmt: skip
    if stats.skipped:
        warn(stats.skipped_warning())
    return lines


def _tell(lines: list[str]) -> None:
    from ..console import err

    for line in lines:
        err().print(line, markup=False)


def label(
    inputs: Inputs = None,
    labels: Annotated[
        str,
        typer.Option(
            "--labels",
            "-l",
            help="JSONL of labels: scenario_id (or prompt), rollout_index, "
            "gold_reward 0/1, optional annotator and note.",
        ),
    ] = "",
    annotator: Annotated[
        str,
        typer.Option(
            "--annotator",
            "-a",
            envvar="WHILEAI_ANNOTATOR",
            help="Who labelled, for lines that do not name their own annotator "
            "(needed only when some line does not).",
        ),
    ] = "",
    output: Output = None,
    on_error: OnErrorOpt = "fail",
    json: JsonOpt = False,
    report_file: ReportFile = None,
) -> None:
    """Attach human labels (gold_reward 0/1, who said what) to rows; report unmatched labels.

    Rows go to stdout (or -o) with gold_reward, gold_labels, gold_kind and label_source. A
    label with scenario_id and prompt matches on both; a label that matches no row, could
    name several, or names a row another line already labelled for the same annotator is
    listed with its file:line. Exits 1 when no label matched a row."""
    from whileai_core.jsonl import ReadStats, RowWriter, read_rows
    from whileai_core.trust.labels import LabelReport, label_stream, read_labels

    from ..console import check_report_path, warn
    from ..options import bad_flag, resolve_inputs

    if not labels:
        bad_flag("--labels", "the labels file is required")
    check_report_path(report_file)
    parsed = read_labels(labels, annotator)
    report = LabelReport()
    stats = ReadStats()
    rows = read_rows(resolve_inputs(inputs), on_error=on_error, stats=stats)
    with RowWriter(output) as writer:
        writer.write_many(label_stream(rows, parsed, report))
    if stats.skipped:
        warn(stats.skipped_warning())
    _show(report, json, report_file, rows_on_stdout=output is None)
    if report.matched == 0:
        raise typer.Exit(1)


def trust(
    inputs: Inputs = None,
    judge: JudgeOpt = None,
    spec: SpecOpt = None,
    rubric: RubricOpt = None,
    model: ModelOpt = None,
    min_agreement: Annotated[
        float | None,
        typer.Option(
            "--min-agreement",
            min=0,
            max=1,
            envvar="WHILEAI_TRUST_MIN_AGREEMENT",
            help="Also hold agreement to this (no default: kappa and the majority-class "
            "baseline already say whether agreement means anything).",
        ),
    ] = None,
    min_kappa: Annotated[
        float,
        typer.Option(
            "--min-kappa",
            min=-1,
            max=1,
            envvar="WHILEAI_TRUST_MIN_KAPPA",
            help="Lowest Cohen's kappa a trusted judge may have.",
        ),
    ] = 0.6,
    max_pass_when_gold_fail: Annotated[
        float,
        typer.Option(
            "--max-pass-when-gold-fail",
            min=0,
            max=1,
            envvar="WHILEAI_TRUST_MAX_PASS_WHEN_GOLD_FAIL",
            help="Highest share of gold failures a trusted judge may pass.",
        ),
    ] = 0.1,
    min_per_class: Annotated[
        int,
        typer.Option(
            "--min-per-class",
            min=1,
            envvar="WHILEAI_TRUST_MIN_PER_CLASS",
            help="Gold passes and gold failures each needed before a judge can be trusted.",
        ),
    ] = 10,
    sample: Annotated[
        int,
        typer.Option(
            "--sample",
            min=0,
            envvar="WHILEAI_TRUST_SAMPLE",
            help="Labelled rows re-judged as-is and with filler (needs --judge).",
        ),
    ] = 20,
    probes: Annotated[
        str | None,
        typer.Option(
            "--probes",
            envvar="WHILEAI_TRUST_PROBES",
            help="Also run probes on the labelled rows: all, or a comma list.",
        ),
    ] = None,
    seed: SeedOpt = 0,
    concurrency: JudgeConcurrencyOpt = 8,
    timeout: JudgeTimeoutOpt = 60.0,
    on_error: OnErrorOpt = "fail",
    json: JsonOpt = False,
    report_file: ReportFile = None,
) -> None:
    """Is the judge trustworthy? Agreement, kappa, length bias and probes against gold labels.

    Reads gold_reward (see `whileai label`). Without --judge the rows' own rewards are
    measured; with one, the labelled rows are judged afresh. No labels: NOT MEASURED.
    TRUSTED needs --min-per-class labels of each class, kappa >= --min-kappa,
    pass_when_gold_fail <= --max-pass-when-gold-fail and agreement above the majority-class
    baseline; otherwise NOT TRUSTED names what failed, and the command exits 1."""
    warn_renamed_env("trust")
    from whileai_core.trust.bar import TrustBar
    from whileai_core.trust.trust import judge_trust

    from ..console import check_report_path

    check_report_path(report_file)
    rows, chosen, loaded, rubric_text = _setup(
        inputs, judge, spec, rubric, model, concurrency, timeout, on_error
    )
    if probes and chosen is None:
        from ..options import bad_flag

        bad_flag("--probes", "probes need a judge to try them on: add --judge")
    report = judge_trust(
        rows,
        chosen,
        bar=TrustBar(
            min_kappa=min_kappa,
            max_pass_when_gold_fail=max_pass_when_gold_fail,
            min_per_class=min_per_class,
            min_agreement=min_agreement,
        ),
        sample=sample,
        seed=seed,
        probes=probes,
        rubric=rubric_text,
        spec=loaded,
        concurrency=concurrency,
        timeout=timeout or None,
    )
    _show(report, json, report_file, rows_on_stdout=False)
    if report.failed:
        raise typer.Exit(1)


def probes(
    inputs: Inputs = None,
    judge: JudgeOpt = None,
    spec: SpecOpt = None,
    rubric: RubricOpt = None,
    model: ModelOpt = None,
    which: Annotated[
        str,
        typer.Option(
            "--probes",
            envvar="WHILEAI_PROBES",
            help="all, or a comma list of: "
            "filler, rubric_words, sycophantic_opener, success_claim, echo, "
            "empty_call, polite_refusal, ask_back.",
        ),
    ] = "all",
    sample: Annotated[
        int | None,
        typer.Option(
            "--sample",
            min=1,
            envvar="WHILEAI_PROBES_SAMPLE",
            help="Probe a seeded sample of this many rows (default: all).",
        ),
    ] = None,
    threshold: Annotated[
        float,
        typer.Option(
            "--threshold",
            min=0,
            max=1,
            envvar="WHILEAI_PROBES_THRESHOLD",
            help="A probe passing this share of its rows is a hole.",
        ),
    ] = 0.10,
    seed: SeedOpt = 0,
    concurrency: JudgeConcurrencyOpt = 8,
    timeout: JudgeTimeoutOpt = 60.0,
    on_error: OnErrorOpt = "fail",
    json: JsonOpt = False,
    report_file: ReportFile = None,
) -> None:
    """Try the reward hacks a policy finds first on a judge; name the holes at >= 10%.

    Additive probes are holes when replies the judge failed start passing; replacement
    probes when a reply that does nothing passes. Default judge: the checklist. Exits 1
    when any probe is a hole (exploitable_by is not empty)."""
    warn_renamed_env("probes")
    from whileai_core.trust.probes import judge_probes

    from ..console import check_report_path

    check_report_path(report_file)
    rows, chosen, loaded, rubric_text = _setup(
        inputs, judge or "checklist", spec, rubric, model, concurrency, timeout, on_error
    )
    assert chosen is not None
    report = judge_probes(
        rows,
        chosen,
        probes=which,
        rubric=rubric_text,
        spec=loaded,
        sample=sample,
        seed=seed,
        threshold=threshold,
        concurrency=concurrency,
        timeout=timeout or None,
    )
    _show(report, json, report_file, rows_on_stdout=False)
    if report.exploitable_by:
        raise typer.Exit(1)


def agreement(
    first: Annotated[str, typer.Argument(help="Graded rows: the judge (or run) measured.")],
    second: Annotated[
        str | None,
        typer.Argument(help="Graded rows taken as gold; without it, first's gold_reward."),
    ] = None,
    on_error: OnErrorOpt = "fail",
    json: JsonOpt = False,
    report_file: ReportFile = None,
) -> None:
    """Agreement between two judges or runs (the second as gold), or rows against gold_reward.

    Rows pair by scenario_id + rollout_index (or prompt); unpaired and unjudged rows are
    counted, not guessed. Same statistics as `whileai trust`."""
    from whileai_core.trust.agreement import judge_agreement

    from ..console import check_report_path

    check_report_path(report_file)
    rows = _rows([first], on_error)
    gold = _rows([second], on_error) if second else None
    report = judge_agreement(rows, gold, names=(first, second or first))
    _show(report, json, report_file, rows_on_stdout=False)


def pairs(
    inputs: Inputs = None,
    judge: Annotated[
        str,
        typer.Option(
            "--judge",
            "-j",
            envvar="WHILEAI_PAIRS_JUDGE",
            help="An LLM judge: openai:MODEL, vllm:MODEL@URL or a URL (with --model).",
        ),
    ] = "",
    rubric: RubricOpt = None,
    model: ModelOpt = None,
    concurrency: JudgeConcurrencyOpt = 8,
    timeout: JudgeTimeoutOpt = 60.0,
    cache: Annotated[
        bool, typer.Option("--cache", envvar="WHILEAI_CACHE", help="Keep completions cached.")
    ] = False,
    output: Output = None,
    on_error: OnErrorOpt = "fail",
    json: JsonOpt = False,
    report_file: ReportFile = None,
) -> None:
    """Judge A vs B pairs with an LLM both ways round: winner, tie, position_flip_rate.

    A line holds a prompt and two sides as a/b, or is either file `whileai export --pairs`
    writes (TRL's chosen/rejected, OpenAI's preferred/non_preferred_output); each side is a
    reply, a row or a message list. Pairs go out with
    pair_verdict; exits 1 when no pair could be judged."""
    warn_renamed_env("pairs")
    from whileai_core.jsonl import RowWriter
    from whileai_core.models.options import ModelOptions
    from whileai_core.trust.pairs import judge_pairs

    from ..console import check_report_path
    from ..options import bad_flag

    if not judge:
        bad_flag("--judge", "pairs need an LLM judge: openai:MODEL, vllm:MODEL@URL or a URL")
    check_report_path(report_file)
    items = _pair_lines(inputs, on_error)
    options = ModelOptions(
        model=model, concurrency=concurrency, timeout=timeout or 60.0, cache=cache
    )
    judged, report = judge_pairs(items, judge, rubric=read_rubric(rubric), options=options)
    with RowWriter(output) as writer:
        writer.write_many(judged)
    _show(report, json, report_file, rows_on_stdout=output is None)
    if items and not report.judged:
        raise typer.Exit(1)


def rubrics(
    inputs: Inputs = None,
    writer: Annotated[
        str | None,
        typer.Option(
            "--writer",
            envvar="WHILEAI_RUBRICS_WRITER",
            help="A model writes each prompt's criteria (openai:MODEL, ...); "
            "without one they come from the task's grid coordinates.",
        ),
    ] = None,
    domain: Annotated[
        str | None, typer.Option("--domain", help="What the agent does, for the writer.")
    ] = None,
    model: ModelOpt = None,
    concurrency: JudgeConcurrencyOpt = 8,
    timeout: JudgeTimeoutOpt = 60.0,
    output: Output = None,
    on_error: OnErrorOpt = "fail",
    json: JsonOpt = False,
    report_file: ReportFile = None,
) -> None:
    """Write per-prompt rubric items onto privileged.rubric (by a model, or from the grid).

    Score them with `whileai grade --judge rubric` (offline) or `--judge rubric(MODEL)`:
    reward is the share of items met, with a marker rubric:<item> each."""
    warn_renamed_env("rubrics")
    from whileai_core.jsonl import RowWriter
    from whileai_core.models.options import ModelOptions
    from whileai_core.trust.rubrics import write_rubrics

    from ..console import check_report_path

    check_report_path(report_file)
    rows = _rows(inputs, on_error)
    options = ModelOptions(model=model, concurrency=concurrency, timeout=timeout or 60.0)
    written, report = write_rubrics(rows, writer, domain=domain, options=options)
    with RowWriter(output) as out_rows:
        out_rows.write_many(written)
    _show(report, json, report_file, rows_on_stdout=output is None)
    if rows and not report.written:
        raise typer.Exit(1)
