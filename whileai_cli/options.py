"""Options shared by the row-processing commands, declared once, and the helpers that read
them.

Each option a cron job would set also reads a WHILEAI_<NAME> environment variable. Flag
values that cannot work are usage errors (exit 2), caught by click's ranges or by
`bad_flag`, before any row is read.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated, Literal, NoReturn

import typer

from whileai_core.errors import ConfigError

if TYPE_CHECKING:
    from whileai_core.simulate.shards import Shard
    from whileai_core.spec import Spec

Inputs = Annotated[
    list[str] | None,
    typer.Argument(help="JSONL files to read; '-' or nothing reads stdin.", show_default=False),
]
Output = Annotated[
    str | None,
    typer.Option(
        "--output",
        "-o",
        help="Write rows here instead of stdout: a file is replaced atomically; a FIFO, "
        "device, socket or /dev/fd/N is written in place; '-' is stdout.",
    ),
]
OnErrorOpt = Annotated[
    Literal["fail", "skip"],
    typer.Option(
        "--on-error",
        envvar="WHILEAI_ON_ERROR",
        help="On a bad line: 'fail' (name file:line, exit 1) or 'skip' (count and go on).",
    ),
]
# Panels of `--help` that several commands share: the report flags, and who plays which
# shards (simulate, grade, evaluate).
REPORT_PANEL = "Report"
SCALE_PANEL = "Scale: shards and Ray"

JsonOpt = Annotated[
    bool,
    typer.Option(
        "--json",
        rich_help_panel=REPORT_PANEL,
        help="Print the report as JSON: on stdout, or on stderr when rows own stdout.",
    ),
]
ReportFile = Annotated[
    str | None,
    # No environment variable: one set for a pipeline would have every stage overwrite it.
    typer.Option(
        "--report",
        rich_help_panel=REPORT_PANEL,
        help="Also write the report as JSON to this file.",
    ),
]
SpecOpt = Annotated[
    str | None,
    typer.Option(
        "--spec",
        envvar="WHILEAI_SPEC",
        help="Spec folder or file: which tools read or write, the rubric, the system prompt.",
    ),
]
BandOpt = Annotated[
    str,
    typer.Option(
        "--band",
        envvar="WHILEAI_BAND",
        help="Pass-rate band LOW,HIGH (inclusive) an ask must fall in.",
    ),
]

ShardOpt = Annotated[
    str | None,
    typer.Option(
        "--shard",
        rich_help_panel=SCALE_PANEL,
        envvar="WHILEAI_SHARD",
        help="I/N: only shard I of N (1 <= I <= N), the tasks whose id hashes to it (a "
        "disjoint part; all phrasings of a situation together); `whileai merge` joins the "
        "N outputs.",
        show_default=False,
    ),
]
ExecutorOpt = Annotated[
    Literal["local", "processes", "ray"],
    typer.Option(
        "--executor",
        rich_help_panel=SCALE_PANEL,
        envvar="WHILEAI_EXECUTOR",
        help="local: this process; processes: --shards shards in as many local processes "
        "(every core), --concurrency split between them, rows in shard order; ray: --shards "
        "shards as Ray tasks (pip install 'whileai\\[ray]'), rows streamed back as each "
        "shard finishes.",
    ),
]
RayAddressOpt = Annotated[
    str | None,
    typer.Option(
        "--ray-address",
        rich_help_panel=SCALE_PANEL,
        envvar="WHILEAI_RAY_ADDRESS",
        help="With --executor ray: an existing cluster (ray://HOST:10001 or HOST:6379); "
        "default: a local Ray started for the run.",
        show_default=False,
    ),
]
ShardsOpt = Annotated[
    int | None,
    typer.Option(
        "--shards",
        rich_help_panel=SCALE_PANEL,
        min=1,
        envvar="WHILEAI_SHARDS",
        help="With --executor processes or ray: how many shards to split the run into. "
        "\\[default: one per core for processes, 4 for ray]",
        show_default=False,
    ),
]
DEFAULT_SHARDS = 4


# Names that once meant different things in different commands, and what replaced each
# there. The old name is still read (after the new one), with one warning on stderr.
RENAMED_ENV: dict[str, dict[str, str]] = {
    "WHILEAI_CONCURRENCY": {
        "simulate": "WHILEAI_SIMULATE_CONCURRENCY",
        # Judge calls at once, in every command that runs a judge over rows.
        "grade": "WHILEAI_JUDGE_CONCURRENCY",
        "evaluate": "WHILEAI_JUDGE_CONCURRENCY",  # evaluate takes grade's flags
        "trust": "WHILEAI_JUDGE_CONCURRENCY",
        "probes": "WHILEAI_JUDGE_CONCURRENCY",
        "pairs": "WHILEAI_JUDGE_CONCURRENCY",
        "rubrics": "WHILEAI_JUDGE_CONCURRENCY",
        "mark": "WHILEAI_JUDGE_CONCURRENCY",
    },
    "WHILEAI_SEED": {
        "simulate": "WHILEAI_SIMULATE_SEED",
        "grade": "WHILEAI_BOOTSTRAP_SEED",
        "report": "WHILEAI_BOOTSTRAP_SEED",
        "evaluate": "WHILEAI_BOOTSTRAP_SEED",
        "optimize": "WHILEAI_OPTIMIZE_SEED",
        # The rows trust and probes draw to re-judge.
        "trust": "WHILEAI_TRUST_SEED",
        "probes": "WHILEAI_TRUST_SEED",
        # The hack scan's shuffles.
        "scan": "WHILEAI_SCAN_SEED",
    },
    "WHILEAI_HOLDOUT": {
        "push": "WHILEAI_PUSH_HOLDOUT",
        "cut": "WHILEAI_CUT_HOLDOUT",
        "export": "WHILEAI_EXPORT_HOLDOUT",
    },
}


def scoped_env(old: str, command: str) -> list[str]:
    """The envvar list of an option whose old name was shared: the command's own name
    first, the old one second (click reads the first that is set)."""
    return [RENAMED_ENV[old][command], old]


def warn_renamed_env(command: str) -> None:
    """One line on stderr for each old, shared name this command still read."""
    from whileai_core.settings import read

    from .console import warn

    for old, scoped in RENAMED_ENV.items():
        new = scoped.get(command)
        if new and read(old) is not None and read(new) is None:
            warn(f"{old} is deprecated for `whileai {command}`: set {new} (read {old} for now)")


def bad_flag(flag: str, problem: str) -> NoReturn:
    """A flag value that cannot work: one line, exit 2, like click's own checks."""
    raise typer.BadParameter(problem, param_hint=f"'{flag}'")


def parse_shard_flag(text: str | None) -> Shard | None:
    """`--shard I/N`, or None when not given; a value it refuses is a usage error, exit 2."""
    if text is None:
        return None
    from whileai_core.simulate.shards import parse_shard

    try:
        return parse_shard(text)
    except ConfigError as exc:
        bad_flag("--shard", str(exc))


def check_executor(
    shard: str | None, executor: str, ray_address: str | None, shards: int | None,
    blocks: int = 1,
) -> Shard | None:  # fmt: skip
    """The flags that pick who plays which shards, checked together (usage errors); the
    `--shard` asked for, if any."""
    picked = parse_shard_flag(shard)
    if ray_address is not None and executor != "ray":
        bad_flag("--ray-address", "--ray-address is for --executor ray")
    if executor in ("ray", "processes"):
        if shard is not None:
            bad_flag("--shard", f"--executor {executor} plays every shard itself: give --shards N")
        if blocks > 1:
            bad_flag(
                "--blocks", f"--executor {executor} keeps state per shard already: drop --blocks"
            )
    else:
        if shards is not None:
            bad_flag(
                "--shards",
                "--shards N runs on an executor: add --executor processes or --executor ray",
            )
        if picked is not None and blocks > 1:
            bad_flag("--blocks", "a shard keeps its own state: give --shard or --blocks")
    return picked


def parse_band(text: str) -> tuple[float, float]:
    """`--band` through the one parser every command shares (`0.2,0.8` or `0.2-0.8`); a
    value it refuses is a usage error, exit 2."""
    from whileai_core.metrics.band import parse_band as parse

    try:
        return parse(text)
    except ConfigError as exc:
        bad_flag("--band", str(exc))


def resolve_inputs(inputs: list[str] | None) -> list[str]:
    """Files as given; with none, stdin when it is piped, else a usage error. These are
    the command's rows: when they hold none the command exits 3 (see `app.main`)."""
    from whileai_core.jsonl import watch_inputs

    if inputs:
        return list(watch_inputs(inputs))
    if sys.stdin.isatty():
        raise ConfigError("no input: give JSONL files or pipe rows on stdin ('-')")
    return list(watch_inputs(["-"]))


def load_spec_flag(spec: str | None) -> Spec | None:
    """The --spec folder loaded (None without the flag), importing the spec module only
    when one is given, so a command run without --spec pays nothing for it."""
    if not spec:
        return None
    from whileai_core.spec import load_spec

    return load_spec(spec)


def read_rubric(path: str | None) -> str | None:
    """The --rubric file's text (None without the flag). Every judging command reads it
    here, so an unreadable file is the same config error (exit 1) whichever command."""
    if not path:
        return None
    from pathlib import Path

    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read rubric ({exc.strerror or exc})") from None


# Every command that runs a judge over rows reads one concurrency name and one timeout.
JudgeConcurrencyOpt = Annotated[
    int,
    typer.Option(
        "--concurrency",
        "-c",
        min=1,
        envvar=scoped_env("WHILEAI_CONCURRENCY", "grade"),
        help="Rows judged at once (judges that block or call out).",
    ),
]
JudgeTimeoutOpt = Annotated[
    float,
    typer.Option(
        "--timeout",
        min=0,
        envvar="WHILEAI_JUDGE_TIMEOUT",
        help="Seconds per judged row before it counts as a timeout, unjudged (0: none).",
    ),
]


# -- what the policy will learn: options mark, audit, scan, optimize and push share ------
PhrasesOpt = Annotated[
    str | None,
    typer.Option(
        "--phrases",
        envvar="WHILEAI_PHRASES",
        help="JSON/YAML file overriding style phrase families ('hedging': [...] replaces, "
        "'hedging+': [...] adds).",
    ),
]
KindsOpt = Annotated[
    str | None,
    typer.Option(
        "--kinds",
        envvar="WHILEAI_TOOL_KINDS",
        help="Tool kinds for trajectory flags: TOOL=read|write|delete|command, comma-separated.",
    ),
]
IgnoreKeysOpt = Annotated[
    str | None,
    typer.Option(
        "--ignore-keys",
        envvar="WHILEAI_GROUNDING_IGNORE_KEYS",
        help="Argument keys (KEY or TOOL.KEY, comma-separated) that are free text: not checked "
        "for grounding.",
    ),
]
AllowOpt = Annotated[
    str | None,
    typer.Option(
        "--allow",
        envvar="WHILEAI_GROUNDING_ALLOW",
        help="Argument values always grounded (enums, defaults), comma-separated.",
    ),
]
SpecsOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--spec",
        envvar="WHILEAI_SPEC",
        help="An agent spec (tool kinds, enums, defaults) and/or a model spec file "
        "({source, traits}); repeatable.",
    ),
]
EndorsedOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--endorsed",
        envvar="WHILEAI_ENDORSED",
        help="What the reward should track, as substrings of scan feature names "
        "(tool:lookup_order, marker:grounded); repeatable or comma-separated.",
    ),
]


def split_endorsed(values: list[str] | None) -> tuple[str, ...]:
    """`--endorsed a,b --endorsed c` -> ('a', 'b', 'c')."""
    return tuple(p.strip() for v in values or () for p in v.split(",") if p.strip())
