"""simulate --traces: the budget goes where the traces failed, the rest of the grid still
comes up, sources never come back, and a trace file alone is enough to start."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from ..helpers import run_cli
from .helpers import production_traces

AXES = ("tool", "rule", "world_state", "tool_condition", "history")
HUMAN = ("stance", "tone", "texture", "persona", "length", "ask_family")


def _simulate(out: Path, *args: str) -> tuple[list[dict], dict]:
    proc = run_cli("simulate", *args, "-o", str(out), "--json")
    assert proc.returncode == 0, proc.stderr.decode()
    return [json.loads(line) for line in out.read_text().splitlines()], json.loads(proc.stdout)


def _share(rows: list[dict]) -> float:
    hits = [r for r in rows if r["scenario_dimensions"]["tool"] == "get_order"
            and r["scenario_dimensions"]["tool_condition"] == "timeout"]  # fmt: skip
    return len(hits) / len(rows)


def test_a_thousand_aimed_rows_land_on_the_failing_tool_and_fault(tmp_path: Path) -> None:
    traces = production_traces(tmp_path / "prod.jsonl")
    cold, _ = _simulate(tmp_path / "cold.jsonl", "specs/orders", "--budget", "1000")
    aimed, report = _simulate(
        tmp_path / "aimed.jsonl", "specs/orders", "--traces", str(traces), "--budget", "1000"
    )
    assert len(aimed) == 1000
    ratio = _share(aimed) / _share(cold)
    assert 0.02 < _share(cold) < 0.06 and ratio >= 3, (_share(cold), _share(aimed))
    # every other axis value still appears at least once
    grid = json.loads(run_cli("grid", "specs/orders", "--json").stdout)["axes"]
    for axis in AXES:
        assert set(grid[axis]) == {r["scenario_dimensions"][axis] for r in aimed}, axis
    for axis in HUMAN:
        assert set(grid[axis]) == {r[axis] for r in aimed}, axis
    assert report["traces"]["emphasis"] == {"tool": {"get_order": 40},
                                            "tool_condition": {"timeout": 40}}  # fmt: skip
    assert report["tasks"]["source"] == "traces"
    assert any("traces: tool=get_order, tool_condition=timeout" in r["selection_reason"]
               for r in aimed)  # fmt: skip
    sources = {json.loads(line)["prompt"] for line in traces.read_text().splitlines()}
    assert not sources & {r["prompt"] for r in aimed}


def test_no_broaden_drops_the_tools_no_trace_touched(tmp_path: Path) -> None:
    traces = production_traces(tmp_path / "prod.jsonl")  # get_order, refund and cancel only
    rows, report = _simulate(
        tmp_path / "narrow.jsonl", "specs/orders", "--traces", str(traces), "--no-broaden",
        "--budget", "300",
    )  # fmt: skip
    tools = Counter(r["scenario_dimensions"]["tool"] for r in rows)
    assert "search_orders" not in tools and "unrelated" not in tools
    assert {"get_order", "refund_order", "cancel_order", "multi_tool"} <= set(tools)
    assert all(r["ask_family"] != "general" for r in rows)
    assert all("search_orders" not in r["tools_used"] for r in rows)
    assert report["traces"]["untouched_tools"] == ["search_orders"]


def test_a_trace_file_alone_is_enough_to_start(tmp_path: Path) -> None:
    traces = production_traces(tmp_path / "prod.jsonl")
    rows, report = _simulate(tmp_path / "alone.jsonl", "--traces", str(traces), "--budget", "200")
    assert len(rows) == 200 and report["agent_errors"] == 0
    assert report["traces"]["spec"] == "inferred from the traces"
    assert _share(rows) > 0.3
    statuses = Counter(s["result"].get("status") for r in rows for s in r["steps"] if "tool" in s)
    assert statuses["rejected"] < 0.1 * sum(statuses.values()), statuses
    # The mock world answers from the inferred schemas, seeded with what the traces show.
    seen = [s["result"]["data"] for r in rows for s in r["steps"]
            if s.get("tool") == "get_order" and s["result"].get("status") == "ok"
            and "data" in s["result"] and not s["result"].get("stale")]  # fmt: skip
    assert seen and all(d["amount"] == 42.5 and d["items"] == ["mug"] for d in seen)
    assert Counter(d["status"] for d in seen)["delivered"] > 0


def test_the_tool_surface_read_off_traces() -> None:
    from whileai_core.traces.infer import spec_from_traces

    traces = [
        {"prompt": "a", "steps": [{"tool": "lookup_user", "arguments": {"user_id": "U-1",
         "verbose": True}, "result": {"status": "ok", "data": {"plan": "pro", "seats": 3}}}]},
        {"prompt": "b", "steps": [{"tool": "lookup_user", "arguments": {"user_id": "U-2",
         "limit": 5}, "result": {"status": "ok", "data": {"plan": "free", "seats": 1.5}}}]},
        {"prompt": "c", "steps": [{"tool": "delete_user", "arguments": {"user_id": "U-3"},
         "result": "deleted"}]},
    ]  # fmt: skip
    spec = spec_from_traces(traces)
    lookup, delete = spec.tool("lookup_user"), spec.tool("delete_user")
    assert lookup is not None and delete is not None
    assert lookup.parameters == {
        "type": "object",
        "properties": {"user_id": {"type": "string"}, "verbose": {"type": "boolean"},
                       "limit": {"type": "integer"}},
        "required": ["user_id"],
    }  # fmt: skip
    assert lookup.kind == "read" and delete.kind == "write"
    returns = lookup.model_extra["returns"]  # type: ignore[index]
    assert returns["properties"]["plan"] == {"type": "string", "enum": ["pro", "free"]}
    assert returns["properties"]["seats"]["type"] == "number"


def test_traces_report_says_what_a_run_would_aim_at(tmp_path: Path) -> None:
    traces = production_traces(tmp_path / "prod.jsonl")
    proc = run_cli("traces", "report", str(traces), "--spec", "specs/orders", "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["kept"] == 70 and report["graded"] == 70 and report["failing"] == 40
    assert report["flaw_rows"] == 40 and report["faults"] == {"get_order:timeout": 40}
    assert report["emphasis"]["tool"] == {"get_order": 40}
    assert report["untouched_tools"] == ["search_orders"]
    human = run_cli("traces", "report", str(traces), "--spec", "specs/orders")
    assert b"emphasis tool_condition: timeout 40" in human.stdout
    bad = run_cli("traces", "report", str(tmp_path / "none.jsonl"))
    assert bad.returncode == 1 and b"none.jsonl: no such file" in bad.stderr
    empty = tmp_path / "empty.jsonl"
    empty.write_text('{"final_text": "x"}\n')
    proc = run_cli("simulate", "specs/orders", "--traces", str(empty))
    assert proc.returncode == 1 and b"no usable trace (neither an ask nor a tool step 1)" in (
        proc.stderr
    )
