"""Output discipline: data on stdout, everything else on stderr.

Rich is imported lazily so `whileai --help` and row-streaming commands start fast.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache
from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:
    from rich.console import Console


@cache
def err() -> Console:
    """The stderr console; honours NO_COLOR and turns styling off when not a terminal.
    Emoji codes are off: a model ref such as `openai:m:` must print as written, not as Ⓜ."""
    from rich.console import Console

    return Console(stderr=True, highlight=False, soft_wrap=True, emoji=False)


@cache
def out() -> Console:
    """The stdout console. A reader that goes away (`whileai report | head`) is not an
    error: rich would exit 1, this hands the CLI the BrokenPipeError it exits 0 on."""
    from rich.console import Console

    class _Stdout(Console):
        def on_broken_pipe(self) -> None:
            self.quiet = True
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            raise BrokenPipeError

    return _Stdout(highlight=False, soft_wrap=True, emoji=False)


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


def print_lines(lines: list[str]) -> None:
    """A report's text (built in core) on stdout, as written: no markup, no highlighting."""
    console = out()
    for line in lines:
        console.print(line, markup=False, highlight=False)


def print_table(columns: list[str], cells: list[list[str]]) -> None:
    """A table on stdout: drawn on a terminal, one tab-separated line a row when piped
    (never truncated to a terminal's width)."""
    if sys.stdout.isatty():
        from rich.table import Table

        table = Table(title_justify="left")
        for col in columns:
            table.add_column(col)
        for row in cells:
            table.add_row(*row)
        out().print(table)
        return
    for row in [columns, *cells]:
        print("\t".join(row))


def stderr_is_terminal() -> bool:
    return sys.stderr.isatty()


def check_report_path(path: str | None) -> None:
    """Refuse an unwritable --report FILE before the run, not after it."""
    if not path:
        return
    from pathlib import Path

    from whileai_core.errors import ConfigError

    target = Path(path)
    if target.is_dir():
        raise ConfigError(f"{path}: --report names a folder, not a file")
    if not target.parent.is_dir():
        raise ConfigError(f"{path}: cannot write report (no folder {target.parent})")


def emit_report(data: Any, *, json: bool, report_file: str | None, data_on_stdout: bool) -> bool:
    """Write `--report FILE` and print `--json` (on stderr when rows own stdout, so the pipe
    stays clean). True when JSON was printed: the caller then skips its human lines."""
    options = orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE | orjson.OPT_NON_STR_KEYS
    if report_file:
        from whileai_core.jsonl import write_output

        # The one writer: atomic for a file, in place for /dev/stderr, a FIFO or a device.
        write_output(report_file, orjson.dumps(data, option=options))
    if not json:
        return False
    if data_on_stdout:
        sys.stderr.buffer.write(orjson.dumps(data, option=options))
        sys.stderr.flush()
    else:
        print_json(data)
    return True


@contextmanager
def progress_bar(label: str, total: int | None = None) -> Iterator[Callable[[int], None] | None]:
    """A transient bar on stderr while the block runs (a counter when `total` is unknown),
    only when stderr is a terminal. Yields `update(done)`, or None when there is no bar."""
    if not stderr_is_terminal():
        yield None
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
    )

    columns = (
        (label, BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        if total
        else (SpinnerColumn(), TextColumn(label + ": {task.completed} rows"))
    )
    bar = Progress(*columns, console=err(), transient=True)
    task = bar.add_task(label, total=total)
    bar.start()
    try:
        yield lambda done: bar.update(task, completed=done)
    finally:
        bar.stop()


def exit_if_nothing(count: int, what: str) -> None:
    """A stage that wrote nothing exits 1, so `a && b` in a cron job stops before the next
    stage trains or pushes an empty file; the report above says why. When its input held
    no rows at all the stage returns, and `app.main` exits 3 ("no rows") instead."""
    from whileai_core.jsonl import inputs_held_no_rows

    if count == 0 and not inputs_held_no_rows():
        err().print(f"[red]whileai: no {what} written[/red] (exit 1)")
        import typer

        raise typer.Exit(1)
