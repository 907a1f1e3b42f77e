"""The row model: exact round trips, typed views, and the schema generated from them."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from whileai_core.row import SCHEMA_VERSION, from_row, row_json_schema, to_row, validate_row


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
        ({"final_text": "no ask"}, "prompt"),
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
