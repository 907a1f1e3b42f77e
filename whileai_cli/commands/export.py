"""`whileai export`: rows out as SFT files, preference pairs, or an RL environment package."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import typer

from ..options import (
    BandOpt,
    Inputs,
    JsonOpt,
    OnErrorOpt,
    Output,
    ReportFile,
    SpecOpt,
    scoped_env,
    warn_renamed_env,
)


def export(
    inputs: Inputs = None,
    fmt: Annotated[
        Literal["openai", "trl"],
        typer.Option(
            "--format",
            envvar="WHILEAI_EXPORT_FORMAT",
            help="openai: chat wire, arguments as JSON strings, keeps `prompt`. "
            "trl: arguments as objects, no `prompt` column (the ask is `prompt_text`).",
        ),
    ] = "openai",
    output: Output = None,
    pairs: Annotated[
        bool, typer.Option("--pairs", help="Write chosen/rejected pairs within each ask.")
    ] = False,
    length_matched: Annotated[
        bool,
        typer.Option("--length-matched", help="Pairs: match reply lengths (within 25%)."),
    ] = False,
    env: Annotated[
        str | None,
        typer.Option("--env", help="Write an installable RL environment package to this folder."),
    ] = None,
    spec: SpecOpt = None,
    reward: Annotated[
        str | None,
        typer.Option(
            "--reward",
            help="--env: the reward as 'module:function' (row -> verdict); default: whileai's "
            "task checklist.",
        ),
    ] = None,
    world: Annotated[
        str | None,
        typer.Option(
            "--world",
            help="--env: the world factory as 'module:function' (info -> object with "
            ".call(name, arguments)); default: whileai's mock world.",
        ),
    ] = None,
    name: Annotated[
        str | None, typer.Option("--name", help="--env: package name (default: the spec's).")
    ] = None,
    max_turns: Annotated[int, typer.Option("--max-turns", min=1, help="--env: the turn cap.")] = 12,
    holdout: Annotated[
        float,
        typer.Option(
            "--holdout",
            min=0.0,
            max=1.0,
            envvar=scoped_env("WHILEAI_HOLDOUT", "export"),
            help="--env: fraction of asks held out.",
        ),
    ] = 0.2,
    band: BandOpt = "0.2,0.8",
    mask: Annotated[
        Literal["all", "final"],
        typer.Option(
            "--mask",
            envvar="WHILEAI_MASK",
            help="loss_mask: every agent turn, or only the final one.",
        ),
    ] = "all",
    unroll: Annotated[
        bool, typer.Option("--unroll", help="One sample per agent turn, loss on that turn.")
    ] = False,
    max_tool_output_chars: Annotated[
        int | None,
        typer.Option(
            "--max-tool-output-chars",
            min=1,
            envvar="WHILEAI_MAX_TOOL_OUTPUT_CHARS",
            help="Cut tool messages to N chars, with a visible marker.",
        ),
    ] = None,
    on_error: OnErrorOpt = "fail",
    json: JsonOpt = False,
    report_file: ReportFile = None,
) -> None:
    """Write training files (SFT or --pairs, openai or trl shape) or an RL environment (--env)."""
    warn_renamed_env("export")
    from whileai_core.jsonl import ReadStats, RowWriter, read_rows

    from ..console import check_report_path, exit_if_nothing
    from ..options import bad_flag, parse_band, resolve_inputs

    if pairs and env:
        bad_flag("--pairs", "--pairs and --env write different things; pick one")
    if env and not spec:
        bad_flag("--env", "--env needs --spec (the system prompt and tools the tasks use)")
    if holdout >= 1.0:
        bad_flag("--holdout", f"{holdout}: must be below 1 (some asks must be left to train)")
    lo, hi = parse_band(band)
    check_report_path(report_file)
    stats = ReadStats()
    rows = read_rows(resolve_inputs(inputs), on_error=on_error, stats=stats)
    data: dict[str, Any]
    if env and spec:
        from whileai_core.export import export_environment
        from whileai_core.export.environment import DEFAULT_REWARD, DEFAULT_WORLD
        from whileai_core.spec import load_spec

        report = export_environment(
            rows,
            env,
            load_spec(spec),
            reward=reward or DEFAULT_REWARD,
            world=world or DEFAULT_WORLD,
            name=name,
            max_turns=max_turns,
            band=(lo, hi),
            holdout=holdout,
        )
        data = report.as_dict()
    elif pairs:
        from whileai_core.export import PairsReport, preference_pairs

        pair_report = PairsReport(fmt, length_matched)
        with RowWriter(output) as writer:
            writer.write_many(
                preference_pairs(rows, fmt=fmt, length_matched=length_matched, report=pair_report)
            )
        data = pair_report.as_dict()
    else:
        from whileai_core.export import TrainingReport, training_samples

        tools = None
        if spec:
            from whileai_core.spec import load_spec

            tools = load_spec(spec).openai_tools()
        sft_report = TrainingReport(fmt, mask, unroll, max_tool_output_chars)
        samples = training_samples(
            rows,
            fmt=fmt,
            mask=mask,
            unroll=unroll,
            max_tool_output_chars=max_tool_output_chars,
            tools=tools,
            report=sft_report,
        )
        with RowWriter(output) as writer:
            writer.write_many(samples)
        data = sft_report.as_dict()
    data["skipped_lines"] = stats.skipped
    _emit(data, json=json, report_file=report_file, data_on_stdout=not env and output is None)
    written = {"training": "samples", "pairs": "pairs"}.get(data["kind"], "train")
    exit_if_nothing(int(data[written]), "training tasks" if env else f"{written}")


def _emit(
    data: dict[str, Any], *, json: bool, report_file: str | None, data_on_stdout: bool
) -> None:
    from ..console import emit_report, say, warn

    if emit_report(data, json=json, report_file=report_file, data_on_stdout=data_on_stdout):
        return
    refused = ", ".join(f"{n} {why}" for why, n in sorted(data.get("refused", {}).items()))
    kind = data["kind"]
    if kind == "training":
        rt = data["tool_call_roundtrip"]
        say(
            f"export --format {data['format']}: {data['rows_in']} rows -> {data['samples']} "
            f"samples ({data['trained_messages']} trained / {data['masked_messages']} masked "
            f"messages, mask {data['mask']}{', unrolled' if data['unroll'] else ''})"
        )
        say(
            f"  tool_call_roundtrip: encoding {rt['encoding']}, {rt['checked']} checked, "
            f"{rt['invalid']} invalid; {data['tool_outputs_truncated']} tool outputs cut; "
            f"{data['rebuilt_from_steps']} rebuilt from steps"
        )
    elif kind == "pairs":
        from whileai_core.export.pairs import pairs_lines

        for line in pairs_lines(data):
            say(line)
    else:
        bd = data["band_dropped"]
        say(
            f"export --env {data['directory']}: package {data['name']}, {data['train']} train + "
            f"{data['holdout']} holdout tasks from {data['tasks_in']} asks; band dropped "
            f"{bd['too_easy']} too easy, {bd['too_hard']} too hard; "
            f"{data['decontaminated']} decontaminated"
        )
        for message in data["gate"].get("warnings", []):
            warn(message)
    if refused:
        warn(f"refused rows: {refused}")
    if data.get("skipped_lines"):
        warn(f"{data['skipped_lines']} bad lines skipped")
    for message in data.get("warnings", []):
        warn(message)
