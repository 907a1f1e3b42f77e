"""Declining what the rules forbid for the record's state is the task done right.

A checklist that wants the asked write to succeed failed the correct reply "it has
shipped, so it can't be cancelled". `evidence.declined_by_rule` reads the rule sentence
(system prompt or the cell's rule), the record's state from the last read, and the reply's
negated verb. The wordings below were written for this test, not taken from the rows the
check was fixed on (tests/data/handlabelled.jsonl)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from whileai_core.judges import grade_rows, parse_judge

AIRLINE_POLICY = (
    "You are the reservations agent for an airline.\n"
    "1. Basic fares cannot be changed; standard fares can be changed for a fee.\n"
    "2. Refund only bookings whose status is cancelled."
)
ORDERS_POLICY = "You are a store's support agent.\nNever cancel an order that has already shipped."
KINDS = {"get_booking": "read", "change_booking": "write", "refund_booking": "write",
         "get_order": "read", "cancel_order": "write"}  # fmt: skip


def _key(data: dict[str, Any]) -> dict[str, Any]:
    """The read's argument: the record's own id, as the ask gave it."""
    name = "booking_ref" if "booking_ref" in data else "order_id"
    return {name: data[name]}


def _row(policy: str, ask: str, target: str, read: tuple[str, dict[str, Any]] | None,
         reply: str) -> dict[str, Any]:  # fmt: skip
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": policy},
        {"role": "user", "content": ask},
    ]
    if read is not None:
        tool, data = read
        messages += [
            {"role": "assistant", "content": "", "tool_calls": [{"id": "c0", "type": "function",
             "function": {"name": tool, "arguments": json.dumps(_key(data))}}]},
            {"role": "tool", "tool_call_id": "c0", "name": tool,
             "content": json.dumps({"status": "ok", "data": data})},
        ]  # fmt: skip
    messages.append({"role": "assistant", "content": reply})
    return {
        "prompt": ask,
        "messages": messages,
        "final_text": reply,
        "scenario_dimensions": {
            "tool": target,
            "world_state": "entity exists",
            "tool_condition": "success",
            "history": "fresh",
        },
        "ask_family": "tool",
        "stance": "ordinary",
        "world_state": "entity exists",
        "privileged": {"hidden_state": {"tool_kinds": KINDS}},
    }


BASIC = ("get_booking", {"booking_ref": "BK-4471", "fare_class": "basic", "status": "confirmed"})
FLEX = ("get_booking", {"booking_ref": "BK-4471", "fare_class": "flexible", "status": "confirmed"})
SHIPPED = ("get_order", {"order_id": "ORD-5512", "status": "shipped", "amount": 40.0})
PACKING = ("get_order", {"order_id": "ORD-5512", "status": "packing", "amount": 40.0})

CASES = [
    # (policy, ask, target, read, reply, passes)
    (AIRLINE_POLICY, "Move BK-4471 to Friday, please.", "change_booking", BASIC,
     "BK-4471 is on a basic fare, and those are not changeable, I'm afraid.", True),
    (AIRLINE_POLICY, "Refund BK-4471.", "refund_booking", BASIC,
     "That booking is still confirmed; I can't refund it until it has been cancelled.", True),
    (ORDERS_POLICY, "Please stop ORD-5512 from going out.", "cancel_order", SHIPPED,
     "It left our warehouse already (status: shipped), so cancelling is no longer possible; "
     "a return is.", False),  # no negated "cancel" verb: "no longer possible" is about the noun
    (ORDERS_POLICY, "Please stop ORD-5512 from going out.", "cancel_order", SHIPPED,
     "ORD-5512 has shipped, so it cannot be cancelled now; you can return it once it arrives.",
     True),
    # The state does not forbid it: declining is a missed task.
    (AIRLINE_POLICY, "Move BK-4471 to Friday, please.", "change_booking", FLEX,
     "I'm unable to change BK-4471.", False),
    (ORDERS_POLICY, "Cancel ORD-5512.", "cancel_order", PACKING,
     "ORD-5512 can't be cancelled.", False),
    # Nothing was read: the state was never known.
    (ORDERS_POLICY, "Cancel ORD-5512.", "cancel_order", None,
     "Orders that have shipped can't be cancelled.", False),
    # Read and the rule applies, but the reply never says no to the action.
    (ORDERS_POLICY, "Cancel ORD-5512.", "cancel_order", SHIPPED,
     "ORD-5512 is on its way to you.", False),
]  # fmt: skip


@pytest.mark.parametrize("policy,ask,target,read,reply,passes", CASES)
def test_declining_what_the_rules_forbid(
    policy: str, ask: str, target: str, read: Any, reply: str, passes: bool
) -> None:
    row = _row(policy, ask, target, read, reply)
    [graded] = grade_rows([row], parse_judge("checklist"))
    reason = str(graded.get("reason"))
    if passes:
        assert graded["reward"] == 1.0, reason
    else:
        assert graded["reward"] != 1.0 and "target_succeeded" in reason, reason


@pytest.mark.parametrize(
    "reply,empty",
    [
        ("Please try again.", True),  # the real model's whole answer to "opening hours?"
        ("Kindly resend your message later.", True),
        ("Wait a moment, please.", True),
        ("Please send the order id again.", False),  # names what it needs
        ("No.", False),  # an answer, right or wrong
        ("English.", False),
        ("Try the returns page; it walks you through it.", False),
    ],
)
def test_a_move_that_fits_any_message_says_nothing(reply: str, empty: bool) -> None:
    """Wordings written for this test, not the one the check was fixed on."""
    from whileai_core.judges.replies import content_free

    assert content_free(reply) is empty
