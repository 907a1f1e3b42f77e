"""Training runs on the platform: list them, show one (curves, holdout word, delta)."""

from __future__ import annotations

from typing import Annotated

import typer

from ..options import JsonOpt
from .platform import ApiKeyOpt, opened

runs_app = typer.Typer(
    help="List training runs; `runs show ID` for one run's curves, holdout and delta.",
    invoke_without_command=True,
)


@runs_app.callback()
def runs(ctx: typer.Context, json: JsonOpt = False, api_key: ApiKeyOpt = None) -> None:
    """List training runs; `runs show ID` for one run's curves, holdout and delta."""
    if ctx.invoked_subcommand is not None:
        return
    import sys

    from whileai_core.runs.report import table

    from ..console import out, print_json, say

    with opened(api_key) as store:
        records = store.list_runs()
    if json:
        print_json({"runs": records})
        return
    columns, cells = table(records)
    if sys.stdout.isatty():
        from rich.table import Table

        grid = Table(title_justify="left")
        for col in columns:
            grid.add_column(col)
        for row in cells:
            grid.add_row(*row)
        out().print(grid)
    else:
        for row in [columns, *cells]:
            print("\t".join(row))
    say(f"{len(records)} runs on {store.kind} store {store.location}")


@runs_app.command("show")
def show(
    run_id: Annotated[str, typer.Argument(help="Run id (run_…).")],
    json: JsonOpt = False,
    api_key: ApiKeyOpt = None,
) -> None:
    """One run: progress, the loss (and reward, KL) curves, the holdout word, the delta."""
    from whileai_core.runs.report import run_lines

    from ..console import out, print_json

    with opened(api_key) as store:
        record = store.get_run(run_id)
    if json:
        print_json(record)
        return
    console = out()
    for line in run_lines(record):
        console.print(line, markup=False, highlight=False)


@runs_app.command("delete")
def delete(
    run_id: Annotated[str, typer.Argument(help="Run id (run_…).")],
    api_key: ApiKeyOpt = None,
) -> None:
    """Delete a run and its points (permanent)."""
    from ..console import say

    with opened(api_key) as store:
        store.delete_run(run_id)
    say(f"deleted {run_id}")
