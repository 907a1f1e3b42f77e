"""Options shared by every row-processing command, declared once.

Each option a cron job would set also reads a WHILEAI_<NAME> environment variable.
"""

from __future__ import annotations

import sys
from typing import Annotated, Literal

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
JsonOpt = Annotated[bool, typer.Option("--json", help="Print the report as JSON on stdout.")]
ReportFile = Annotated[
    str | None, typer.Option("--report", help="Also write the report as JSON to this file.")
]


def resolve_inputs(inputs: list[str] | None) -> list[str]:
    """Files as given; with none, stdin when it is piped, else a usage error."""
    if inputs:
        return inputs
    if sys.stdin.isatty():
        raise ConfigError("no input: give JSONL files or pipe rows on stdin ('-')")
    return ["-"]
