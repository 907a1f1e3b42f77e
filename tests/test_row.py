"""The row model: exact round trips, typed views, and the schema generated from them."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from whileai_core.row import (
    JUDGE_STATUSES,
    SCHEMA_VERSION,
    from_row,
    reply_text,
    row_json_schema,
    to_row,
    validate_row,
)


def test_every_fixture_row_round_trips_byte_for_byte(sdk_rows: list[dict]) -> None:
    assert len(sdk_rows) == 40
    for row in sdk_rows:
        back = to_row(from_row(row))
        assert back == row
        assert orjson.dumps(back) == orjson.dumps(row)


def test_from_row_splits_into_typed_views(sdk_rows: list[dict]) -> None:
    parts = from_row(sdk_rows[0])
    assert parts.task.scenario_id == sdk_rows[0]["scenario_id"]
    assert parts.rollout.steps is not None and parts.rollout.steps[0].kind == "tool"
    assert parts.rollout.messages is not None and parts.rollout.messages[0].role == "user"
    assert parts.schema_version == SCHEMA_VERSION
    # Keys none of the views name are carried, not dropped.
    assert parts.extra["tier"] == sdk_rows[0]["tier"]


def test_graded_row_with_markers_and_calibration_round_trips() -> None:
    row = {
        "prompt": "where is ORD-1234",
        "reward": 1,
        "judge_status": "ok",
        "judge_meta": {"model": "m", "prompt_sha": "abc"},
        "markers": {"grounded": 1, "no_hedging": 0.5},
        "calibration": {"task_id": "sc-1", "k": 8, "pass_rate": 0.5, "ci95": [0.2, 0.8]},
        "custom": {"nested": [1, 2.5, None]},
    }
    parts = from_row(row)
    assert parts.judgment.reward == 1
    assert {m.name for m in parts.markers} == {"grounded", "no_hedging"}
    assert parts.calibration is not None and parts.calibration.k == 8
    assert orjson.dumps(to_row(parts)) == orjson.dumps(row)


def test_openai_wire_tool_calls_are_accepted() -> None:
    row = {
        "messages": [
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "get_order", "arguments": '{"order_id": "1"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": "{}"},
        ]
    }
    validate_row(row)
    assert to_row(from_row(row)) == row


@pytest.mark.parametrize(
    ("row", "problem"),
    [
        ({"prompt": "x", "steps": "not a list"}, "steps"),
        ({"prompt": "x", "reward": "yes"}, "reward"),
        ({"prompt": "x", "judge_status": "great"}, "judge_status"),
        ({"prompt": "x", "markers": {"a": "high"}}, "markers"),
        ({"prompt": "x", "markers": [1, 2]}, "markers"),
        ({"reason": "nothing else"}, "prompt"),
        ([1, 2], "not a JSON object"),
    ],
)
def test_validate_row_names_the_problem(row: Any, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        validate_row(row)


_int64 = st.integers(-(2**63), 2**63 - 1)
_json_scalars = st.none() | st.booleans() | _int64 | st.floats(allow_nan=False) | st.text()
_json = st.recursive(
    _json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)
_extra_keys = st.text(min_size=1).filter(lambda k: k not in row_json_schema()["properties"])


@settings(max_examples=200, deadline=None)
@given(
    prompt=st.text(),
    extra=st.dictionaries(_extra_keys, _json, max_size=6),
    reward=st.none() | st.integers(0, 1) | st.floats(0, 1),
    markers=st.dictionaries(st.text(min_size=1), st.integers(0, 1) | st.floats(0, 1), max_size=3),
)
def test_any_row_with_the_required_fields_round_trips(
    prompt: str, extra: dict, reward: Any, markers: dict
) -> None:
    row: dict[str, Any] = {"prompt": prompt, **extra, "reward": reward, "markers": markers}
    validate_row(row)
    assert orjson.dumps(to_row(from_row(row))) == orjson.dumps(row)


def test_schema_is_generated_from_the_models() -> None:
    schema = row_json_schema()
    for key in ("prompt", "messages", "steps", "reward", "judge_status", "privileged", "usage"):
        assert key in schema["properties"]
    assert schema["properties"]["schema_version"]["const"] == "1"
    orjson.dumps(schema)


# --- one rule set: the fast check every reader runs agrees with the models ---------------

# Rows that are mostly right: each field is drawn valid most of the time and as any JSON
# value (a wrong type, a bool, 1e308, NaN, a long string, ...) now and then, at every
# level, so the nested rules (a message's role, a call's arguments, a calibration's k)
# are reached as often as the top ones.
_any = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)  # what orjson reads and writes
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.sampled_from([1e308, -1e308, 1e9, 1e9 + 1, 0.5, 1, "ok", "error", "user"])
    | st.text(max_size=3)
    | st.text(alphabet="s", min_size=1020, max_size=1030),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=2), inner, max_size=3)
    ),
    max_leaves=6,
)


def _mostly(valid: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """`valid` 15 times in 16, else any JSON value."""
    return st.sampled_from(range(16)).flatmap(lambda i: valid if i else _any)


def _obj(**fields: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries({}, optional={k: _mostly(v) for k, v in fields.items()})


_text, _score = st.text(max_size=4), st.integers(-5, 5) | st.floats(-1e9, 1e9)
_args = st.dictionaries(_text, _any, max_size=2) | _text
_call = _obj(
    id=_text, type=_text, name=_text, arguments=_args, function=_obj(name=_text, arguments=_args)
)
_message = st.fixed_dictionaries(
    {"role": _mostly(st.sampled_from(["user", "assistant", "tool"]))},
    optional={
        k: _mostly(v)
        for k, v in {
            "content": _text | st.none() | st.lists(_any, max_size=2),
            "tool_calls": st.lists(_call, max_size=2),
            "tool_call_id": _text,
            "name": _text,
        }.items()
    },
)
_ROW_FIELDS: dict[str, st.SearchStrategy[Any]] = {
    "prompt": _text,
    "scenario_id": _text,
    "seed": st.integers(0, 9),
    "world_state": _text,
    "messages": st.lists(_mostly(_message), max_size=3),
    "steps": st.lists(
        _obj(tool=_text, role=_text, text=_text, arguments=_args, result=_any), max_size=2
    ),
    "final_text": _text,
    "rollout_index": st.integers(0, 9),
    "truncated": st.booleans(),
    "tools_used": st.lists(_text, max_size=2),
    "faults": st.dictionaries(_text, _any, max_size=2),
    "reward": _score | st.none(),
    "judge_status": st.sampled_from(JUDGE_STATUSES),
    "judge_meta": st.dictionaries(_text, _any, max_size=2),
    "reason": _text,
    "markers": st.dictionaries(_text, _score, max_size=2),
    "marker_sources": st.dictionaries(_text, _text, max_size=2),
    "calibration": _obj(
        task_id=_text, k=st.integers(0, 9), pass_rate=_score, ci95=st.lists(_score, max_size=2)
    ),
    "privileged": _obj(reference=_any, rubric=_any),
    "schema_version": _text,
    "custom": _any,
}
_rows = st.fixed_dictionaries({}, optional={k: _mostly(v) for k, v in _ROW_FIELDS.items()})


@settings(max_examples=600, deadline=None)
@given(row=_rows)
def test_the_fast_rules_and_the_models_agree_on_every_row(row: dict[str, Any]) -> None:
    """`row_problem` (what every stage and `validate` run) refuses a row exactly when the
    typed views do (plus a row with no ask); a row it takes round-trips byte for byte."""
    from pydantic import ValidationError

    from whileai_core.row.rules import row_problem

    problem = row_problem(row)
    try:
        parts = from_row(row)
    except (ValidationError, TypeError):
        model_takes = False
    else:
        model_takes = True
    content = ("prompt", "messages", "steps", "final_text", "scenario_id")
    asks = any(row.get(k) is not None for k in content)
    assert (problem is None) == (model_takes and asks), problem
    if problem is None:
        assert orjson.dumps(to_row(parts)) == orjson.dumps(row)


@pytest.mark.parametrize(
    ("row", "problem"),
    [
        ({"prompt": "x", "reward": True}, "field 'reward' must be a number, got a boolean"),
        (
            {"prompt": "x", "steps": [{"tool": "t", "arguments": [1, 2]}]},
            "field 'steps[0].arguments' must be a string or an object, got an array",
        ),
        ({"prompt": "x", "reward": 1e308}, "field 'reward' must be a finite number between"),
        ({"prompt": "x", "reward": float("nan")}, "field 'reward' must be a finite number"),
        ({"prompt": "x", "markers": {"m": 1e12}}, "field 'markers.m' must be a finite number"),
        ({"prompt": "x", "messages": [{"role": "user", "content": 5}]}, "messages[0].content"),
        ({"prompt": "x", "messages": [{"content": "hi"}]}, "field 'messages[0].role' is missing"),
        ({"prompt": "x", "scenario_id": "s" * 5000}, "at most 1,024 characters, got 5,000"),
        ({"prompt": "x", "seed": "5"}, "field 'seed' must be a whole number, got a string"),
        ({"prompt": "x", "marker_sources": {"m": 1}}, "field 'marker_sources.m' must be a string"),
        ({"prompt": None}, "none of 'prompt', 'messages', 'steps', 'final_text' or 'scenario_id'"),
    ],
)
def test_the_rules_name_the_field_and_what_it_must_be(row: dict[str, Any], problem: str) -> None:
    with pytest.raises(ValueError) as info:
        validate_row(row)
    assert problem in str(info.value)


class _List(list):  # what a Python caller may hand over: subclasses of the JSON types
    pass


class _Str(str):
    pass


@pytest.mark.parametrize(
    ("row", "problem"),
    [
        ({"prompt": "x", "messages": _List([{"content": "hi"}])}, "'messages[0].role' is missing"),
        ({"prompt": "x", "judge_status": _Str("nearly")}, "field 'judge_status' must be one of"),
        (
            {"prompt": "x", "messages": [{"role": "assistant", "tool_calls": _List([5])}]},
            "field 'messages[0].tool_calls[0]' must be an object, got a number",
        ),
        ({"prompt": "x", "messages": [{"role": _Str("user"), "content": _List([1])}]}, None),
        ({"prompt": "x", "scenario_id": _Str("s" * 2000)}, "at most 1,024 characters"),
    ],
)
def test_a_subclass_of_a_json_type_is_held_to_its_base_types_rule(
    row: dict[str, Any], problem: str | None
) -> None:
    """A value whose exact type is no JSON type's (a subclass) takes the rule's slow path,
    at the top of the row and inside its objects, and is judged as its base type."""
    from whileai_core.row.rules import row_problem

    found = row_problem(row)
    assert found is None if problem is None else problem in (found or ""), found


def test_rewards_and_markers_at_the_bound_are_rows() -> None:
    validate_row({"prompt": "x", "reward": -1e9, "markers": {"m": 1e9}})
    validate_row({"prompt": "x", "reward": 0, "scenario_id": "s" * 1024})


# -- the one final reply ------------------------------------------------------------------

_PARTS_ROW = {
    "messages": [
        {"role": "user", "content": "Where is ORD-1?"},
        {"role": "assistant", "content": [{"type": "text", "text": "ORD-1 has"}, {"x": 1},
                                          {"type": "text", "text": "shipped."}]},
        {"role": "assistant", "content": ""},
    ]
}  # fmt: skip
_STEPS_ROW = {
    "prompt": "Where is ORD-1?",
    "steps": [
        {"tool": "get_order", "arguments": {}, "result": {}, "text": "Looking it up."},
        {"text": "ORD-1 has shipped."},
        {"role": "user", "text": "thanks"},
        {"text": ""},
    ],
}
_NO_USER_ROW = {"messages": [{"role": "system", "content": "Be brief."},
                             {"role": "assistant", "content": "Done."}]}  # fmt: skip


@pytest.mark.parametrize(
    ("row", "reply"),
    [
        ({"final_text": "", "messages": [{"role": "assistant", "content": "hi"}]}, ""),
        (_PARTS_ROW, "ORD-1 has shipped."),
        (_STEPS_ROW, "ORD-1 has shipped."),
        (_NO_USER_ROW, "Done."),
        ({"prompt": "hi"}, ""),
    ],
)
def test_the_final_reply_is_final_text_else_the_last_agent_turn_with_text(
    row: dict[str, Any], reply: str
) -> None:
    assert reply_text(row) == reply


def test_judges_markers_and_selection_read_the_same_final_reply(sdk_rows: list[dict]) -> None:
    """The conduct/checklist evidence, the marker view and selection's surface features
    all take the reply from `row.reply_text`, on rows of every shape."""
    from whileai_core.judges.evidence import Evidence
    from whileai_core.markers.view import view
    from whileai_core.select.hygiene import row_features

    for row in [*sdk_rows[:20], _PARTS_ROW, _STEPS_ROW, _NO_USER_ROW]:
        reply = reply_text(row)
        assert Evidence(row).reply == reply
        assert view(row).reply == reply.replace("\u2019", "'")
        assert row_features(row)[0] == len(reply)
        assert row_features(row, reply) == row_features(row)
