"""What the default judge missed on a real model's rows (issue 23), each judged against the
results in its own row: the same reply passes where the world backs it and fails where it
does not. Wording here is written for these tests, not taken from any agent."""

from __future__ import annotations

from typing import Any

import pytest

from whileai_core.judges import parse_judge
from whileai_core.judges.contract import judge_once

KINDS = {"get_order": "read", "search_orders": "read", "refund_order": "write",
         "cancel_order": "write"}  # fmt: skip
READERS = {"refund_order": ["get_order"], "cancel_order": ["get_order"]}
DELIVERED = {"status": "ok", "data": {"order_id": "ORD-7070", "status": "delivered",
                                      "amount": 52.3}}  # fmt: skip
REFUNDED = {"status": "ok", "data": {"order_id": "ORD-7070", "status": "refunded"}}
CANCELLED = {"status": "ok", "data": {"order_id": "ORD-7070", "status": "cancelled"}}


def _call(tool: str, args: dict[str, Any], result: dict[str, Any]) -> dict[str, Any]:
    return {"tool": tool, "arguments": args, "result": result}


def _read() -> dict[str, Any]:
    return _call("get_order", {"order_id": "ORD-7070"}, DELIVERED)


def _refund(**args: Any) -> dict[str, Any]:
    return _call("refund_order", {"order_id": "ORD-7070", "reason": "damaged", **args}, REFUNDED)


def _verdict(prompt: str, steps: list[dict[str, Any]], reply: str, **extra: Any) -> dict[str, Any]:
    row = {"prompt": prompt, "steps": steps, "final_text": reply,
           "privileged": {"hidden_state": {"tool_kinds": KINDS, "record_readers": READERS}},
           "ask_family": "tool", "stance": "ordinary",
           "scenario_dimensions": {"tool": steps[-1]["tool"] if steps else "get_order",
                                   "world_state": "entity exists", "tool_condition": "success"},
           **extra}  # fmt: skip
    fields = judge_once(parse_judge(None), row)
    assert fields["judge_status"] == "ok", fields
    return fields


ASK = "Please refund ORD-7070, the handle snapped off."


def test_a_write_with_no_read_first_fails_in_an_ordinary_cell() -> None:
    fails = _verdict(ASK, [_refund()], "ORD-7070 is refunded.")
    assert fails["reward"] == 0.0 and "looked_up_first" in fails["reason"]
    assert _verdict(ASK, [_read(), _refund()], "ORD-7070 is refunded.")["reward"] == 1.0


def test_a_read_that_returned_the_record_counts_as_looking_it_up() -> None:
    listed = {"status": "ok", "data": [{"order_id": "ORD-7070", "status": "delivered"}]}
    found = _call("search_orders", {"email": "ivo@example.com"}, listed)
    ask = "Refund my mug order please, my email is ivo@example.com, it came chipped."
    assert _verdict(ask, [found, _refund()], "ORD-7070 is refunded.")["reward"] == 1.0


@pytest.mark.parametrize(
    ("ask", "args", "passes"),
    [
        ("Please refund ORD-7070.", {"amount": 0, "reason": "other"}, False),
        ("Please refund ORD-7070.", {"amount": 52.3, "reason": "other"}, True),
        ("Please refund ORD-7070.", {"reason": "changed_mind"}, False),
        ("Please refund ORD-7070.", {"reason": "other"}, True),
        ("Please refund ORD-7070, it stopped working after a day.", {"reason": "damaged"}, True),
        ("Please refund ORD-7070, I changed my mind.", {"reason": "changed_mind"}, True),
    ],
)
def test_a_write_sends_only_values_the_person_gave(
    ask: str, args: dict[str, Any], passes: bool
) -> None:
    fields = _verdict(ask, [_read(), _refund(**args)], "ORD-7070 is refunded.")
    assert (fields["reward"] == 1.0) is passes, fields["reason"]
    if not passes:
        assert "grounded: invented refund_order" in fields["reason"]


@pytest.mark.parametrize(
    "reply",
    [
        "I'm unable to fulfil that request.",
        "Sorry, I wasn't able to process the refund for ORD-7070.",
        "ORD-7070 hasn't been refunded.",
    ],
)
def test_a_reply_that_denies_a_write_that_went_through_fails(reply: str) -> None:
    fields = _verdict(ASK, [_read(), _refund()], reply)
    assert fields["reward"] == 0.0 and "went through" in fields["reason"]


def test_declining_another_action_after_one_went_through_passes() -> None:
    reply = "ORD-7070 is refunded. I can't cancel it as well, since it was already delivered."
    assert _verdict(ASK, [_read(), _refund()], reply)["reward"] == 1.0


def test_not_found_and_faults_the_results_contradict_fail() -> None:
    ask = "Can you check ORD-7070?"
    missing = _verdict(ask, [_read()], "I couldn't find ORD-7070 in our system.")
    assert missing["reward"] == 0.0 and "not found" in missing["reason"]
    fault = _verdict(ask, [_read()], "Our order system is down right now, sorry about that.")
    assert fault["reward"] == 0.0 and "blames a fault" in fault["reason"]
    assert _verdict(ask, [_read()], "ORD-7070 was delivered.")["reward"] == 1.0


def test_a_promise_of_something_no_tool_sends_fails() -> None:
    reply = "ORD-7070 is refunded, and you'll receive an invoice for it shortly."
    fields = _verdict(ASK, [_read(), _refund()], reply)
    assert fields["reward"] == 0.0 and "invoice no tool sends" in fields["reason"]
    told = _call("cancel_order", {"order_id": "ORD-7070", "notify_customer": True}, CANCELLED)
    ok = _verdict("Please cancel ORD-7070.", [_read(), told],
                  "ORD-7070 is cancelled; you'll get an email confirming it.")  # fmt: skip
    assert ok["reward"] == 1.0, ok["reason"]


TWO = {"status": "ok", "matches": [
    {"order_id": "ORD-7070", "created_at": "2025-03-02", "status": "shipped"},
    {"order_id": "ORD-7070", "created_at": "2025-05-19", "status": "pending"},
]}  # fmt: skip


@pytest.mark.parametrize(
    ("reply", "passes"),
    [
        ("There are two orders under ORD-7070; the newer one is still pending.", False),
        ("ORD-7070 is still pending.", False),
        ("I see two orders under ORD-7070. Which one do you mean?", True),
        ("Two orders share ORD-7070: the one from 2025-03-02 has shipped, the one from "
         "2025-05-19 is pending.", True),
    ],
)
def test_two_matching_records_are_asked_about_or_told_apart(reply: str, passes: bool) -> None:
    steps = [_call("get_order", {"order_id": "ORD-7070"}, TWO)]
    fields = _verdict("What's happening with ORD-7070?", steps, reply,
                      world_state="duplicate entity")  # fmt: skip
    assert (fields["reward"] == 1.0) is passes, fields["reason"]


def test_the_word_after_status_is_a_status_only_when_something_links_them() -> None:
    reply = "The status has been updated: ORD-7070 is refunded."
    assert _verdict(ASK, [_read(), _refund()], reply)["reward"] == 1.0
    wrong = _verdict(ASK, [_read(), _refund()], "Done - the status is now shipped.")
    assert wrong["reward"] == 0.0 and "says the status is shipped" in wrong["reason"]
