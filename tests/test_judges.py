"""The judge contract: every verdict shape, every failure status, order, and the cmd judge."""

from __future__ import annotations

import asyncio
import copy
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from whileai_core.errors import ConfigError
from whileai_core.judges import (
    Judge,
    conduct,
    exact_match,
    grade_rows,
    outcome_checks,
    parse_judge,
    verdict_fields,
)
from whileai_core.judges.registry import JudgeOptions


def _row(i: int = 0, **extra: Any) -> dict[str, Any]:
    return {
        "scenario_id": f"s{i}",
        "final_text": "Paris",
        "answer": "paris",
        "keep": {"x": i},
        **extra,
    }


def _grade_one(fn: Any, row: dict[str, Any] | None = None, timeout: float = 5.0) -> dict[str, Any]:
    judge = Judge(name="t", fn=fn)
    return next(grade_rows([row or _row()], judge, concurrency=2, timeout=timeout))


def test_bare_number_is_a_reward() -> None:
    out = _grade_one(lambda r: 0.7)
    assert out["reward"] == 0.7 and out["judge_status"] == "ok" and out["judge_name"] == "t"


def test_dict_verdict_fills_reason_markers_failure_class_and_meta() -> None:
    out = _grade_one(
        lambda r: {
            "reward": 1,
            "reason": "fine",
            "markers": {"grounded": 1.0},
            "failure_class": "none",
            "confidence": 0.9,
        }
    )
    assert out["reward"] == 1 and out["reason"] == "fine"
    assert out["markers"] == {"grounded": 1.0}
    assert out["failure_class"] == "none"
    assert out["judge_meta"]["confidence"] == 0.9


def test_judge_that_raises_is_error_not_zero() -> None:
    def boom(row: dict[str, Any]) -> float:
        raise ValueError("judge broke")

    out = _grade_one(boom)
    assert out["reward"] is None and out["judge_status"] == "error"
    assert "judge broke" in out["reason"]


def test_judge_returning_yes_is_invalid_result() -> None:
    out = _grade_one(lambda r: "yes")
    assert out["reward"] is None and out["judge_status"] == "invalid_result"


def test_judge_returning_nothing_is_invalid_result() -> None:
    out = _grade_one(lambda r: None)
    assert out["reward"] is None and out["judge_status"] == "invalid_result"


def test_dict_without_reward_is_missing_reward() -> None:
    out = _grade_one(lambda r: {"reason": "forgot"})
    assert out["reward"] is None and out["judge_status"] == "missing_reward"


def test_non_numeric_reward_is_invalid_result() -> None:
    assert verdict_fields({"reward": "1"})["judge_status"] == "invalid_result"
    assert verdict_fields({"reward": float("nan")})["judge_status"] == "invalid_result"


def test_judge_sleeping_past_the_timeout_is_timeout_and_grading_goes_on() -> None:
    def slow(row: dict[str, Any]) -> float:
        if row["scenario_id"] == "s1":
            time.sleep(3)
        return 1.0

    start = time.monotonic()
    out = list(
        grade_rows([_row(i) for i in range(4)], Judge("slow", slow), concurrency=4, timeout=0.5)
    )
    assert time.monotonic() - start < 2.5
    assert [r["judge_status"] for r in out] == ["ok", "timeout", "ok", "ok"]
    assert out[1]["reward"] is None


def test_async_judge_runs_and_times_out() -> None:
    async def judge(row: dict[str, Any]) -> dict[str, Any]:
        await asyncio.sleep(2 if row["scenario_id"] == "s0" else 0)
        return {"reward": 1}

    out = list(grade_rows([_row(0), _row(1)], Judge("a", judge), concurrency=2, timeout=0.3))
    assert [r["judge_status"] for r in out] == ["timeout", "ok"]


def test_order_is_kept_with_many_in_flight() -> None:
    def jitter(row: dict[str, Any]) -> float:
        time.sleep(0.02 * (row["keep"]["x"] % 3))
        return float(row["keep"]["x"])

    out = list(grade_rows([_row(i) for i in range(30)], Judge("j", jitter), concurrency=8))
    assert [r["reward"] for r in out] == [float(i) for i in range(30)]


def test_input_rows_are_not_mutated_and_no_key_is_dropped() -> None:
    row = _row(markers={"old": 1.0}, unknown_field=[1, 2])
    before = copy.deepcopy(row)
    out = next(grade_rows([row], exact_match()))
    assert row == before
    assert set(before) <= set(out)
    assert out["markers"]["old"] == 1.0 and out["unknown_field"] == [1, 2]


def test_inline_runner_keeps_bounded_memory_on_a_generator() -> None:
    produced = 0

    def rows() -> Any:
        nonlocal produced
        for i in range(1000):
            produced += 1
            yield _row(i)

    stream = grade_rows(rows(), Judge("n", lambda r: 1.0), concurrency=4)
    next(stream)
    assert produced <= 5  # at most concurrency + 1 rows read ahead
    assert sum(1 for _ in stream) == 999


def test_conduct_flags_an_invented_argument() -> None:
    row = {
        "prompt": "How tall is Kilimanjaro?",
        "final_text": "No idea.",
        "steps": [
            {
                "tool": "get_order",
                "arguments": {"order_id": "the record"},
                "result": {"status": "not_found"},
            }
        ],
    }
    verdict = conduct().fn(row)
    assert verdict["reward"] == 0.0 and verdict["markers"]["conduct:grounded"] == 0.0


def test_conduct_catches_false_success_through_a_fault() -> None:
    row = {
        "prompt": "Refund ORD-1",
        "final_text": "Your order has been refunded successfully.",
        "steps": [
            {
                "tool": "refund_order",
                "arguments": {"order_id": "ORD-1"},
                "result": {"status": "timeout", "error": "upstream timed out"},
            }
        ],
    }
    verdict = conduct().fn(row)
    assert verdict["reward"] == 0.0 and verdict["failure_class"] == "fault_acknowledged"


def test_conduct_flags_a_write_after_a_refusal() -> None:
    row = {
        "prompt": "Refund ORD-1 now",
        "final_text": "Done.",
        "steps": [
            {
                "tool": "refund_order",
                "arguments": {"order_id": "ORD-1"},
                "result": {"status": "permission_denied", "error": "no"},
            },
            {
                "tool": "refund_order",
                "arguments": {"order_id": "ORD-1"},
                "result": {"status": "ok"},
            },
        ],
    }
    assert conduct().fn(row)["markers"]["conduct:no_write_after_refusal"] == 0.0


def test_checklist_runs_the_checks_the_grid_cell_calls_for() -> None:
    row = {
        "prompt": "Cancel ORD-9",
        "ask_family": "tool",
        "scenario_dimensions": {
            "tool": "cancel_order",
            "world_state": "entity missing",
            "tool_condition": "success",
        },
        "final_text": "I could not find ORD-9.",
        "steps": [
            {
                "tool": "get_order",
                "arguments": {"order_id": "ORD-9"},
                "result": {"status": "not_found", "missing": ["ORD-9"]},
            }
        ],
    }
    names = {name: ok for name, ok, _ in outcome_checks(row)}
    assert names == {"missing_reported": True}
    out = next(grade_rows([row], parse_judge(None)))
    assert out["reward"] == 1.0 and out["markers"]["check:missing_reported"] == 1.0


def test_checklist_target_tool_must_succeed() -> None:
    row = {
        "prompt": "Where is ORD-5?",
        "ask_family": "tool",
        "scenario_dimensions": {"tool": "get_order", "world_state": "entity exists"},
        "final_text": "Let me know if there's anything else.",
    }
    out = next(grade_rows([row], parse_judge("checklist")))
    assert out["reward"] == 0.0 and out["markers"]["check:target_succeeded"] == 0.0


def test_sdk_rows_grade_with_the_default_judge_without_losing_a_key(
    sdk_rows: list[dict[str, Any]],
) -> None:
    out = list(grade_rows(sdk_rows, parse_judge(None)))
    assert len(out) == len(sdk_rows)
    for before, after in zip(sdk_rows, out, strict=True):
        assert set(before) <= set(after)
        assert after["judge_status"] == "ok" and after["reward"] in (0.0, 1.0)
        assert any(k.startswith("conduct:") for k in after["markers"])


def test_callable_by_path(tmp_path: Path) -> None:
    plugin = tmp_path / "myjudge.py"
    plugin.write_text(
        "def judge(row):\n    return {'reward': int('sorry' not in row['final_text'])}\n"
    )
    judge = parse_judge(f"{plugin}:judge")
    out = list(grade_rows([_row(final_text="sorry"), _row(final_text="ok")], judge))
    assert [r["reward"] for r in out] == [0, 1]


def test_unknown_judge_names_the_built_ins() -> None:
    with pytest.raises(ConfigError, match="exact-match"):
        parse_judge("exact-mtach")


_CMD_JUDGE = textwrap.dedent("""
    import json, sys, time
    for line in sys.stdin:
        row = json.loads(line)
        mode = row.get("mode")
        if mode == "crash":
            sys.exit(3)
        if mode == "garbage":
            print("not json", flush=True)
            continue
        if mode == "hang":
            time.sleep(30)
        print(json.dumps({"reward": 1 if row["final_text"] == "Paris" else 0,
                          "reason": "pid %d" % __import__("os").getpid()}), flush=True)
""")


def _cmd(tmp_path: Path) -> str:
    script = tmp_path / "judge.py"
    script.write_text(_CMD_JUDGE)
    return f"cmd:{sys.executable} {script}"


def test_command_judge_is_one_process_for_many_rows(tmp_path: Path) -> None:
    judge = parse_judge(_cmd(tmp_path), JudgeOptions(timeout=10))
    out = list(grade_rows([_row(i) for i in range(20)], judge, concurrency=4))
    assert all(r["reward"] == 1 and r["judge_status"] == "ok" for r in out)
    assert len({r["reason"] for r in out}) == 1  # the same pid answered every row


def test_command_judge_crash_garbage_and_hang_are_marked_and_it_recovers(tmp_path: Path) -> None:
    judge = parse_judge(_cmd(tmp_path), JudgeOptions(timeout=1))
    rows = [
        _row(0),
        _row(1, mode="crash"),
        _row(2),
        _row(3, mode="garbage"),
        _row(4, mode="hang"),
        _row(5, final_text="Rome"),
    ]
    out = list(grade_rows(rows, judge, concurrency=2, timeout=1))
    assert [r["judge_status"] for r in out] == [
        "ok",
        "error",
        "ok",
        "invalid_result",
        "timeout",
        "ok",
    ]
    assert out[5]["reward"] == 0
    assert "restarted" in out[1]["reason"]
    assert judge.notes is not None and judge.notes() == ["cmd judge restarted 2 times"]


def test_command_judge_that_never_reads_times_out_on_a_big_row(tmp_path: Path) -> None:
    script = tmp_path / "deaf.py"
    script.write_text("import time\ntime.sleep(30)\n")
    judge = parse_judge(f"cmd:{sys.executable} {script}", JudgeOptions(timeout=0.5))
    big = _row(0, blob="x" * 1_000_000)
    start = time.monotonic()
    (out,) = list(grade_rows([big], judge, timeout=0.5))
    assert out["judge_status"] == "timeout" and time.monotonic() - start < 5
