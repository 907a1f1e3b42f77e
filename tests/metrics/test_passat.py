"""pass@1, pass^k, pass@k: estimators against hand-computed values, seeded intervals, and
the n/a rules."""

from __future__ import annotations

from typing import Any

import pytest

from whileai_core.judges import grade_rows, parse_judge
from whileai_core.metrics.passat import bootstrap_mean_ci, pass_report, summary_line
from whileai_core.metrics.stats import pass_at_k, pass_pow_k


def _rows(groups: list[list[int]]) -> list[dict[str, Any]]:
    return [
        {"scenario_id": f"t{g}", "reward": r, "judge_status": "ok"}
        for g, rewards in enumerate(groups)
        for r in rewards
    ]


def test_estimators_match_hand_computed_values() -> None:
    # n=5, c=2, k=2: pass^2 = C(2,2)/C(5,2) = 1/10; pass@2 = 1 - C(3,2)/C(5,2) = 1 - 3/10.
    assert pass_pow_k(5, 2, 2) == pytest.approx(0.1)
    assert pass_at_k(5, 2, 2) == pytest.approx(0.7)
    # n=4, c=4, k=4 -> 1 and 1; n=4, c=0 -> 0 and 0; n=8, c=3, k=4: pass@4 = 1 - 5/70.
    assert pass_pow_k(4, 4, 4) == 1.0 and pass_at_k(4, 0, 4) == 0.0
    assert pass_at_k(8, 3, 4) == pytest.approx(1 - 5 / 70)


def test_report_averages_per_group_estimates() -> None:
    groups = [[1, 1, 1, 1], [1, 0, 0, 0], [0, 0, 0, 0], [1, 1, 0, 0]]
    report = pass_report(_rows(groups))
    assert report["k"] == 4
    assert report["pass_at_1"] == pytest.approx((1 + 0.25 + 0 + 0.5) / 4)
    assert report["pass_pow_k"] == pytest.approx(0.25)  # only the all-pass group
    assert report["pass_at_k"] == pytest.approx(0.75)  # every group but the dead one
    assert report["headroom"] == pytest.approx(0.75 - 0.4375)
    assert report["histogram"] == {
        "0": 1,
        "(0, .25]": 1,
        "(.25, .5]": 1,
        "(.5, .75]": 0,
        "(.75, 1)": 0,
        "1": 1,
    }


def test_k_way_is_na_below_four_with_the_reason() -> None:
    report = pass_report(_rows([[1, 0, 1]] * 5))
    assert report["pass_pow_k"] is None and report["pass_at_k"] is None
    assert "below k = 4" in report["k_note"]
    assert "pass^k n/a" in summary_line(report)


def test_uneven_groups_use_the_smallest_and_say_so() -> None:
    report = pass_report(_rows([[1, 0, 1, 1], [1, 1, 1, 1, 0, 0], [0, 0, 0, 0, 0]]))
    assert report["k"] == 4 and "uneven" in report["k_note"]
    expected = (pass_at_k(4, 3, 4) + pass_at_k(6, 4, 4) + pass_at_k(5, 0, 4)) / 3
    assert report["pass_at_k"] == pytest.approx(expected)


def test_explicit_k_leaves_out_smaller_groups() -> None:
    report = pass_report(_rows([[1, 0, 1, 1], [1] * 8, [0] * 8, [1, 0] * 4]), k=8)
    assert report["k"] == 8 and report["k_groups"] == 3 and "left out" in report["k_note"]


def test_bootstrap_is_reproducible_with_a_seed_and_holds_the_point() -> None:
    values = [0.0, 0.25, 0.5, 1.0, 1.0, 0.75, 0.0, 1.0] * 5
    first = bootstrap_mean_ci(values, seed=7)
    assert first == bootstrap_mean_ci(values, seed=7)
    assert first is not None
    point = sum(values) / len(values)
    assert first[0] <= point <= first[1]
    assert first[1] - first[0] > 0.05
    assert bootstrap_mean_ci(values, seed=8) != first


def test_bootstrap_width_shrinks_with_more_tasks() -> None:
    small = bootstrap_mean_ci([0.0, 1.0] * 10)
    large = bootstrap_mean_ci([0.0, 1.0] * 5000)
    assert small is not None and large is not None
    assert (large[1] - large[0]) < (small[1] - small[0]) / 5
    assert large[0] < 0.5 < large[1]


def test_unjudged_rows_are_counted_not_scored() -> None:
    broken = {"scenario_id": "t0", "reward": None, "judge_status": "error", "reason": "judge broke"}
    rows = [*_rows([[1, 1]]), broken]
    report = pass_report(rows)
    assert report["pass_at_1"] == 1.0
    assert report["judge_status"]["error"] == 1 and report["judged"] == 2
    assert report["first_reasons"] == {"error": "judge broke"}


def test_markers_are_summarised_with_intervals() -> None:
    rows = [{"scenario_id": "a", "reward": 1, "markers": {"grounded": v}} for v in (1, 1, 0, 1)]
    marker = pass_report(rows)["markers"]["grounded"]
    assert marker["mean"] == 0.75 and marker["n"] == 4
    assert marker["ci95"][0] < 0.75 < marker["ci95"][1]


def test_sdk_rows_grade_then_report(sdk_rows: list[dict[str, Any]]) -> None:
    report = pass_report(grade_rows(sdk_rows, parse_judge(None)))
    assert report["rows"] == 40 and report["judged"] == 40
    assert report["tasks"] == len({r["scenario_id"] for r in sdk_rows})
    assert 0.0 < report["pass_at_1"] < 1.0
    lo, hi = report["pass_at_1_ci95"]
    assert lo <= report["pass_at_1"] <= hi
    assert report["pass_at_k"] is None and report["k_note"]


def test_rows_with_a_reward_but_no_status_count_as_judged() -> None:
    report = pass_report([{"prompt": "p", "reward": 1}, {"prompt": "p", "reward": 0}])
    assert report["judged"] == 2 and report["pass_at_1"] == 0.5
