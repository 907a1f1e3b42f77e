"""Each verifier on a passing and a failing reply, gold lookup, and composition."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from whileai_core.errors import ConfigError
from whileai_core.judges import (
    all_of,
    any_of,
    exact_match,
    grade_rows,
    includes,
    json_field,
    json_schema,
    json_valid,
    math_equal,
    multiple_choice,
    numeric,
    parse_judge,
    regex,
    weighted,
)
from whileai_core.judges.contract import Judge, judge_once
from whileai_core.judges.registry import JudgeOptions


def reward(judge: Judge, reply: str, gold: Any = None, **row: Any) -> float | None:
    if gold is not None:
        row.setdefault("privileged", {"reference": gold})
    fields = judge_once(judge, {"final_text": reply, **row})
    return fields["reward"]


@pytest.mark.parametrize(
    ("judge", "good", "bad", "gold"),
    [
        (exact_match(), "  paris. ", "Paris is the capital", "Paris"),
        (includes(), "The capital is Paris.", "Lyon", "paris"),
        (regex(r"^\d{4}-\d{2}-\d{2}$", full=True), "2024-05-01", "May 1st", None),
        (multiple_choice(), "After thinking, ANSWER: C", "ANSWER: B", "C"),
        (numeric(tolerance=0.01), "It costs $1,234.50 in total", "about 1200", "1234.5"),
        (math_equal(), "so the result is \\boxed{\\frac{1}{2}}", "\\boxed{2}", "0.5"),
        (json_valid(), '{"a": 1}', "{a: 1}", None),
        (
            json_field("order.id"),
            '```json\n{"order": {"id": 42}}\n```',
            '{"order": {"id": 7}}',
            "42",
        ),
    ],
    ids=[
        "exact-match",
        "includes",
        "regex",
        "multiple-choice",
        "numeric",
        "math-equal",
        "json-valid",
        "json-field",
    ],
)
def test_verifier_passes_and_fails(judge: Judge, good: str, bad: str, gold: Any) -> None:
    assert reward(judge, good, gold) == 1.0
    assert reward(judge, bad, gold) == 0.0


def test_json_schema_from_a_file(tmp_path: Path) -> None:
    schema = tmp_path / "schema.json"
    schema.write_text(
        json.dumps(
            {
                "type": "object",
                "required": ["id", "tags"],
                "additionalProperties": False,
                "properties": {
                    "id": {"type": "integer", "minimum": 1},
                    "tags": {"type": "array", "items": {"$ref": "#/$defs/tag"}},
                },
                "$defs": {"tag": {"type": "string", "enum": ["a", "b"]}},
            }
        )
    )
    judge = json_schema(schema)
    assert reward(judge, '{"id": 3, "tags": ["a"]}') == 1.0
    assert reward(judge, '{"id": 0, "tags": ["a"]}') == 0.0
    assert reward(judge, '{"id": 3, "tags": ["c"]}') == 0.0
    assert reward(judge, '{"id": 3, "tags": [], "x": 1}') == 0.0
    assert reward(judge, "not json") == 0.0


def test_bad_schema_file_is_a_config_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"type": "strnig"}')
    with pytest.raises(ConfigError, match=r"not a valid JSON Schema: .*strnig"):
        json_schema(bad)


def test_gold_comes_from_reference_then_flat_fields_then_field() -> None:
    judge = exact_match()
    assert reward(judge, "42", answer="42") == 1.0
    assert reward(judge, "42", target="42") == 1.0
    assert reward(judge, "42", gold="41", answer="42") == 0.0  # privileged.reference wins
    by_field = exact_match(field="meta.expected")
    assert reward(by_field, "42", meta={"expected": "42"}) == 1.0


def test_a_row_without_gold_is_an_error_not_a_zero() -> None:
    fields = judge_once(exact_match(), {"final_text": "42"})
    assert fields["judge_status"] == "error" and fields["reward"] is None
    assert "no gold" in fields["reason"]


def test_percent_reads_in_the_units_it_is_written() -> None:
    assert reward(numeric(), "60%", "60") == 1.0
    assert reward(math_equal(), "50%", "1/2") == 1.0


def test_all_any_weighted_composition() -> None:
    both = all_of(exact_match(), json_valid())
    assert reward(both, "42", "42") == 1.0  # 42 is valid JSON and the gold
    assert reward(both, "forty-two", "forty-two") == 0.0  # right answer, wrong format
    either = any_of(exact_match(), includes())
    assert reward(either, "it is 42", "42") == 1.0
    graded = weighted([(exact_match(), 0.7), (includes(), 0.3)])
    assert reward(graded, "it is 42", "42") == pytest.approx(0.3)
    fields = judge_once(both, {"final_text": "42", "answer": "42"})
    assert fields["markers"] == {"verifier:exact-match": 1.0, "verifier:json-valid": 1.0}


def test_composition_from_the_command_line_syntax() -> None:
    judge = parse_judge("weighted:exact-match=0.7,regex(^\\d+$)=0.3", JudgeOptions())
    row = {"final_text": "41", "answer": "42"}
    assert next(grade_rows([row], judge))["reward"] == pytest.approx(0.3)
    tol = parse_judge("all:numeric(tolerance=1),json-valid")
    out = next(grade_rows([row], tol))
    assert out["reward"] == 1.0
    assert out["judge_name"] == "all:numeric(tolerance=1),json-valid"
    assert out["markers"]["verifier:numeric(tolerance=1)"] == 1.0


def test_a_part_that_cannot_judge_leaves_the_whole_unjudged() -> None:
    judge = all_of(json_valid(), exact_match())
    out = next(grade_rows([{"final_text": "{}"}], judge))
    assert out["judge_status"] == "error" and out["reward"] is None


def test_weighted_needs_weights() -> None:
    with pytest.raises(ConfigError, match="needs a weight"):
        parse_judge("weighted:exact-match,includes")


@pytest.mark.parametrize(
    ("reply", "gold", "expected"),
    [
        ("The set is $\\{3, 1, 2\\}$.", "\\{1,2,3\\}", 1.0),
        ("So $x \\in (1, 2]$", "(1,2]", 1.0),
        ("So $x \\in [1, 2]$", "(1,2]", 0.0),
        ("$\\frac{1}{\\sqrt{2}}$", "\\frac{\\sqrt{2}}{2}", 1.0),
        ("It is \\boxed{10\\text{ cm}}", "10", 1.0),
        ("$1 + x^2$", "x^2+1", 1.0),
        ("no number at all", "2", 0.0),
    ],
    ids=["set", "interval", "closed-interval", "radicals", "units", "expression", "no-answer"],
)
def test_math_equal_reads_latex_sets_intervals_and_units(
    reply: str, gold: str, expected: float
) -> None:
    assert reward(math_equal(), reply, gold) == expected


def test_math_equal_holds_a_row_sympy_would_chew_on_for_minutes_to_the_timeout() -> None:
    # math-verify's own timeout is an alarm that works only on the main thread, and a
    # thread cannot be stopped: the judge runs it in a worker process, killed at the
    # row's timeout and restarted for the next row.
    judge = math_equal(timeout=2)
    good = {"final_text": "\\boxed{4}", "answer": "4"}
    rows = [good, {"final_text": "(" * 3000, "answer": "4"}, good]
    out = list(grade_rows(rows, judge, timeout=2))
    assert [r["judge_status"] for r in out] == ["ok", "timeout", "ok"]
    assert [r["reward"] for r in out] == [1.0, None, 1.0]
    assert judge.notes is not None and judge.notes() == ["math-equal worker restarted 1 time"]


def test_math_equal_with_an_unreadable_gold_is_an_error_not_a_zero() -> None:
    judge = math_equal()
    try:
        fields = judge_once(judge, {"final_text": "3", "answer": "\\frac{"})
    finally:
        assert judge.close is not None
        judge.close()
    assert fields["judge_status"] == "error" and fields["reward"] is None


def test_json_schema_checks_formats_and_every_draft_keyword() -> None:
    judge = json_schema(
        {
            "type": "object",
            "properties": {
                "email": {"type": "string", "format": "email"},
                "when": {"type": "string", "format": "date"},
                "tags": {"type": "array", "contains": {"const": "urgent"}},
            },
            "dependentRequired": {"email": ["when"]},
        }
    )
    assert reward(judge, '{"email": "a@b.co", "when": "2025-01-02", "tags": ["urgent"]}') == 1.0
    assert reward(judge, '{"email": "not an email", "when": "2025-01-02"}') == 0.0
    assert reward(judge, '{"email": "a@b.co"}') == 0.0  # dependentRequired
    assert reward(judge, '{"tags": ["later"]}') == 0.0  # contains
    fields = judge_once(judge, {"final_text": '{"when": "yesterday"}'})
    assert fields["reason"].startswith("schema: $.when:")
