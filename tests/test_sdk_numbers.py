"""Issue 23's "numbers that disagree with the reference", one by one, against what the
original SDK (whileai 0.131) computed on the same input (`data/sdk/sdk_numbers.json`,
written by `data/sdk/make_sdk_numbers.py` in the SDK's venv; no SDK needed here).

Fixed to agree: a multiple-choice reply "I pick (B).", a \\boxed{\\frac{1}{2}} numeric
answer, a judge's {"score": 1}. Different on purpose, with the reason asserted (and
written in docs/grade.md, docs/logprobs.md, docs/before-after.md): pass@1 over partial
rewards, mean_kl on rows whose turns and totals disagree, groups_down on five-task slices.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from whileai_core.compare.delta import DeltaOptions, delta_report
from whileai_core.compare.logprobs import mean_kl
from whileai_core.judges.contract import verdict_fields
from whileai_core.judges.llm import parse_verdict
from whileai_core.judges.verifiers import multiple_choice, numeric
from whileai_core.metrics.paired import sign_flip_p
from whileai_core.metrics.passat import pass_report, summary_line

SDK = json.loads((Path(__file__).parent / "data" / "sdk" / "sdk_numbers.json").read_text())


def _reward(judge: Any, reply: str, gold: str) -> float:
    return float(judge({"final_text": reply, "answer": gold})["reward"])


@pytest.mark.parametrize("reply", sorted(SDK["multiple_choice"]))
def test_multiple_choice_reads_the_option_not_the_pronoun(reply: str) -> None:
    sdk_reward, _ = SDK["multiple_choice"][reply]
    assert _reward(multiple_choice(), reply, "B") == sdk_reward


def test_multiple_choice_edge_cases() -> None:
    judge = multiple_choice()
    assert _reward(judge, "I pick (B).", "B") == 1.0
    assert _reward(judge, "I'd say it's I.", "I") == 1.0  # option I, after the pronoun
    assert _reward(judge, "(I)", "I") == 1.0
    assert _reward(judge, "B) because (A) is wrong", "B") == 1.0
    assert _reward(judge, "I pick (B).", "I") == 0.0


@pytest.mark.parametrize("reply", sorted(SDK["numeric"]))
def test_numeric_reads_boxed_and_latex_fractions(reply: str) -> None:
    sdk_reward, _ = SDK["numeric"][reply]
    ours = _reward(numeric(), reply, "0.5")
    if "dfrac" in reply:
        # The SDK reads \\dfrac{1}{2} as 2.0 (its LaTeX pattern knows \\frac only); ours 0.5.
        assert sdk_reward == 0 and ours == 1.0
    else:
        assert ours == sdk_reward == 1


def test_numeric_still_reads_plain_numbers_and_dates_are_not_fractions() -> None:
    judge = numeric()
    assert _reward(judge, "It was 7 on 3/4/2024, so 7", "7") == 1.0
    assert _reward(judge, "\\boxed{12}, not 7", "12") == 1.0
    assert _reward(judge, "60%", "60") == 1.0
    assert _reward(judge, "1/3", "0.3333") == 0.0  # tolerance 1e-6, as before
    assert _reward(numeric(tolerance=1e-3), "1/3", "0.3333") == 1.0


def test_a_judge_answering_score_is_read_as_its_reward() -> None:
    assert SDK["judge_score"]["reward"] == 1 and SDK["judge_score"]["judge_status"] == "ok"
    fields = verdict_fields({"score": 1, "reason": "fine"})
    assert fields["reward"] == 1 and fields["judge_status"] == "ok"
    assert "score" not in fields.get("extra", {})
    assert verdict_fields({"reward": 0, "score": 1})["reward"] == 0  # reward wins
    assert verdict_fields({"reason": "forgot"})["judge_status"] == "missing_reward"
    assert parse_verdict('{"score": 1, "reason": "ok"}') == {"reward": 1, "reason": "ok"}


def test_partial_rewards_pass_at_the_split_and_the_report_says_so() -> None:
    """Ours: 0.7 is a pass (the row contract's 0.5 split), and the report says every reward
    was partial and the mean was 0.70. The SDK drops partial rewards from pass@1 and
    prints n/a: a rubric judge's careful 0.7 would be no evidence at all."""
    assert SDK["pass_at_partial"]["pass_at_1"] is None
    assert "every row scored 0.70" in SDK["pass_at_partial"]["text"]
    rows = [{"scenario_id": t, "reward": 0.7} for t in "abcdefgh" for _ in range(4)]
    report = pass_report(rows)
    assert report["pass_at_1"] == 1.0
    assert report["partial_rewards"] == 32 and report["mean_reward"] == pytest.approx(0.7)
    line = summary_line(report)
    assert "32 of 32 rewards partial: pass@1 counts >= 0.5 as a pass, mean reward 0.70" in line
    binary = pass_report([{"scenario_id": t, "reward": 1.0} for t in "abc"])
    assert binary["partial_rewards"] == 0 and "partial" not in summary_line(binary)


def test_mean_kl_reports_the_sdks_row_total_figure_beside_the_turn_paired_one() -> None:
    """The row's totals say 8.1 nats over 8 tokens (the SDK: 1.0125); its steps carry the
    same difference over 27. Both are reported, and the warning says why they part."""
    sdk = SDK["mean_kl"]["sdk"]["mean_kl"]
    report = mean_kl([SDK["mean_kl"]["row"]]).as_dict()
    assert report["mean_kl_row_totals"] == pytest.approx(sdk, abs=1e-9) == 1.0125
    assert report["mean_kl"] == pytest.approx(8.1 / 27, abs=1e-9)
    assert any("the rows' totals are not the sums of their steps" in w for w in report["warnings"])


def test_delta_groups_of_five_tasks_cannot_show_a_drop_at_005() -> None:
    """The SDK flags both five-task stance slices (four of five tasks fell) from a plain
    percentile interval. The exact sign-flip p of four same-sign moves is 2/16 = 0.125:
    ours says no difference detected, however the bootstrap's seed falls."""
    from tests.data.sdk.make_sdk_numbers import delta_rows

    assert SDK["delta_by_stance"]["groups_down"] == ["hurried", "mistaken"]
    before, after = delta_rows()
    for seed in range(5):
        report = delta_report(before, after, DeltaOptions(by="stance", seed=seed)).as_dict()
        assert report["groups_down"] == []
        for group in report["groups"].values():
            assert group["delta"] == pytest.approx(-0.8)
            assert group["p_value"] == pytest.approx(0.125)
            assert group["verdict"] == "no_difference_detected"
        # the headline, ten tasks of which eight fell, is a regression (p 2/256)
        assert report["target_verdict"] == "regressed"
    assert sign_flip_p([-1.0] * 5)[0] == pytest.approx(0.0625)
    assert sign_flip_p([-1.0] * 6)[0] == pytest.approx(2 / 64)
    assert math.isclose(sign_flip_p([-1.0] * 4 + [0.0])[0], 0.125)
