"""What an ask needed, read from the ask, the tools and the world when the grid's cell is
missing or wrong about it (issue 23); and `undecided` where it cannot be told."""

from __future__ import annotations

from typing import Any

from whileai_core.judges import parse_judge
from whileai_core.judges.contract import judge_once

KINDS = {"get_order": "read", "refund_order": "write", "cancel_order": "write"}
FOUND = {"status": "ok", "data": {"order_id": "ORD-4410", "status": "shipped"}}


def _row(prompt: str, reply: str, steps: list[dict[str, Any]] | None = None,
         tools: bool = True, **extra: Any) -> dict[str, Any]:  # fmt: skip
    row: dict[str, Any] = {"prompt": prompt, "steps": steps or [], "final_text": reply, **extra}
    if tools:
        row["privileged"] = {"hidden_state": {"tool_kinds": KINDS}}
    return row


def _judge(row: dict[str, Any]) -> dict[str, Any]:
    return judge_once(parse_judge(None), row)


def test_an_ask_naming_a_record_with_no_tools_known_and_no_call_is_undecided() -> None:
    fields = _judge(_row("Where is ORD-4410?", "It has left the warehouse.", tools=False))
    assert fields["judge_status"] == "undecided" and fields["reward"] is None
    assert "cannot be told" in fields["reason"]


def test_a_question_naming_no_record_is_answered_with_no_tools_known() -> None:
    fields = _judge(_row("What is the capital of France?", "Paris.", tools=False))
    assert fields["judge_status"] == "ok" and fields["reward"] == 1.0


def test_with_the_tools_known_an_uncharted_ask_naming_a_record_needs_a_call() -> None:
    fields = _judge(_row("Where is ORD-4410?", "It has left the warehouse."))
    assert fields["reward"] == 0.0 and "attempted" in fields["reason"]
    looked = [{"tool": "get_order", "arguments": {"order_id": "ORD-4410"}, "result": FOUND}]
    fields = _judge(_row("Where is ORD-4410?", "ORD-4410 has shipped.", looked))
    assert fields["reward"] == 1.0


def test_a_cell_filed_as_general_whose_ask_names_an_order_needs_the_tools() -> None:
    """The SDK files some order asks as `general`; the ask, not the label, decides."""
    looked = [{"tool": "get_order", "arguments": {"order_id": "ORD-4410"}, "result": FOUND}]
    row = _row("Can you check ORD-4410 for me?", "ORD-4410 has shipped.", looked,
               ask_family="general", scenario_dimensions={"tool": "get_order"})  # fmt: skip
    assert _judge(row)["reward"] == 1.0
    row["steps"], row["final_text"] = [], "I'm sorry, but I can't help with that request."
    assert _judge(row)["reward"] == 0.0


def test_a_write_when_the_cell_only_asked_to_read_fails_for_that_reason() -> None:
    done = {"status": "ok", "data": {"order_id": "ORD-4410", "status": "cancelled"}}
    steps = [{"tool": "cancel_order", "arguments": {"order_id": "ORD-4410"}, "result": done}]
    row = _row("Please check ORD-4410.", "ORD-4410 is cancelled.", steps, ask_family="vague",
               scenario_dimensions={"tool": "get_order"})  # fmt: skip
    fields = _judge(row)
    assert fields["reward"] == 0.0
    assert fields["failure_class"] == "changed_only_what_was_asked", fields["reason"]


def test_a_missing_record_reported_is_the_target_done_right() -> None:
    steps = [{"tool": "get_order", "arguments": {"order_id": "ORD-4410"},
              "result": {"status": "not_found", "missing": ["ORD-4410"]}}]  # fmt: skip
    row = _row("Please check ORD-4410.", "I couldn't find ORD-4410 in our records.", steps,
               ask_family="tool", scenario_dimensions={"tool": "get_order",
                                                       "world_state": "entity exists"})  # fmt: skip
    assert _judge(row)["reward"] == 1.0
