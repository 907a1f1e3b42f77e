"""`whileai export`: rows out as SFT files, preference pairs, a Hub dataset folder, or an RL
environment package."""

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
    load_spec_flag,
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
            help="openai: OpenAI's fine-tuning lines exactly (messages, tools, "
            "parallel_tool_calls; per-turn weight). trl: TRL's conversational rows "
            "(argument objects; prompt/completion for --mask final and --unroll).",
        ),
    ] = "openai",
    output: Output = None,
    pairs: Annotated[
        bool,
        typer.Option(
            "--pairs", help="Write chosen/rejected pairs, cut at the first agent turn that differs."
        ),
    ] = False,
    completions: Annotated[
        Literal["turn", "continuation"],
        typer.Option(
            "--completions",
            help="--pairs: the agent's turn at the divergence, or everything after it "
            "(tool output included; trl only).",
        ),
    ] = "turn",
    length_matched: Annotated[
        bool,
        typer.Option("--length-matched", help="Pairs: match the two turns' lengths (within 25%)."),
    ] = False,
    include_failures: Annotated[
        bool,
        typer.Option(
            "--include-failures",
            envvar="WHILEAI_EXPORT_INCLUDE_FAILURES",
            help="SFT: keep rows below the pass line (reward < 0.5); left out by default.",
        ),
    ] = False,
    meta: Annotated[
        str | None,
        typer.Option(
            "--meta",
            help="Write each sample's metadata (scenario, rollout, reward, the ask) to this "
            "JSONL sidecar, line for line.",
        ),
    ] = None,
    keep_meta: Annotated[
        bool,
        typer.Option(
            "--keep-meta",
            help="Keep the metadata in each line (the trl default; makes openai lines "
            "non-standard).",
        ),
    ] = False,
    hf: Annotated[
        str | None,
        typer.Option(
            "--hf",
            help="Write a Hugging Face dataset folder here: data/<split>.jsonl for "
            "train/holdout/eval, a README card, whileai.json.",
        ),
    ] = None,
    env: Annotated[
        str | None,
        typer.Option("--env", help="Write an installable RL environment package to this folder."),
    ] = None,
    spec: SpecOpt = None,
    reward: Annotated[
        str | None,
        typer.Option(
            "--reward",
            help="--env: the reward as 'module:function' (row -> verdict); default: the judge "
            "`whileai grade` uses.",
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
        str | None,
        typer.Option(
            "--name",
            help="--env: package name (default: the spec's); --hf: card title (default: the "
            "folder's).",
        ),
    ] = None,
    license_id: Annotated[
        str,
        typer.Option("--license", help="--hf: the data's license on the card (a Hub id)."),
    ] = "other",
    language: Annotated[
        str, typer.Option("--language", help="--hf: the data's language on the card.")
    ] = "en",
    max_turns: Annotated[int, typer.Option("--max-turns", min=1, help="--env: the turn cap.")] = 12,
    holdout: Annotated[
        float,
        typer.Option(
            "--holdout",
            min=0.0,
            max=1.0,
            envvar=scoped_env("WHILEAI_HOLDOUT", "export"),
            help="--env, --hf: fraction of asks held out.",
        ),
    ] = 0.2,
    band: BandOpt = "0.2,0.8",
    mask: Annotated[
        Literal["all", "final"],
        typer.Option(
            "--mask",
            envvar="WHILEAI_MASK",
            help="SFT: train every agent turn, or only the final one.",
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
    """Write training files (SFT or --pairs, openai or trl shape), a Hub folder or an RL env."""
    warn_renamed_env("export")
    from whileai_core.jsonl import ReadStats, read_rows

    from ..console import check_report_path, exit_if_nothing
    from ..options import bad_flag, parse_band, resolve_inputs

    if pairs and env:
        bad_flag("--pairs", "--pairs and --env write different things; pick one")
    if hf and env:
        bad_flag("--hf", "--hf and --env write different folders; pick one")
    if env and not spec:
        bad_flag("--env", "--env needs --spec (the system prompt and tools the tasks use)")
    if meta and (hf or env):
        bad_flag("--meta", "--hf keeps metadata in its own folder and --env has none")
    if meta and meta not in ("-",) and output and meta == output:
        bad_flag("--meta", "the sidecar must be another file than --output")
    if meta == "-" and output in (None, "-"):
        bad_flag("--meta", "samples already own stdout; give --meta a file")
    if completions == "continuation" and fmt == "openai":
        bad_flag(
            "--completions", "OpenAI's preference lines hold one assistant turn; use --format trl"
        )
    if holdout >= 1.0:
        bad_flag("--holdout", f"{holdout}: must be below 1 (some asks must be left to train)")
    lo, hi = parse_band(band)
    check_report_path(report_file)
    sources = resolve_inputs(inputs)
    stats = ReadStats()
    if pairs:  # pairs already made (either shape) are reshaped, rows are paired
        from whileai_core.export.pairs import pair_line_problem

        rows = read_rows(sources, on_error=on_error, stats=stats, check=pair_line_problem)
    else:
        rows = read_rows(sources, on_error=on_error, stats=stats)
    loaded = load_spec_flag(spec)
    data: dict[str, Any]
    if env and loaded is not None:
        from whileai_core.export import export_environment
        from whileai_core.export.environment import DEFAULT_REWARD, DEFAULT_WORLD

        report = export_environment(
            rows,
            env,
            loaded,
            reward=reward or DEFAULT_REWARD,
            world=world or DEFAULT_WORLD,
            name=name,
            max_turns=max_turns,
            band=(lo, hi),
            holdout=holdout,
        )
        data = report.as_dict()
    else:
        from whileai_core.export import Context, SampleExport, export_hub_folder, write_samples

        plan = SampleExport(
            kind="pairs" if pairs else "sft",
            fmt=fmt,
            mask=mask,
            unroll=unroll,
            max_tool_output_chars=max_tool_output_chars,
            context=Context.of_spec(loaded),
            include_failures=include_failures,
            length_matched=length_matched,
            completions=completions,
            keep_meta=True if keep_meta else None,
        )
        if hf:
            data = export_hub_folder(
                rows,
                hf,
                plan,
                holdout=holdout,
                sources=sources,
                name=name,
                license=license_id,
                language=language,
            ).as_dict()
        else:
            data = write_samples(rows, plan, output, meta).as_dict()
    data["skipped_lines"] = stats.skipped
    _emit(data, json=json, report_file=report_file, data_on_stdout=not (env or hf) and not output)
    written = {"training": "samples", "pairs": "pairs", "hub": "samples"}.get(data["kind"], "train")
    what = {"environment": "training tasks", "hub": "samples"}.get(data["kind"], written)
    exit_if_nothing(int(data[written]), what)


def _emit(
    data: dict[str, Any], *, json: bool, report_file: str | None, data_on_stdout: bool
) -> None:
    from whileai_core.export.plan import summary_lines

    from ..console import emit_report, say, warn

    if emit_report(data, json=json, report_file=report_file, data_on_stdout=data_on_stdout):
        return
    refused = ", ".join(f"{n} {why}" for why, n in sorted(data.get("refused", {}).items()))
    kind = data["kind"]
    if kind in ("training", "pairs", "hub"):
        for line in summary_lines(data):
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
