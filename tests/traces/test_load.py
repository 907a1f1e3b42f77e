"""load_traces: the common trace shapes of other stacks normalise to one; junk is counted."""

from __future__ import annotations

import json
from pathlib import Path

from whileai_core.spec import load_spec
from whileai_core.traces.load import as_trace, load_traces, normal_trace
from whileai_core.traces.mine import classify, mine_traces

from ..helpers import REPO, SDK_ROWS

ORDERS = load_spec(REPO / "specs" / "orders")


def test_variant_keys_normalise_to_steps_and_final_text() -> None:
    timeout = {"status": "timeout"}
    args = '{"order_id": "ORD-1"}'
    variants = [
        {"prompt": "where is ORD-1",
         "tool_trace": [{"name": "get_order", "args": args, "output": '{"status": "timeout"}'}],
         "final": "It shipped."},
        {"prompt": "where is ORD-1",
         "trace": [{"tool_name": "get_order", "input": {"order_id": "ORD-1"},
                    "observation": timeout}],
         "output": {"content": "It shipped."}},
        {"prompt": "where is ORD-1",
         "steps": [{"type": "function", "function": {"name": "get_order", "arguments": args},
                    "result": timeout}],
         "response": "It shipped."},
    ]  # fmt: skip
    for raw in variants:
        trace, why = normal_trace(raw)
        assert why is None and trace is not None
        assert trace["steps"] == [
            {"tool": "get_order", "arguments": {"order_id": "ORD-1"}, "result": timeout}
        ]
        assert trace["final_text"] == "It shipped." and trace["prompt"] == "where is ORD-1"


def test_openai_messages_with_tool_calls_in_either_shape() -> None:
    nested = {"id": "c1", "type": "function",
              "function": {"name": "get_order", "arguments": '{"order_id": "ORD-2"}'}}  # fmt: skip
    flat = {"name": "refund_order", "arguments": {"order_id": "ORD-2", "reason": "damaged"}}
    raw = {
        "messages": [
            {"role": "system", "content": "be nice"},
            {"role": "user", "content": "refund ORD-2 please"},
            {"role": "assistant", "content": "", "tool_calls": [nested]},
            {"role": "tool", "tool_call_id": "c1", "content": '{"status": "ok", "data": {}}'},
            {"role": "assistant", "content": "Refunding.", "tool_calls": [flat]},
            {"role": "tool", "content": '{"status": "permission_denied"}'},
            {"role": "user", "content": "thanks"},
            {"role": "assistant", "content": "Done, refunded."},
        ],
        "passed": False,
    }
    trace, _ = normal_trace(raw)
    assert trace is not None
    assert trace["prompt"] == "refund ORD-2 please" and trace["final_text"] == "Done, refunded."
    tools = [s for s in trace["steps"] if "tool" in s]
    assert [(s["tool"], s["result"]["status"]) for s in tools] == [
        ("get_order", "ok"), ("refund_order", "permission_denied")
    ]  # fmt: skip
    assert {"role": "user", "text": "thanks"} in trace["steps"]
    assert trace["reward"] == 0.0


def test_rows_with_neither_an_ask_nor_steps_are_dropped_and_counted(tmp_path: Path) -> None:
    path = tmp_path / "mixed.jsonl"
    rows = [
        {"prompt": "hi", "steps": []},
        {"final_text": "nothing was asked"},
        {"messages": [{"role": "assistant", "content": "hello?"}]},
        {"steps": [{"tool": "get_order", "arguments": {}, "result": {}}]},  # steps, no ask
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows) + "[1, 2]\n")
    loaded = load_traces(str(path))
    assert loaded.read == 5 and len(loaded.traces) == 2
    assert loaded.dropped == {"neither an ask nor a tool step": 2, "not an object": 1}


def test_the_sdk_fixture_rows_load_with_their_tool_calls() -> None:
    loaded = load_traces(str(SDK_ROWS))
    assert len(loaded.traces) == 40 and not loaded.dropped
    mined = mine_traces(loaded.traces, ORDERS)
    assert mined.tools["get_order"] > 0 and mined.world_states["entity missing"] > 0


def test_trace_score_verdicts_pass_at_one_and_rows_keep_no_privileged() -> None:
    trace, _ = normal_trace({"prompt": "x", "reward": 0.7, "judge_name": "trace-score"})
    assert trace is not None and trace["reward"] == 0.0
    row = {"prompt": "p", "steps": [], "final_text": "f", "reward": 0, "privileged": {"x": 1},
           "scenario_dimensions": {"tool": "get_order"}, "seeded": ["leak"]}  # fmt: skip
    assert as_trace(row) == {"prompt": "p", "steps": [], "final_text": "f", "reward": 0,
                             "scenario_dimensions": {"tool": "get_order"}}  # fmt: skip
    assert normal_trace(row)[0] is not None and "privileged" not in normal_trace(row)[0]  # type: ignore[operator]


def test_results_are_read_for_faults_and_world_states_in_their_own_words() -> None:
    assert classify({"error": "upstream timeout after 30s"}) == ("timeout", None)
    assert classify({"status_code": 503, "message": "try later"}) == ("timeout", None)
    assert classify({"code": 403}) == ("permission_denied", None)
    assert classify("Error: not permitted for this user") == ("permission_denied", None)
    assert classify({"status": "ok", "stale": True, "data": {}}) == ("stale_result", None)
    assert classify({"status": "malformed", "raw": "<<ERR"}) == ("malformed_result", None)
    assert classify({"status": "not_found"}) == (None, "entity missing")
    assert classify({"status": "ok", "matches": [{}, {}]}) == (None, "duplicate entity")
    assert classify({"status": "ok", "data": {"status": "shipped"}}) == (None, None)


def test_the_python_front_door_aims_and_checks_on_rows() -> None:
    import whileai_core as wa

    failed = [{"prompt": f"where is ORD-{i}", "reward": 0, "tool_trace": [
        {"name": "get_order", "args": {"order_id": f"ORD-{i}"}, "output": {"error": "timed out"}}
    ]} for i in range(5)]  # fmt: skip
    assert wa.trace_report(failed).emphasis == {"tool": {"get_order": 5},
                                                "tool_condition": {"timeout": 5}}  # fmt: skip
    rows, run = wa.simulate_rows("specs/orders", traces=failed, budget=40)
    assert len(rows) == 40 and run.traces["flaw_rows"] == 5
    assert wa.leakage_report(rows, failed).n_leaky == 0
    kept, report = wa.drop_leaky_rows([*rows, {"prompt": "WHERE is ORD-3"}], failed)
    assert len(kept) == 40 and report.n_exact == 1
    lanes = wa.dimensions_from_traces(failed, ORDERS)["lanes"]
    assert [lane["share"] for lane in lanes] == [0.5, 0.5]
