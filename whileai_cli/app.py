"""The command tree. Each command module registers its commands; this file wires them up
and turns library errors into one line on stderr with the right exit code.

Exit codes: 0 ok, 1 bad input or a failed run, 2 usage.
"""

from __future__ import annotations

import os
import sys
from typing import Annotated

import typer

from whileai_core import __version__

from .commands import account as account_cmds
from .commands import cache as cache_cmds
from .commands import export as export_cmds
from .commands import grade as grade_cmds
from .commands import inspect as inspect_cmds
from .commands import optimize as optimize_cmds
from .commands import platform as platform_cmds
from .commands import simulate as simulate_cmds
from .commands import traces as traces_cmds

app = typer.Typer(
    name="whileai",
    help="Turn an agent's tools and system prompt into graded post-training data.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        print(f"whileai {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = False,
    debug: Annotated[
        bool,
        typer.Option("--debug", envvar="WHILEAI_DEBUG", help="Show tracebacks on errors."),
    ] = False,
) -> None:
    """Turn an agent's tools and system prompt into graded post-training data."""
    if debug:
        os.environ["WHILEAI_DEBUG"] = "1"


# Listed in the order a run happens; --help groups them into panels the same way.
for _module in (
    simulate_cmds,
    grade_cmds,
    optimize_cmds,
    export_cmds,
    inspect_cmds,
    platform_cmds,
    traces_cmds,
    account_cmds,
    cache_cmds,
):
    _module.register(app)


def _usage_error(exc: Exception) -> None:
    """A usage error as one line naming the command, like every other error; exit 2."""
    code = getattr(exc, "exit_code", 2)
    format_message = getattr(exc, "format_message", None)
    if type(exc).__name__ == "NoArgsIsHelpError" or not callable(format_message):
        show = getattr(exc, "show", None)
        if callable(show):
            show()  # a bare `whileai` or group: the help is the answer
        sys.exit(code)
    ctx = getattr(exc, "ctx", None)
    where = getattr(ctx, "command_path", None) or "whileai"
    message = " ".join(str(format_message()).split())
    sys.stderr.write(f"{where}: usage error: {message} (see '{where} --help')\n")
    sys.exit(code)


def main() -> None:
    """Console entry point: run the app, map errors to one line and an exit code."""
    from whileai_core.errors import WhileaiError
    from whileai_core.settings import debug_enabled

    try:
        code = app(prog_name="whileai", standalone_mode=False)
    except SystemExit:
        raise
    except KeyboardInterrupt:
        sys.stderr.write("whileai: interrupted\n")
        sys.exit(130)
    except BrokenPipeError:
        # The reader went away (e.g. `| head`); that is not an error of ours.
        try:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115
        finally:
            sys.exit(0)
    except typer.Abort:
        sys.stderr.write("whileai: aborted\n")
        sys.exit(1)
    except Exception as exc:
        # Typer vendors click; its usage errors share TyperException and know their exit code.
        if isinstance(exc, typer.exceptions.TyperException):
            _usage_error(exc)
        if debug_enabled():
            raise
        if isinstance(exc, WhileaiError):
            sys.stderr.write(f"whileai: error: {exc}\n")
        else:
            sys.stderr.write(
                f"whileai: error: {type(exc).__name__}: {exc} (run with --debug for a traceback)\n"
            )
        sys.exit(1)
    # Without standalone mode click hands back typer.Exit's code instead of exiting.
    sys.exit(code if isinstance(code, int) else 0)
