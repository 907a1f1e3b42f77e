"""`whileai export KIND`: rows out as SFT files, preference pairs, a Hub dataset folder, or an
RL environment package, one subcommand each (`export sft|pairs|hub|env`).

A new kind is one more `@export_app.command(NAME)` below (and its example in
`examples.py`); `legacy_args` needs nothing for it. The spellings scripts already call
(`export FILE`, `export FILE --pairs`, `--hf DIR`, `--env DIR`) still work: the group
rewrites them to the subcommand they mean and, once the command line parses, prints one
line naming the new form. Options the old single command took but that kind ignores are
dropped (their values still checked as before).
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Annotated, Any, Literal

import typer
from typer.core import TyperGroup

from ..options import (
    Inputs,
    JsonOpt,
    OnErrorOpt,
    Output,
    ReportFile,
    SpecOpt,
    scoped_env,
    warn_renamed_env,
)

# The deprecation line of a rewritten command line, printed once it has parsed (a usage
# error stays the one line on stderr).
_LEGACY_NOTE: ContextVar[str | None] = ContextVar("export_legacy_note", default=None)
# The flags of the single `export` command that chose what to write.
_MODE_FLAGS = {"--pairs": False, "--env": True, "--hf": True}


def _check_band(value: str) -> str:
    from ..options import parse_band

    parse_band(value)
    return value


def _check_holdout(value: float) -> float:
    if value >= 1.0:
        from ..options import bad_flag

        bad_flag("--holdout", f"{value}: must be below 1 (some asks must be left to train)")
    return value


FormatOpt = Annotated[
    Literal["openai", "trl"],
    typer.Option(
        "--format",
        envvar="WHILEAI_EXPORT_FORMAT",
        help="openai: OpenAI's fine-tuning lines exactly (messages, tools, "
        "parallel_tool_calls; per-turn weight). trl: TRL's conversational rows "
        "(argument objects; prompt/completion for --mask final and --unroll).",
    ),
]
CompletionsOpt = Annotated[
    Literal["turn", "continuation"],
    typer.Option(
        "--completions",
        help="Pairs: the agent's turn at the divergence, or everything after it "
        "(tool output included; trl only).",
    ),
]
LengthMatchedOpt = Annotated[
    bool,
    typer.Option("--length-matched", help="Pairs: match the two turns' lengths (within 25%)."),
]
IncludeFailuresOpt = Annotated[
    bool,
    typer.Option(
        "--include-failures",
        envvar="WHILEAI_EXPORT_INCLUDE_FAILURES",
        help="SFT: keep rows below the pass line (reward < 0.5); left out by default.",
    ),
]
MetaOpt = Annotated[
    str | None,
    typer.Option(
        "--meta",
        help="Write each sample's metadata (scenario, rollout, reward, the ask) to this "
        "JSONL sidecar, line for line.",
    ),
]
KeepMetaOpt = Annotated[
    bool,
    typer.Option(
        "--keep-meta",
        help="Keep the metadata in each line (the trl default; makes openai lines non-standard).",
    ),
]
MaskOpt = Annotated[
    Literal["all", "final"],
    typer.Option(
        "--mask", envvar="WHILEAI_MASK", help="SFT: train every agent turn, or only the final one."
    ),
]
UnrollOpt = Annotated[
    bool, typer.Option("--unroll", help="One sample per agent turn, loss on that turn.")
]
MaxToolOpt = Annotated[
    int | None,
    typer.Option(
        "--max-tool-output-chars",
        min=1,
        envvar="WHILEAI_MAX_TOOL_OUTPUT_CHARS",
        help="Cut tool messages to N chars, with a visible marker.",
    ),
]
HoldoutOpt = Annotated[
    float,
    typer.Option(
        "--holdout",
        min=0.0,
        max=1.0,
        envvar=scoped_env("WHILEAI_HOLDOUT", "export"),
        callback=_check_holdout,
        help="Fraction of asks held out.",
    ),
]
FolderOpt = Annotated[
    str,
    typer.Option(
        "--output", "-o", help="The folder to write: new, empty, or an earlier export of this kind."
    ),
]
EnvBandOpt = Annotated[
    str,
    typer.Option(
        "--band",
        envvar="WHILEAI_BAND",
        callback=_check_band,
        help="Pass-rate band LOW,HIGH (inclusive) an ask must fall in to become a task.",
    ),
]


class ExportGroup(TyperGroup):
    """`export`'s subcommands, plus the old single command's spellings rewritten to them."""

    # The old flags that chose the kind: still taken (rewritten), so a page may name them.
    legacy_options: tuple[str, ...] = tuple(_MODE_FLAGS)

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        rewritten = self.legacy_args(ctx, args)
        if rewritten is not None:
            args, note = rewritten
            _LEGACY_NOTE.set(note)
        return super().parse_args(ctx, args)

    def legacy_args(self, ctx: Any, args: list[str]) -> tuple[list[str], str] | None:
        """(the subcommand form, the deprecation line) of a command line written for the
        single `export`; None when it names a subcommand already (or asks for help)."""
        if args and (args[0] in self.commands or args[0] in ("--help", "-h")):
            return None
        return legacy_args(ctx, args, dict(self.commands))


def legacy_args(ctx: Any, args: list[str], commands: dict[str, Any]) -> tuple[list[str], str]:
    """`export [FILES] [--pairs | --hf DIR | --env DIR] [options]` as the subcommand it
    means: sft, pairs, hub (`-o DIR`) or env (`-o DIR`). Raises the usage errors the single
    command raised for mode flags that cannot go together."""
    takes_value: dict[str, bool] = dict(_MODE_FLAGS)
    declared: dict[str, Any] = {}
    for command in commands.values():
        for param in command.params:
            if param.param_type_name == "option":
                for spelling in (*param.opts, *param.secondary_opts):
                    takes_value.setdefault(spelling, not (param.is_flag or param.count))
                    declared.setdefault(spelling, param)
    items: list[tuple[str | None, str | None, list[str]]] = []  # (option, value, tokens)
    rest = list(args)
    while rest:
        token = rest.pop(0)
        if token == "--":
            items += [(None, None, [t]) for t in ["--", *rest]]
            break
        flag, eq, inline = token.partition("=")
        if token.startswith("-") and token != "-" and flag in takes_value:
            if takes_value[flag] and not eq and rest:
                after = rest.pop(0)
                items.append((flag, after, [token, after]))
            else:
                items.append((flag, inline if eq else None, [token]))
        else:
            items.append((None, None, [token]))
    given = {name: value for name, value, _ in items if name is not None}
    if "--pairs" in given and "--env" in given:
        raise typer.BadParameter(
            "--pairs and --env write different things; pick one", ctx, param_hint="'--pairs'"
        )
    if "--hf" in given and "--env" in given:
        raise typer.BadParameter(
            "--hf and --env write different folders; pick one", ctx, param_hint="'--hf'"
        )
    if "--meta" in given and ("--hf" in given or "--env" in given):
        raise typer.BadParameter(
            "--hf keeps metadata in its own folder and --env has none", ctx, param_hint="'--meta'"
        )
    folder = given.get("--env") or given.get("--hf")
    kind = "env" if "--env" in given else "hub" if "--hf" in given else (
        "pairs" if "--pairs" in given else "sft"
    )  # fmt: skip
    target = commands[kind]
    accepted = {n for p in target.params if p.param_type_name == "option" for n in p.opts}
    out = [kind]
    for name, value, tokens in items:
        if name is None:
            out += tokens
        elif name in ("--env", "--hf") or (name == "--pairs" and kind != "hub"):
            continue
        elif folder is not None and name in ("-o", "--output"):
            continue  # the old command wrote its folder there and ignored -o
        elif name in accepted:
            out += tokens
        elif value is not None and name in declared:
            try:  # ignored, as before, but still checked
                declared[name].process_value(ctx, value)
            except typer.BadParameter as exc:
                exc.ctx = exc.ctx or ctx
                raise
    if folder is not None:
        out += ["-o", folder]
    old = {"env": "--env DIR", "hub": "--hf DIR", "pairs": "--pairs"}.get(kind)
    new = f"whileai export {kind}" + (" ... -o DIR" if folder is not None else " ...")
    note = (
        f"`whileai export {old}` is deprecated: use `{new}`"
        if old
        else f"`whileai export` without a kind is deprecated: use `{new}`"
    )
    return out, note


export_app = typer.Typer(
    cls=ExportGroup,
    help="Write training files (sft, pairs: openai or trl shape), a Hub folder or an RL env.\n\n"
    "The old spellings (`export FILE`, `--pairs`, `--hf DIR`, `--env DIR`) still work and "
    "print a line naming the new form.",
    no_args_is_help=False,
    invoke_without_command=False,
)


def _begin() -> None:
    """What every kind does once its flags are checked (a usage error stays one line): the
    renamed-variable and the old-spelling warnings."""
    warn_renamed_env("export")
    note = _LEGACY_NOTE.get()
    if note is not None:
        from ..console import warn

        _LEGACY_NOTE.set(None)
        warn(note)


def _sample_plan(
    kind: Literal["sft", "pairs"],
    fmt: str,
    spec: str | None,
    *,
    mask: Any = "all",
    unroll: bool = False,
    max_tool_output_chars: int | None = None,
    include_failures: bool = False,
    length_matched: bool = False,
    completions: Any = "turn",
    keep_meta: bool = False,
) -> Any:
    from whileai_core.export import Context, SampleExport

    from ..options import bad_flag, load_spec_flag

    if completions == "continuation" and fmt == "openai":
        bad_flag(
            "--completions", "OpenAI's preference lines hold one assistant turn; use --format trl"
        )
    return SampleExport(
        kind=kind,
        fmt=fmt,  # type: ignore[arg-type]
        mask=mask,
        unroll=unroll,
        max_tool_output_chars=max_tool_output_chars,
        context=Context.of_spec(load_spec_flag(spec)),
        include_failures=include_failures,
        length_matched=length_matched,
        completions=completions,
        keep_meta=True if keep_meta else None,
    )


def _check_meta(meta: str | None, output: str | None) -> None:
    from ..options import bad_flag

    if meta and meta not in ("-",) and output and meta == output:
        bad_flag("--meta", "the sidecar must be another file than --output")
    if meta == "-" and output in (None, "-"):
        bad_flag("--meta", "samples already own stdout; give --meta a file")


def _samples(
    plan: Any,
    inputs: list[str] | None,
    output: str | None,
    meta: str | None,
    on_error: Any,
    json: bool,
    report_file: str | None,
) -> None:
    from whileai_core.export import write_samples

    stats, rows, _sources = _read(inputs, on_error, report_file, pairs=plan.kind == "pairs")
    data = write_samples(rows, plan, output, meta).as_dict()
    _finish(data, stats, json=json, report_file=report_file, data_on_stdout=not output)


def _read(
    inputs: list[str] | None, on_error: Any, report_file: str | None, *, pairs: bool = False
) -> tuple[Any, Any, Any]:
    """The rows; with `pairs`, a line may also be a pair already made (either shape),
    which the pairs export reshapes instead of pairing."""
    from whileai_core.jsonl import ReadStats, read_rows

    from ..console import check_report_path
    from ..options import resolve_inputs

    check_report_path(report_file)
    sources = resolve_inputs(inputs)
    stats = ReadStats()
    if pairs:
        from whileai_core.export.pairs import pair_line_problem

        rows = read_rows(sources, on_error=on_error, stats=stats, check=pair_line_problem)
        return stats, rows, sources
    return stats, read_rows(sources, on_error=on_error, stats=stats), sources


@export_app.command("sft")
def sft(
    inputs: Inputs = None,
    fmt: FormatOpt = "openai",
    output: Output = None,
    spec: SpecOpt = None,
    include_failures: IncludeFailuresOpt = False,
    mask: MaskOpt = "all",
    unroll: UnrollOpt = False,
    max_tool_output_chars: MaxToolOpt = None,
    meta: MetaOpt = None,
    keep_meta: KeepMetaOpt = False,
    on_error: OnErrorOpt = "fail",
    json: JsonOpt = False,
    report_file: ReportFile = None,
) -> None:
    """SFT samples of the rows at or above the pass line, in OpenAI's or TRL's shape."""
    _check_meta(meta, output)
    plan = _sample_plan(
        "sft", fmt, spec, mask=mask, unroll=unroll, max_tool_output_chars=max_tool_output_chars,
        include_failures=include_failures, keep_meta=keep_meta,
    )  # fmt: skip
    _begin()
    _samples(plan, inputs, output, meta, on_error, json, report_file)


@export_app.command("pairs")
def pairs(
    inputs: Inputs = None,
    fmt: FormatOpt = "openai",
    output: Output = None,
    spec: SpecOpt = None,
    completions: CompletionsOpt = "turn",
    length_matched: LengthMatchedOpt = False,
    meta: MetaOpt = None,
    keep_meta: KeepMetaOpt = False,
    on_error: OnErrorOpt = "fail",
    json: JsonOpt = False,
    report_file: ReportFile = None,
) -> None:
    """Chosen/rejected pairs from each ask's rollouts, cut at the first agent turn that differs."""
    _check_meta(meta, output)
    plan = _sample_plan(
        "pairs", fmt, spec, completions=completions, length_matched=length_matched,
        keep_meta=keep_meta,
    )  # fmt: skip
    _begin()
    _samples(plan, inputs, output, meta, on_error, json, report_file)


@export_app.command("hub")
def hub(
    output: FolderOpt,
    inputs: Inputs = None,
    fmt: FormatOpt = "openai",
    spec: SpecOpt = None,
    pairs: Annotated[
        bool, typer.Option("--pairs", help="The folder holds preference pairs, not SFT samples.")
    ] = False,
    holdout: HoldoutOpt = 0.2,
    name: Annotated[
        str | None, typer.Option("--name", help="The card's title (default: the folder's).")
    ] = None,
    license_id: Annotated[
        str, typer.Option("--license", help="The data's license on the card (a Hub id).")
    ] = "other",
    language: Annotated[
        str, typer.Option("--language", help="The data's language on the card.")
    ] = "en",
    include_failures: IncludeFailuresOpt = False,
    mask: MaskOpt = "all",
    unroll: UnrollOpt = False,
    max_tool_output_chars: MaxToolOpt = None,
    completions: CompletionsOpt = "turn",
    length_matched: LengthMatchedOpt = False,
    keep_meta: KeepMetaOpt = False,
    on_error: OnErrorOpt = "fail",
    json: JsonOpt = False,
    report_file: ReportFile = None,
) -> None:
    """A Hugging Face dataset folder: data/<split>.jsonl, a README card, whileai.json.

    The splits are train, holdout (--holdout of the asks, by task id) and eval."""
    from whileai_core.export import export_hub_folder

    plan = _sample_plan(
        "pairs" if pairs else "sft", fmt, spec, mask=mask, unroll=unroll,
        max_tool_output_chars=max_tool_output_chars, include_failures=include_failures,
        length_matched=length_matched, completions=completions, keep_meta=keep_meta,
    )  # fmt: skip
    _begin()
    stats, rows, sources = _read(inputs, on_error, report_file, pairs=pairs)
    report = export_hub_folder(
        rows, output, plan, holdout=holdout, sources=sources, name=name,
        license=license_id, language=language,
    )  # fmt: skip
    _finish(report.as_dict(), stats, json=json, report_file=report_file, data_on_stdout=False)


@export_app.command("env")
def env(
    output: FolderOpt,
    inputs: Inputs = None,
    spec: SpecOpt = None,
    reward: Annotated[
        str | None,
        typer.Option(
            "--reward",
            help="The reward as 'module:function' (row -> verdict); default: the judge "
            "`whileai grade` uses.",
        ),
    ] = None,
    world: Annotated[
        str | None,
        typer.Option(
            "--world",
            help="The world factory as 'module:function' (info -> object with "
            ".call(name, arguments)); default: whileai's mock world.",
        ),
    ] = None,
    name: Annotated[
        str | None, typer.Option("--name", help="The package name (default: the spec's).")
    ] = None,
    max_turns: Annotated[int, typer.Option("--max-turns", min=1, help="The turn cap.")] = 12,
    holdout: HoldoutOpt = 0.2,
    band: EnvBandOpt = "0.2,0.8",
    on_error: OnErrorOpt = "fail",
    json: JsonOpt = False,
    report_file: ReportFile = None,
) -> None:
    """An installable RL environment package (verifiers): tasks, tools, world and reward.

    The tasks are the asks whose pass rate lies in --band; the tools and system prompt
    come from --spec, the world from --world, the reward from --reward."""
    from whileai_core.export import export_environment
    from whileai_core.export.environment import DEFAULT_REWARD, DEFAULT_WORLD

    from ..options import bad_flag, load_spec_flag, parse_band

    if not spec:
        bad_flag("--spec", "export env needs --spec (the system prompt and tools the tasks use)")
    lo, hi = parse_band(band)
    _begin()
    stats, rows, _sources = _read(inputs, on_error, report_file)
    loaded = load_spec_flag(spec)
    assert loaded is not None
    report = export_environment(
        rows, output, loaded, reward=reward or DEFAULT_REWARD, world=world or DEFAULT_WORLD,
        name=name, max_turns=max_turns, band=(lo, hi), holdout=holdout,
    )  # fmt: skip
    _finish(report.as_dict(), stats, json=json, report_file=report_file, data_on_stdout=False)


def _finish(
    data: dict[str, Any], stats: Any, *, json: bool, report_file: str | None, data_on_stdout: bool
) -> None:
    """The report (stderr, --json or --report), then exit 1 when nothing was written."""
    from ..console import exit_if_nothing

    data["skipped_lines"] = stats.skipped
    _emit(data, json=json, report_file=report_file, data_on_stdout=data_on_stdout)
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
            f"export env {data['directory']}: package {data['name']}, {data['train']} train + "
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
