"""The trust verdict: never TRUSTED below the bar, the bar printed beside it, and the same
call as the original SDK (whileai 0.131) on the same labelled rows.

`data/sdk_trust.json` holds three confusion tables and what the SDK's `judge_trust` said
on rows laid out from them (`data/make_sdk_trust.py`, run by hand in the SDK's venv).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from whileai_core.judges.contract import Judge
from whileai_core.trust import judge_trust
from whileai_core.trust.bar import TrustBar

from ..helpers import run_cli

FIGURES = json.loads((Path(__file__).parent / "data" / "sdk_trust.json").read_text())
SDK = {name: f for name, f in FIGURES.items() if name != "provenance"}


def rows_of(name: str, tp: int, fp: int, fn: int, tn: int, **extra: Any) -> list[dict[str, Any]]:
    """The same layout as `data/make_sdk_trust.py`: one row per cell of the table."""
    cells = [(1, 1)] * tp + [(1, 0)] * fp + [(0, 1)] * fn + [(0, 0)] * tn
    return [
        {
            "scenario_id": f"{name}-{i:03d}",
            "rollout_index": 0,
            "prompt": f"ask {i}",
            "final_text": "The order was looked up and the result reported as it came back.",
            "reward": judge,
            "judge_name": "judge-under-test",
            "gold_reward": gold,
            "gold_kind": "human",
            **extra,
        }
        for i, (judge, gold) in enumerate(cells)
    ]


def _failed_checks(report: dict[str, Any]) -> set[str]:
    return {c["name"] for c in report["checks"] if not c["ok"]}


@pytest.mark.parametrize("name", sorted(SDK))
def test_the_verdict_agrees_with_the_sdk_on_the_same_labelled_rows(name: str) -> None:
    sdk = SDK[name]
    report = judge_trust(rows_of(name, **sdk["cells"])).as_dict()
    assert report["agreement"] == pytest.approx(sdk["agreement"], abs=1e-4)
    assert report["kappa"] == pytest.approx(sdk["kappa"], abs=1e-4)
    assert report["pass_when_gold_fail"] == pytest.approx(sdk["pass_when_gold_fail"], abs=1e-4)
    assert report["ok"] is sdk["ok"]
    assert (report["verdict"] == "TRUSTED") is sdk["ok"]


def test_a_judge_that_passes_half_the_gold_failures_is_not_trusted_and_says_why() -> None:
    """Issue 23: SDK 0.131 says ok False and 'judge passed 81 of 153 gold failures (53%)'."""
    report = judge_trust(rows_of("leaky", **SDK["leaky"]["cells"]))
    data = report.as_dict()
    assert data["verdict"] == "NOT TRUSTED" and not data["ok"]
    assert _failed_checks(data) == {"kappa", "pass_when_gold_fail"}
    assert any("passed 81 of 153 gold failures (53%)" in f for f in data["failed"])
    assert any("judge passed 81 of 153 gold failures (53%)" in w for w in SDK["leaky"]["warnings"])
    head, bar = report.lines()[:2]
    assert head.startswith("judge trust: NOT TRUSTED on kappa, pass_when_gold_fail")
    # every threshold beside the value it was held to
    assert "kappa 0.375 >= 0.6 FAILED" in bar and "pass_when_gold_fail 0.529 <= 0.1 FAILED" in bar
    assert "labels_per_class 153 >= 10 ok" in bar and "agreement_over_baseline" in bar


def test_agreement_under_the_majority_baseline_is_not_trusted() -> None:
    """0.85 agreement where a judge that says pass to every row agrees 0.93."""
    data = judge_trust(rows_of("majority", **SDK["majority"]["cells"])).as_dict()
    assert data["verdict"] == "NOT TRUSTED"
    failed = _failed_checks(data)
    assert {"agreement_over_baseline", "kappa", "labels_per_class"} <= failed
    assert any("not above the majority-class baseline 0.930" in f for f in data["failed"])


def test_the_baseline_check_fails_alone_when_everything_else_clears() -> None:
    """kappa 0.62 and pass_when_gold_fail 0.10 both clear, yet agreement 0.95 only equals
    what saying pass to every row gets: not trusted, and only that check is named."""
    data = judge_trust(rows_of("edge", tp=905, fp=5, fn=45, tn=45)).as_dict()
    assert data["kappa"] >= 0.6 and data["pass_when_gold_fail"] <= 0.1
    assert data["verdict"] == "NOT TRUSTED"
    assert _failed_checks(data) == {"agreement_over_baseline"}


def test_too_few_labels_of_one_class_is_not_trusted_even_when_perfect() -> None:
    data = judge_trust(rows_of("few", tp=40, fp=0, fn=0, tn=6)).as_dict()
    assert data["kappa"] == 1.0 and data["agreement"] == 1.0
    assert data["verdict"] == "NOT TRUSTED"
    assert _failed_checks(data) == {"labels_per_class"}
    assert "40 gold pass and 6 gold fail" in data["failed"][0]
    relaxed = judge_trust(rows_of("few", tp=40, fp=0, fn=0, tn=6), bar=TrustBar(min_per_class=5))
    assert relaxed.as_dict()["failed"] == []


def test_one_gold_class_is_never_trusted() -> None:
    data = judge_trust(rows_of("one", tp=60, fp=0, fn=0, tn=0)).as_dict()
    assert data["verdict"] == "NOT TRUSTED"
    assert {"labels_per_class", "kappa", "pass_when_gold_fail"} <= _failed_checks(data)


def test_a_good_judge_is_trusted_and_the_line_shows_the_bar_it_cleared() -> None:
    report = judge_trust(rows_of("good", **SDK["good"]["cells"]))
    assert report.verdict == "TRUSTED" and report.ok
    head, bar = report.lines()[:2]
    assert head.startswith("judge trust: TRUSTED (")
    assert bar.count(" ok") == 4 and "FAILED" not in bar


def test_the_cli_exits_1_on_not_trusted_and_the_flags_move_the_bar(tmp_path: Path) -> None:
    rows = tmp_path / "rows.jsonl"
    rows.write_text("".join(json.dumps(r) + "\n" for r in rows_of("few", 40, 0, 0, 6)))
    done = run_cli("trust", str(rows))
    assert done.returncode == 1
    assert done.stdout.decode().startswith("judge trust: NOT TRUSTED on labels_per_class")
    done = run_cli("trust", str(rows), "--min-per-class", "5", "--json")
    report = json.loads(done.stdout)
    assert report["bar"]["min_per_class"] == 5 and not report["failed"]
    # 46 labels is under the floor of 50: measured, with that warning, exit 0
    assert done.returncode == 0 and report["verdict"] == "MEASURED, WITH WARNINGS"
    done = run_cli("trust", str(rows), "--min-per-class", "5", "--min-agreement", "1.01")
    assert done.returncode == 2  # out of range: typer's own usage error


def test_trust_warns_self_judged_when_the_judge_model_wrote_the_rows() -> None:
    rows = rows_of("good", **SDK["good"]["cells"], model_version="openai:gpt-4.1-mini")
    judged_by_self = [{**r, "judge_meta": {"model": "openai:gpt-4.1-mini"}} for r in rows]
    report = judge_trust(judged_by_self).as_dict()
    assert report["self_judged"] is True and report["verdict"] == "MEASURED, WITH WARNINGS"
    assert any(
        w.startswith("self_judged: the judge model openai:gpt-4.1-mini") for w in report["warnings"]
    )
    other = [{**r, "judge_meta": {"model": "vllm:Qwen/Qwen3-4B"}} for r in rows]
    assert judge_trust(other).as_dict()["self_judged"] is False
    # a judge given: its own model against the rows' model_version
    judge = Judge("llm:gpt", lambda row: float(row["gold_reward"]), meta={"model": "GPT-4.1-mini"})
    again = judge_trust(rows, judge, sample=0).as_dict()
    assert again["self_judged"] is True and again["kappa"] == 1.0


def test_report_warns_self_judged_as_grade_does(tmp_path: Path) -> None:
    rows = rows_of("good", **SDK["good"]["cells"], model_version="vllm:Qwen/Qwen3-4B@http://h/v1")
    path = tmp_path / "rows.jsonl"
    path.write_text(
        "".join(
            json.dumps({**r, "judge_meta": {"model": "vllm:qwen/qwen3-4b"}}) + "\n" for r in rows
        )
    )
    done = run_cli("report", str(path), "--json")
    assert done.returncode == 0, done.stderr.decode()
    assert json.loads(done.stdout)["self_judged"] is True
    assert b"self_judged: the judge model vllm:qwen/qwen3-4b also wrote these rows" in done.stderr
