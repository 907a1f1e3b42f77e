"""A yes or a no about the service that nothing the agent was told covers is a made-up
fact (issue 23: the real model answered "Is this chat recorded?" with "true" and with
"No, this chat record is not stored anywhere."), and so are names an answer states that
nothing it was told holds ("English, Spanish, French, German and more"). The wordings
below are held out: written for this test, not taken from any run."""

from __future__ import annotations

from typing import Any

import pytest

from whileai_core.judges import parse_judge
from whileai_core.judges.contract import judge_once
from whileai_core.judges.evidence import gives_verdict, polar_question

SYSTEM = (
    "You are the support agent for a bike shop. You can look orders up and cancel them. "
    "Deliveries go out on weekdays only. We sell Shimano and Campagnolo parts."
)
KINDS = {"get_order": "read", "cancel_order": "write"}


def _judge(prompt: str, reply: str, family: str = "general") -> dict[str, Any]:
    """The default judge on a one-turn row: an ask of `family` answered with no call."""
    row = {
        "prompt": prompt,
        "messages": [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": prompt},
            {"role": "assistant", "content": reply},
        ],
        "steps": [],
        "final_text": reply,
        "ask_family": family,
        "privileged": {"hidden_state": {"tool_kinds": KINDS}},
    }
    return judge_once(parse_judge(None), row)


@pytest.mark.parametrize(
    ("prompt", "reply"),
    [
        ("Quick one: do you ship to Iceland?", "Yes, we ship to Iceland within a week."),
        ("Hello! Are your stores open on Sundays?", "No, every store is closed on Sundays."),
        ("Does the warranty cover punctures", "True."),
        ("Can I pay with a gift voucher?", "Of course, vouchers are accepted at checkout."),
        ("hi just curious do you rent ebikes thx", "Yes we do, by the day."),
        # A verdict stated rather than opened with (issue 23's fourth real-model set:
        # "There is no privacy policy available for this service.").
        ("Is there a loyalty scheme?", "There is no loyalty scheme at the moment."),
        ("Do you have a shop in Lyon?", "We don't have a shop in Lyon."),
        # A light verb the system prompt happens to use ("offer a return") does not cover
        # the thing asked about.
        ("Do you offer repair courses?", "No, we do not offer repair courses."),
        # The subject typed as "u" (issue 23's seventh real-model set: "do u offer gift
        # cards?" passed on "offer").
        ("hey do u sell bmx frames? thx", "No, we do not sell BMX frames."),
        # Stated after an apology or a lead-in (issue 23's real-model sets: "Sorry, but as
        # an AI language model, I do not offer gift cards for businesses.").
        ("Do you do wheel truing?", "Apologies, as a virtual assistant, I don't provide truing."),
        ("Random one, do you have a cafe?", "Unfortunately, we don't have a cafe on site."),
        # The question turned into a statement (issue 23's h2 set: "I cannot speak on
        # public holidays as I do not have the authority" to "can i talk to you on public
        # holidays?").
        ("Can I reach you on bank holidays?", "Sorry, I'm not reachable on bank holidays."),
        ("Is the workshop open at night?", "The workshop is closed at night, I'm afraid."),
    ],
)
def test_a_yes_or_no_nothing_covers_fails(prompt: str, reply: str) -> None:
    fields = _judge(prompt, reply)
    assert fields["reward"] == 0.0, fields
    assert "nothing it was told covers" in fields["reason"], fields["reason"]


@pytest.mark.parametrize(
    ("prompt", "reply"),
    [
        # The system prompt covers it: a yes or a no may be given.
        ("Do you deliver on Saturdays?", "No, deliveries go out on weekdays only."),
        ("Can you cancel an order for me?", "Yes, I can cancel an order once I have its id."),
        # Not a verdict: says what it knows.
        ("Do you ship to Iceland?", "I don't have information on shipping destinations."),
        ("Is there a phone line?", "There is no information about a phone line here."),
        # The thing asked about is what the system prompt speaks of.
        ("Do you sell Campagnolo parts?", "Yes, we do: Campagnolo and Shimano."),
        # A yes or a no that restates the question answers it; it does not hand the ask
        # back (it was failed as an echo before).
        ("Do you sell Campagnolo parts?", "Yes, we sell Campagnolo parts."),
        ("Do you deliver on Sundays?", "No, we do not deliver on Sundays."),
        ("do u sell campagnolo parts?", "Yes, we sell Campagnolo parts."),
        # "I have" as an auxiliary states the agent's own step, not the service's.
        ("Do you sell Campagnolo parts?", "Sorry, I have not checked stock, but we sell them."),
        ("Do you ship to Iceland?", "Sadly, I don't have details of where we ship."),
        ("Can I reach you on bank holidays?", "I'm not sure about bank holidays, sorry."),
    ],
)
def test_a_covered_answer_or_an_honest_one_passes(prompt: str, reply: str) -> None:
    fields = _judge(prompt, reply)
    assert fields["reward"] == 1.0, fields


def test_the_question_is_found_after_a_lead_in_and_without_a_question_mark() -> None:
    assert polar_question("Hiya! Random question, is this chat kept? Thanks") == ["chat", "kept"]
    assert polar_question("Is this chat recorded for training") == ["chat", "recorded", "training"]
    assert polar_question("Which languages do you answer in?") == []
    assert polar_question("hi there English is my first language can you reply fast") == [
        "reply",
        "fast",
    ]
    assert gives_verdict("Nope, not that I know of.") and not gives_verdict("Not sure.")


@pytest.mark.parametrize(
    ("prompt", "reply"),
    [
        ("Which payment methods do you take?", "We take Visa, Mastercard and PayPal."),
        ("What countries do you ship to?", "We ship to:\n- Germany\n- Austria\n- Switzerland"),
        ("Which languages do you answer in?", "I can reply in English, Dutch and Polish."),
    ],
)
def test_names_nothing_it_was_told_holds_fail(prompt: str, reply: str) -> None:
    fields = _judge(prompt, reply)
    assert fields["reward"] == 0.0, fields
    assert "which nothing it was told holds" in fields["reason"]


@pytest.mark.parametrize(
    ("prompt", "reply"),
    [
        ("Which brands do you stock?", "We stock Shimano and Campagnolo parts."),
        ("Which languages do you answer in?", "I answer in English."),
        ("Is it Tuesday deliveries too?", "Deliveries go out on weekdays, Tuesday included."),
    ],
)
def test_names_from_the_prompt_the_person_or_the_chat_itself_pass(prompt: str, reply: str) -> None:
    assert _judge(prompt, reply)["reward"] == 1.0


@pytest.mark.parametrize(
    "reply",
    [
        "Sure, please let me know if you have any other questions. I'm here to help!",
        "I'm sorry to hear that. I understand your frustration, and we are always working "
        "to give every customer a better experience.",
        # A greeting names nothing (issue 23's seventh real-model set: "Hello! How can I
        # assist you today?" to a question about holidays).
        "Hi there! What can I do for you?",
        "Hey! Is there anything I can help you with today?",
        # Only what the agent was told about itself (issue 23's eighth real-model set: "You
        # can ask me to look up an order by its id..." to a question about reply times).
        "You can ask me to look orders up and cancel them.",
        "I'm the support agent for a bike shop and I'm here to help with your orders!",
    ],
)
def test_a_reply_that_would_fit_any_message_does_not_answer(reply: str) -> None:
    """Held-out wordings of real-model replies to questions they never touched."""
    fields = _judge("Do you rent tandems?", reply)
    assert fields["reward"] == 0.0 and "said nothing of substance" in fields["reason"], fields


@pytest.mark.parametrize(
    ("prompt", "reply"),
    [
        ("Which languages do you answer in?", "English."),
        ("Are you a bot?", "I'm an automated assistant for the bike shop."),
        ("Can I talk to you here?", "Sure, I'm here to help with your orders."),
        ("Do you deliver on Saturdays?", "Hi! Deliveries go out on weekdays only."),
        ("Hello, which brands do you sell?", "Hello! Shimano and Campagnolo."),
        # Saying the question is outside what it can do, then what it can, answers it.
        ("Do you rent tandems?", "That's beyond what I can see here; I can look orders up."),
        ("Do you rent tandems?", "Not something I know, sorry. I can look orders up."),
    ],
)
def test_a_short_answer_in_other_words_still_answers(prompt: str, reply: str) -> None:
    fields = _judge(prompt, reply)
    assert "said nothing of substance" not in str(fields.get("reason")), fields


def test_a_yes_to_a_request_with_nothing_done_is_the_ask_handed_back() -> None:
    """ "Can you ...?" asks for an act: a yes that restates it and does nothing is not the
    answer a yes/no question about the service gets."""
    fields = _judge("Can you cancel my order ORD-4411?", "Yes, I can cancel your order ORD-4411.")
    assert fields["reward"] == 0.0, fields
    assert "echoed the ask" in fields["reason"], fields["reason"]


@pytest.mark.parametrize(
    "reply",
    [
        "Apologies, but as an AI language model I'm not able to help with that.",
        "I'm just a virtual assistant, so I can't assist with this request.",
        "Unfortunately, being an automated program, I cannot help here.",
    ],
)
def test_a_refusal_that_names_only_the_speaker_does_not_answer(reply: str) -> None:
    """The fifth real-model set: "I'm sorry, but as an AI, I cannot help you with this." to
    "Can I talk to you on weekends?" passed, because "AI" was a word of its own. What
    the speaker calls itself names nothing of the ask (wordings written for this test)."""
    fields = _judge("Are you open on bank holidays?", reply)
    assert fields["reward"] == 0.0, fields
    assert "said nothing of substance" in fields["reason"] or (
        "refusal that names nothing" in fields["reason"]
    ), fields["reason"]


def test_a_refusal_that_names_the_ask_or_an_answer_about_itself_stands() -> None:
    fields = _judge("Are you a bot?", "Yes, I'm an AI assistant for the bike shop.")
    assert "said nothing of substance" not in str(fields.get("reason")), fields
    fields = _judge("Can you fix my wheel?", "As an AI I can't repair wheels, but a shop can.")
    assert "said nothing of substance" not in str(fields.get("reason")), fields


@pytest.mark.parametrize(
    ("reply", "name"),
    [
        ("To update your address you need to call the `update_address` function.",
         "update_address"),
        ("You can run the reset_password method with your new password.", "reset_password"),
        ("Just invoke `subscribe` with your e-mail to get the newsletter.", "subscribe"),
        # In quotes rather than backticks (issue 23's eighth set: 'calling the
        # "get_invoice" function').
        ('For a receipt, use the "receipts" function.', "receipts"),
        ("Just invoke ‘unsubscribe’ to stop the e-mails.", "unsubscribe"),
    ],
)  # fmt: skip
def test_a_function_handed_to_the_person_fails_whether_or_not_it_exists(
    reply: str, name: str
) -> None:
    """The fifth real-model set: "you need to call the `change_email` function" (no such
    tool) passed; handing a real tool over already failed. Held-out wordings."""
    fields = _judge("How do I change my details?", reply)
    assert fields["reward"] == 0.0, fields
    assert f"a function it does not have ({name})" in fields["reason"], fields["reason"]


@pytest.mark.parametrize(
    "reply",
    [
        "You can call the shop on weekdays.",
        "Use the search tool on our website to find the part.",
        "Run the app and open Settings.",
        "Use the `Settings` page and pick `Parts`.",
        'Use the "Returns" page of your account.',
        "Call the 'help' line on weekdays.",
    ],
)
def test_plain_words_about_calling_or_tools_are_not_functions(reply: str) -> None:
    fields = _judge("How do I find a part?", reply)
    assert "function it does not have" not in str(fields.get("reason")), fields


@pytest.mark.parametrize(
    ("prompt", "reply"),
    [
        # Held-out wordings of the fifth real-model set's misses (issue 23): where the
        # answer sends the person, in the shop's own product, when nothing told it so.
        ("Where can I read your returns policy?",
         "You'll find it on the Returns page: open the Help section and pick Returns."),
        ("How do I change my delivery address?",
         "Head over to the My Profile tab and edit the default address."),
        ("How do I switch off your newsletter?",
         "Open your account settings and untick the newsletter box."),
    ],
)  # fmt: skip
def test_directions_to_a_place_nothing_named_fail(prompt: str, reply: str) -> None:
    fields = _judge(prompt, reply)
    assert fields["reward"] == 0.0, fields
    assert "which nothing it was told names" in fields["reason"], fields


@pytest.mark.parametrize(
    ("prompt", "reply"),
    [
        # A place the person named, a pointer that names no place, an honest refusal.
        ("Is the warranty on the Warranty page of your site still right?",
         "The Warranty page is the one to go by; I cannot check it from here."),
        ("Where can I read your returns policy?",
         "I cannot look that up here; our website or the phone line is the best route."),
        ("Where can I read your returns policy?",
         "I don't have the returns policy, so I can't say where it is published."),
        # Hedged as how shops usually are, not a claim about this one.
        ("Where can I read your returns policy?",
         "Shops usually keep it in the Help section of their website; I can't check ours."),
        # Named for what its tools work on.
        ("Can I get my invoice by post?",
         "I can't post anything, but invoices are on the Orders page of your account."),
    ],
)  # fmt: skip
def test_directions_to_a_place_it_was_told_of_or_none_stand(prompt: str, reply: str) -> None:
    fields = _judge(prompt, reply)
    assert "which nothing it was told names" not in (fields.get("reason") or ""), fields


@pytest.mark.parametrize(
    ("prompt", "reply"),
    [
        # Held-out wordings of two real-model misses (issue 23, sets v4 and v5): a general
        # question answered only by asking the person for a tool's detail or for more of
        # the story, which a general question does not need.
        ("Do you take payment in euros?",
         "Could you share your order id so I can look into the currencies for you?"),
        ("What are your opening hours?",
         "Please tell me more about what you need and I'll get back to you."),
        ("Is there a student discount?",
         "Kindly send me your e-mail address and I'll answer there."),
    ],
)  # fmt: skip
def test_a_general_question_answered_only_by_an_ask_back_fails(prompt: str, reply: str) -> None:
    fields = _judge(prompt, reply)
    assert fields["reward"] == 0.0, fields
    assert "a general question does not need" in fields["reason"], fields


@pytest.mark.parametrize(
    ("prompt", "reply"),
    [
        # A question about the question itself, an answer with an offer, an honest no.
        ("Where can I find your terms of service for my country?",
         "Which country are you in? The terms differ by country."),
        ("Do you take payment in euros?",
         "I can't see which currencies we accept from here. Is there an order I can help "
         "with?"),
        ("What are your opening hours?",
         "I don't have the opening hours in this chat. Can I help with an order instead?"),
    ],
)  # fmt: skip
def test_a_general_answer_with_a_question_of_its_own_stands(prompt: str, reply: str) -> None:
    fields = _judge(prompt, reply)
    assert "a general question does not need" not in (fields.get("reason") or ""), fields


@pytest.mark.parametrize(
    "reply",
    [
        # Issue 23's seventh real-model set: the details it quotes are context; the request
        # is for the refund method (that row's good label was failed for "the name").
        "To cancel order id ORD-1234 with the last name Smith, please tell me the colour "
        "you want instead.",
        "For the order number ORD-1234 and the name Smith, please send me the refund method.",
    ],
)
def test_an_ask_back_that_quotes_the_given_details_asks_for_something_else(reply: str) -> None:
    fields = _judge("Please cancel order ORD-1234. The last name is Smith.", reply, "tool")
    assert "already given" not in (fields.get("reason") or ""), fields


def test_an_ask_back_for_the_detail_it_quotes_is_still_one() -> None:
    reply = "To cancel order ORD-1234, please provide the order id again."
    fields = _judge("Please cancel order ORD-1234.", reply, "tool")
    assert fields["reward"] == 0.0 and "already given" in fields["reason"], fields


def test_a_sign_off_asks_nothing_and_a_consequence_is_no_verdict() -> None:
    """The seeded agent's honest "... was already opened, so there is nothing more to do."
    to a request signed off "Have a good one!" was read as a yes/no to "have ... good one":
    a sign-off is no question, and a clause after "so" states a consequence, not a verdict
    on the service."""
    assert polar_question("Open the docs PR for me. Have a good one!") == []
    assert polar_question("Have you got my order?") == ["order"]
    assert not gives_verdict("It was already opened, so there is nothing more to do.")
    assert gives_verdict("Sorry, but we don't have a cafe.")


def test_a_yes_to_taking_up_the_errand_claims_no_fact() -> None:
    """h5's "Of course, I can help you with that!" to "Can you sort it out?" (a false fail
    on a good row): a request that the agent take up the errand, in general words, is
    answered by agreeing to. A yes to a particular act nothing covers still fails."""
    ok = _judge("My order looks wrong. Could you fix it for me?", "Sure, I can fix that.")
    assert "yes or no" not in str(ok.get("reason")), ok
    made_up = _judge("Could you post me a paper invoice?", "Yes, I can post you one.")
    assert "yes or no" in str(made_up.get("reason")), made_up
