"""Options shared by the row-processing commands, declared once, and the helpers that read
them.

Each option a cron job would set also reads a WHILEAI_<NAME> environment variable. Flag
values that cannot work are usage errors (exit 2), caught by click's ranges or by
`bad_flag`, before any row is read.
"""

from __future__ import annotations

import sys
from typing import Annotated, Literal, NoReturn

import typer

from whileai_core.errors import ConfigError

Inputs = Annotated[
    list[str] | None,
    typer.Argument(help="JSONL files to read; '-' or nothing reads stdin.", show_default=False),
]
Output = Annotated[
    str | None,
    typer.Option("--output", "-o", help="Write rows here instead of stdout (atomic replace)."),
]
OnErrorOpt = Annotated[
    Literal["fail", "skip"],
    typer.Option(
        "--on-error",
        envvar="WHILEAI_ON_ERROR",
        help="On a bad line: 'fail' (name file:line, exit 1) or 'skip' (count and go on).",
    ),
]
JsonOpt = Annotated[
    bool,
    typer.Option(
        "--json",
        help="Print the report as JSON: on stdout, or on stderr when rows own stdout.",
    ),
]
ReportFile = Annotated[
    str | None,
    # No environment variable: one set for a pipeline would have every stage overwrite it.
    typer.Option("--report", help="Also write the report as JSON to this file."),
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


def bad_flag(flag: str, problem: str) -> NoReturn:
    """A flag value that cannot work: one line, exit 2, like click's own checks."""
    raise typer.BadParameter(problem, param_hint=f"'{flag}'")


def parse_band(text: str) -> tuple[float, float]:
    """`--band` through the one parser every command shares (`0.2,0.8` or `0.2-0.8`); a
    value it refuses is a usage error, exit 2."""
    from whileai_core.metrics.band import parse_band as parse

    try:
        return parse(text)
    except ConfigError as exc:
        bad_flag("--band", str(exc))


def resolve_inputs(inputs: list[str] | None) -> list[str]:
    """Files as given; with none, stdin when it is piped, else a usage error."""
    if inputs:
        return inputs
    if sys.stdin.isatty():
        raise ConfigError("no input: give JSONL files or pipe rows on stdin ('-')")
    return ["-"]


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
