"""Output discipline: data on stdout, everything else on stderr.

Rich is imported lazily so `whileai --help` and row-streaming commands start fast.
"""

from __future__ import annotations

import sys
from functools import cache
from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:
    from rich.console import Console


@cache
def err() -> Console:
    """The stderr console; honours NO_COLOR and turns styling off when not a terminal."""
    from rich.console import Console

    return Console(stderr=True, highlight=False, soft_wrap=True)


@cache
def out() -> Console:
    from rich.console import Console

    return Console(highlight=False, soft_wrap=True)


def say(message: str) -> None:
    """One line of commentary on stderr (markup allowed)."""
    err().print(message)


def warn(message: str) -> None:
    err().print(f"[yellow]warning:[/yellow] {message}")


def print_json(data: Any) -> None:
    """A report as JSON on stdout, for scripts."""
    options = orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE | orjson.OPT_NON_STR_KEYS
    sys.stdout.buffer.write(orjson.dumps(data, option=options))
    sys.stdout.flush()


def stderr_is_terminal() -> bool:
    return sys.stderr.isatty()
