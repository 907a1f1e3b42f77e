"""Agents on the platform: list them, or register one with what it is."""

from __future__ import annotations

from typing import Annotated

import typer

from ..options import JsonOpt, SpecOpt
from .platform import ApiKeyOpt, opened

agents_app = typer.Typer(
    help="List agents: traces and datasets by purpose.", invoke_without_command=True
)


@agents_app.callback()
def agents(ctx: typer.Context, json: JsonOpt = False, api_key: ApiKeyOpt = None) -> None:
    """List agents: traces and datasets by purpose."""
    if ctx.invoked_subcommand is not None:
        return
    from ..console import out, print_json

    with opened(api_key) as store:
        records = store.list_agents()
    if json:
        print_json({"agents": records})
        return
    console = out()
    for a in records:
        sets = ", ".join(f"{k} {v}" for k, v in sorted(a["datasets"].items())) or "no datasets"
        cards = f"; {a['cards']} public" if a.get("cards") else ""
        tools = f"; {len(a['tools'])} tools" if a.get("tools") else ""
        console.print(f"{a['slug']}: {a['traces']} traces; {sets}{cards}{tools}", markup=False)


@agents_app.command("register")
def register(
    name: Annotated[str, typer.Argument(help="The agent's name (its slug).")],
    description: Annotated[
        str | None, typer.Option("--description", help="What the agent does, in a line.")
    ] = None,
    spec: SpecOpt = None,
    json: JsonOpt = False,
    api_key: ApiKeyOpt = None,
) -> None:
    """Create or update an agent: a description and, from --spec, its tools and prompt."""
    from whileai_core.platform.push import agent_spec

    from ..console import print_json, say

    fields = agent_spec(spec) if spec is not None else None
    with opened(api_key) as store:
        record = store.create_agent(name, description, fields)
    if json:
        print_json(record)
        return
    tools = len(record.get("tools") or [])
    prompt = "a system prompt" if record.get("system_prompt") else "no system prompt"
    say(f"agent {record['slug']}: {tools} tools, {prompt}")
