"""simulate --traces from traces ingested over OTLP into a real `whileai serve`."""

from __future__ import annotations

import itertools
import json
import time
from pathlib import Path

from .. import platform_fixtures
from ..helpers import run_cli
from ..platform_fixtures import LiveServer

server = platform_fixtures.server
_ids = itertools.count(1)


def _attr(key: str, value: object) -> dict:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        kind = "intValue" if isinstance(value, int) else "doubleValue"
        return {"key": key, "value": {kind: str(value) if kind == "intValue" else value}}
    return {"key": key, "value": {"stringValue": str(value)}}


def _export(agent: str, runs: int) -> bytes:
    """OTLP JSON: `runs` agent runs, each a root span and a get_order span that timed out,
    scored 0 inline; the runs start now."""
    spans = []
    now = time.time_ns()
    for i in range(runs):
        n = next(_ids)
        trace_id, root = f"{n:032x}", f"{n:016x}"
        start = now - (runs - i) * 1_000_000
        spans.append({
            "traceId": trace_id, "spanId": root, "name": "invoke_agent",
            "startTimeUnixNano": str(start), "endTimeUnixNano": str(start + 5000),
            "attributes": [
                _attr("gen_ai.agent.name", agent),
                _attr("gen_ai.prompt", f"hi, where is order ORD-{1000 + i}? it's been a week"),
                _attr("gen_ai.completion", "It is on its way!"),
                _attr("whileai.reward", 0.0),
            ],
        })  # fmt: skip
        spans.append({
            "traceId": trace_id, "spanId": f"{n + 10**6:016x}", "parentSpanId": root,
            "name": "execute_tool get_order",
            "startTimeUnixNano": str(start + 10), "endTimeUnixNano": str(start + 20),
            "attributes": [
                _attr("gen_ai.operation.name", "execute_tool"),
                _attr("gen_ai.tool.name", "get_order"),
                _attr("gen_ai.tool.call.arguments", json.dumps({"order_id": f"ORD-{1000 + i}"})),
                _attr("gen_ai.tool.call.result", json.dumps({"error": "request timed out"})),
            ],
        })  # fmt: skip
    return json.dumps({"resourceSpans": [{"resource": {"attributes": []},
                                          "scopeSpans": [{"spans": spans}]}]}).encode()  # fmt: skip


def test_simulate_aims_at_traces_ingested_into_a_server(server: LiveServer, tmp_path: Path) -> None:
    env = {"WHILEAI_API_URL": server.url, "WHILEAI_API_KEY": server.signup()}
    export = tmp_path / "export.json"
    export.write_bytes(_export("shop-bot", 30))
    proc = run_cli("traces", "ingest", str(export), env=env)
    assert proc.returncode == 0, proc.stderr
    report = run_cli("traces", "report", "agent:shop-bot", "--since", "1d", "--spec",
                     "specs/orders", "--json", env=env)  # fmt: skip
    assert report.returncode == 0, report.stderr
    seen = json.loads(report.stdout)
    assert seen["kept"] == 30 and seen["failing"] == 30
    assert seen["faults"] == {"get_order:timeout": 30}
    for spec in (["specs/orders"], []):  # with a spec, and from the traces alone
        out = tmp_path / f"rows{len(spec)}.jsonl"
        proc = run_cli(
            "simulate", *spec, "--traces", "agent:shop-bot", "--since", "1d", "--budget",
            "200", "-o", str(out), "--json", env=env,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        run = json.loads(proc.stdout)
        assert run["traces"]["emphasis"] == {"tool": {"get_order": 30},
                                             "tool_condition": {"timeout": 30}}  # fmt: skip
        rows = [json.loads(line) for line in out.read_text().splitlines()]
        aimed = [r for r in rows if r["scenario_dimensions"]["tool"] == "get_order"
                 and r["scenario_dimensions"]["tool_condition"] == "timeout"]  # fmt: skip
        assert len(rows) == 200 and len(aimed) > 60
    none = run_cli("simulate", "specs/orders", "--traces", "agent:nobody", env=env)
    # No traces is nothing to do, not a failure: exit 3 (docs/exit-codes.md).
    assert none.returncode == 3 and b"--traces agent:nobody: no traces" in none.stderr
