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
    from whileai_core.runs.report import table

    from ..console import print_json, print_table, say

    with opened(api_key) as store:
        records = store.list_runs()
    if json:
        print_json({"runs": records})
        return
    print_table(*table(records))
    say(f"{len(records)} runs on {store.kind} store {store.location}")


@runs_app.command("show")
def show(
    run_id: Annotated[str, typer.Argument(help="Run id (run_…).")],
    json: JsonOpt = False,
    api_key: ApiKeyOpt = None,
) -> None:
    """One run: progress, the loss (and reward, KL) curves, the holdout word, the delta."""
    from whileai_core.runs.report import run_lines

    from ..console import print_json, print_lines

    with opened(api_key) as store:
        record = store.get_run(run_id)
    if json:
        print_json(record)
        return
    print_lines(run_lines(record))


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
