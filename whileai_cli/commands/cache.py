"""`whileai cache stats|clear`: the model-call cache that `simulate --cache` fills."""

from __future__ import annotations

from contextlib import closing

import typer

from ..options import JsonOpt

cache_app = typer.Typer(
    name="cache",
    help="Inspect or empty the model-call cache (WHILEAI_HOME/cache/models.sqlite3).",
    no_args_is_help=True,
)


@cache_app.command("stats")
def stats(json: JsonOpt = False) -> None:
    """How many completions are cached, for which models, and how often they were reused."""
    from whileai_core.models.cache import ModelCache

    from ..console import out, print_json

    with closing(ModelCache()) as cache:
        report = cache.stats()
    if json:
        print_json(report.as_dict())
        return
    # The report is what was asked for: stdout, like `datasets` and `agents`.
    console = out()
    console.print(f"{report.path}", highlight=False)
    console.print(
        f"{report.entries} completions, {report.bytes / 1024:.1f} KiB, {report.hits} reuses"
    )
    for model, count in report.models.items():
        console.print(f"  {model}: {count}", markup=False)


@cache_app.command("clear")
def clear(json: JsonOpt = False) -> None:
    """Delete every cached completion (the next run pays for its calls again)."""
    from whileai_core.models.cache import ModelCache

    from ..console import print_json, say

    with closing(ModelCache()) as cache:
        removed = cache.clear()
    if json:
        print_json({"path": str(cache.path), "removed": removed})
        return
    say(f"removed {removed} cached completions from {cache.path}")
