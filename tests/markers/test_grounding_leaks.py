"""Argument grounding (one implementation with the conduct judge) and the leak report."""

from __future__ import annotations

from typing import Any

import orjson

from whileai_core.api import simulate_rows
from whileai_core.audit.run import AuditOptions, audit_rows
from whileai_core.judges.evidence import Evidence
from whileai_core.judges.grounding import ungrounded_arguments
from whileai_core.markers.grounding import GroundingOptions, invented
from whileai_core.markers.view import view

from ..helpers import REPO, run_cli

ROW: dict[str, Any] = {
    "prompt": "Refund order ORD-4410, please.",
    "steps": [
        {
            "tool": "get_order",
            "arguments": {"order_id": "ORD-4410"},
            "result": {"status": "ok", "data": {"amount": 31.5}},
        },
        {
            "tool": "refund_order",
            "arguments": {"order_id": "ORD-4410", "amount": 31.5, "note": "approved by a manager"},
            "result": {"status": "ok"},
        },
    ],
    "final_text": "Refunded $31.50 for ORD-4410.",
}


def test_invented_values_are_named_by_tool_and_key() -> None:
    found = invented(view(ROW))
    assert [(i.tool, i.key, i.value) for i in found] == [
        ("refund_order", "note", "approved by a manager")
    ]
    # The conduct judge reads the same implementation, in its own format.
    assert ungrounded_arguments(Evidence(ROW)) == ["refund_order.note='approved by a manager'"]
    assert invented(view(ROW), GroundingOptions(ignore_keys=("note",))) == []
    assert invented(view(ROW), GroundingOptions(ignore_keys=("refund_order.note",))) == []
    assert invented(view(ROW), GroundingOptions(allow=("approved by a manager",))) == []


def test_a_value_from_the_system_prompt_is_grounded() -> None:
    row = {
        "messages": [
            {"role": "system", "content": "The default warehouse is WH-09."},
            {"role": "user", "content": "Is the drill in stock?"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "check_stock", "arguments": '{"warehouse": "WH-09"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": '{"status": "ok"}'},
            {"role": "assistant", "content": "Yes."},
        ]
    }
    assert invented(view(row)) == []


def test_grounding_report_over_seeded_rows_names_the_planted_inventions() -> None:
    rows, _ = simulate_rows(REPO / "specs" / "orders", mode="rl", budget=400, reproducible=True)
    report = audit_rows("grounding", rows, AuditOptions()).as_dict()
    planted = sum("invented_argument" in (r.get("seeded") or []) for r in rows)
    assert report["rows"] == 400 and report["grounded"] == 400 - planted > 0
    assert report["invented"], report
    for keys in report["invented"].values():
        for entry in keys.values():
            assert entry["count"] >= 1 and entry["values"]


def test_leak_report_says_how_many_rows_it_checked(tmp_path: Any) -> None:
    rows, _ = simulate_rows(REPO / "specs" / "orders", budget=60, reproducible=True)
    rows[0] = {k: v for k, v in rows[0].items() if k != "privileged"}
    leaked = sum("leak" in (r.get("seeded") or []) for r in rows)
    path = tmp_path / "rows.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    done = run_cli("audit", "leaks", str(path))
    assert done.returncode == 0, done.stderr.decode()
    first = done.stdout.decode().splitlines()[0]
    assert first.startswith(f"checked 59 of 60 rows: {leaked} quoted privileged context")
    report = orjson.loads(run_cli("audit", "leaks", str(path), "--json").stdout)
    assert report["checked"] == 59 and report["leaked"] == leaked == len(report["offenders"])
    assert all(o["field"] in ("reference", "hidden_state") for o in report["offenders"])


def test_a_run_with_no_privileged_block_says_so(tmp_path: Any) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_bytes(orjson.dumps({"prompt": "hi", "final_text": "hello"}) + b"\n")
    out = run_cli("audit", "leaks", str(path)).stdout.decode()
    assert out.startswith("checked 0 of 1 rows: no row carries a privileged block")
    assert "not a pass" in out
