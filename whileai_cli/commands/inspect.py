"""Commands that look at rows and specs without changing them: validate, schema, spec."""

from __future__ import annotations

from typing import Annotated

import typer

from ..options import Inputs, JsonOpt, OnErrorOpt


def validate(
    inputs: Inputs = None,
    on_error: OnErrorOpt = "skip",
    json: JsonOpt = False,
    max_errors: Annotated[
        int, typer.Option("--max-errors", help="Print at most this many bad rows.")
    ] = 50,
) -> None:
    """Check rows against the row model; print file:line: problem for each bad row."""
    from whileai_core.row.validate import validate_stream

    from ..console import print_json, say
    from ..options import resolve_inputs

    report = validate_stream(resolve_inputs(inputs), fail_fast=on_error == "fail")
    from rich.markup import escape

    for problem in report.problems[:max_errors]:
        say(f"[red]{escape(problem)}[/red]")
    hidden = len(report.problems) - max_errors
    if hidden > 0:
        say(f"... and {hidden} more bad rows")
    if json:
        print_json(report.as_dict())
    status = "[green]ok[/green]" if report.bad == 0 else "[red]bad rows found[/red]"
    say(f"{report.rows} rows checked, {report.valid} valid, {report.bad} bad: {status}")
    if report.bad:
        raise typer.Exit(1)


def schema() -> None:
    """Print the row's JSON Schema (generated from the row models)."""
    from whileai_core.row import row_json_schema

    from ..console import print_json

    print_json(row_json_schema())


def spec(
    target: Annotated[str, typer.Argument(help="Spec folder, or a spec JSON/YAML file.")],
    json: JsonOpt = False,
) -> None:
    """Load a spec and show its tools, rules and rubric."""
    from whileai_core.spec import load_spec

    from ..console import out, print_json

    loaded = load_spec(target)
    if json:
        print_json(
            {
                "name": loaded.name,
                "source": loaded.source,
                "tools": [
                    {
                        "name": t.name,
                        "kind": t.kind,
                        "description": t.description,
                        "required": t.required,
                        "parameters": t.parameters,
                    }
                    for t in loaded.tools
                ],
                "policy_sha": loaded.policy_sha,
                "rules": loaded.rules,
                "rubric": loaded.rubric is not None,
                "situations": len(loaded.situations),
                "agent": loaded.agent,
            }
        )
        return
    from rich.table import Table

    tools = Table(title=f"{loaded.name}: {len(loaded.tools)} tools", title_justify="left")
    for col in ("tool", "kind", "required", "description"):
        tools.add_column(col)
    for t in loaded.tools:
        tools.add_row(t.name, t.kind, ", ".join(t.required) or "-", t.description)
    rules = Table(title=f"{len(loaded.rules)} rules", title_justify="left")
    rules.add_column("#", justify="right")
    rules.add_column("rule")
    for i, rule in enumerate(loaded.rules, start=1):
        rules.add_row(str(i), rule)
    console = out()
    console.print(tools)
    console.print(rules)
    console.print(f"rubric: {'yes' if loaded.rubric else 'no (rubric.md absent)'}")
    console.print(f"situations: {len(loaded.situations)}; policy sha {loaded.policy_sha}")
