"""`--person-mode plan`: the template person decides each turn and a model words it. A
wording is kept only while it says what its plan said (`voice.strays_from_plan`); these
wordings were written for the test, in the ways a small model was seen to stray (the
helper answering the request, the yes turned bare, talk about the rewording, a value
lost or gained, "my" turned "your") and in ways it was not."""

from __future__ import annotations

import json
from typing import Any

import pytest

from whileai_core.people.model import _LEAD_IN, _clean, reword_messages, reword_prompt
from whileai_core.people.person import facts_of
from whileai_core.people.voice import strays_from_plan, turn_problem
from whileai_core.simulate.situation import situation_of_row
from whileai_core.spec import load_spec

from ..helpers import REPO
from .test_realperson import _person_turns

DATA = REPO / "tests" / "data"

SITUATION = {
    "entities": {"order_id": "ORD-4821", "email": "kim.ode@example.org"},
    "arguments": {"get_order": {"order_id": "ORD-4821"}},
    "human": {"tone": "impatient", "persona": "busy_parent", "texture": "standard"},
}
FACTS = facts_of(SITUATION)

AGAIN = "Could you check again, please?"
GIVE = "The order id is ORD-4821. I just need the details."
YES = "Yes, please go ahead."
NO = "No, do not change anything yet."
MINE = "My son placed the order for me and I want to know where it is."

KEEPS = [
    (AGAIN, "Can you have another look for me?"),
    (AGAIN, "Please look once more."),
    (AGAIN, "check again?? thx"),
    (GIVE, "It's ORD-4821 - I only need the details."),
    (GIVE, "ORD-4821 is the order, just the details please."),
    (YES, "Yep, go ahead with it."),
    (YES, "Sure, do it."),
    (NO, "No, hold off on any changes for now."),
    (MINE, "My son ordered it for me, where is it now?"),
    (MINE, "Good Morning. My son placed the order for me, I want to know where it is."),
    ("Please cancel it. The name is Kim Lee.", "Cancel it please, it's under Kim Lee."),
]
STRAYS = [
    (AGAIN, "Sure, I'll check again."),  # the helper's answer to the request
    (AGAIN, "Certainly, I'd be glad to look into that again for you."),
    (AGAIN, "Of course! Let me check that for you."),
    (GIVE, "Yes, I'll take care of it. The order id is ORD-4821, I just need the details."),
    (AGAIN, "Yes."),  # the request is gone
    (AGAIN, "Thanks for the update."),
    (AGAIN, 'Rephrased: "check again?" This version is shorter and more direct.'),
    (AGAIN, "Actually, the draft changed the message. Could you check again?"),  # a note
    (GIVE, "I'm glad to assist. The order id is ORD-4821, I just need the details."),
    (MINE, "My son placed the order for me; where is it? Regards, the customer care team."),
    (GIVE, "I've updated order ORD-4821 already. I just need the details."),  # an act
    (GIVE, "It's ORD-4821, and I also need to change the name to Ana Ruiz."),  # a name
    (AGAIN, "Could you check again? I really need to change the name."),  # an errand
    (AGAIN, "Could you check again? Is there anything else you need help with?"),
    (GIVE, "I just need the details of my order."),  # the id is lost
    (GIVE, "The order id is ORD-4821, and my email is kim.ode@example.org."),  # gained
    (GIVE, "The order id is ORD-4822. I just need the details."),  # a changed id
    (GIVE, "It's ORD-4821, I paid 45 dollars, I just need the details."),  # a new number
    (YES, "No, wait."),
    (YES, "I'm not sure about that."),
    (NO, "Yes, change it."),
    (MINE, "Your son placed the order for you, and you want to know where it is."),
    (
        "There is a problem with one of my orders. Can you check it?",
        "I believe there was a problem with your order. Please check it.",
    ),
    (
        GIVE,
        "The order id is ORD-4821. I just need the details. Thank you for reaching out! "
        "I have looked up your order and it is on its way; it should arrive in three to "
        "five working days, and you will get an e-mail when it ships. Is there anything "
        "else I can help you with today?",
    ),
]


@pytest.mark.parametrize(("plan", "worded"), KEEPS)
def test_a_wording_that_keeps_its_plan_is_kept(plan: str, worded: str) -> None:
    assert not strays_from_plan(worded, plan, FACTS)


@pytest.mark.parametrize(("plan", "worded"), STRAYS)
def test_a_wording_that_strays_from_its_plan_is_drawn_again(plan: str, worded: str) -> None:
    assert strays_from_plan(worded, plan, FACTS)


def test_the_plan_itself_never_strays() -> None:
    for plan, _ in KEEPS + STRAYS:
        assert not strays_from_plan(plan, plan, FACTS), plan


def test_the_writer_sees_the_line_and_the_person_never_the_policy_or_the_agent() -> None:
    prompt = reword_prompt(SITUATION)
    messages = reword_messages(prompt, GIVE, "a note")
    assert messages[0] == {"role": "system", "content": prompt}
    assert messages[-2]["content"] == f'Customer\'s message: "{GIVE}"'
    assert messages[-1] == {"role": "system", "content": "a note"}
    assert "impatient" in prompt and "busy parent" in prompt
    said = "\n".join(m["content"] for m in messages)
    # The worked examples hold no value of the person's, so none can leak from them.
    assert "ORD-4821" not in "\n".join(m["content"] for m in messages[1:-2])
    assert "policy" not in said.lower()


@pytest.mark.parametrize(
    ("raw", "line"),
    [
        ("Sure! Here's the reworded message: Can you look again?", "Can you look again?"),
        ('Customer\'s message: "Can you look again?"', "Can you look again?"),
        ('Rewritten version:\n"It\'s ORD-4821."', "It's ORD-4821."),
        ("Here is my order id: ORD-4821.", "Here is my order id: ORD-4821."),  # the person's
    ],
)
def test_the_model_s_lead_in_is_cut_and_the_person_s_words_are_not(raw: str, line: str) -> None:
    assert _clean(_LEAD_IN.sub("", raw, count=1)) == line


def test_the_real_model_s_planned_wordings_read_as_labelled() -> None:
    """Eight samples of Qwen2.5-Coder-1.5B wording the planned person (`--seed 311`, 313
    and 317 with 10 conversations per spec; 331, 347, 353, 359 and 367 with 20; the
    seeded agent),
    read turn by turn by hand (`tests/data/realperson-plan*.json*`). Every turn read as
    the person's passes the voice check as it stands. The eleven breaks seen got past the
    checks of their run and are now read as straying from their plan: "Yes, I'll take
    care of it.", an opener quoting the redraw note, "I'm happy to help.", an opener
    signed "Your support team,", "a problem w/ ur order", "Do you have a specific
    question or need any assistance?", and five lines that carried the
    writer's own worked example into the person's mouth (its name, Sam Lee, and its "I
    want to change it"), two of them first read as ok. A break's plan is the line
    without the break."""
    rows = [
        json.loads(line)
        for line in (DATA / "realperson-plan.jsonl").read_text().splitlines()
        if line.strip()
    ]
    labels = json.loads((DATA / "realperson-plan-labels.json").read_text())
    specs = {name: load_spec(REPO / "specs" / name) for name in ("orders", "airline")}
    by_sample: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_sample.setdefault(row["realperson_sample"], []).append(row)
    assert sorted(by_sample) == sorted(k for k in labels if k != "_about")
    seen = breaks = 0
    for sample, sample_rows in by_sample.items():
        spec = specs[sample.split("-", 1)[1]]
        assert [r["scenario_id"] for r in sample_rows] == [e["scenario_id"] for e in labels[sample]]
        for row, entry in zip(sample_rows, labels[sample], strict=True):
            facts = facts_of(situation_of_row(spec, row) or {})
            turns = _person_turns(spec, row)
            assert len(turns) == len(entry["turns"])
            for i, ((text, turn), label) in enumerate(zip(turns, entry["turns"], strict=True)):
                seen += 1
                if label == "ok":
                    assert turn_problem(text, turn) is None, (sample, text)
                else:
                    breaks += 1
                    assert strays_from_plan(text, entry["plans"][str(i)], facts), text
    assert (seen, breaks) == (619, 11)
