"""The publish gate: what it refuses, what it only warns about."""

from __future__ import annotations

from typing import Any

import pytest

from whileai_core.errors import WhileaiError
from whileai_core.select.gate import GateReport, PublishGateError, publish_gate


def _row(task: str, reward: Any = None, **extra: Any) -> dict[str, Any]:
    row: dict[str, Any] = {"prompt": f"ask {task}", "scenario_id": task}
    if reward is not None:
        row["reward"] = reward
        row["judge_status"] = "ok"
    row.update(extra)
    return row


def test_ungraded_rl_rows_are_refused_with_a_reason() -> None:
    rows = [_row("a"), _row("a"), _row("b"), _row("b")]
    with pytest.raises(PublishGateError) as info:
        publish_gate(rows)
    assert "ungraded" in str(info.value)
    assert isinstance(info.value, WhileaiError)
    assert info.value.report.rl_shaped and info.value.report.graded_rows == 0


def test_judge_errors_do_not_count_as_grades() -> None:
    rows = [_row("a", judge_status="error"), _row("a", judge_status="timeout")]
    with pytest.raises(PublishGateError, match="ungraded"):
        publish_gate(rows)


def test_rl_rows_without_a_mixed_group_are_refused() -> None:
    rows = [_row("a", 1.0), _row("a", 1.0), _row("b", 0.0), _row("b", 0.0)]
    with pytest.raises(PublishGateError, match="no mixed group"):
        publish_gate(rows)


def test_one_rollout_per_ask_is_never_refused() -> None:
    report = publish_gate([_row("a"), _row("b", 1.0)])
    assert not report.rl_shaped and report.ok
    assert any("no clean reward" in w for w in report.warnings)


def test_unanimous_and_out_of_band_asks_are_warned_about_not_refused() -> None:
    mixed = [_row("m", 1.0), _row("m", 0.0)]
    unanimous = [_row("u", 1.0), _row("u", 1.0)]
    easy = [_row("e", 1.0)] * 9 + [_row("e", 0.0)]
    report = publish_gate([*mixed, *unanimous, *easy])
    assert report.ok
    assert report.graded_mixed == 2
    assert report.unanimous_pass == 1 and report.too_easy == 1
    text = " ".join(report.warnings)
    assert "unanimous" in text and "outside the 0.2-0.8" in text


def test_strict_false_records_the_refusal_instead_of_raising() -> None:
    report = publish_gate((_row("a", 0.0) for _ in range(3)), strict=False)
    assert isinstance(report, GateReport)
    assert report.refused is not None and not report.ok
    assert report.as_dict()["ok"] is False
