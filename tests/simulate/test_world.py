"""The mock world: schema checks, world_state effects, consistency and the fault schedule."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from whileai_core.simulate.faults import FAULT_KINDS, FaultSchedule
from whileai_core.simulate.run import run_simulation
from whileai_core.simulate.scheduler import SimulateConfig
from whileai_core.simulate.world import World
from whileai_core.spec import load_spec

from ..helpers import ORDERS_SPEC

TOOLS = load_spec(ORDERS_SPEC).tools
ORDER = {"order_id": "ORD-1234"}


def _world(state: str = "entity exists", **kw: object) -> World:
    return World(TOOLS, world_state=state, targets=ORDER, seed=3, **kw)  # type: ignore[arg-type]


def test_public_world_answers_with_plain_existing_records() -> None:
    world = World(json.loads(ORDERS_SPEC.read_text())["tools"])  # the OpenAI wire shape works too
    result = world.call("get_order", {"order_id": "ORD-77"})
    assert result["status"] == "ok"
    assert result["data"]["order_id"] == "ORD-77"


def test_missing_required_and_placeholder_arguments_are_rejected_by_name() -> None:
    world = _world()
    assert world.call("get_order", {}) == {
        "status": "rejected",
        "fields": ["order_id"],
        "error": "order_id: required",
    }
    placeholder = world.call("refund_order", {"order_id": "<order_id>"})
    assert placeholder["status"] == "rejected" and placeholder["fields"] == ["order_id"]
    wrong_type = world.call("get_order", {"order_id": 12})
    assert wrong_type["status"] == "rejected"
    assert world.call("no_such_tool", {})["status"] == "rejected"


def test_arguments_are_checked_by_jsonschema_bounds_enums_and_unknown_fields() -> None:
    tools = [
        {
            "name": "refund",
            "parameters": {
                "type": "object",
                "properties": {
                    "order_id": {"type": "string", "pattern": "^ORD-[0-9]{4}$"},
                    "amount": {"type": "number", "minimum": 0, "maximum": 500},
                    "reason": {"type": "string", "enum": ["damaged", "other"]},
                },
                "required": ["order_id"],
                "additionalProperties": False,
            },
        }
    ]
    world = World(tools)
    bad = world.call("refund", {"order_id": "ORD-12", "amount": -5, "reason": "meh", "x": 1})
    assert bad["status"] == "rejected"
    assert bad["fields"] == ["amount", "order_id", "reason", "x"]
    assert "reason: must be one of ['damaged', 'other']" in bad["error"]
    assert "x: unknown parameter" in bad["error"]
    # The pattern is the backend's too: the world names the constraint an id breaks.
    assert "'ORD-12' does not match '^ORD-[0-9]{4}$'" in bad["error"]
    assert world.call("refund", {"order_id": "ORD-1234", "amount": 20.5})["status"] == "ok"


def test_records_are_consistent_within_a_rollout() -> None:
    world = _world()
    first = world.call("get_order", ORDER)
    assert world.call("get_order", ORDER) == first
    done = world.call("refund_order", ORDER)
    assert done["status"] == "ok" and done["data"]["status"] == "refunded"
    assert world.call("get_order", ORDER)["data"]["status"] == "refunded"
    assert world.call("refund_order", ORDER)["status"] == "already_done"


@pytest.mark.parametrize(
    ("state", "check"),
    [
        ("entity missing", lambda r, w: r["status"] == "not_found"
                           and r["missing"] == ["ORD-1234"]),
        ("entity already acted on", lambda r, w: w["status"] == "already_done"),
        ("duplicate entity", lambda r, w: r["status"] == "ok" and len(r["matches"]) == 2),
        ("partially completed", lambda r, w: r["data"]["progress"] == "partial"
                                and r["data"]["pending_steps"]),
        ("entity exists", lambda r, w: r["status"] == "ok" and w["status"] == "ok"),
    ],
)  # fmt: skip
def test_every_world_state_has_an_effect(state: str, check: object) -> None:
    world = _world(state)
    read = world.call("get_order", ORDER)
    write = world.call("cancel_order", ORDER)
    assert check(read, write)  # type: ignore[operator]


def test_unknown_entities_do_not_exist_when_the_situation_names_its_own() -> None:
    assert _world().call("get_order", {"order_id": "ORD-9999"})["status"] == "not_found"


@pytest.mark.parametrize("mode", FAULT_KINDS)
def test_every_fault_kind_replaces_the_result(mode: str) -> None:
    world = _world(faults={"*": {"mode": mode, "rate": 1.0}})
    result = world.call("get_order", ORDER)
    expected = {"timeout": "timeout", "permission_denied": "permission_denied",
                "malformed": "malformed", "stale": "ok"}[mode]  # fmt: skip
    assert result["status"] == expected
    if mode == "stale":
        assert result["stale"] is True and result["data"]["order_id"] == "ORD-1234"
    if mode == "malformed":
        assert isinstance(result["raw"], str)
    assert world.fired == [{"tool": "get_order", "mode": mode, "step": 0}]


def test_fault_schedule_is_deterministic_from_the_seed_and_honours_the_rate() -> None:
    def pattern(seed: int) -> list[str | None]:
        schedule = FaultSchedule({"get_order": {"mode": "timeout", "rate": 0.5}}, seed)
        return [schedule.draw("get_order", i) for i in range(200)]

    assert pattern(1) == pattern(1)
    assert pattern(1) != pattern(2)
    fired = sum(1 for m in pattern(1) if m)
    assert 60 < fired < 140
    assert (
        FaultSchedule({"get_order": {"mode": "timeout", "rate": 1}}, 0).draw("cancel_order", 0)
        is None
    )


def test_simulated_rows_show_every_world_state_and_fault_kind(tmp_path: Path) -> None:
    out = tmp_path / "rows.jsonl"
    run_simulation(load_spec(ORDERS_SPEC), SimulateConfig(budget=400, seed=1), output=str(out))
    seen: set[str] = set()
    fired: set[str] = set()
    for line in out.read_text().splitlines():
        row = json.loads(line)
        fired.update(f["mode"] for f in row["faults_fired"])
        for step in row["steps"]:
            result = step.get("result")
            if not isinstance(result, dict):
                continue
            status = result.get("status")
            seen.add(str(status))
            if result.get("matches"):
                seen.add("duplicate")
            if result.get("stale"):
                seen.add("stale")
            if isinstance(result.get("data"), dict) and result["data"].get("progress"):
                seen.add("partial")
            # An honest agent reads first and stops at a record already acted on, so the
            # state shows up as a read of a refunded or cancelled order more often than
            # as a write the world turns away.
            if isinstance(result.get("data"), dict) and result["data"].get("status") in (
                "refunded",
                "cancelled",
            ):
                seen.add("already_done")
    assert {"ok", "not_found", "already_done", "duplicate", "partial"} <= seen
    assert {"timeout", "permission_denied", "malformed", "stale"} <= seen
    assert fired == set(FAULT_KINDS)


def test_a_spec_can_shape_records_with_returns_and_statuses() -> None:
    tool = {
        "name": "get_ticket",
        "description": "Look up a ticket.",
        "parameters": {
            "type": "object",
            "properties": {"ticket_id": {"type": "string"}},
            "required": ["ticket_id"],
        },
        "returns": {
            "type": "object",
            "properties": {"priority": {"type": "string", "enum": ["low", "high"]},
                           "assignee_email": {"type": "string"}},
        },
    }  # fmt: skip
    world = World([tool], statuses=["new", "triaged", "closed"], seed=1)
    data = world.call("get_ticket", {"ticket_id": "TIC-1001"})["data"]
    assert data["status"] == "closed"
    assert data["priority"] in ("low", "high")
    assert data["assignee_email"].endswith("@example.com")
    assert "amount" not in data  # no prices outside commerce


def test_a_record_read_by_one_key_and_changed_with_more_keys_is_one_record() -> None:
    airline = load_spec(Path(__file__).resolve().parents[2] / "specs" / "airline").tools
    world = World(
        airline,
        world_state="partially completed",
        targets={"booking_ref": "BK12A5"},
        seed=5,
    )
    read = {"booking_ref": "BK12A5", "last_name": "Kim"}
    before = world.call("get_booking", read)
    assert before["data"]["progress"] == "partial"
    changed = world.call("change_booking", {"booking_ref": "BK12A5", "new_flight_id": "FLI-9"})
    assert changed["status"] == "ok" and changed["data"]["new_flight_id"] == "FLI-9"
    after = world.call("get_booking", read)
    # The change finished the half-done booking, and it is the same booking throughout.
    assert "progress" not in after["data"]
    assert after["data"]["status"] == changed["data"]["status"]
    assert after["data"]["amount"] == before["data"]["amount"] == changed["data"]["amount"]
