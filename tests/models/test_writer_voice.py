"""A model person that stays a person: the loopback stub plays a writer that flips roles,
parrots the agent, leaves out the id it was asked for and never ends; no row keeps such a
turn, and the run report counts every redraw and ending."""

from __future__ import annotations

import itertools
import json
import re
import zlib
from pathlib import Path
from typing import Any

from whileai_core.simulate.voice import only_closing, parrots, reads_as_agent, split_stop
from whileai_core.testing import OpenAIStub, Reply, Request, answer

from ..helpers import ORDERS_SPEC, run_cli

ROLE_FLIP = "I'm sorry, but I don't have enough information about the records you are referring to."
AGENT_ASK = "Which order is this about? Could you tell me the order number?"
_ID = re.compile(r"[A-Z]{2,5}-\d{3,6}")
VAGUE = "it is the one from last week"


def _misbehaving(request: Request) -> Reply:
    body = request.body if isinstance(request.body, dict) else {}
    messages: list[dict[str, Any]] = body.get("messages") or [{}]
    if body.get("tools"):  # the agent: ask for the number once, then answer
        said = [m for m in messages if m.get("role") == "user"]
        return answer(AGENT_ASK if len(said) == 1 else "Thanks, I found that order: it shipped.")
    system = messages[0].get("content") or ""
    notes = [m["content"] for m in messages[1:] if m.get("role") == "system"]
    held = _ID.findall(system)
    if messages[-1].get("content") == "Write the first message now." or (
        notes and messages[-2].get("content") == "Write the first message now."
    ):  # an opener: the first draft is the agent's reply, the redraw a person's
        if not notes:
            return answer(ROLE_FLIP)
        return answer(f"hi, something is wrong with my order, ref {zlib.crc32(system.encode())}")
    agent_last = [m for m in messages if m.get("role") == "user"][-1]["content"]
    mode = zlib.crc32(system.encode()) % 4
    if mode == 2 and not (held and agent_last == AGENT_ASK):
        mode = 0
    if not notes:
        if mode == 0:
            return answer(agent_last)  # parrots the agent word for word
        if mode == 1:
            return answer("How can I help you today?")  # the agent's side
        if mode == 2:
            return answer(VAGUE)  # leaves out the id the person holds
        return answer("you're welcome. done.")  # a finished conversation that goes on
    if "repeated" in notes[-1] or "written as the assistant" in notes[-1]:
        return answer("sorry, it's the order I mentioned, please look")
    if "exactly as written" in notes[-1]:
        given = _ID.findall(notes[-1]) or held
        return answer(f"oh right, it is {given[0]}" if given else "i do not have it")
    return answer("ok")


def _chatty(request: Request) -> Reply:
    """A writer that never says it is done: every draw is a fresh, valid line."""
    body = request.body if isinstance(request.body, dict) else {}
    messages = body.get("messages") or [{}]
    if body.get("tools"):
        return answer(f"Noted, anything else? ({len(messages)})")
    if messages[-1].get("content") == "Write the first message now.":
        return answer(f"hello, I have a question ({zlib.crc32(messages[0]['content'].encode())})")
    return answer(f"and one more thing number {len(messages)}, what about shipping times")


def _run(tmp_path: Path, chooser: Any, name: str) -> tuple[list[dict], dict]:
    out, report = tmp_path / f"{name}.jsonl", tmp_path / f"{name}.report.json"
    with OpenAIStub(default=chooser) as stub:
        proc = run_cli(
            "simulate", str(ORDERS_SPEC), "--agent", stub.base_url, "--writer", stub.base_url,
            "--model", "m", "--budget", "24", "--concurrency", "4", "-o", str(out),
            "--report", str(report),
        )  # fmt: skip
    assert proc.returncode == 0, proc.stderr.decode()
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    return rows, json.loads(report.read_text())


def test_no_row_keeps_a_role_flip_a_parrot_or_a_missing_id(tmp_path: Path) -> None:
    rows, report = _run(tmp_path, _misbehaving, "bad")
    assert len(rows) == 24
    for row in rows:
        assert not reads_as_agent(row["prompt"])
        messages = row["messages"]
        for before, message in itertools.pairwise(messages):
            if message["role"] != "user":
                continue
            text = message["content"]
            assert not reads_as_agent(text), text
            assert not only_closing(text) and not split_stop(text)[1], text
            if before["role"] == "assistant":
                assert not parrots(text, before["content"]), text
            assert text != VAGUE  # drawn only when asked for an id held: always redrawn
    person = report["person"]
    assert person["redrawn_opener_role_flip"] >= 24  # every first draft, near-copies redrawn too
    for reason in ("redrawn_role_flip", "redrawn_parroting", "redrawn_facts_not_given",
                   "ended_closing"):  # fmt: skip
        assert person.get(reason, 0) > 0, (reason, person)


def test_a_writer_that_never_ends_stops_at_the_turn_cap(tmp_path: Path) -> None:
    rows, report = _run(tmp_path, _chatty, "chatty")
    for row in rows:
        said = [m for m in row["messages"] if m["role"] == "user"]
        assert len(said) <= 12 // 2
    assert report["person"]["ended_at_the_turn_cap"] > 0
