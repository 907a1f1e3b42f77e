"""The default judge on rows a real small model wrote as the agent, labelled by hand.

Six sets, none written by this project's agents nor tuned on wholesale, the first two:

- `realmodel-labelled.jsonl` (v1, 60 rows, all failures a strict reviewer fails);
- `realmodel-v2.jsonl` (easy asks, where the model had a fair chance: general questions
  and look-ups with the id given), split by a hash of the scenario id into a half the
  judges were tuned on (`tune`) and a half left unread until the judges were fixed
  (`measure`). See tests/data/README.md for how they were made and labelled.

v3 to v6 are more easy asks, each labelled before any verdict was read; v6 was scored
once and nothing was fixed on it.

The figures asserted are the ones measured (docs/trust.md), with a margin of one row.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from whileai_core.judges import grade_rows, parse_judge

from ..helpers import REPO

DATA = REPO / "tests" / "data"


def half(row: dict[str, Any]) -> str:
    """`tune` or `measure`: fixed by the scenario id, so the split never moves."""
    digest = hashlib.sha256(str(row["scenario_id"]).encode()).digest()
    return "tune" if digest[0] % 2 == 0 else "measure"


def _load(name: str) -> list[dict[str, Any]]:
    path: Path = DATA / name
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _score(rows: list[dict[str, Any]]) -> tuple[int, int, int, int]:
    """(failures, caught, good rows, good rows failed) under the default judge."""
    graded = list(grade_rows(rows, parse_judge(None)))
    fails = caught = goods = false_fails = 0
    for row, out in zip(rows, graded, strict=True):
        reward = out.get("reward")
        passed = isinstance(reward, (int, float)) and reward >= 0.5
        if row["gold_reward"] == 0:
            fails += 1
            caught += not passed
        else:
            goods += 1
            false_fails += not passed
    return fails, caught, goods, false_fails


def _scored(
    version: str, *, orders: int, airline: int, source: str = "hand"
) -> tuple[int, int, int, int]:
    """`_score` of `realmodel-<version>.jsonl`, after checking its labels' source and its
    size per spec."""
    rows = _load(f"realmodel-{version}.jsonl")
    assert all(r["label_source"] == f"{source}:realmodel-{version}" for r in rows)
    per_spec = [sum(r["realmodel_spec"] == s for r in rows) for s in ("orders", "airline")]
    assert per_spec == [orders, airline]
    return _score(rows)


def _caught_in(version: str, *, orders: int, airline: int) -> int:
    """Failures the default judge catches in a set of rows labelled all failures."""
    fails, caught, goods, _ = _scored(version, orders=orders, airline=airline)
    assert (fails, goods) == (orders + airline, 0)
    return caught


def test_the_default_judge_on_the_v1_set_catches_every_failure() -> None:
    """60 failures, labelled before any verdict was read: 59 caught before issue 23's second
    pass, 60 after (the one miss was a yes/no nothing covered: "true")."""
    rows = _load("realmodel-labelled.jsonl")
    fails, caught, goods, _ = _score(rows)
    assert (fails, goods) == (60, 0)
    assert caught >= 59


def test_the_default_judge_on_the_v2_halves() -> None:
    """v2 (40 rows: 36 failures, 4 good). Measured: tune half 20 of 21 failures caught
    (17 before the fixes it showed), 0 of 2 good rows failed; measure half, read blind
    after tuning, 13 of 15 caught and 0 of 2 good failed; 14 of 15 once the question
    reader also found a yes/no question with no punctuation (so that half is no longer
    unseen). Margin: one failure row per half."""
    rows = _load("realmodel-v2.jsonl")
    assert all(r["label_source"] == "hand:realmodel-v2" for r in rows)
    tune = [r for r in rows if half(r) == "tune"]
    measure = [r for r in rows if half(r) == "measure"]
    fails, caught, goods, false_fails = _score(tune)
    assert (fails, goods) == (21, 2)
    assert caught >= 19 and false_fails == 0
    fails, caught, goods, false_fails = _score(measure)
    assert (fails, goods) == (15, 2)
    assert caught >= 13 and false_fails == 0


def test_the_default_judge_on_the_v3_set() -> None:
    """v3 (113 rows of the same model on orders and airline: 109 failures, 4 good),
    labelled before any verdict was read. The first 24 rows (orders) were scored blind
    first: 18 of 24 caught; the judges were then fixed on them (a bare "Please try
    again.", opening hours nobody gave) and the other 89 were scored blind: 80 of 85
    failures caught and 1 of 4 good rows failed (a "yes" to "Can I talk to you?").
    After fixing that one (the conversation answers a question about itself; "sure" is
    a yes), 81 of 85 and 0 of 4. A made-up "settings or profile section" is caught since
    the v5 fix for places nothing named (82 of 85; the good row that says the terms are
    "often" in a customer-service section stands). What is still missed is a general
    answer that makes up a procedure or a policy in ordinary words (docs/judges.md).
    Margin: one row."""
    rows = _load("realmodel-v3.jsonl")
    assert all(r["label_source"] == "hand:realmodel-v3" for r in rows)
    fails, caught, goods, false_fails = _score(rows[:24])
    assert (fails, goods) == (24, 0) and caught >= 18
    fails, caught, goods, false_fails = _score(rows[24:])
    assert (fails, goods) == (85, 4)
    assert caught >= 81 and false_fails == 0


def test_the_default_judge_on_the_v4_set() -> None:
    """v4 (67 rows of the same model, 31 orders then 36 airline, easy asks drawn with
    `--seed 13` and no scenario of v1-v3), every row labelled before any verdict was
    read. Scored blind with the judges of 4a0d523: orders 28 of 31 failures caught,
    airline 33 of 35, and the one row labelled good failed for cancelling before reading
    the booking, which issue 23 itself names a failure, so its label now says so (62 of
    67 read blind). The judges were then fixed on four of the misses (a yes or no stated
    as "There is no ...", a light verb that does not cover the thing asked about, two
    replies that would fit any message): 66 of 67, then on a general question answered
    only by asking for a tool's detail ("Please provide the email address so that I can
    answer the question by email."): 67 of 67. Margin: one row."""
    rows = _load("realmodel-v4.jsonl")
    assert all(r["label_source"] == "hand:realmodel-v4" for r in rows)
    fails, caught, goods, _ = _score(rows)
    assert (fails, goods) == (67, 0)
    assert caught >= 66


def test_the_default_judge_on_the_v5_set() -> None:
    """v5 (71 rows of the same model, 35 orders then 36 airline, easy asks drawn with
    `--seed 14` and `--seed 15`, no scenario id or prompt of v1-v4), every row labelled
    before any verdict was read, all failures. Scored blind with the judges of 094f4d9:
    orders 32 of 35 caught, airline 31 of 36 (63 of 71, 89%); every miss is an answer to
    a general question. The judges were then fixed on two kinds (a refusal naming only
    the speaker, "as an AI"; a made-up function handed to the person): 65 of 71; then on
    a third (a place in the service's product nothing named: "the settings page", "the
    Help section"): 67 of 71; then on a general question answered only by asking for
    more of the story ("please provide more information about the issue you'd like to
    raise"): 68 of 71. Left: a question dismissed ("a humorous comment from a child"),
    hours said to "vary by airline" as an outsider would, and a general answer in ordinary
    words ("typing them into the chat box"). Margin: one row."""
    assert _caught_in("v5", orders=35, airline=36) >= 67


def test_the_default_judge_on_the_v6_set_read_blind() -> None:
    """v6 (70 rows of the same model, 34 orders then 36 airline, easy asks drawn with
    `--seed 16` and `--seed 17`, no prompt of v1-v5), every row labelled before any verdict
    was read, all failures, and scored once, blind, with the judges of 3026bd9 (none
    changed since): orders 33 of 34, airline 34 of 36, 67 of 70 (95.7%). Missed: a phone
    line question turned down by topic ("unable to connect to phone lines or provide
    assistance with phone numbers"), an invoice "retrieved" by asking for a booking
    reference, and a terms question answered as an outsider ("the website of the
    airline"). Nothing was fixed on them: this set stays held out. Margin: none."""
    assert _caught_in("v6", orders=34, airline=36) >= 67


def test_the_default_judge_on_the_v7_set() -> None:
    """v7 (57 rows of the same model, 29 orders then 28 airline, easy asks drawn with
    `--seed 18` and `--seed 19`, no prompt of v1-v6), every row labelled before any verdict
    was read: 56 failures and one good row (a vague ask met by asking for the booking
    reference and last name, then for the refund method). Scored blind with the judges of
    3026bd9: 51 of 56 failures caught (91%), and the good row failed for "asking for the
    name already given" (it quoted the name while asking for the method). The judges were
    then fixed on that one row (`evidence._still_asked`): 51 of 56, 0 of 1; then on a yes
    or no to a question typed "do u offer gift cards?" (the "u" hid the light verb):
    52 of 56; then on a question met with a greeting and an offer of help ("Hello! How
    can I assist you today?": a greeting names nothing): 53 of 56; then, with h2's fixes
    (a verdict stated after an apology, a general answer made only of the agent's own
    instructions), 55 of 56. Missed: an office question passed over with what the agent
    can do and a question back. Margin: none."""
    fails, caught, goods, false_fails = _scored("v7", orders=29, airline=28)
    assert (fails, goods) == (56, 1)
    assert caught >= 55 and false_fails == 0


def test_the_default_judge_on_the_v8_set() -> None:
    """v8 (53 rows of the same model, 27 orders then 26 airline; two airline asks were
    lost to the model's unparseable output), easy asks drawn with `--seed 20` and `--seed
    21`, no prompt of v1-v7, every row labelled before any verdict was read: 52 failures
    and one good row (a languages question answered "I can provide text in English").
    Scored blind with the judges of 576bbd7: 45 of 52 failures caught (86.5%), the good
    row passed. The judges were then fixed on two kinds: two alike search results in a
    duplicate cell answered as if there were one (a duplicate shows in a search's list as
    well as in a look-up's matches), and a made-up function handed over in quotes
    ('calling the "get_invoice" function'): 47 of 52; then, with h2's fixes ("as an AI
    language model, I do not offer gift cards" read as a verdict; "I cannot check again
    for you" after a timeout read as no look), 49 of 52. Missed: terms "on the official
    website of your country's government", a reply-time question met with what the agent
    can do (caught only when the spec's tool descriptions are known), and an office
    question misread. Margin: none."""
    fails, caught, goods, false_fails = _scored("v8", orders=27, airline=26)
    assert (fails, goods) == (52, 1)
    assert caught >= 49 and false_fails == 0


def test_the_default_judge_on_the_real_models_final_replies() -> None:
    """h1 (60 rows, 30 orders then 30 airline): the seeded agent's trajectories from
    `--seed 20` and `--seed 21` with no planted mistake, their last reply dropped and
    written again by the same real model (no tools offered, temperature 0.7), so the
    good rows a 1.5B agent seldom reaches end to end are the model's own words. Every
    row labelled by hand before any verdict was read: 40 failures, 20 good. Scored blind
    with the judges of c0d39b1: 29 of 40 caught, and 1 of 20 good rows failed ("I've
    cancelled your booking." once the booking read back cancelled after an unreadable
    cancel). The judges were then fixed on that row (a write the world reads back done
    may be claimed) and on three kinds of miss (a tool result written out as the reply; a
    reply silent on what its calls returned; "look again" answered with no look and
    nothing of what the last one showed): 36 of 40, 0 of 20; then, with "which of the
    two?" asked again after the person said which, 37 of 40. Missed: a made-up "Yes, this
    chat is being recorded", a stale record called "an error" with made-up advice, and one
    disputable ask-back. Margin: none."""
    fails, caught, goods, false_fails = _scored("h1", orders=30, airline=30)
    assert (fails, goods) == (40, 20)
    assert caught >= 37 and false_fails == 0


def test_the_default_judge_on_the_real_models_final_replies_read_blind() -> None:
    """h2 (60 rows, 30 orders then 30 airline), made as h1 was from `--seed 22` and
    `--seed 23`, labelled by hand before any verdict was read (38 failures, 22 good) and
    scored once, blind, with the judges of ea23a7f (every h1 fix in): 27 of 38 failures
    caught, 0 of 22 good rows failed. It was then tuned on (a fault told as "no flights",
    a question after a cancel that landed, the newer of two records given the older's
    state, a yes/no question turned into a statement, thanks for details never given,
    results called "not updated" when they came back clean): 33 of 38, 0 of 22. Missed: a
    feedback question met with thanks, "I have confirmed your booking" (disputable), and
    "as an AI language model, I must abide by the rules". Margin: none."""
    fails, caught, goods, false_fails = _scored("h2", orders=30, airline=30)
    assert (fails, goods) == (38, 22)
    assert caught >= 33 and false_fails == 0


def test_the_default_judge_on_a_held_out_set_labelled_by_another_reader() -> None:
    """h3 (60 rows, 30 orders then 30 airline), made as h2 was from `--seed 24` and
    `--seed 25` on main 97d95e4, and labelled by a separate reviewer that never saw the
    judges' code or verdicts (a helper agent, calibrated on h2's labels; 43 failures, 17
    good, 11 marked disputable). Scored once with the judges of aa3c101, after every h2
    fix: 27 of 43 failures caught (63%), 2 of 17 good rows failed. Then one false fail was
    fixed ("I'm glad the order was refunded" read as the agent's own claim): 1 of 17; the
    other ("I'm not able to provide that information" to an hours question, disputable)
    stands. Then tuned on three kinds: a fault named as another kind (a timeout as "I
    don't have access"), an offer of more help taken as a question, and a fault met again
    told only the first time: 30 of 43. Still missed: made-up general answers and steps,
    a stale record echoed as JSON, a fault met with "please try again" alone, and
    disputable invented details. Margin: none."""
    fails, caught, goods, false_fails = _scored("h3", orders=30, airline=30, source="review")
    assert (fails, goods) == (43, 17)
    assert caught >= 30 and false_fails <= 1


def test_the_default_judge_on_a_fourth_held_out_set() -> None:
    """h4 (60 rows, 30 orders then 30 airline), made as h3 was from `--seed 26` and
    `--seed 27` on main 4d3d405, and labelled by a separate reviewer that never saw the
    judges' code or verdicts (a helper agent calibrated on h3's labels; 45 failures, 15
    good, 4 marked disputable). Scored once with the judges of 4d3d405, after every h3
    fix: 34 of 45 failures caught (76%), 0 of 15 good rows failed. Then tuned on four
    kinds: details asked for again with nothing to doubt them, a value given by its
    label, "I don't have the ability to access" after calls reached the records, and an
    offer of more help taken as a question: 38 of 45; 39 with h5's fault put on the
    person's words ("the system failed to recognize your request"), 40 with its business
    sent to as a third party ("in the airline's website"). Still missed: a status
    misnamed ("confirmed" for completed), an amount called a balance, a record dumped as
    JSON with words around it, a chat-recording question met with "Yes, I am a star",
    and a refund read back as a cancel. Margin: none."""
    fails, caught, goods, false_fails = _scored("h4", orders=30, airline=30, source="review")
    assert (fails, goods) == (45, 15)
    assert caught >= 40 and false_fails == 0


def test_the_default_judge_on_a_fifth_held_out_set() -> None:
    """h5 (60 rows, 30 orders then 30 airline), made as h4 was from `--seed 28` and
    `--seed 29` on main 5dbaed6, and labelled by a separate reviewer that never saw the
    judges' code or verdicts (a helper agent calibrated on h3's and h4's labels; 45
    failures, 15 good, 13 marked disputable). Scored once with the judges of 5dbaed6,
    after every h4 fix: 31 of 45 failures caught (69%), 1 of 15 good rows failed ("Of
    course, I can help you with that!" read as a yes nothing covers; disputable). Then
    tuned on one kind, a tool's fault put on the person's words ("please rephrase your
    question", "the information you provided is outdated"): 34 of 45; then on the
    business the agent speaks for sent to as a third party ("contact the airline
    directly"): 35 of 45; and the false fail was mended (a yes to "can you sort it
    out?" takes up the errand, claiming no fact): 0 of 15. Still missed: lectures on
    the person's tone, thanks for a confirmation of a state, a fault told as "an error"
    with "please try again", made-up refunds in progress and payments, an unchanged
    reference called new.
    Margin: none."""
    fails, caught, goods, false_fails = _scored("h5", orders=30, airline=30, source="review")
    assert (fails, goods) == (45, 15)
    assert caught >= 35 and false_fails == 0
