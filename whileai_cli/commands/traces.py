"""Traces on the platform: ingest OTLP, list, delete, score after the run, cut into data."""

from __future__ import annotations

from typing import Annotated, Literal

import typer

from ..options import JsonOpt, ReportFile, SpecOpt, scoped_env, warn_renamed_env
from .platform import ApiKeyOpt, check_source, opened

traces_app = typer.Typer(
    help="Ingest, list and delete traces (OTLP spans from your agent); report what they show.",
    no_args_is_help=True,
)


@traces_app.command("ingest")
def ingest(
    source: Annotated[
        str,
        typer.Argument(help="OTLP JSON export file ('-' for stdin; .gz gzip; .pb protobuf)."),
    ],
    json: JsonOpt = False,
    api_key: ApiKeyOpt = None,
) -> None:
    """Ingest an OTLP trace export (what an OTLP/HTTP exporter would POST to /v1/traces)."""
    import sys
    from pathlib import Path

    from whileai_core.errors import WhileaiError
    from whileai_core.store import BadRequest

    from ..console import print_json, say

    if check_source(source) == "-":
        body = sys.stdin.buffer.read()
    else:
        try:
            body = Path(source).read_bytes()
        except OSError as exc:
            raise WhileaiError(f"{source}: cannot open ({exc.strerror or exc})") from None
    name = source.removesuffix(".gz")
    content_type = (
        "application/x-protobuf" if name.endswith((".pb", ".bin")) else "application/json"
    )
    encoding = "gzip" if source.endswith(".gz") else None
    with opened(api_key) as store:
        try:
            result = store.ingest_otlp(body, content_type, encoding)
        except BadRequest as exc:
            # The body is the problem: say which file it came from.
            raise WhileaiError(f"{'stdin' if source == '-' else source}: {exc}") from None
    if json:
        print_json(result)
    else:
        for trace_id in result.get("traces", []):
            print(trace_id)
    say(f"{result.get('accepted', 0)} spans in {len(result.get('traces', []))} traces")
    if result.get("rejected"):
        say(str(result.get("problem") or f"{result['rejected']} spans dropped"))


@traces_app.command("list")
def list_traces(
    agent: Annotated[
        str | None,
        typer.Option("--agent", envvar="WHILEAI_AGENT_NAME", help="Only this agent's traces."),
    ] = None,
    page: Annotated[int, typer.Option("--page", help="Page (100 traces a page).")] = 1,
    since: Annotated[
        str | None, typer.Option("--since", help="Only traces this recent: 7d, 12h, 30m.")
    ] = None,
    json: JsonOpt = False,
    api_key: ApiKeyOpt = None,
) -> None:
    """List traces, newest first."""
    from whileai_core.store.base import parse_since

    from ..console import out, print_json, say

    with opened(api_key) as store:
        result = store.list_traces(agent=agent, page=page, since=parse_since(since))
    if json:
        print_json(result)
        return
    console = out()
    for t in result["traces"]:
        reward = t.get("reward")
        console.print(
            f"{t['trace_id']}  {t.get('agent') or '-'}  {t.get('scenario_id') or '-'}  "
            f"{'-' if reward is None else reward}  {len(t.get('steps') or [])} steps"
        )
    more = f"; next page {result['nextPage']}" if result.get("nextPage") else ""
    say(f"{len(result['traces'])} traces on page {result['page']}{more}")


@traces_app.command("report")
def report(
    source: Annotated[
        str,
        typer.Argument(
            help="Traces: a JSONL file ('-' for stdin), a dataset id, agent:NAME (ingested "
            "traces of that agent) or platform (every ingested trace)."
        ),
    ],
    spec: SpecOpt = None,
    since: Annotated[
        str | None,
        typer.Option(
            "--since", envvar="WHILEAI_SINCE", help="Only ingested traces this recent: 7d, 12h."
        ),
    ] = None,
    json: JsonOpt = False,
    report_file: ReportFile = None,
) -> None:
    """What traces show before you aim a run with them: tools, faults, failures, emphasis."""
    from whileai_core.traces.mine import report_traces

    from ..console import check_report_path, emit_report, out

    check_report_path(report_file)
    result = report_traces(source, spec, since=since)
    if not emit_report(result.as_dict(), json=json, report_file=report_file, data_on_stdout=False):
        console = out()
        for line in result.lines():
            console.print(line, markup=False, highlight=False)
    if result.read == 0:  # not one trace there: nothing to do (docs/exit-codes.md)
        from whileai_core.errors import NoRows

        raise NoRows(f"{source}: no traces")


@traces_app.command("delete")
def delete_trace(
    trace_id: Annotated[str, typer.Argument(help="Trace id (32 hex).")],
    api_key: ApiKeyOpt = None,
) -> None:
    """Delete one trace."""
    from ..console import say

    with opened(api_key) as store:
        store.delete_trace(trace_id)
    say(f"deleted trace {trace_id}")


def score(
    trace_id: Annotated[str, typer.Argument(help="Trace id (32 hex).")],
    value: Annotated[float, typer.Argument(help="1.0 or above is a pass.")],
    name: Annotated[
        str, typer.Option("--name", help="Score name; 'score' is the pass/fail verdict.")
    ] = "score",
    json: JsonOpt = False,
    api_key: ApiKeyOpt = None,
) -> None:
    """Grade a run after it ran; sending the same name again corrects it."""

    from ..console import print_json, say

    with opened(api_key) as store:
        result = store.score_trace(trace_id, value, name)
    if json:
        print_json(result)
    say(f"{trace_id}: {name} = {value}")


def cut(
    agent: Annotated[str, typer.Option("--agent", envvar="WHILEAI_AGENT_NAME", help="Agent slug.")],
    kind: Annotated[
        Literal["rl", "sft"], typer.Option("--kind", envvar="WHILEAI_KIND", help="rl or sft.")
    ] = "rl",
    band: Annotated[
        str, typer.Option("--band", envvar="WHILEAI_BAND", help="rl pass-rate band, low,high.")
    ] = "0.2,0.8",
    holdout: Annotated[
        float,
        typer.Option(
            "--holdout",
            envvar=scoped_env("WHILEAI_HOLDOUT", "cut"),
            help="Share of prompts held out.",
        ),
    ] = 0.2,
    since: Annotated[
        str | None, typer.Option("--since", envvar="WHILEAI_SINCE", help="Only traces this recent.")
    ] = None,
    name: Annotated[str | None, typer.Option("--name", help="Name of the train set.")] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show what a cut would hold; store nothing.")
    ] = False,
    json: JsonOpt = False,
    api_key: ApiKeyOpt = None,
) -> None:
    """Make training data from scored traces: a train set and a holdout set; prints their ids."""
    warn_renamed_env("cut")
    from whileai_core.platform.cut import cut as run_cut
    from whileai_core.store.base import parse_since

    from ..console import print_json, say
    from ..options import parse_band

    with opened(api_key) as store:
        result = run_cut(
            store,
            agent=agent,
            kind=kind,
            band=parse_band(band),
            holdout=holdout,
            since=parse_since(since),
            name=name,
            dry_run=dry_run,
        )
    report = result["report"]
    dropped = report["dropped"]
    say(
        f"{report['traces']} traces ({report['ungraded']} ungraded), {report['prompts']} prompts;"
        f" kept {report['keptRuns']} runs of {report['keptPrompts']} prompts"
        f" (too easy {dropped['tooEasy']}, too hard {dropped['tooHard']},"
        f" never passed {dropped['neverPassed']})"
    )
    if json:
        print_json(result)
        return
    for side in ("train", "holdout"):
        record = result[side]
        if record is not None:
            say(f"{side}: {record['name']} ({record['rows']} rows)")
            print(record["datasetId"])
