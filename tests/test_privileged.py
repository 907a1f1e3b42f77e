"""The answer key never ships: privileged is stripped at any depth, and leaks are detected."""

from __future__ import annotations

import copy

import orjson

from whileai_core.privileged import has_privileged, leaks_answer_key, strip_privileged

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
