"""The offline person answers what the agent asked: read by meaning, not by phrase.

The agents here are not the seeded agent: a hand-written set of agent turns in
`tests/data/agent_questions.jsonl`, and a scripted agent with its own wording that asks
for the order id (and the email, and a phone number nobody has) before it does anything.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
from pathlib import Path
from typing import Any

import orjson

from whileai_core.agents.base import Episode, RolloutResult
from whileai_core.people.person import facts_of, read_turn
from whileai_core.people.template import TemplateWriter
from whileai_core.simulate.config import SimulateConfig
from whileai_core.simulate.scheduler import Engine
from whileai_core.spec import load_spec

from ..helpers import REPO

DATA = Path(__file__).resolve().parents[1] / "data" / "agent_questions.jsonl"
ORDERS = load_spec(REPO / "specs" / "orders")
HELD = {
    "entities": {"order_id": "ORD-5521", "email": "sam.kim@example.com", "reason": "damaged"},
    "arguments": {"refund_order": {"order_id": "ORD-5521", "reason": "damaged"}},
}


def test_hand_written_agent_turns_are_read_for_what_they_ask() -> None:
    facts = facts_of(HELD)
    for line in DATA.read_text().splitlines():
        case = json.loads(line)
        reading = read_turn(case["turn"], facts)
        assert sorted(f.name for f in reading.facts) == sorted(case["wants"]), case["turn"]
        if "missing" in case:
            assert reading.missing == [case["missing"]], case["turn"]
        if "options" in case:
            assert reading.options == case["options"], case["turn"]
        if "confirm" in case:
            assert reading.confirm is case["confirm"], case["turn"]
        if "which_of_two" in case:
            assert reading.which_of_two, case["turn"]


# The scripted agent's own ways of asking, none of them the seeded agent's phrasing.
ID_QUESTIONS = (
    "Happy to look into it. What's the reference on your purchase?",
    "Before I touch anything, could you share the number of that order?",
    "I can check once I have the identifier of the package you mean.",
    "Mind sending over the order #?",
    "Which purchase are we talking about exactly?",
    "To pull it up I'll need the confirmation code from your receipt email.",
)
EMAIL_QUESTION = "And the e-mail address the account is under?"
PHONE_QUESTION = "Lastly, what is the phone number on file?"
_ID = re.compile(r"\b[A-Z]{2,5}-\d{3,6}\b")


class AskingAgent:
    """Asks for the order id in its own words, then the email, sometimes a phone number
    nobody has; looks the order up when it hears an id."""

    name = "asking_agent"

    async def run(self, episode: Episode) -> RolloutResult:
        rng = random.Random(episode.seed)
        messages: list[dict[str, Any]] = [{"role": "user", "content": episode.prompt}]
        steps: list[dict[str, Any]] = []
        plan = [rng.choice(ID_QUESTIONS), EMAIL_QUESTION]
        if rng.random() < 0.3:
            plan.append(PHONE_QUESTION)
        if rng.random() < 0.3:
            plan.append(rng.choice(ID_QUESTIONS))  # asked twice: still answered
        for question in plan:
            messages.append({"role": "assistant", "content": question})
            steps.append({"text": question})
            reply = await episode.user.reply(messages) if episode.user else None
            if not reply:
                break
            messages.append({"role": "user", "content": reply})
            steps.append({"role": "user", "text": reply})
            heard = _ID.findall(reply)
            if heard:
                result = episode.world.call("get_order", {"order_id": heard[0]})
                steps.append({"tool": "get_order", "arguments": {"order_id": heard[0]},
                              "result": result})  # fmt: skip
                messages.append({"role": "tool", "content": orjson.dumps(result).decode()})
        final = "Thanks, that is all I needed from you."
        messages.append({"role": "assistant", "content": final})
        return RolloutResult(messages=messages, steps=steps, final_text=final)

    async def aclose(self) -> None:
        return None


class RecordingWriter(TemplateWriter):
    """The template writer, remembering what each situation's person holds."""

    def __init__(self) -> None:
        super().__init__()
        self.held: dict[str, dict[str, Any]] = {}

    def user(self, situation: dict[str, Any], seed: int) -> Any:
        self.held[situation["scenario_id"]] = dict(situation["entities"])
        return super().user(situation, seed)


def test_every_id_question_is_answered_with_the_id_on_the_next_turn() -> None:
    writer = RecordingWriter()
    rows: list[dict[str, Any]] = []
    engine = Engine(
        ORDERS, AskingAgent(), writer, SimulateConfig(budget=500, concurrency=8),
        sink=rows.append,
    )  # fmt: skip
    report = asyncio.run(engine.run())
    assert len(rows) == 500 and report.agent_errors == 0
    checked = {"id": 0, "email": 0, "phone": 0, "id_not_held": 0}
    for row in rows:
        held = writer.held[row["scenario_id"]]
        messages = row["messages"]
        assert sum(m["role"] == "user" for m in messages) >= 2  # multi-turn, every row
        for i, message in enumerate(messages[:-1]):
            if message["role"] != "assistant":
                continue
            nxt = messages[i + 1]
            assert nxt["role"] == "user", (message, nxt)  # every question gets its turn
            text = message["content"]
            if text in ID_QUESTIONS:
                if "order_id" in held:
                    assert str(held["order_id"]) in nxt["content"], (text, nxt["content"])
                    checked["id"] += 1
                else:
                    assert not _ID.search(nxt["content"]), nxt["content"]  # nothing invented
                    checked["id_not_held"] += 1
            elif text == EMAIL_QUESTION and "email" in held:
                assert held["email"] in nxt["content"], nxt["content"]
                checked["email"] += 1
            elif text == PHONE_QUESTION:
                said = {"".join(sorted(w)) for w in re.findall(r"[a-z]+", nxt["content"].lower())}
                assert "ehnop" in said, nxt["content"]  # 'phone', through any typo
                assert not re.search(r"\d{6,}", nxt["content"])
                checked["phone"] += 1
    assert checked["id"] >= 200 and checked["phone"] >= 50 and checked["id_not_held"] >= 20
    stats = report.person
    assert stats["answered_with_a_held_fact"] >= checked["id"]
    assert stats["said_not_held"] >= checked["phone"]
