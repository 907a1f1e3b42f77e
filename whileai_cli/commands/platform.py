"""Datasets on the platform: push, pull, datasets, profile, delete, purge, agents.

Every command talks to `open_store()`: the embedded store when WHILEAI_API_URL is unset,
the server it points at otherwise. Ids and rows go to stdout; summaries to stderr.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated, Literal

import typer

from ..options import EndorsedOpt, JsonOpt, OnErrorOpt, SpecOpt, scoped_env, warn_renamed_env

if TYPE_CHECKING:
    from whileai_core.store import Store

ApiKeyOpt = Annotated[
    str | None,
    typer.Option(
        "--api-key",
        help="API key for this call (else WHILEAI_API_KEY, else the key `whileai login` saved).",
        show_default=False,
    ),
]
Purpose = Literal["train", "holdout", "eval"]


def check_source(source: str) -> str:
    """`-` reads stdin; on a terminal nothing is coming, so say so instead of waiting."""
    import sys

    from whileai_core.errors import ConfigError

    if source == "-" and sys.stdin.isatty():
        raise ConfigError("no input: give a file, or pipe it on stdin ('-')")
    return source


@contextmanager
def opened(api_key: str | None, public: bool = False) -> Iterator[Store]:
    """The store every platform command talks to, closed when the command is done;
    `public` lets a server be used without a key, for what it serves to anyone."""
    from whileai_core.store import open_store

    store = open_store(api_key, public=public)
    try:
        yield store
    finally:
        store.close()


def push(
    source: Annotated[
        str, typer.Argument(help="JSONL file to push, or '-' for stdin.", show_default=False)
    ] = "-",
    name: Annotated[
        str, typer.Option("--name", "-n", envvar="WHILEAI_NAME", help="Dataset name.")
    ] = "",
    purpose: Annotated[
        Purpose, typer.Option("--purpose", envvar="WHILEAI_PURPOSE", help="train, holdout or eval.")
    ] = "train",
    mode: Annotated[
        str | None,
        typer.Option("--mode", envvar="WHILEAI_MODE", help="Simulation mode to record (rl, sft…)."),
    ] = None,
    agent: Annotated[
        str | None,
        typer.Option("--agent", envvar="WHILEAI_AGENT_NAME", help="Agent the set belongs to."),
    ] = None,
    parent: Annotated[
        str | None, typer.Option("--parent", help="Parent dataset id (lineage).")
    ] = None,
    holdout: Annotated[
        float,
        typer.Option(
            "--holdout",
            envvar=scoped_env("WHILEAI_HOLDOUT", "push"),
            help="Fraction of tasks to push as a linked holdout set, split by scenario_id.",
        ),
    ] = 0.0,
    no_gate: Annotated[bool, typer.Option("--no-gate", help="Skip the publish gate.")] = False,
    endorsed: EndorsedOpt = None,
    strict_hacks: Annotated[
        bool,
        typer.Option(
            "--strict-hacks",
            envvar="WHILEAI_STRICT_HACKS",
            help="Refuse the push when the hack scan calls the reward a reward hack "
            "(needs --endorsed).",
        ),
    ] = False,
    description: Annotated[
        str | None, typer.Option("--description", help="Free-text description.")
    ] = None,
    spec: SpecOpt = None,
    on_error: OnErrorOpt = "fail",
    json: JsonOpt = False,
    api_key: ApiKeyOpt = None,
) -> None:
    """Push rows as a dataset (privileged blocks removed; gated unless --no-gate).

    With --spec and --agent, the spec's tools and system prompt go on the agent's record."""
    warn_renamed_env("push")
    from whileai_core.errors import ConfigError
    from whileai_core.platform.push import HackScanRefusal, agent_spec, push_rows
    from whileai_core.select.gate import PublishGateError

    from ..console import print_json, say, warn
    from ..options import split_endorsed

    if not name.strip():
        raise ConfigError("push needs --name (or WHILEAI_NAME)")
    if strict_hacks and not split_endorsed(endorsed):
        from ..options import bad_flag

        bad_flag("--strict-hacks", "needs --endorsed (what the reward should track)")
    if spec is not None and not agent:
        raise ConfigError("--spec goes on an agent's record: give --agent too")
    attach = agent_spec(spec) if spec is not None else None
    with opened(api_key) as store:
        try:
            result = push_rows(
                store,
                [check_source(source)],
                name=name,
                purpose=purpose,
                mode=mode,
                agent=agent,
                parent=parent,
                description=description,
                holdout=holdout,
                gate=not no_gate,
                endorsed=split_endorsed(endorsed),
                strict_hacks=strict_hacks,
                agent_spec=attach,
                on_error=on_error,
            )
        except PublishGateError as exc:
            raise ConfigError(f"{exc} (nothing stored; --no-gate pushes it anyway)") from None
        except HackScanRefusal as exc:
            hint = "nothing stored; drop --strict-hacks to push anyway"
            raise ConfigError(f"{exc} ({hint})") from None
    gate = result["gate"]
    if gate:
        for message in gate.get("warnings", []):
            warn(f"gate: {message}")
    if result["stripped"]:
        say(f"removed privileged data from {result['stripped']} rows")
    if result["skipped_lines"]:
        warn(f"skipped {result['skipped_lines']} bad line(s); first: {result['first_error']}")
    if result.get("left_out_leaks"):
        warn(f"left out {result['left_out_leaks']} rows that repeat their own answer key")
    if result.get("left_out_privileged"):
        warn(
            f"left out {result['left_out_privileged']} rows that still name the privileged "
            f"block where it cannot be removed (first: {result['first_left_out_privileged']})"
        )
    if json:
        print_json(result)
    for side in ("train", "holdout"):
        record = result[side]
        if record is None:
            continue
        again = " (already stored: nothing uploaded)" if record.get("existing") else ""
        say(
            f"{record['purpose']} {record['name']}: {record['rows']} rows,"
            f" {record['sizeBytes']} bytes{again}"
        )
        if not json:
            print(record["datasetId"])


def pull(
    dataset_id: Annotated[str, typer.Argument(help="Dataset id (ds_…).")],
    output: Annotated[
        str | None, typer.Option("--output", "-o", help="Write here instead of stdout.")
    ] = None,
    api_key: ApiKeyOpt = None,
) -> None:
    """Download a dataset's rows as JSONL (a public one needs no key)."""
    from whileai_core.platform.push import pull_rows

    from ..console import say

    with opened(api_key, public=True) as store:
        size = pull_rows(store, dataset_id, output)
    if output not in (None, "-"):
        say(f"{dataset_id}: {size} bytes -> {output}")


def datasets(
    pending: Annotated[
        bool,
        typer.Option(
            "--pending", help="List uploads created but never finalized (what purge cleans)."
        ),
    ] = False,
    json: JsonOpt = False,
    api_key: ApiKeyOpt = None,
) -> None:
    """List your datasets."""
    from ..console import print_json, print_table, say

    with opened(api_key) as store:
        records = store.list_datasets(status="pending" if pending else "ready")
    if json:
        print_json({"datasets": records})
        return
    columns = ("id", "name", "purpose", "mode", "agent", "rows", "bytes", "parent", "created")
    cells = [
        [
            d["datasetId"],
            d["name"],
            d["purpose"],
            d.get("mode") or "-",
            d.get("agent") or "-",
            str(d["rows"]),
            str(d["sizeBytes"]),
            d.get("parentDatasetId") or "-",
            d.get("createdAt") or "-",
        ]
        for d in records
    ]
    print_table(list(columns), cells)
    total = sum(int(d["sizeBytes"]) for d in records)
    say(f"{len(records)} datasets, {total} bytes on {store.kind} store {store.location}")


def profile(
    dataset_id: Annotated[str, typer.Argument(help="Dataset id (ds_…).")],
    json: JsonOpt = False,
    api_key: ApiKeyOpt = None,
) -> None:
    """Pass rate, tasks, mixed tasks and tool use of a stored dataset."""
    from whileai_core.store.profile import profile_lines

    from ..console import print_json, print_lines

    with opened(api_key) as store:
        report = store.profile(dataset_id)
    if json:
        print_json(report)
        return
    print_lines(profile_lines(report))


def delete(
    dataset_id: Annotated[str, typer.Argument(help="Dataset id (ds_…).")],
    api_key: ApiKeyOpt = None,
) -> None:
    """Delete a dataset (permanent)."""
    from ..console import say

    with opened(api_key) as store:
        store.delete_dataset(dataset_id)
    say(f"deleted {dataset_id}")


def purge(
    agent: Annotated[
        str | None, typer.Option("--agent", help="Delete this agent's traces, datasets, record.")
    ] = None,
    empty: Annotated[
        bool, typer.Option("--empty", help="Delete datasets with no bytes or few rows.")
    ] = False,
    max_rows: Annotated[
        int,
        typer.Option("--max-rows", help="With --empty: also datasets of this many rows or fewer."),
    ] = 0,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Count only; delete nothing.")] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask y/N.")] = False,
    json: JsonOpt = False,
    api_key: ApiKeyOpt = None,
) -> None:
    """Clean up: everything of one agent (--agent), or tiny datasets (--empty --max-rows N)."""
    from whileai_core.errors import ConfigError
    from whileai_core.platform.purge import plan_agent, plan_empty, run

    from ..console import print_json, say

    if (agent is None) == (not empty):
        raise ConfigError("purge needs exactly one of --agent A or --empty")
    with opened(api_key) as store:
        plan = plan_agent(store, agent) if agent is not None else plan_empty(store, max_rows)
        counts = plan.counts()
        what = f"agent {agent}" if agent else f"datasets with at most {max_rows} rows"
        say(f"{what}: {_tally(counts)}")
        if dry_run or plan.empty:
            if json:
                print_json({"dryRun": dry_run, "planned": counts, "deleted": None})
            if plan.empty:
                say("nothing to delete")
            return
        if not yes and not typer.confirm("delete them?", default=False, err=True):
            say("nothing deleted")
            raise typer.Exit(1)
        done = run(store, plan)
    if json:
        print_json({"dryRun": False, "planned": counts, "deleted": done})
    say(f"deleted {_tally(done)}")


def _tally(counts: dict[str, int]) -> str:
    """`3 datasets, 12 traces, the agent record, 1 unfinished upload` (zeros left out
    after the first two)."""
    parts = [f"{counts['datasets']} datasets", f"{counts['traces']} traces"]
    if counts.get("agent"):
        parts.append("the agent record")
    if counts.get("unfinished"):
        parts.append(f"{counts['unfinished']} unfinished uploads")
    return ", ".join(parts)


def update(
    dataset_id: Annotated[str, typer.Argument(help="Dataset id (ds_…).")],
    purpose: Annotated[
        Purpose | None, typer.Option("--purpose", help="train, holdout or eval.")
    ] = None,
    name: Annotated[str | None, typer.Option("--name", help="A new name.")] = None,
    mode: Annotated[str | None, typer.Option("--mode", help="Simulation mode to record.")] = None,
    agent: Annotated[str | None, typer.Option("--agent", help="Agent the set belongs to.")] = None,
    description: Annotated[
        str | None, typer.Option("--description", help="Free-text description.")
    ] = None,
    json: JsonOpt = False,
    api_key: ApiKeyOpt = None,
) -> None:
    """Change a dataset's purpose, name, mode, agent or description (only what you give)."""
    from whileai_core.errors import ConfigError

    from ..console import print_json, say

    given = {"purpose": purpose, "name": name, "mode": mode, "agent": agent}
    fields = {k: v for k, v in {**given, "description": description}.items() if v is not None}
    if not fields:
        raise ConfigError("update needs something to change: --purpose, --name, --mode, --agent"
                          " or --description")  # fmt: skip
    with opened(api_key) as store:
        record = store.update_meta(dataset_id, fields)
    if json:
        print_json(record)
        return
    changed = ", ".join(f"{k} {record.get(k)}" for k in fields)
    say(f"{dataset_id}: {changed}")


def preview(
    dataset_id: Annotated[str, typer.Argument(help="Dataset id (ds_…).")],
    n: Annotated[int, typer.Option("-n", "--rows", min=0, max=100, help="Rows to show.")] = 3,
    json: JsonOpt = False,
    api_key: ApiKeyOpt = None,
) -> None:
    """The first rows of a stored dataset (JSONL on stdout) and its profile (stderr)."""
    from whileai_core.jsonl import dumps
    from whileai_core.store.profile import profile_lines

    from ..console import print_json, say

    with opened(api_key) as store:
        result = store.preview(dataset_id, n)
    if json:
        print_json(result)
        return
    for row in result["rows"]:
        print(dumps(row).decode(), end="")
    for line in profile_lines(result["profile"]):
        say(line)
