"""The mock world: schema checks, world_state effects, consistency and the fault schedule."""

from __future__ import annotations

import json
import re
import sys
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
        ("duplicate entity", lambda r, w: r["status"] == "ok" and len(r["matches"]) == 2
                             and w["status"] == "ambiguous"),
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


def test_a_write_to_two_matching_records_changes_neither_and_says_so() -> None:
    """A duplicate cell's write is no "ok": it is `ambiguous`, names both records and
    leaves them as they were, however often it is asked."""
    world = _world("duplicate entity")
    before = world.call("get_order", ORDER)
    for _ in range(2):
        write = world.call("cancel_order", ORDER)
        assert write["status"] == "ambiguous" and len(write["matches"]) == 2
        assert "nothing was changed" in write["error"] and "ORD-1234" in write["error"]
    assert world.call("get_order", ORDER) == before


def test_a_denied_write_changes_nothing_and_a_timed_out_one_may_have() -> None:
    """A refused write never ran, so the record reads as before (issue 24: a cancel
    answered permission_denied, then read back cancelled). A timeout may hide a write
    that went through, as on a real backend."""
    denied = _world(faults={"cancel_order": {"mode": "permission_denied", "rate": 1.0}})
    before = denied.call("get_order", ORDER)["data"]["status"]
    assert denied.call("cancel_order", ORDER)["status"] == "permission_denied"
    assert denied.call("get_order", ORDER)["data"]["status"] == before
    timed = _world(faults={"cancel_order": {"mode": "timeout", "rate": 1.0}})
    assert timed.call("cancel_order", ORDER)["status"] == "timeout"
    assert timed.call("get_order", ORDER)["data"]["status"] == "cancelled"


def test_a_stale_search_or_pair_is_an_old_copy_of_the_same_list() -> None:
    """A stale fault on a search answered with one empty record ("it shows None"): an old
    copy of a list is the same list, each record stamped and its status the first one."""
    tools = load_spec(Path(__file__).resolve().parents[2] / "specs" / "orders").tools
    email = {"email": "ana@example.com"}
    world = World(tools, targets=email, known=email.values(), seed=2,
                  faults={"search_orders": {"mode": "stale", "rate": 1.0}})  # fmt: skip
    found = world.call("search_orders", email)
    assert found["stale"] is True and found["as_of"] and "data" not in found
    assert found["results"] and all(r["as_of"] == found["as_of"] for r in found["results"])
    twice = _world("duplicate entity", faults={"get_order": {"mode": "stale", "rate": 1.0}})
    pair = twice.call("get_order", ORDER)
    assert pair["stale"] is True and len(pair["matches"]) == 2
    assert all(m["order_id"] == "ORD-1234" and m["status"] == "pending" for m in pair["matches"])


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
        known=["BK12A5", "Kim", "FLI-9"],  # the person holds the flight they move to
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


# -- what the world knows ------------------------------------------------------------------

# An agent that makes every key up: ids in the shape the schema asks for, so the call is
# never rejected for its form, only refused for naming nothing the world holds.
GUESSER = r"""
import json, sys
def value(name, schema):
    if schema.get("enum"):
        return schema["enum"][0]
    if schema.get("type") == "integer":
        return 987654
    if schema.get("type") == "number":
        return 0
    if schema.get("format") == "email" or "email" in name:
        return "made.up.person@example.com"
    if schema.get("pattern") == "^ORD-[0-9]{4}$":
        return "ORD-0000"
    if schema.get("pattern") == "^[A-Z0-9]{6}$":
        return "ZZZZ00"
    if schema.get("pattern") == "^[A-Z]{3}$":
        return "QQQ"
    if schema.get("format") == "date":
        return "2019-01-01"
    return "made-up-" + name
for line in sys.stdin:
    ep = json.loads(line)
    for tool in ep["tools"]:
        fn = tool["function"]
        props = fn["parameters"].get("properties", {})
        args = {n: value(n, props[n]) for n in fn["parameters"].get("required", [])}
        print(json.dumps({"type": "tool_call", "id": ep["id"], "name": fn["name"],
                          "arguments": args}), flush=True)
        json.loads(sys.stdin.readline())
    print(json.dumps({"type": "final", "id": ep["id"], "final_text": "done"}), flush=True)
"""


@pytest.mark.parametrize("spec", ["orders", "airline", "repo-maint"])
def test_a_made_up_key_is_not_found_in_every_cell(tmp_path: Path, spec: str) -> None:
    """Every cell of the grid (unrelated and general asks too): a call naming a record
    nobody gave and no tool returned finds nothing, and a search finds an empty list."""
    from whileai_core.simulate.grid import build_grid

    from ..helpers import REPO, run_cli

    loaded = load_spec(REPO / "specs" / spec)
    cells = len(build_grid(loaded).cells)
    script = tmp_path / "guesser.py"
    script.write_text(GUESSER)
    out = tmp_path / "rows.jsonl"
    proc = run_cli(
        "simulate", str(REPO / "specs" / spec), "--agent", f"cmd:{sys.executable} {script}",
        "--budget", str(cells), "--fault-rate", "0", "-o", str(out),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr.decode()
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len({r["scenario_dimensions"]["tool"] for r in rows}) >= 3
    seen = {r["scenario_dimensions"]["tool"] for r in rows} | {r["ask_family"] for r in rows}
    assert {"unrelated", "general"} <= seen
    for row in rows:
        for step in row["steps"]:
            if "tool" not in step:
                continue
            result = step["result"]
            assert result["status"] in ("not_found", "ok"), (step, row["scenario_dimensions"])
            if result["status"] == "ok":  # a search by criteria the world does not hold
                assert result == {"status": "ok", "results": []}, step


def test_a_search_answers_with_a_list_whose_keys_the_world_then_knows() -> None:
    tools = load_spec(Path(__file__).resolve().parents[2] / "specs" / "orders").tools
    email = {"email": "ana.kim@example.com"}
    world = World(tools, targets=email, known=email.values(), seed=2)
    found = world.call("search_orders", email)
    assert found["status"] == "ok" and len(found["results"]) == 1
    order_id = found["results"][0]["order_id"]
    assert re.fullmatch(r"ORD-[0-9]{4}", order_id)  # the look-up tool's own pattern
    # Returned by a tool earlier in the rollout: the order exists now, and is the same one.
    looked = world.call("get_order", {"order_id": order_id})
    assert looked["status"] == "ok" and looked["data"]["amount"] == found["results"][0]["amount"]
    assert world.call("get_order", {"order_id": "ORD-0000"}) == {
        "status": "not_found", "missing": ["ORD-0000"]
    }  # fmt: skip
    nobody = world.call("search_orders", {"email": "grandson@example.com"})
    assert nobody == {"status": "not_found", "results": [], "missing": ["grandson@example.com"]}
    twice = World(tools, world_state="duplicate entity", targets=email, seed=2)
    pair = twice.call("search_orders", email)["results"]
    assert len(pair) == 2 and pair[0]["order_id"] != pair[1]["order_id"]
    assert pair[0]["amount"] == pair[1]["amount"]  # the same order placed twice
    gone = World(tools, world_state="entity missing", targets=email, seed=2)
    assert gone.call("search_orders", email)["status"] == "not_found"


def test_a_search_under_the_person_s_key_finds_the_record_they_named() -> None:
    """The real-model run of 2026-12-02: the person gave ORD-3612 and their e-mail, the
    agent searched by the e-mail and was shown ORD-0721, and refunded that instead."""
    tools = load_spec(Path(__file__).resolve().parents[2] / "specs" / "orders").tools
    mine = {"email": "alex.smith@example.com", "order_id": "ORD-3612"}
    world = World(tools, targets=mine, known=mine.values(), seed=4)
    found = world.call("search_orders", {"email": mine["email"]})["results"]
    assert [r["order_id"] for r in found] == ["ORD-3612"]
    looked = world.call("get_order", {"order_id": "ORD-3612"})["data"]
    assert looked["amount"] == found[0]["amount"]  # one record, however it was reached
    twice = World(tools, world_state="duplicate entity", targets=mine, seed=4)
    pair = twice.call("search_orders", {"email": mine["email"]})["results"]
    assert pair[0]["order_id"] == "ORD-3612" and pair[1]["order_id"] != "ORD-3612"


def test_a_key_of_one_kind_names_no_record_of_another() -> None:
    """The real model refunded 'booking' FLI-37829, the flight id the person gave."""
    airline = load_spec(Path(__file__).resolve().parents[2] / "specs" / "airline").tools
    mine = {"flight_id": "FLI-37829", "booking_ref": "Q7KD2M", "last_name": "Chen"}
    world = World(airline, targets=mine, known=mine.values(), seed=3)
    refund = world.call("refund_booking", {"booking_ref": "FLI-37829", "method": "travel_credit"})
    assert refund["status"] in ("not_found", "rejected"), refund
    mine_read = world.call("get_booking", {"booking_ref": "Q7KD2M", "last_name": "Chen"})
    assert mine_read["status"] == "ok"


def test_one_action_twice_is_already_done_another_is_not() -> None:
    """A booking cancelled and then refunded is how a refund of a cancellation goes; the
    world used to answer the refund 'already cancelled'."""
    airline = load_spec(Path(__file__).resolve().parents[2] / "specs" / "airline").tools
    mine = {"booking_ref": "Q7KD2M", "last_name": "Chen"}
    world = World(airline, targets=mine, known=mine.values(), seed=3)
    assert world.call("cancel_booking", {"booking_ref": "Q7KD2M"})["status"] == "ok"
    again = world.call("cancel_booking", {"booking_ref": "Q7KD2M"})
    assert again["status"] == "already_done"
    refund = world.call("refund_booking", {"booking_ref": "Q7KD2M", "method": "travel_credit"})
    assert refund["status"] == "ok" and refund["data"]["status"] == "refunded"
    twice = world.call("refund_booking", {"booking_ref": "Q7KD2M", "method": "travel_credit"})
    assert twice["status"] == "already_done"


def test_a_search_by_criteria_the_world_does_not_hold_is_an_empty_list() -> None:
    airline = load_spec(Path(__file__).resolve().parents[2] / "specs" / "airline").tools
    trip = {"origin": "LIS", "destination": "DEN", "date": "2025-05-02"}
    world = World(airline, known=trip.values(), seed=1)
    flights = world.call("search_flights", trip)["results"]
    assert len(flights) == 1 and flights[0]["flight_id"]
    other_day = world.call("search_flights", {**trip, "date": "2025-05-03"})
    assert other_day == {"status": "ok", "results": []}
    booked = world.call(
        "book_flight",
        {"flight_id": flights[0]["flight_id"], "passenger_name": "Ana Kim", "fare_class": "basic"},
    )
    assert booked["status"] == "ok"


def test_a_write_shows_the_arguments_it_was_given() -> None:
    world = _world()
    refund = world.call("refund_order", {**ORDER, "amount": 0, "reason": "other"})
    assert refund["status"] == "ok"
    assert refund["data"]["amount"] == 0 and refund["data"]["reason"] == "other"


def test_the_person_s_own_words_name_records_the_world_knows() -> None:
    """A spec's seed prompt (or a pinned task's) names its own ids: those exist."""
    world = World(TOOLS, known=[], known_text="Hi, refund ORD-4411 please, it broke.", seed=1)
    assert world.call("get_order", {"order_id": "ORD-4411"})["status"] == "ok"
    assert world.call("get_order", {"order_id": "ORD-4412"})["status"] == "not_found"
    assert world.call("get_order", {"order_id": "ORD-441"})["status"] == "not_found"  # a part


def test_an_unrelated_cell_knows_no_record_at_all() -> None:
    orders = load_spec(Path(__file__).resolve().parents[2] / "specs" / "orders").tools
    world = World(orders, known=[], seed=1)
    assert world.call("get_order", {"order_id": "ORD-5678"})["status"] == "not_found"
    assert world.call("search_orders", {"email": "example@example.com"})["status"] == "not_found"


def test_a_record_a_search_shows_acted_on_is_already_done_by_its_other_key() -> None:
    """Seen with a real model as the agent: a search by the person's e-mail showed the
    order refunded, and refunding it by its order id came back "ok" (the cell's target is
    the e-mail, so the write looked untargeted). The record's status says it was done."""
    tools = load_spec(Path(__file__).resolve().parents[2] / "specs" / "orders").tools
    email = {"email": "sam.okafor@example.com"}
    world = World(
        tools, world_state="entity already acted on", targets=email, known=email.values(),
        seed=2, acted_verb="refund",
    )  # fmt: skip
    found = world.call("search_orders", email)
    order = found["results"][0]
    assert order["status"] == "refunded"
    refund = {"order_id": order["order_id"], "amount": 1.0, "reason": "damaged"}
    again = world.call("refund_order", refund)
    assert again["status"] == "already_done" and "already refunded" in again["error"]
    # Another action on it is not done yet: a cancel of a refunded order is the world's
    # to answer ok (the policy, not the world, says whether the agent should).
    assert world.call("cancel_order", {"order_id": order["order_id"]})["status"] == "ok"


def test_the_same_write_again_says_what_was_done_not_the_status_since() -> None:
    """Seen on the fifth real-model set: refunded, then cancelled, then refunded again,
    the world said "ORD-... was already cancelled"."""
    world = _world()
    refund = {**ORDER, "amount": 1.0, "reason": "damaged"}
    assert world.call("refund_order", refund)["status"] == "ok"
    assert world.call("cancel_order", ORDER)["status"] == "ok"
    again = world.call("refund_order", refund)
    assert again["status"] == "already_done"
    assert again["error"] == "ORD-1234 was already refunded", again
    assert again["data"]["status"] == "cancelled"  # the record as it stands
