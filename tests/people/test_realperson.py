"""The person turns a real 1.5B model wrote (issue 24), replayed through the voice check.

`tests/data/realperson-orders.jsonl` and `realperson-airline.jsonl` are rows of
`whileai simulate` with Qwen2.5-Coder-1.5B-Instruct (llama.cpp) as `--writer` and the
seeded agent, read turn by turn by hand. `realperson-labels.json` names, per row and per
person turn, `ok` or the role break the reader saw; it was written before the voice check
was changed for them. Every turn labelled ok must pass the check as it stands, and every
turn labelled a break must now be caught (the breaks got past the check of the run that
wrote them, which is why they are in a row at all).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from whileai_core.people.model import _FOLLOW_RULES, _OPENER_RULES, person_brief
from whileai_core.people.person import facts_of, has_errand
from whileai_core.people.voice import Turn, WriterText, turn_problem, unresolved
from whileai_core.simulate.situation import situation_of_row
from whileai_core.spec import Spec, load_spec

from ..helpers import REPO

DATA = REPO / "tests" / "data"
LABELS: dict[str, Any] = json.loads((DATA / "realperson-labels.json").read_text())
KNOWN_MISSES = {"orders": 11, "airline": 17}


def _rows(name: str) -> list[dict[str, Any]]:
    path = DATA / f"realperson-{name}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _person_turns(spec: Spec, row: dict[str, Any]) -> list[tuple[str, Turn]]:
    """Each person turn of the row with what the writer checked it against then."""
    situation = situation_of_row(spec, row) or {}
    facts = facts_of(situation)
    values = [f.value for f in facts]
    brief = person_brief(situation, spec)
    human = situation.get("human") or {}
    spoken = [m for m in row["messages"] if m["role"] in ("user", "assistant") and m.get("content")]
    out: list[tuple[str, Turn]] = []
    own: list[str] = []
    agent_last, reacted = "", False
    for message in spoken:
        if message["role"] == "assistant":
            agent_last = message["content"]
            continue
        text = message["content"]
        opener = not own
        rules = _OPENER_RULES if opener else _FOLLOW_RULES
        turn = Turn(
            facts=facts,
            agent_last="" if opener else agent_last,
            said="\n".join(m["content"] for m in spoken[: spoken.index(message)]),
            given=WriterText.of([brief, rules], values),
            opener=opener,
            ask_family=str(human.get("ask_family") or "tool"),
            targets=tuple(str(v) for v in (situation.get("targets") or {}).values()),
            reacted=reacted,
            errand=has_errand(situation),
            own=tuple(own),
        )
        out.append((text, turn))
        reacted = reacted or (not opener and unresolved(agent_last))
        own.append(text)
    return out


@pytest.mark.parametrize("name", ["orders", "airline"])
def test_every_labelled_person_turn_is_read_as_labelled(name: str) -> None:
    spec = load_spec(REPO / "specs" / name)
    rows = _rows(name)
    assert rows
    wrong: list[str] = []
    missed: list[str] = []
    assert [r["scenario_id"] for r in rows] == [x["scenario_id"] for x in LABELS[name]]
    for row, labelled in zip(rows, LABELS[name], strict=True):
        labels = labelled["turns"]
        turns = _person_turns(spec, row)
        assert len(turns) == len(labels), row["scenario_id"]
        for i, (text, turn) in enumerate(turns):
            label = labels[str(i)]
            found = turn_problem(text, turn)
            if label.startswith("missed"):
                missed.append(f"{row['scenario_id']}#{i}")
                continue
            if label.startswith("ok"):
                if found is not None:
                    wrong.append(f"{row['scenario_id']}#{i} ok but {found}: {text}")
            else:
                if found is None:
                    wrong.append(f"{row['scenario_id']}#{i} {label.split(':')[0]} passed: {text}")
    assert not wrong, "\n".join(wrong)
    # Breaks the check still lets through, labelled `missed:` so the gap stays on record
    # (a made-up typo "DNE"; "I'll search for flights", where the check does not know a
    # search's record is a flight; "update it accordingly", the service's work on data; a
    # destination the brief does not hold; an act the brief does not hold ("I've added the
    # payment method"); the agent's request turned back at it ("Could you please
    # double-check it again and write again?"); the brief's tone narrated ("I'm
    # impatient"); "Could you please let me know what exactly you want?" right after giving
    # the id asked for; from seed 171, "I understand the need to refresh the record ...
    # I'll proceed with that immediately" and "I'll need to clarify which one to cancel
    # based on the colleague's details", the agent's plan taken on in the person's words;
    # from seed 179, "I need the order number to find my recent orders", their own last
    # name as a friend's, the agent's "double-check it and write again" and "check again
    # later" sent back; from seed 187, an opener that gives details and asks nothing, "I'm
    # the customer, and ...", the agent's report fields asked back, "I need to check again
    # to make sure the flight exists", "please check again later" said back, places in a
    # brief with none, the opener written again mid-conversation; from seed 193, the
    # agent's report said back twice, a vague opener asking for its own reference and new
    # flight, "please check again later" turned back twice); fixing one means relabelling
    # it.
    assert len(missed) == KNOWN_MISSES[name], missed
