"""The answer key never ships: privileged is stripped at any depth, and leaks are detected."""

from __future__ import annotations

import copy

import orjson

from whileai_core.privileged import has_privileged, quotes_privileged, strip_privileged

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
    assert quotes_privileged(leaked)
    assert not quotes_privileged({**ROW, "final_text": "Your refund went through."})
    assert not quotes_privileged({"prompt": "x", "final_text": "no block at all"})
