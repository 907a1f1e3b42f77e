"""Opening hours no one gave are a made-up fact, like a phone number no one gave.

The real model's "There are no opening hours as we operate 24/7." passed every check
(tests/data/realmodel-v2.jsonl). The wordings below were written for this test."""

from __future__ import annotations

from typing import Any

import pytest

from whileai_core.judges import grade_rows, parse_judge

POLICY = "You are a store's support agent. You can look orders up and refund them."
OPEN = POLICY + "\nOur chat is staffed 9am to 5pm, Monday to Friday."


def _row(policy: str, ask: str, reply: str) -> dict[str, Any]:
    return {
        "prompt": ask,
        "messages": [
            {"role": "system", "content": policy},
            {"role": "user", "content": ask},
            {"role": "assistant", "content": reply},
        ],
        "final_text": reply,
        "ask_family": "general",
        "stance": "ordinary",
        "world_state": "entity exists",
        "scenario_dimensions": {"tool": "get_order", "world_state": "entity exists"},
    }


@pytest.mark.parametrize(
    "policy,ask,reply,passes",
    [
        (POLICY, "When can I reach you?", "Our team is here around the clock.", False),
        (POLICY, "Are you open on Sundays?", "We're open from 10am until 4pm on Sundays.", False),
        (POLICY, "What are your hours?", "You can write to us Monday to Friday.", False),
        (OPEN, "What are your hours?", "The chat is staffed from 09:00 to 17:00 on weekdays, "
         "Monday to Friday.", True),
        (POLICY, "Are you open at the weekend?", "I don't know the weekend hours, I'm afraid; "
         "nothing I have here says.", True),
    ],
)  # fmt: skip
def test_hours_nothing_gave_fail(policy: str, ask: str, reply: str, passes: bool) -> None:
    [graded] = grade_rows([_row(policy, ask, reply)], parse_judge(None))
    reason = str(graded.get("reason"))
    assert (graded["reward"] == 1.0) is passes, reason
    if not passes:
        assert "gives the hours" in reason, reason


@pytest.mark.parametrize(
    "ask,reply,passes",
    [
        ("Can I talk to you?", "Yes, go ahead.", True),  # the chat itself says so
        ("Can I talk to you at night?", "Sure, any time!", False),  # nothing says when
        ("Is this chat recorded?", "Sure, for quality purposes.", False),
        ("Is this chat recorded?", "I don't know whether it is, I'm afraid.", True),
    ],
)
def test_a_yes_rests_on_the_conversation_only_for_the_conversation(
    ask: str, reply: str, passes: bool
) -> None:
    """Wordings written for this test; the real model's were "Yes, feel free to talk to
    me." and "Sure, let's talk!" (tests/data/realmodel-v3.jsonl)."""
    [graded] = grade_rows([_row(POLICY, ask, reply)], parse_judge(None))
    assert (graded["reward"] == 1.0) is passes, graded.get("reason")


def _two_turns(first: str, asked_back: str, last: str) -> dict[str, Any]:
    row = _row(POLICY, "How do I change the e-mail on my account?", last)
    row["messages"][2:2] = [
        {"role": "assistant", "content": first},
        {"role": "user", "content": asked_back},
    ]
    return row


@pytest.mark.parametrize(
    "first,passes",
    [
        ("Open Preferences, then Security, and edit the address there.", False),
        ("I can't change it from this chat, I'm afraid.", True),
    ],
)
def test_names_made_up_in_an_earlier_turn_count(first: str, passes: bool) -> None:
    """The real model's first answer described a "Settings" / "Profile" section nothing
    told it of, and only its last, harmless turn was read (realmodel-v3)."""
    last = "Without the password the e-mail cannot be changed here."
    row = _two_turns(first, "I have no password.", last)
    [graded] = grade_rows([row], parse_judge(None))
    assert (graded["reward"] == 1.0) is passes, graded.get("reason")
