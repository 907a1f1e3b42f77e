"""The same point estimates and verdicts as the original SDK (whileai 0.131) on the same rows.

`data/sdk_figures.json` holds what the SDK's `compare_runs`, `delta_report` and
`eval_variance` said on `data/sdk/*.jsonl`, computed once in a side venv by
`data/make_sdk_figures.py`; this test needs no SDK. Intervals are not compared digit for
digit (the SDK draws 2,000 plain percentile resamples with its own generator, we widen
the percentile for few tasks, see `metrics.paired`), but every verdict read off them
must agree, and the p-values must agree within the SDK's own Monte Carlo error.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import orjson
import pytest

from whileai_core.compare.compare import compare_files
from whileai_core.compare.delta import DeltaOptions, delta_files
from whileai_core.compare.variance import variance_files

DATA = Path(__file__).parent / "data"
FIGURES = orjson.loads((DATA / "sdk_figures.json").read_bytes())
COMPARE_WORD = {
    "b_better": "improved",
    "a_better": "regressed",
    "no_difference_detected": "no_difference_detected",
    "insufficient_data": "insufficient_data",
}
TARGET_WORD = {
    "moved": "improved",
    "moved_unreplicated": "improved",
    "moved_the_wrong_way": "regressed",
    "no_change_detected": "no_difference_detected",
    "within_eval_noise": "within_eval_noise",
}


def _file(name: str) -> list[str]:
    return [str(DATA / "sdk" / f"{name}.jsonl")]


def test_figures_come_from_the_sdk() -> None:
    assert FIGURES["version"] == "0.131"
    assert len(FIGURES["compare"]) >= 6 and len(FIGURES["delta"]) >= 8


@pytest.mark.parametrize("case", FIGURES["compare"], ids=lambda c: f"{c['b']}-{c['metric']}")
def test_compare_runs_agrees(case: dict[str, Any]) -> None:
    ours = compare_files(_file(case["a"]), _file(case["b"]), metric=case["metric"]).comparison
    assert ours.paired == case["paired"]
    for key in ("n_paired", "n_only_a", "n_only_b"):
        assert getattr(ours, key) == case[key], key
    for key in ("paired_share", "mean_a", "mean_b", "delta"):
        assert getattr(ours, key) == pytest.approx(case[key], abs=1e-12), key
    assert ours.verdict == COMPARE_WORD[case["verdict"]]
    if case["p_value"] is None:
        assert ours.p_value is None
    else:
        p, sdk = ours.p_value, case["p_value"]
        assert p is not None
        noise = 4 * math.sqrt(p * (1 - p) / 2000) + 4 * math.sqrt(p * (1 - p) / 10_000)
        assert abs(p - sdk) <= noise + 2e-3, (p, sdk)


@pytest.mark.parametrize("case", FIGURES["delta"], ids=lambda c: f"{c['before']}-{c['after']}")
def test_delta_report_agrees(case: dict[str, Any]) -> None:
    opts = DeltaOptions(
        target="pass_at_1",
        must_not_regress=case.get("must_not_regress", ()),
        by=case.get("by"),
        run_std=case.get("run_std"),
        proxy=case.get("proxy"),
    )
    ours = delta_files(_file(case["before"]), _file(case["after"]), opts).as_dict()
    assert ours["ok"] == case["ok"]
    assert ours["target_verdict"] == TARGET_WORD[case["target_verdict"]]
    assert ours["target_delta"] == pytest.approx(case["target_delta"], abs=1e-12)
    assert set(ours["metrics"]) == set(case["metrics"])
    for name, sdk in case["metrics"].items():
        mine = ours["metrics"][name]
        for key in ("mean_a", "mean_b", "delta"):
            assert mine[key] == pytest.approx(sdk[key], abs=1e-12), (name, key)
        assert mine["verdict"] == COMPARE_WORD[sdk["verdict"]], name
    for key in ("improved", "regressions", "within_noise", "groups_down"):
        assert sorted(ours[key]) == sorted(case[key]), key
    # The SDK lists a target that fell among `slipped`; here it is a failure of its own.
    assert sorted(ours["slipped"]) == sorted(m for m in case["slipped"] if m != "pass_at_1")
    assert ours["over_optimized"] == case["over_optimized"]
    for group, sdk in case["groups"].items():
        assert ours["groups"][group]["delta"] == pytest.approx(sdk["delta"], abs=1e-12)


def test_eval_variance_agrees() -> None:
    sdk = FIGURES["variance"]
    ours = variance_files([_file(n)[0] for n in sdk["runs"]]).as_dict()
    # The SDK rounds its published figures to four places.
    assert [round(m, 4) for m in ours["means"]] == list(sdk["means"].values())
    assert round(ours["mean"], 4) == sdk["mean"]
    assert round(ours["run_std"], 4) == sdk["run_std"]
    assert {k: round(v, 4) for k, v in ours["run_std_by_metric"].items()} == sdk[
        "run_std_by_metric"
    ]
    assert ours["tasks_in_every_run"] == sdk["tasks_in_every_run"]
