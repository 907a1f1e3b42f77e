"""The answer key never ships: privileged is stripped at any depth, and leaks are detected."""

from __future__ import annotations

import copy
import random
from typing import Any

import orjson

from whileai_core.row import privileged
from whileai_core.row.privileged import (
    Shipped,
    Strictness,
    answer_key_leaks,
    carries_privileged,
    has_privileged,
    leaks_answer_key,
    might_carry,
    prepare_to_ship,
    quotable,
    strip_privileged,
)

ROW = {
    "prompt": "refund ORD-1234",
    "privileged": {"reference": "refund_order succeeds and the reply says so", "hidden_state": {}},
    "steps": [
        {
            "tool": "get_order",
            "arguments": {"order_id": "ORD-1234"},
            "result": {"status": "ok", "privileged": {"principle": "x"}},
        }
    ],
    "messages": [
        {
            "role": "tool",
            "content": orjson.dumps({"data": {"privileged": {"rubric": "r"}}}).decode(),
        }
    ],
    "vector": [0.1, 0.2],
    "keep": {"deep": [{"privileged": 1, "other": 2}]},
}


def test_strip_removes_the_block_at_every_depth_without_mutating() -> None:
    before = copy.deepcopy(ROW)
    clean = strip_privileged(ROW)
    assert before == ROW
    assert not has_privileged(clean)
    assert b"privileged" not in orjson.dumps(clean)
    assert clean["keep"] == {"deep": [{"other": 2}]}
    assert "vector" not in clean
    assert orjson.loads(clean["messages"][0]["content"]) == {"data": {}}


def test_has_privileged_sees_json_encoded_strings() -> None:
    assert has_privileged(ROW)
    assert has_privileged({"content": '{"privileged": {}}'})
    assert not has_privileged({"content": "the word privileged in prose"})


def test_reply_that_quotes_its_reference_is_a_leak() -> None:
    leaked = {**ROW, "final_text": "As expected: refund_order succeeds and the reply says so."}
    assert leaks_answer_key(leaked)
    assert not leaks_answer_key({**ROW, "final_text": "Your refund went through."})
    assert not leaks_answer_key({"prompt": "x", "final_text": "no block at all"})


def test_strip_sees_json_strings_however_they_spell_the_key() -> None:
    block = {"privileged": {"reference": "ANSWER-KEY-TEXT"}, "vector": [0.5]}
    spellings = [
        "  \n" + orjson.dumps(block).decode(),  # leading whitespace
        '{"\\u0070rivileged": {"reference": "ANSWER-KEY-TEXT"}}',  # escaped key
        '{"privileged": {"reference": "ANSWER-KEY-TEXT"}, "n": 123456789012345678901234567890}',
        '{"privileged": {"reference": "ANSWER-KEY-TEXT"}, "x": NaN}',
        orjson.dumps(orjson.dumps(block).decode()).decode(),  # JSON inside a JSON string
        '{"vector": [0.5], "note": "ANSWER-KEY-TEXT"}',
    ]
    for text in spellings:
        row = {"messages": [{"role": "tool", "content": text}]}
        assert has_privileged(row), text
        clean = strip_privileged(row)
        assert not has_privileged(clean), text
        content = clean["messages"][0]["content"]
        assert "privileged" not in content and "vector" not in content, text
        assert "\\u0070" not in content and "[0.5]" not in content, text


def test_plain_text_mentioning_the_word_is_left_alone() -> None:
    row = {"final_text": '"privileged" accounts are {not} JSON', "x": "[privileged"}
    assert strip_privileged(row) == row
    assert not has_privileged(row)


# -- the one leak check, at its named levels ----------------------------------------------

KEYED = {
    "prompt": "Cancel ORD-1234 please.",
    "privileged": {
        "reference": "ORD-1234 already shipped: refuse the cancel and offer a return instead",
        "hidden_state": {
            "world_state": "entity already acted on", "tool_kinds": {"get_order": "read"}},
    },
    "messages": [
        {"role": "user", "content": "Cancel ORD-1234 please."},
        {"role": "assistant", "content": "", "tool_calls": [
            {"name": "get_order", "arguments": {"order_id": "ORD-1234"}}]},
        {"role": "tool", "name": "get_order",
         "content": '{"status": "ok", "data": {"status": "shipped"}}'},
    ],
}  # fmt: skip


def _says(text: str, **extra: object) -> dict:  # type: ignore[type-arg]
    row = {**KEYED, "final_text": text, **extra}
    row["messages"] = [*KEYED["messages"], {"role": "assistant", "content": text}]  # type: ignore[list-item]
    return row


def test_a_run_of_six_words_of_the_reference_is_a_leak_however_it_is_cased() -> None:
    leaks = answer_key_leaks(_says("Note: REFUSE the cancel, and OFFER a return; it shipped."))
    assert [(leak.field, leak.kind) for leak in leaks] == [("reference", "run")]
    assert leaks[0].describe().startswith("reference: 'ORD-1234 already shipped")
    assert not leaks_answer_key(_says("It has shipped, so I cannot cancel it; a return works."))


def test_hidden_state_values_and_field_names_are_leaks_tool_names_are_not() -> None:
    leaks = answer_key_leaks(_says('{"world_state": "entity already acted on"} per get_order'))
    assert [leak.describe() for leak in leaks] == [
        "hidden_state value 'entity already acted on'",
        "field name 'world_state'",
    ]


def test_what_the_agent_was_told_is_no_leak_unless_the_telling_was_privileged() -> None:
    told = "refuse the cancel and offer a return instead"
    person = [{"role": "user", "content": f"Policy says: {told}."}]
    row = _says(f"As you said: {told}.")
    row["messages"] = [*person, *row["messages"]]
    assert not leaks_answer_key(row)
    # The same words inside a privileged block in a tool result were never told: once the
    # block is stripped, nothing shows where they came from.
    hidden = orjson.dumps({"status": "ok", "privileged": {"note": told}}).decode()
    row = _says(f"My notes: {told}.")
    row["messages"][2] = {"role": "tool", "name": "get_order", "content": hidden}
    assert leaks_answer_key(row)


def test_tool_call_arguments_are_the_agents_own_words() -> None:
    row = _says("Done.")
    row["messages"][1]["tool_calls"][0]["arguments"] = {
        "order_id": "ORD-1234", "note": "refuse the cancel and offer a return instead"}  # fmt: skip
    assert [leak.field for leak in answer_key_leaks(row)] == ["reference"]


def test_verbatim_counts_only_whole_answer_keys_in_the_text_given() -> None:
    key = KEYED["privileged"]["reference"]  # type: ignore[index]
    assert answer_key_leaks(KEYED, Strictness.VERBATIM, [f"question: {key.upper()}!"])
    assert not answer_key_leaks(KEYED, Strictness.VERBATIM, [key[:30]])
    assert not answer_key_leaks(KEYED, Strictness.VERBATIM, ["entity already acted on"])


def test_a_row_without_a_block_or_with_nothing_recognisable_has_nothing_to_leak() -> None:
    assert answer_key_leaks({"final_text": "anything"}) == []
    short = {"privileged": {"reference": "say so"}, "final_text": "say so"}
    assert not quotable(short) and answer_key_leaks(short) == []
    assert quotable(KEYED)


# -- carrying the block: every spelling, any depth ------------------------------------------


def test_strip_matches_the_key_under_any_casing_and_after_a_byte_order_mark() -> None:
    row = {"Privileged": {"reference": "k"}, "PRIVILEGED": 1, "Vector": [1.0], "keep": 1,
           "content": "\ufeff" + orjson.dumps({"privileged": 1, "ok": 2}).decode()}  # fmt: skip
    clean = strip_privileged(row)
    assert clean == {"keep": 1, "content": '{"ok":2}'}
    assert has_privileged(row) and not carries_privileged(clean)


def test_carries_sees_the_word_through_escapes_and_unicode_tricks() -> None:
    for text in (
        "Result: " + orjson.dumps({"privileged": 1}).decode(),
        "{'privileged': {'reference': 'x'}}",
        "&#112;rivileged",
        "&#x70;RIVILEGED",
        "%70rivileged",
        "\\\\u0070rivileged",
        "\\x70rivileged",
        "\\u{70}rivileged",
        "\\160\\162\\151\\166\\151\\154\\145\\147\\145\\144",  # octal, every letter
        "ｐｒｉｖｉｌｅｇｅｄ",  # full-width letters
        "priv\u200bileged",  # a zero-width space
        "pri\u0301vileged",  # a combining accent
    ):
        assert carries_privileged({"content": text}), text
        assert might_carry(orjson.dumps({"content": text})), text
    assert not carries_privileged({"content": "a 50% refund, &amp; no privilege escalation"})
    assert not might_carry(orjson.dumps({"content": "plain ascii row"}))


def test_nesting_past_the_recursion_limit_is_refused_never_a_crash() -> None:
    deep = "[" * 1100 + '{"privileged":1}' + "]" * 1100
    row = {"messages": [{"role": "tool", "content": deep}], "final_text": "ok"}
    assert strip_privileged(row) == row  # nothing it can take apart
    assert carries_privileged(strip_privileged(row))
    assert prepare_to_ship(row) == Shipped(None, refused="privileged_residue")
    vector = {"content": "[" * 1100 + '{"vector":[1]}' + "]" * 1100}
    assert not has_privileged(vector)  # too deep to decode, and no word names it ...
    nested: object = {"vector": [1.0]}
    for _ in range(5000):  # ... while a deep value is walked without recursion
        nested = {"x": nested}
    assert has_privileged(nested) and carries_privileged(nested)


def test_a_digit_run_past_pythons_limit_is_found_and_refused() -> None:
    text = '{"privileged": {"reference": "k"}, "n": ' + "7" * 5000 + "}"
    row = {"messages": [{"role": "tool", "content": text}]}
    assert has_privileged(row)
    assert prepare_to_ship(row).refused == "privileged_residue"


def _full_check(
    row: dict[str, Any], strictness: Strictness, texts: list[str] | None = None
) -> list[Any]:
    """The leak check without its early exits: every candidate compared against every
    word said, whatever the block needs."""
    block = row.get("privileged")
    if not isinstance(block, dict):
        return []
    keys = privileged._keys(block, strictness)
    if keys.empty:
        return []
    said = "\n".join(privileged._said(row) if texts is None else texts).lower()
    return privileged._quotes(row, keys, strictness.value, privileged._WORD.findall(said))


def _json(quote: str) -> str:
    """Tool-call arguments as the OpenAI wire carries them: a JSON string."""
    return orjson.dumps({"q": quote}).decode()


def _varied_rows() -> list[dict[str, Any]]:
    """Rows whose block is quoted (or nearly quoted) in every place an agent writes:
    its reply, its turns, tool-call arguments (objects, JSON strings, nested values),
    its own steps, casing and punctuation changed, part of a longer word, said back from
    what it was told; and rows that quote nothing."""
    reference = "Refund ORD-4412 only after the carrier confirms the parcel was lost."
    block = {
        "reference": reference,
        "principle": "never promise a date",
        "hidden_state": {"world_state": {"loyalty_tier": "gold member", "balance": 1234.5}},
        "rubric": ["check the order", "escalate_to_human when unsure"],
    }
    quotes = [
        "only after the carrier confirms the parcel",  # a run of the reference
        "ONLY  after, the CARRIER -- confirms the parcel!",  # casing and punctuation
        "never promise a date",  # a whole short field
        "gold member",  # a hidden-state value
        "balance 1234.5",  # a member quoted with its key
        "world_state",  # a hidden-state field name
        "refunded orders carry their confirms",  # needed words only inside longer words
        "nothing of the key at all",
        "",
    ]
    rows: list[dict[str, Any]] = []
    rng = random.Random(5)
    for quote in quotes:
        base = {"prompt": "Please refund ORD-4412", "privileged": copy.deepcopy(block)}
        rows.append({**base, "final_text": f"Sure. {quote}"})
        rows.append({**base, "messages": [{"role": "assistant", "content": quote}]})
        flat = {"name": "note", "arguments": {"text": quote, "n": [1, {"deep": quote}]}}
        wire = {"type": "function", "function": {"name": "note", "arguments": _json(quote)}}
        turn = {"role": "assistant", "content": "", "tool_calls": [wire, flat]}
        rows.append({**base, "messages": [turn]})
        rows.append({**base, "steps": [{"tool": "note", "arguments": {"q": quote}}]})
        rows.append({**base, "steps": [{"text": quote}, {"role": "user", "text": quote}]})
        told = {"role": "user", "content": quote}
        rows.append({**base, "messages": [told, {"role": "assistant", "content": quote}]})
        words = quote.split()
        rng.shuffle(words)
        rows.append({**base, "final_text": " ".join(words)})
    return rows


def test_the_fast_path_gives_the_full_checks_verdict_on_every_row() -> None:
    rows = _varied_rows()
    leaked = 0
    for row in rows:
        for strictness in Strictness:
            texts = None if strictness is Strictness.TURNS else [orjson.dumps(row).decode()]
            fast = answer_key_leaks(row, strictness, texts)
            assert fast == _full_check(row, strictness, texts), (row, strictness)
            leaked += bool(fast)
    # Both verdicts occur, so the comparison means something.
    assert 0 < leaked < 2 * len(rows)
    kinds = {leak.kind for row in rows for leak in answer_key_leaks(row)}
    assert kinds == {"run", "whole", "value", "name"}


def test_a_leak_only_in_tool_call_arguments_steps_or_final_text_is_found() -> None:
    block = {"reference": "Refund ORD-4412 only after the carrier confirms the parcel was lost."}
    quote = "ONLY after the Carrier confirms, the parcel"
    base = {"prompt": "refund it", "privileged": block}
    call = {"function": {"name": "note", "arguments": _json(quote)}}
    places = [
        {"final_text": quote},
        {"steps": [{"tool": "note", "arguments": {"q": quote}}]},
        {"steps": [{"text": quote}]},
        {"messages": [{"role": "assistant", "content": "", "tool_calls": [call]}]},
    ]
    for place in places:
        assert leaks_answer_key({**base, **place}), place
    # The same words from the person, or part of longer words, are no leak.
    assert not leaks_answer_key({**base, "steps": [{"role": "user", "text": quote}]})
    assert not leaks_answer_key({**base, "final_text": "onlyafter thecarrier confirmsthe parcels"})


def test_a_needed_word_is_found_exactly_where_the_text_splits_it_out() -> None:
    """`_says_any` answers what splitting the text into words answers, on text with
    part-words, underscores, digits, non-ASCII letters and words repeated past the
    search's patience."""
    rng = random.Random(9)
    pieces = ["refund", "refunded", "un_refund", "ref", "fund", "é", "refundé", "42", "x",
              " ", "-", "_", ".", "\n", "ß", "ǅ", "٣"]  # fmt: skip
    needs_pool = ["refund", "fund", "42", "é", "x", "ß", "ref", "٣"]
    for _ in range(3000):
        said = "".join(rng.choice(pieces) for _ in range(rng.randrange(0, 40))).lower()
        needs = frozenset(rng.sample(needs_pool, rng.randrange(1, 4)))
        expected = not needs.isdisjoint(privileged._WORD.findall(said))
        assert privileged._says_any(said, needs) == expected, (said, needs)
    crowded = "refunded " * 100 + "refund"
    assert privileged._says_any(crowded, frozenset({"refund"}))
    assert not privileged._says_any("refunded " * 100, frozenset({"refund"}))


def test_a_field_left_empty_compiles_as_if_it_were_absent() -> None:
    """`_compile` skips a field whose value is null: the keys (and every verdict) are the
    ones the block without it gets, at every level, whatever the other fields hold."""
    fields = {
        "reference": "only refund after the carrier confirms the parcel was lost",
        "hidden_state": {"account_tier": "gold", "balance": 1234.5, "prior_failure": True},
        "rubric": "ORD-7731",
    }
    for strictness in Strictness:
        for name in privileged.PRIVILEGED_FIELDS:
            present = {k: v for k, v in fields.items() if k != name}
            emptied = {**present, name: None}
            assert privileged._compile(emptied, strictness.value) == privileged._compile(
                present, strictness.value
            ), (strictness, name)
    row = {"privileged": {"reference": None, "rubric": "ORD-7731"}, "final_text": "ORD-7731"}
    assert [leak.kind for leak in answer_key_leaks(row)] == ["whole"]
