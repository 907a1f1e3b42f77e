"""A model person that stays a person: the loopback stub plays a writer that flips roles,
parrots the agent or its own instructions, leaves out the id it was asked for, stops at
once or never ends; no row keeps such a turn, and the run report counts every redraw,
every dropped rollout and every ending."""

from __future__ import annotations

import itertools
import json
import re
import zlib
from pathlib import Path
from typing import Any

import pytest

from whileai_core.people.model import _FOLLOW_RULES, _NOTES, _OPENER_RULES
from whileai_core.people.voice import (
    WriterText,
    only_closing,
    parrots,
    reads_as_agent,
    split_stop,
)
from whileai_core.testing import (
    ADVERSARIAL_MODES,
    AGENT_DONE,
    OpenAIStub,
    Reply,
    Request,
    adversarial_person,
    answer,
)

from ..helpers import ORDERS_SPEC, run_cli

ROLE_FLIP = "I'm sorry, but I don't have enough information about the records you are referring to."
AGENT_ASK = "Which order is this about? Could you tell me the order number?"
_ID = re.compile(r"[A-Z]{2,5}-\d{3,6}")
VAGUE = "it is the one from last week"


def _tag(text: str) -> str:
    """A word unique to `text`, made of letters: a made-up number in a person's line is an
    invented id, which the voice check rightly refuses."""
    n, out = zlib.crc32(text.encode()), ""
    while n:
        n, r = divmod(n, 26)
        out += "abcdefghijklmnopqrstuvwxyz"[r]
    return out


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
        return answer(f"hi, something is wrong with my order, from {_tag(system)}")
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
    if "already said" in notes[-1]:
        return answer(f"still waiting on that order, message {len(messages)}")
    if "repeated" in notes[-1] or "written as the assistant" in notes[-1]:
        return answer("sorry, it's the order I mentioned, please look")
    if "exactly as listed" in notes[-1]:
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
        return answer(f"hello, I have a question ({_tag(messages[0]['content'])})")
    return answer(f"and one more thing number {len(messages)}, what about shipping times")


def _run(
    tmp_path: Path,
    chooser: Any,
    name: str,
    *,
    survives: bool = True,
    budget: int = 24,
    person: str = "free",
) -> tuple[list[dict], dict, list[Any]]:
    """The run's rows, its report and every chat body the stub received. `person` is the
    writer's --person-mode: these tests test the free writer's checks unless told."""
    out, report = tmp_path / f"{name}.jsonl", tmp_path / f"{name}.report.json"
    with OpenAIStub(default=chooser) as stub:
        proc = run_cli(
            "simulate", str(ORDERS_SPEC), "--agent", stub.base_url, "--writer", stub.base_url,
            "--person-mode", person,
            "--model", "m", "--budget", str(budget), "--concurrency", "4", "-o", str(out),
            "--report", str(report),
        )  # fmt: skip
        bodies = stub.bodies
    if survives:
        assert proc.returncode == 0, proc.stderr.decode()
    else:  # nothing survived: the run says so, and its report still counts why
        assert proc.returncode == 1 and b"no row survived" in proc.stderr, proc.stderr.decode()
    rows = [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []
    return rows, json.loads(report.read_text()), bodies


def test_no_row_keeps_a_role_flip_a_parrot_or_a_missing_id(tmp_path: Path) -> None:
    rows, report, _ = _run(tmp_path, _misbehaving, "bad")
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
                   "redrawn_stopped_unanswered", "turns_redrawn"):  # fmt: skip
        assert person.get(reason, 0) > 0, (reason, person)
    # "you're welcome. done." to a question it can answer, every time: the rollout is lost.
    assert report["person_dropped"] > 0 and person["dropped_stopped_unanswered"] > 0


def test_a_writer_that_never_ends_stops_at_the_turn_cap(tmp_path: Path) -> None:
    rows, report, _ = _run(tmp_path, _chatty, "chatty")
    for row in rows:
        said = [m for m in row["messages"] if m["role"] == "user"]
        assert len(said) <= 12 // 2
    assert report["person"]["ended_at_the_turn_cap"] > 0


def _writer_text(bodies: list[Any]) -> WriterText:
    """Everything the writer was told in the run (briefs, rules, redraw notes), the way
    the voice check reads a quote of it; the person's own values taken out."""
    given = WriterText.of([_FOLLOW_RULES, _OPENER_RULES, *_NOTES.values()])
    for body in bodies:
        if not body.get("tools"):
            for message in body["messages"]:
                if message["role"] == "system":
                    given.add(_DETAILS.sub("", message["content"]))
    return given


_DETAILS = re.compile(r"\{[^\n]*\}")


def _assert_in_role(rows: list[dict], bodies: list[Any]) -> None:
    given = _writer_text(bodies)
    told = {m["content"] for b in bodies if not b.get("tools") for m in b["messages"]
            if m["role"] == "system"}  # fmt: skip
    for row in rows:
        for before, message in itertools.pairwise(row["messages"]):
            if message["role"] != "user":
                continue
            text = message["content"]
            assert text not in told, text
            assert not given.quoted_in(text), text
            assert not reads_as_agent(text), text
            assert not split_stop(text)[1] and text.strip(), text
            if before["role"] == "assistant":
                assert not parrots(text, before["content"]), text


@pytest.mark.parametrize("mode", ADVERSARIAL_MODES)
def test_an_adversarial_writer_never_reaches_a_row(tmp_path: Path, mode: str) -> None:
    """Openers that parrot the brief, answer as the assistant or stop at once: every
    ask is dropped after its redraws, and the report counts each redraw and drop."""
    rows, report, bodies = _run(
        tmp_path, adversarial_person(mode), f"open-{mode}", survives=False, budget=4
    )
    assert rows == []
    assert report["rows"] == 0 and report["person_dropped"] >= 16
    assert report["stopped"] == "person_dropped"
    person = report["person"]
    why = {"parrot": "writer_text", "assistant": "role_flip", "stop": "empty"}[mode]
    redrawn = sum(v for k, v in person.items() if k.startswith("redrawn_opener_"))
    dropped = sum(v for k, v in person.items() if k.startswith("dropped_opener_"))
    assert redrawn >= 4 * dropped > 0 and person[f"dropped_opener_{why}"] > 0, person
    assert not any(b.get("tools") for b in bodies)  # no agent ever played a dropped ask


@pytest.mark.parametrize("mode", ADVERSARIAL_MODES)
def test_an_adversarial_person_s_turns_never_reach_a_row(tmp_path: Path, mode: str) -> None:
    """Good openers, then every follow-up parrots (the agent's turn, then the redraw
    note), answers as the assistant, or stops at once. No such turn is kept: the parrot
    and the assistant never say a person's line, so every rollout is dropped; the one
    that stops may end once the agent settled the errand, never while it waits for an
    answer, so only rollouts the agent settled at once survive, with no follow-up."""
    survives = mode == "stop"
    rows, report, bodies = _run(
        tmp_path, adversarial_person(mode, openers=True), f"turns-{mode}",
        survives=survives, budget=12,
    )  # fmt: skip
    assert len(rows) == (12 if survives else 0)
    _assert_in_role(rows, bodies)
    for row in rows:
        said = [m["content"] for m in row["messages"] if m["role"] == "user"]
        assert len(said) == 1 and row["final_text"] == AGENT_DONE, said
    person = report["person"]
    assert report["person_dropped"] > 0
    redrawn, dropped = {
        "parrot": ("parroting", "writer_text"),  # the agent's turn, then the note
        "assistant": ("role_flip", "role_flip"),
        "stop": ("stopped_unanswered", "stopped_unanswered"),
    }[mode]
    assert person[f"redrawn_{redrawn}"] > 0 and person[f"dropped_{dropped}"] > 0, person
    if mode == "parrot":  # the redraw note sent back as the person's words is caught too
        assert person["redrawn_writer_text"] > 0, person
    if survives:  # asked for the order id, it stopped on every draw: those were dropped
        assert person["ended_by_stop_marker"] == 12
    lines = "\n".join(report_lines(report))
    assert f"rollouts dropped for the person: {report['person_dropped']}" in lines


def report_lines(report: dict[str, Any]) -> list[str]:
    from whileai_core.simulate.config import person_lines

    return person_lines(report["person"], report["person_dropped"])


@pytest.mark.parametrize("mode", ADVERSARIAL_MODES)
def test_a_planned_person_keeps_its_plan_when_the_model_misbehaves(
    tmp_path: Path, mode: str
) -> None:
    """--person-mode plan: the model only words the template person's lines. When every
    wording parrots its input, answers as the assistant or stops at once, no such wording
    reaches a row: each turn is drawn again with the failure named, then the plan's own
    line is kept and counted. The parrot sends back the line it was given, which is the
    plan (its "Customer's message:" label cut). The rollouts survive, in role, and
    nothing is dropped."""
    rows, report, bodies = _run(
        tmp_path, adversarial_person(mode), f"plan-{mode}", budget=8, person="plan"
    )
    assert len(rows) == 8
    _assert_in_role(rows, bodies)
    person = report["person"]
    assert report["person_dropped"] == 0, person
    if mode == "parrot":
        assert person["turns_worded"] > 0 and "kept_the_plan" not in person, person
        for row in rows:
            assert not any("message:" in m["content"].lower() for m in row["messages"])
    else:
        assert person["kept_the_plan"] >= 8, person
        redrawn = sum(v for k, v in person.items() if k.startswith("redrawn_"))
        assert redrawn >= 2 * person["kept_the_plan"], person
    worded = [b for b in bodies if not b.get("tools")]
    assert worded and all(b["messages"][0]["role"] == "system" for b in worded)
    for body in worded:  # the writer never sees the agent's turns, only the line to word
        said = "\n".join(str(m["content"]) for m in body["messages"])
        assert AGENT_DONE not in said and "Write the first message now." not in said


def test_a_planned_person_s_good_wording_is_kept(tmp_path: Path) -> None:
    """A model that words each line well (here: the plan with a greeting's lead word
    swapped) is the person's voice in the row; the plan is kept only when it strays."""

    def wording(request: Request) -> Reply:
        body = request.body if isinstance(request.body, dict) else {}
        messages = body.get("messages") or [{}]
        if body.get("tools"):
            return answer(AGENT_DONE)
        line = re.sub(r'^Customer\'s message: "|"$', "", str(messages[-1]["content"]))
        return answer(f"Okay so, {line[:1].lower()}{line[1:]}")

    rows, report, _bodies = _run(tmp_path, wording, "plan-good", budget=8, person="plan")
    assert len(rows) == 8 and report["person_dropped"] == 0
    openers = [next(m["content"] for m in r["messages"] if m["role"] == "user") for r in rows]
    assert sum(o.lower().startswith("okay so") for o in openers) >= 6, openers
    assert report["person"].get("kept_the_plan", 0) <= 2, report["person"]
