"""The voice check on the role breaks a real 1.5B model wrote as the person (issue 24),
and on the template person across every shipped spec: each break is named, and a
person's plain line passes."""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterable
from pathlib import Path

import pytest

from whileai_core.people.model import _FOLLOW_RULES, _NOTES, person_brief
from whileai_core.people.person import facts_of
from whileai_core.people.voice import Turn, WriterText, stop_problem, turn_problem
from whileai_core.simulate.run import run_simulation
from whileai_core.simulate.scheduler import SimulateConfig
from whileai_core.simulate.situation import situation_of_row
from whileai_core.spec import load_spec

from ..helpers import REPO

ORDERS = load_spec(REPO / "specs" / "orders")
SITUATION = {
    "human": {"stance": "ordinary", "ask_family": "tool", "tone": "neutral",
              "persona": "first_time", "texture": "standard", "length": "short"},
    "world": {"history": "fresh"},
    "tools": ["get_order"],
    "entities": {"order_id": "ORD-1010", "email": "ken.smith@example.com"},
    "targets": {"order_id": "ORD-1010", "email": "ken.smith@example.com"},
    "arguments": {"get_order": {"order_id": "ORD-1010"}},
}  # fmt: skip
FACTS = facts_of(SITUATION)
BRIEF = person_brief(SITUATION, ORDERS)
# The note an older writer sent, which a model sent back verbatim as the person's turn.
OLD_NOTE = (
    "The assistant asked for details the person has. Give them exactly as written: "
    "order id ORD-6651."
)


# Agent turns the held-out wordings answer: an ask for the id, a stale record, a report,
# the which-question of two records with one number.
ASKED = "Which order is it? Please give me the order id."
STALE = "The record for ORD-1010 is marked stale, so I have not acted on it."
REPORT = "Here is what I found for ORD-1010: status completed, amount 54.19."
WHICH = ("I found two records under ORD-1010 (created 2025-06-03 and 2025-09-01). Which of "
         "the two do you mean?")  # fmt: skip


def _turn(agent_last: str = "", **kw: object) -> Turn:
    given = WriterText.of([BRIEF, _FOLLOW_RULES, OLD_NOTE, *_NOTES.values()],
                          ["ORD-1010", "ken.smith@example.com", "ORD-6651"])  # fmt: skip
    return Turn(facts=FACTS, agent_last=agent_last, said=agent_last, given=given, **kw)  # type: ignore[arg-type]


def _reads_as(breaks: Iterable[tuple[str, Turn, str]], fine: Iterable[tuple[str, Turn]]) -> None:
    """Each break is named as given; each fine line passes."""
    for text, turn, why in breaks:
        assert turn_problem(text, turn) == why, text
    for text, turn in fine:
        assert turn_problem(text, turn) is None, text


@pytest.mark.parametrize(
    ("text", "why"),
    [
        (OLD_NOTE, "writer_text"),
        ("The assistant asked for details the person has. ORD-1010", "writer_text"),
        ("I just need to look up an order by its id and return its status, items, amount "
         "paid and shipping state", "writer_text"),
        ("I'm sorry, but I'm not sure what you're asking for. Could you please provide me "
         "with more information or context?", "role_flip"),
        ("Sure, what do you need assistance with?", "role_flip"),
        ('{"name": "get_order", "arguments": {"order_id": "ORD-1010"}}', "role_flip"),
        ("As an AI, I cannot look that up.", "role_flip"),
        ("I need the orders from Ken Smith, and I have his email", "third_person"),
        ("The customer wants to know where order ORD-1010 is.", "third_person"),
        ("Where is my order ORD-9999?", "invented_fact"),
        ("It is grandson@example.com", "invented_fact"),
        # What the real model wrote as the person, read in this run:
        ("I am not able to provide that information.", "role_flip"),
        ("You're welcome! Let me know if you need anything else.", "role_flip"),
        ("order_id: ORD-1010", "writer_text"),
        ("Sorry, I can't help with that. Maybe we can try another time", "role_flip"),
        ("Could you please provide a reference or last name?", "role_flip"),
        ("What else can I do for you?", "role_flip"),
        ("I found a booking with the reference ORD-1010. It has a completed status.",
         "role_flip"),
        ("The system could not find a flight with that id. Could you try again?", "role_flip"),
        ("Sure, let me clarify. You need to provide the passenger's name, then we can "
         "proceed with the request.", "role_flip"),
        ("I need the order number to proceed.", "role_flip"),
        ("The flight you're looking for is FLI-52690.", "role_flip"),
        ("I apologize, but I cannot proceed further without the origin.", "role_flip"),
        ("I need the origin, destination, and date to proceed.", "role_flip"),
        ("ask it to check again.", "writer_text"),
        # The 2026-12-02 real-model person sample (tests/data/README.md), turns that passed:
        ("Order status: Pending. Items: [List of items]. Amount paid: $50. Shipping state: "
         "Not Shipped.", "writer_text"),
        ("I'm sorry, but I couldn't find the order. Please try again later.", "role_flip"),
        ("I understand the record for your order, which is marked stale.", "role_flip"),
        # Wordings written for this test, not taken from any run:
        ("My name is {customer_name} and I want a refund.", "writer_text"),
        ("I was not able to locate the order in our system.", "role_flip"),
        ("Thanks for waiting, your order is on its way.", "role_flip"),
        ("ORD-1010 was placed on the 3rd of March and still has not come.", "invented_fact"),
        ("Can you run get_order on it for me?", "writer_text"),
        ("Maybe the assistant could look again?", "writer_text"),
        ("Sorry, your inquiry could not be completed today.", "role_flip"),
    ],
)  # fmt: skip
def test_each_role_break_is_named(text: str, why: str) -> None:
    assert turn_problem(text, _turn("Which order is it about?")) in (why, "facts_not_given")
    assert turn_problem(text, _turn("Is there anything else?")) == why


def test_a_person_s_plain_lines_pass() -> None:
    asked = _turn("Could you give me the order id?")
    assert turn_problem("Sure, it is ORD-1010. I just want to know where it is.", asked) is None
    assert turn_problem("Hmm, I only have it as an email: ken.smith@example.com", _turn()) is None
    opener = _turn(opener=True)
    assert turn_problem("Hi, my order ORD-1010 never arrived, can you check it?", opener) is None
    # Facts only from the brief, or from what was said: the agent's id may be repeated.
    found = _turn("I found two orders, ORD-2231 and ORD-2232. Which one?")
    assert turn_problem("The first one, ORD-2231.", found) is None
    # The person's own search, the service's own records, a "[sic]": still the person.
    plain = _turn("Which order is it about?")
    assert turn_problem("I couldn't find my receipt, but it is ORD-1010.", plain) is None
    assert turn_problem("Could you check your records for ORD-1010?", plain) is None
    assert turn_problem("It says delivred [sic] but nothing came. ORD-1010.", plain) is None
    assert turn_problem("I ordered it last week; it is ORD-1010.", plain) is None
    assert turn_problem("My request is simple: where is ORD-1010?", plain) is None
    dated = _turn("I found two records under ORD-1010 (created 2025-09-26 and 2025-05-06).")
    assert turn_problem("The one from September 26, 2025.", dated) is None


def test_an_opener_asks_and_a_vague_one_leaves_the_record_out() -> None:
    assert turn_problem("Order ID: ORD-1010", _turn(opener=True)) == "bare_details"
    # The real model's opener on a vague ask: the writer acknowledging its instruction.
    assert turn_problem("Sure, I understand.", _turn(opener=True)) == "no_ask"
    assert turn_problem("Sure, I'll get right to it.", _turn(opener=True)) == "no_ask"
    vague = _turn(opener=True, ask_family="vague", targets=("ORD-1010",))
    assert turn_problem("Something is off with my order ORD-1010, help?", vague) == "gave_the_id"
    assert turn_problem("Something is off with an order of mine, help?", vague) is None


def test_a_person_does_not_say_the_same_line_twice() -> None:
    """The real model answered 'Sure, I understand.' four times in one conversation."""
    again = _turn("That is outside what I can look into here.", own=("Sure, I understand.",))
    assert turn_problem("Sure, I understand.", again) == "repeats_itself"
    assert turn_problem("So who can I ask about it?", again) is None


def test_a_clause_of_the_agent_s_turn_is_not_the_person_s() -> None:
    timed_out = (
        "The get_order call timed out, so I could not confirm anything for ORD-1010. "
        "Nothing was changed; please try again shortly."
    )
    said = ("I need to check my order.", "It is ORD-1010.")
    turn = _turn(timed_out, own=said)
    assert turn_problem("I need the status of ORD-1010. Please try again shortly.", turn) == (
        "parroting"
    )
    assert turn_problem("Can you try again? I need it today.", turn) is None
    again = _turn(timed_out, own=(*said, "I need to get the order status by its id. Why?"))
    assert turn_problem("I need to get the order status by its id. Hurry.", again) == (
        "repeats_itself"
    )


def test_a_fact_asked_for_again_is_given_again_then_may_rest() -> None:
    asked = "Which order is it? Please give me the order id."
    once = _turn(asked, own=("Hi, my order ORD-1010 is late.",))
    assert stop_problem(once) == "stopped_unanswered"
    assert turn_problem("I told you already.", once) == "facts_not_given"
    twice = _turn(asked, own=("Hi, my order ORD-1010 is late.", "It is ORD-1010."))
    assert turn_problem("I told you already, twice.", twice) is None


def test_no_ending_while_the_agent_waits_or_right_after_it_could_not_help() -> None:
    assert stop_problem(_turn("Could you tell me the order id?")) == "stopped_unanswered"
    refused = "I could not find order ORD-1010, so nothing was changed."
    assert stop_problem(_turn(refused)) == "stopped_unresolved"
    assert stop_problem(_turn("I am not permitted to cancel orders.")) == "stopped_unresolved"
    # Reacted once already: now they may give up. Settled: they may end.
    assert stop_problem(_turn(refused, reacted=True)) is None
    assert stop_problem(_turn("Done: order ORD-1010 shipped on Monday.")) is None
    # A general question the agent cannot answer leaves nothing to press for.
    assert stop_problem(_turn("That is outside what I can help with.", errand=False)) is None


# Held-out wordings (written for this test, not taken from any run) of the three breaks a
# second real-model run got past the check (issue 24): the person serving the listener,
# the person working the service's record, an opener that complies with its instruction.
SERVES = (
    "Whatever you need, just say the word.",
    "Should you have further concerns, reach out any time.",
    "Is there something else you require today?",
    "If you have more information, kindly pass it along and I will go through it.",
    "Tell me whether there is anything else I could help with on this.",
    "Happy to look further; I can assist with the rest too.",
)
WORKS = (
    "I'm going to review the order details now.",
    "Let me pull up that order real quick.",
    "I am unable to verify the order from here, sorry.",
    "I cannot access the account right now.",
)
COMPLIES = ("Certainly! My parcel ORD-1010 never showed up.", "Understood. Where is ORD-1010?")
PLAIN = (
    "Do you need anything else from me?",
    "You need to fix this today.",
    "I can't find my confirmation e-mail anywhere.",
    "I'll check my inbox and come back to you.",
    "Do you have any information about the delay?",
    "If you have any updates on my order, let me know.",
    "I couldn't cancel the order on the website, that's why I'm here.",
    "Should I do anything on my side to speed it up?",
    "I can send the dates too if you need them.",
)


@pytest.mark.parametrize("text", SERVES + WORKS)
def test_a_line_that_serves_the_listener_or_works_the_record_is_the_agent_s(text: str) -> None:
    assert turn_problem(text, _turn("The record is unreadable, so nothing was changed.")) == (
        "role_flip"
    )
    assert turn_problem(text, _turn(opener=True)) == "role_flip"


def test_an_opener_that_complies_answers_the_writer_not_the_agent() -> None:
    for text in COMPLIES:
        assert turn_problem(text, _turn(opener=True)) == "no_ask", text
        # Mid-conversation, agreeing is how a person answers the agent.
        assert turn_problem(text, _turn("Shall I look it up?")) is None, text
    okay = "Okay, so my order ORD-1010 is late, can you check?"
    assert turn_problem(okay, _turn(opener=True)) is None


@pytest.mark.parametrize("text", PLAIN)
def test_a_person_s_own_needs_and_own_things_pass(text: str) -> None:
    assert turn_problem(text, _turn("The record is unreadable, so nothing was changed.")) is None


def test_a_request_said_back_as_the_person_s_own_need_is_parroting() -> None:
    """Held-out wording of a break the model wrote on airline ("Sure, I need the flight
    id, passenger name, and fare class." after being asked for exactly those)."""
    asked = _turn("Could you tell me the e-mail address and the order number on the purchase?")
    said_back = "Yes, I need the e-mail address and the order number on the purchase."
    assert turn_problem(said_back, asked) == "parroting"
    assert turn_problem("Sure: ORD-1010, and ken.smith@example.com.", asked) is None
    # Told what the agent lacks, "I need <the same things>" restates it, inside a longer turn too.
    stuck = _turn("Without the delivery date and the postcode of the parcel I cannot go further.")
    restated = "Hello again! Where is ORD-1010? I need the delivery date and the postcode."
    assert turn_problem(restated, stuck) == "parroting"
    assert turn_problem("Where is ORD-1010? I need it by Friday.", stuck) is None
    # The details as assignments, the way a tool call carries them, are not said.
    assert turn_problem("email=ken.smith@example.com\nid=ORD-1010", asked) == "role_flip"


def test_the_person_s_own_id_garbled_is_not_theirs_whoever_said_it() -> None:
    """Held-out wording: the agent's error showed a mangled id and the person took it up
    (the model gave "UH61IN-92977" for its own UH61IN on airline)."""
    shown = _turn("The system refused ORD-1010-77: order_id does not match.")
    assert turn_problem("Please check ORD-1010-77 then.", shown) == "invented_fact"
    assert turn_problem("Please check ORD-1010 then.", shown) is None


def test_a_move_announced_instead_of_made_is_the_writer_s_text() -> None:
    """Held-out wording of "I'll ask why not." (the model, narrating its instruction)."""
    refused = _turn("That is outside what I can look into here.")
    assert turn_problem("Okay. I will ask what other options there are.", refused) == (
        "writer_text"
    )
    assert turn_problem("What other options are there, then?", refused) is None
    assert turn_problem("Fine, I'll ask again next week.", refused) is None


def test_an_id_made_up_or_the_person_s_own_name_as_another_s() -> None:
    """Held-out wordings of two breaks of the third orders run: a number given as the
    order id that the person does not hold, and their own name where another's goes."""
    asked = _turn(ASKED)
    assert turn_problem("Sure, the order number is 55012.", asked) == "invented_fact"
    opener = _turn(opener=True)
    own_as_other = "Hello, I'm asking about the parcel sent by Ken Smith, ORD-1010."
    assert turn_problem(own_as_other, opener) == "third_person"
    assert turn_problem("Hello, this is Ken Smith; where is ORD-1010?", opener) is None


def test_an_opener_that_asks_for_the_person_s_own_id_is_the_agent_s() -> None:
    assert turn_problem("My order is late. I need the order number.", _turn(opener=True)) == (
        "role_flip"
    )
    vague = _turn(opener=True, ask_family="vague", targets=("ORD-1010",))
    assert turn_problem("Something is off with an order of mine, help?", vague) is None


def test_a_greeting_names_a_day_without_asking_for_the_date() -> None:
    """The template person's own opener ("Good day, and please give me the exact details,
    ...") was redrawn: "day" read as asking for the date the person holds."""
    situation = {**SITUATION, "tools": ["change_flight"],
                 "entities": {"booking_ref": "WF2C4E", "date": "2025-01-28"},
                 "targets": {"booking_ref": "WF2C4E"}}  # fmt: skip
    turn = Turn(facts=facts_of(situation), opener=True)
    for greeting in ("Good day, and please give me the exact details, and can you move "
                     "booking WF2C4E? The date is 2025-01-28.",
                     "Have a nice day, and please move booking WF2C4E to 2025-01-28."):  # fmt: skip
        assert turn_problem(greeting, turn) is None, greeting
    for asks in ("Good morning, please tell me the date of my flight. Booking WF2C4E.",
                 "Please tell me which day my flight is on. Booking WF2C4E."):  # fmt: skip
        assert turn_problem(asks, turn) == "role_flip", asks


def test_the_brief_is_first_person_and_holds_no_other_facts() -> None:
    assert "first person" in BRIEF and "no other ids" in BRIEF


def test_the_template_person_passes_the_voice_check_on_every_shipped_spec(
    tmp_path: Path,
) -> None:
    """The template person's slips the issue lists stay fixed: no push-back right after
    the agent settled the errand, a last name is one name, every question is answered,
    and no turn fails the check (no rollout is dropped for the person)."""
    push = re.compile(r"not good enough|do it anyway|make it happen|exception this once")
    for name in ("orders", "airline", "repo-maint"):
        out = tmp_path / f"{name}.jsonl"
        spec = load_spec(REPO / "specs" / name)
        report = run_simulation(spec, SimulateConfig(budget=300, seed=3), output=str(out))
        assert report.person_dropped == 0, report.person
        for line in out.read_text().splitlines():
            row = json.loads(line)
            said = [m for m in row["messages"] if m["role"] in ("user", "assistant")]
            for before, turn in itertools.pairwise(said):
                if turn["role"] == "user" and push.search(turn["content"]):
                    assert stop_problem(Turn(facts=[], agent_last=before["content"])), turn
            held = (situation_of_row(spec, row) or {}).get("entities") or {}
            assert " " not in str(held.get("last_name", "")), held


def test_the_third_sample_s_breaks_in_other_words() -> None:
    """Held-out wordings of the breaks the 2026-12-02 afternoon sample showed (the lines
    themselves are replayed in test_realperson.py): the speaker offering help, saying what
    the service's system holds, a made-up bare number, an opener that says nothing."""
    plain = _turn(ASKED)
    assert turn_problem("Morning! Maybe I can help you with the shipping part.", plain) == (
        "role_flip"
    )
    assert turn_problem("Good news: the system now shows it as delivered.", plain) == ("role_flip")
    # The original SDK's persons tell what they saw in the service's app: theirs to say.
    seen = "Your system shows a duplicate for ORD-1010; go by the one with today's date."
    assert turn_problem(seen, plain) is None
    assert turn_problem("Looks like the parcel is already in the database.", plain) == ("role_flip")
    assert turn_problem("My account number is 88213, does that help?", plain) == "invented_fact"
    assert turn_problem("it's 40917 i think", plain) == "invented_fact"
    for nothing in ("Hi there, I have a question.", "hey, can someone help me?",
                    "Good morning! I need some info please."):  # fmt: skip
        assert turn_problem(nothing, _turn(opener=True)) == "no_ask", nothing
    # What a person may say: a question about the system, a year, help they want, their
    # own help to the agent with their own detail, an opener that names its subject.
    assert turn_problem("Is it in your system at all? It's ORD-1010.", plain) is None
    assert turn_problem("I ordered it in 2024; it is ORD-1010.", plain) is None
    assert turn_problem("Could you help me with ORD-1010?", plain) is None
    assert turn_problem("Hi, I have a question about delivery times.", _turn(opener=True)) is None
    assert turn_problem("hey, can someone help me with a refund?", _turn(opener=True)) is None


def test_the_fourth_sample_s_breaks_in_other_words() -> None:
    """Held-out wordings of the breaks of the seed-53 sample (its lines are replayed in
    test_realperson.py): the agent's report restated, its lack asked back, a value made
    up for a field the agent asked for, a search result nobody reported, a run of the
    agent's words, the speaker as the one questions come to, an opener about nothing."""
    report = _turn("Here is what I found for ORD-1010: status shipped, amount 54.20, "
                   "created_at 2025-03-02.")  # fmt: skip
    assert turn_problem("So it shipped, cost 54.20 and was made on 2025-03-02.", report) == (
        "parroting"
    )
    assert turn_problem("Was 54.20 the whole amount?", report) is None  # asks about it
    assert turn_problem("Thanks, that's the one from 2025-03-02.", report) is None
    lacks = _turn("Without the postcode and the delivery date I cannot go further.")
    # Asked back as a request for details: the agent's own shape, read first.
    assert turn_problem("Can you give me the postcode and the delivery date?", lacks) == (
        "role_flip"
    )
    assert turn_problem("I was hoping you could tell me the postcode and the delivery date.",
                        lacks) == "parroting"  # fmt: skip
    asked = _turn("Please give me the order id and the reason.")
    assert turn_problem("The order id is ORD-1010 and the reason is broken.", asked) == (
        "invented_fact"
    )
    assert turn_problem("The order id is ORD-1010; I'd rather not say why.", asked) is None
    plain = _turn(ASKED)
    assert turn_problem("ORD-1010. That order does not exist, apparently.", plain) == ("role_flip")
    assert turn_problem("It's ORD-1010. I can't find the order number on my receipt, though.",
                        plain) is None  # fmt: skip
    waited = _turn("The refund for ORD-1010 is pending review; it usually takes three days.")
    assert turn_problem("ok so pending review, it usually takes three days then", waited) == (
        "parroting"
    )
    assert turn_problem("Three days is too long for me.", waited) is None
    assert turn_problem("I got a customer question and must answer it today.", plain) == (
        "role_flip"
    )
    assert turn_problem("It's urgent, can you help me?", _turn(opener=True)) == "no_ask"
    assert turn_problem("It's urgent, my refund never came.", _turn(opener=True)) is None


def test_the_fifth_sample_s_breaks_in_other_words() -> None:
    """Held-out wordings of the breaks of the seed-67 sample (replayed in
    test_realperson.py): work on the record after "go ahead and", the listener told
    what they were informed of, identity checks, an offer to book, the person's own
    details asked for by a pronoun, an empty label, the writer's name for the ask."""
    plain = _turn(STALE)
    opener = _turn(opener=True)
    _reads_as(
        [
            ("OK. I'll go ahead and check the current status of the order.", plain, "role_flip"),
            ("I have already notified you of the change, thanks.", plain, "role_flip"),
            ("First I need to verify your identity.", plain, "role_flip"),
            ("Do you want me to cancel it for you then?", plain, "role_flip"),
            ("Could you check the order id for me? Please send it again.", plain, "role_flip"),
            ("Email:", plain, "writer_text"),
            ("I have a vague request about my stuff.", opener, "writer_text"),
            ("Hey! Can you explain what happened?", opener, "no_ask"),
            ("I'm new here and need a little help.", opener, "no_ask"),
        ],
        # Still the person's: their own checks, what they told the agent, a label with a
        # value.
        [
            ("I'll go ahead and check my inbox.", plain),
            ("I already told you: it is ORD-1010.", plain),
            ("Order id: ORD-1010", plain),
            ("Do you want me to send the order id again? It is ORD-1010.", plain),
        ],
    )


def test_the_sixth_sample_s_breaks_in_other_words() -> None:
    """Held-out wordings of the breaks of the seed-79 sample (replayed in
    test_realperson.py): the agent's refusals in contracted form, the speaker as the
    service, the writer's constraint said back, a request for a detail the line itself
    gives elsewhere, "I need to know ... to proceed"."""
    plain = _turn(STALE)
    broken = (
        "Sorry, but I'm unable to help with that.",
        "As a support agent, I can only see what is in the system.",
        "I don't have the ability to change that.",
        "I don't have any other details, sorry.",
        "It is ORD-1010. Could I please have the order id once more?",
        "I need to know the order number to proceed.",
        "OK, I cannot run that order then.",
    )
    fine = (
        "As the agent told me yesterday, it is ORD-1010.",
        "It is ORD-1010. Do you need my order id again?",
        "It is ORD-1010. Do you need the order id again?",
        "Do you need the booking reference again? It is ORD-1010.",
        "I'm unable to find my receipt, but it is ORD-1010.",
    )
    _reads_as([(t, plain, "role_flip") for t in broken], [(t, plain) for t in fine])


def test_the_seventh_sample_s_breaks_in_other_words() -> None:
    """Held-out wordings of the breaks of the seed-97 sample (replayed in
    test_realperson.py)."""
    plain = _turn(STALE)
    assert turn_problem("Fine. Thank you for your cooperation.", plain) == "role_flip"
    assert turn_problem("OK, I'll need to review the order details first.", plain) == "role_flip"
    assert turn_problem("I'll need to find my receipt first.", plain) is None
    customer = _turn(opener=True)
    assert turn_problem("Hi, any news on orders for the customer ken.smith@example.com?",
                        customer) == "third_person"  # fmt: skip
    assert turn_problem("Hi, any news on my orders? I'm ken.smith@example.com.", customer) is None


def test_the_eighth_sample_s_breaks_in_other_words() -> None:
    """Held-out wordings of the breaks of the seed-131 sample (replayed in
    test_realperson.py): the service's apology and promises, the brief's plan narrated,
    the listener's staff taken as the person's own, the writer's instruction as the line,
    an opener that names nothing."""
    plain = _turn(STALE)
    staff = _turn("Both records carry the same number; our support team will tell them apart.")
    _reads_as(
        [
            ("We apologize for any inconvenience this may cause.", plain, "role_flip"),
            ("OK. I will look into this and get back to you.", plain, "role_flip"),
            ("We'll email you a confirmation shortly.", plain, "role_flip"),
            ("If nothing changes, please call us again tomorrow.", plain, "role_flip"),
            ("Fine. If there is anything else, feel free to ask.", plain, "role_flip"),
            ("Sure, I am going to tell you the order number in a moment.", plain, "writer_text"),
            ("My errand is about a refund.", plain, "writer_text"),
            ("Reply that it is urgent.", plain, "writer_text"),
            ("Then my support team can sort it out.", staff, "role_flip"),
            ("I'm not certain what I need exactly.", _turn(opener=True), "no_ask"),
        ],
        [
            ("I'll give you the order id: ORD-1010.", plain),
            ("Sorry to bother you again, is ORD-1010 sorted?", plain),
            ("My manager asked me to check ORD-1010.", plain),  # their own, none named
            ("Ask them why it is stale? I just want ORD-1010 refunded.", plain),
            ("Say, could you check ORD-1010 again?", plain),
            ("Could your support team tell them apart for ORD-1010?", staff),
        ],
    )


def test_the_ninth_sample_s_breaks_in_other_words() -> None:
    """Held-out wordings of the breaks of the seed-137 sample (replayed in
    test_realperson.py): the service's sympathy, its phrase with the roles swapped, the
    agent's report (a status and an amount) said back."""
    plain = _turn(STALE)
    report = _turn("Here is what I found for ORD-1010: status refunded, amount 54.10, in USD.")
    _reads_as(
        [
            ("Oh, I am really sorry to hear about that.", plain, "role_flip"),
            ("Fine, I will find out which actions you have to take.", plain, "role_flip"),
            ("Okay, so the order was refunded and the amount is 54.10.", report, "parroting"),
            ("Right: status already refunded, amount 54.10 USD.", report, "parroting"),
        ],
        [
            ("Is the status still refunded? I was charged 54.10 again.", report),
            ("It says refunded, but I never got the 54.10 back.", report),
            ("Sorry to hear I have to wait. Can you check ORD-1010 again?", report),
        ],
    )


def test_the_tenth_sample_s_breaks_in_other_words() -> None:
    """Held-out wordings of the breaks of the seed-149 sample (replayed in
    test_realperson.py): the helper's "I can help with that" when nothing was asked of
    the person, the agent's lack said with an adjective."""
    plain = _turn(STALE)
    asked = _turn(ASKED)
    _reads_as(
        [
            ("Of course, I will help you with this.", plain, "role_flip"),
            ("I do not have any current information on that order.", plain, "role_flip"),
        ],
        [
            ("Sure, I can help with that: it is ORD-1010.", asked),
            ("I'll look into those options, thanks.", plain),
        ],
    )


def test_the_eleventh_sample_s_breaks_in_other_words() -> None:
    """Held-out wordings of two breaks of the seed-157 sample, read blind: the person's own
    detail spoken of as the listener's to have given ("the order id you provided"), and
    an opener that only answers the writer ("I'm ready."). What the listener gave the
    person, or handed to someone else, stays the person's to mention."""
    asked = _turn(ASKED)
    plain = _turn(STALE)
    _reads_as(
        [
            ("OK, I will check ORD-1010 using the order number you gave.", asked, "role_flip"),
            ("Thanks for the email address you have shared, ken.smith@example.com.", plain,
             "role_flip"),
        ],
        [
            ("The tracking link you gave me does not open.", plain),
            ("Has ORD-1010 been handed over? Is that the order you've given to the courier?",
             plain),
            ("The email you sent about ORD-1010 was unclear.", plain),
        ],
    )  # fmt: skip
    opener = _turn(opener=True)
    assert turn_problem("I'm ready.", opener) == "no_ask"
    assert turn_problem("Is my order ORD-1010 ready yet?", opener) is None


def test_the_eleventh_sample_s_other_breaks_in_other_words() -> None:
    """Held-out wordings of the rest of the seed-157 sample's breaks, read blind: the
    agent's which-question sent back, an offer to check the service's state, "I'm ready"
    when nobody asked, the agent's statement as the person's own, a search reported after
    another act, and the person's own details asked for while giving them. Their
    person-side neighbours pass."""
    which = _turn(WHICH)
    route = _turn("That is outside what I can look into here. For that question, the help "
                  "pages or the phone line are the best route.")  # fmt: skip
    missing = _turn("I could not find a record for ORD-6651. Please double-check it and write "
                    "again.")  # fmt: skip
    report = _turn(REPORT)
    ready = _turn("Shall I go ahead and refund ORD-1010?")
    _reads_as(
        [
            ("Which one are you talking about, the one from June or the one from September?",
             which, "parroting"),
            ("Sorry, I need to know which record you meant.", which, "parroting"),
            ("Do you want me to verify that the refund has gone through?", report,
             "role_flip"),
            ("I'm ready too.", report, "writer_text"),
            ("Ready when you are!", report, "writer_text"),
            ("The phone line is the best route for that question.", route, "parroting"),
            ("I checked again and located the record for ORD-6651.", missing, "role_flip"),
            ("It's about ORD-1010 and ken.smith@example.com. Can you give me my order id?",
             report, "role_flip"),
            # The seed-163 sample: the person's own e-mail as the customer's, the agent's
            # refusal taken on as the person's, the brief's name for the listener narrated.
            ("Please list the orders of the user whose email is ken.smith@example.com.",
             _turn(opener=True), "third_person"),
            ("I want the refund, but I'm not permitted to issue it myself. Can you look again?",
             _turn("I am not permitted to run refund_order for ORD-1010, so nothing was "
                   "changed."), "role_flip"),
            ("The service won't refund ORD-1010 since it is not theirs to refund.", report,
             "writer_text"),
            # A claim to have given a detail the conversation does not hold (seed 157).
            ("As I already told you my order number, please just refund it.", report,
             "writer_text"),
        ],
        [
            ("The one created on 2025-09-01.", which),
            ("Which one was shipped? I only remember ordering once.", which),
            ("Would you like me to confirm my email address? It is ken.smith@example.com.",
             report),
            ("I'm ready.", ready),
            ("OK, I'll try the help pages then.", route),
            ("The help pages don't help.", route),
            ("Is the phone line the best route?", route),
            ("I checked my e-mail and found the order id: ORD-1010.", missing),
            ("Can you send my refund for ORD-1010 to the original card?", report),
            ("I'm the customer with the broken parcel, ORD-1010.", report),
            ("Why won't the service refund ORD-1010?", report),
            ("I'm not allowed to share my password, but the order is ORD-1010.", report),
            ("I gave you the order id before: ORD-1010.", report),
            ("I sent you photos of the order last week.", report),
        ],
    )  # fmt: skip


def test_the_twelfth_sample_s_breaks_in_other_words() -> None:
    """Held-out wordings of the seed-171 sample's breaks, read blind: the which-question
    sent back in other words, a question that quizzes the listener for the person's own
    id, the agent's "do you want to refund?" asked by the person, the speaker refreshing
    the service's record, their own e-mail as "a customer's", and the agent's ask told as
    the person's. Their person-side neighbours pass."""
    which = _turn(WHICH)
    report = _turn(REPORT)
    stale = _turn(STALE)
    asked = _turn(ASKED)
    opener = _turn(opener=True)
    _reads_as(
        [
            ("Which one would you prefer to look at first?", which, "parroting"),
            ("Tell me which of them you're thinking of.", which, "parroting"),
            ("So what's the order number?", report, "role_flip"),
            ("What is your order id, please?", opener, "role_flip"),
            ("Would you like to proceed with the refund of ORD-1010?", report, "role_flip"),
            ("Please let me know whether you want to cancel it.", report, "role_flip"),
            ("Let me reload the record for ORD-1010 and come back to you.", stale,
             "role_flip"),
            ("Could you find the orders of a customer whose email is ken.smith@example.com?",
             opener, "third_person"),
            ("I have already asked for your order id twice.", asked, "role_flip"),
        ],
        [
            ("The one from September, please.", which),
            ("Which one was refunded? I only remember paying once.", which),
            ("What's my order number? I can't find the confirmation e-mail. My e-mail is "
             "ken.smith@example.com.", _turn(opener=True, ask_family="vague")),
            ("What is the status of ORD-1010?", report),
            ("Do you want me to send a photo of the parcel?", report),
            ("I want to cancel it, please.", report),
            ("Can you refresh it? ORD-1010 should have shipped by now.", stale),
            ("As a customer with two orders, I'd like ORD-1010 checked first.", opener),
            ("I asked the shop for the order id and this is it: ORD-1010.", asked),
            ("Yes, if you want to go ahead with the refund, do it.", report),
            ("I asked for the invoice you promised to send me for ORD-1010.", report),
        ],
    )  # fmt: skip


def test_the_thirteenth_sample_s_breaks_in_other_words() -> None:
    """Held-out wordings of the seed-179 sample's breaks, read blind: the listener's own
    record handle asked for, what the listener is looking for asked as a service asks
    it, and a sentence cut where its value should be. Their person-side neighbours pass:
    the service's own numbers, "is this what you're looking for?", a value given."""
    asked = _turn(ASKED)
    report = _turn(REPORT)
    opener = _turn(opener=True)
    _reads_as(
        [
            ("Could you send me your booking reference first?", asked, "role_flip"),
            ("Before we start, what's your account number?", opener, "role_flip"),
            ("Tell me which order you're searching for and I'll help.", opener, "role_flip"),
            ("My order number is", asked, "writer_text"),
            # Airline, seed 179: the listener's need for a change, the part announced, an
            # opener that apologises to the writer.
            ("Thanks. Do you need to update something on it, or is that all?", report,
             "role_flip"),
            ("I'm the first-time customer.", opener, "writer_text"),
            ("My apologies for the misunderstanding, here is my request about ORD-1010.",
             opener, "no_ask"),
            ("Understood, I will do my best to answer as instructed.", report, "writer_text"),
        ],
        [
            ("What's your phone number? I'd rather call.", report),
            ("Is ORD-1010 what you are looking for?", asked),
            ("My order number is ORD-1010.", asked),
            ("What's your case number for my complaint about ORD-1010?", report),
            ("Do you need anything else from me to change it?", report),
            ("I'm the passenger.", report),
            ("Sorry for the confusion earlier on the phone: where is ORD-1010?", opener),
            ("I'll do my best to find the receipt for ORD-1010.", report),
            # The template person's conflicting stance: what was told before is a view,
            # and the record named after the comma is another clause.
            ("I know I told you the opposite before, and it is about the order number from "
             "earlier today. Where is my parcel?", opener),
        ],
    )  # fmt: skip


def test_the_fourteenth_sample_s_breaks_in_other_words() -> None:
    """Held-out wordings of the seed-187 sample's breaks, read blind: the record's state
    withheld as the service withholds it, a request received as the service receives
    one, and the agent's request for clarification. Their person-side neighbours pass:
    a handle the person lacks, a request someone sent the person, a question about what
    the service found."""
    asked = _turn(ASKED)
    report = _turn(REPORT)
    opener = _turn(opener=True)
    _reads_as(
        [
            ("Sorry, I can't share the order's status with you right now.", report, "role_flip"),
            ("I have just received an enquiry about a refund.", opener, "role_flip"),
            ("Could you clarify your question, please?", report, "role_flip"),
        ],
        [
            ("I can't give you the tracking number, I never got one. It's ORD-1010.", asked),
            ("I received a request from the courier to pick a new day. Where is ORD-1010?",
             opener),
            ("Can you explain the problem with ORD-1010?", report),
            ("I got a refund request confirmation yesterday. Is ORD-1010 refunded?", opener),
        ],
    )  # fmt: skip


def test_the_fourteenth_sample_s_airline_breaks_in_other_words() -> None:
    """Held-out wordings of the seed-187 airline breaks: a place the brief does not hold
    named as a route's end, or a held code given another city's name; the service's
    answer owed; the person's own details asked for by a pronoun; a vague opener asking
    for the person's own name. Neighbours pass: the held places by code or city, a route
    from a person who holds none, a vague opener that lost its booking reference."""
    trip = Turn(facts=facts_of({**SITUATION, "tools": ["search_flights"],
                                "entities": {"origin": "DEN", "destination": "LYS",
                                             "date": "2025-06-06"}, "targets": {}}),
                opener=True)  # fmt: skip
    booking = {**SITUATION, "tools": ["cancel_booking"],
               "entities": {"booking_ref": "RPNW96", "last_name": "Haddad"},
               "targets": {"booking_ref": "RPNW96"}}  # fmt: skip
    held = Turn(facts=facts_of(booking), opener=True)
    vague = Turn(facts=facts_of(booking), opener=True, ask_family="vague",
                 targets=("RPNW96",))  # fmt: skip
    elsewhere = _turn(opener=True)
    _reads_as(
        [
            ("Hi, I'd like flights from Lisbon to Lyon on 2025-06-06.", trip, "invented_fact"),
            ("I want to fly from Denver to Berlin on 2025-06-06, please.", trip,
             "invented_fact"),
            ("Can you search DEN (Dallas) to LYS for 2025-06-06?", trip, "invented_fact"),
            ("Sorry, I'm unable to give you an update on the booking yet.", _turn(REPORT),
             "role_flip"),
            ("I want to cancel, but I lost the booking reference and last name. Could you "
             "tell me what they are?", held, "role_flip"),
            ("Hi, I need to cancel a booking, can you help me find the last name on it?",
             vague, "role_flip"),
        ],
        [
            ("Can you find flights from Denver to Lyon on 2025-06-06?", trip),
            ("Flights from DEN to LYS on June 6th, please?", trip),
            ("I'm flying from Denver to Lyon on 2025-06-06 to see my sister, what is there?",
             trip),
            ("I booked a trip from Beijing to Los Angeles. Where is my order ORD-1010?",
             elsewhere),
            ("Hi, I need to cancel a booking but I lost the reference, can you help me find "
             "it?", vague),
        ],
    )  # fmt: skip


def test_the_fifteenth_sample_s_breaks_in_other_words() -> None:
    """Held-out wordings of the seed-193 sample's breaks, read blind: the speaker taking a
    moment to look the record up or having to check it, the service turning the listener
    away or offering more help, and the listener spoken of as "the customer". Neighbours
    pass: a moment to find the person's own receipt, a check with their own bank, the
    customer service named as the person names it."""
    report = _turn(REPORT)
    _reads_as(
        [
            ("OK. Allow me a minute to check the order status again.", report, "role_flip"),
            ("Right, I'll have to verify the order record once more.", report, "role_flip"),
            ("Anything? How else may I help you today?", report, "role_flip"),
            ("Sorry, I can't help you.", report, "role_flip"),
            ("Fine, I'll remind the client to send it.", report, "role_flip"),
        ],
        [
            ("Thanks. Give me a moment to find my receipt.", report),
            ("I'll have to check with my bank first.", report),
            ("You can't help me? Then who can?", report),
            ("I called the customer service line about ORD-1010 yesterday.", report),
            ("Can you tell the customer service team to call me?", report),
        ],
    )  # fmt: skip


def test_the_fifteenth_sample_s_airline_breaks_in_other_words() -> None:
    """Held-out wordings of the seed-193 airline breaks: the listener sent to a website
    or another service, a detail asked for by its name "for" its own value, an opener
    that only lists what the person has. Neighbours pass: a nudge to search again, a
    question about the record the value names, an opener that asks."""
    booking = {**SITUATION, "tools": ["get_booking"],
               "entities": {"booking_ref": "P4Q4IK", "last_name": "Kim"},
               "targets": {"booking_ref": "P4Q4IK"}}  # fmt: skip
    opener = Turn(facts=facts_of(booking), opener=True)
    report = _turn(REPORT)
    _reads_as(
        [
            ("Hmm. Why don't you try the help page on your website instead?", report,
             "role_flip"),
            ("Could you get me the booking reference of P4Q4IK, please?", opener,
             "role_flip"),
            ("I have got a booking reference P4Q4IK and the last name Kim.", opener,
             "bare_details"),
        ],
        [
            ("Why not try looking it up once more?", report),
            ("Could you get me the flight times for booking P4Q4IK? The last name is Kim.",
             opener),
            ("I have a booking reference P4Q4IK and the last name Kim. Can you cancel it?",
             opener),
        ],
    )  # fmt: skip
