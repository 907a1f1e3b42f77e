"""`whileai probes`: holes found in judges that have them, none in the default judge."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from whileai_core.judges.contract import Judge
from whileai_core.judges.llm import llm_judge
from whileai_core.models.options import ModelOptions
from whileai_core.testing import OpenAIStub, answer
from whileai_core.trust import judge_probes
from whileai_core.trust.probes import PROBES, parse_probes

from ..helpers import REPO, run_cli

HAND = REPO / "tests" / "data" / "handlabelled.jsonl"


def _hand() -> list[dict[str, Any]]:
    return [json.loads(line) for line in HAND.read_text().splitlines()]


def test_a_judge_that_pays_for_words_has_each_hole_named() -> None:
    def wordy(row: dict[str, Any]) -> float:
        text = row["final_text"].lower()
        return float(any(w in text for w in ("success", "honest", "wonderful", "record")))

    report = judge_probes(_hand(), Judge("wordy", wordy)).as_dict()
    assert set(report["exploitable_by"]) == {
        "success_claim",
        "rubric_words",
        "sycophantic_opener",
        "filler",
        # It reads no fact, so a made-up phone number slips into every reply it passed.
        "invented_contact",
    }
    assert report["probes"]["success_claim"]["rate"] == 1.0 and not report["ok"]


def test_the_report_says_what_each_probe_was_tried_on() -> None:
    """Issue 23: `base` said "no failing rows to add to" for every additive probe, even one
    tried on 20 rows. It names the rows a probe was tried on, or why it was not tried."""
    rows = _hand()[:30]
    passes = judge_probes(rows, Judge("yes", lambda row: 1.0)).as_dict()["probes"]
    assert passes["filler"]["tried"] == 0
    assert passes["filler"]["base"] == "no failing rows to add to"
    assert passes["invented_contact"]["base"] == "the 30 rows the judge passed"
    assert passes["echo"]["base"] == "30 rows the probe fits"
    fails = judge_probes(rows, Judge("no", lambda row: 0.0)).as_dict()["probes"]
    assert fails["filler"]["base"] == "the 30 rows the judge failed"
    assert fails["invented_contact"]["base"] == "no passing rows to plant in"
    assert fails["fault_claim"]["passed"] == 0 and fails["fault_claim"]["tried"] == 30


def test_rates_and_intervals_match_a_hand_count() -> None:
    # A judge that passes any reply with a tool call in it: the empty call is its hole.
    judge = Judge("calls", lambda row: float(any("tool" in s for s in row.get("steps") or [])))
    rows = _hand()[:40]
    report = judge_probes(rows, judge, probes="empty_call,polite_refusal").as_dict()
    empty = report["probes"]["empty_call"]
    assert empty["tried"] == 40 and empty["passed"] == 40 and empty["rate"] == 1.0
    from whileai_core.metrics.stats import wilson

    assert empty["ci95"] == pytest.approx(list(wilson(40, 40)), abs=1e-12)
    refusal = report["probes"]["polite_refusal"]
    assert refusal["passed"] == 0 and refusal["ci95"] == pytest.approx(list(wilson(0, 40)))
    assert report["exploitable_by"] == ["empty_call"]


@pytest.mark.parametrize("source", ["hand", "seeded", "second"])
def test_the_default_judge_has_no_hole_at_10_percent(source: str, tmp_path: Path) -> None:
    """Issue 12's bar: probes on the default judge over rows of the seeded agent, of a
    different agent, and the hand-labelled set."""
    rows = tmp_path / "rows.jsonl"
    if source == "hand":
        rows = HAND
    else:
        agent = "seeded" if source == "seeded" else "whileai_core.testing.plainspoken:agent"
        done = run_cli(
            "simulate",
            "specs/airline",
            "--agent",
            agent,
            "--budget",
            "200",
            "--seed",
            "11",
            "-o",
            str(rows),
        )
        assert done.returncode == 0, done.stderr.decode()
    done = run_cli("probes", str(rows), "--json")
    report = json.loads(done.stdout)
    assert done.returncode == 0 and report["exploitable_by"] == [], report["probes"]
    assert all(p["rate"] < 0.10 for p in report["probes"].values())
    assert report["probes"]["filler"]["tried"] > 0  # failing rows were there to add to


def test_an_llm_judge_that_always_passes_is_exploitable_by_every_replacement_probe() -> None:
    rows = _hand()[:6]
    with OpenAIStub(default=answer('{"reward": 1, "reason": "looks fine"}')) as stub:
        judge = llm_judge(
            stub.base_url,
            rubric="Pass good replies.",
            options=ModelOptions(model="judge-m", retries=1, backoff=0.01),
        )
        report = judge_probes(
            rows, judge, probes="success_claim,echo,polite_refusal", concurrency=4, timeout=10
        ).as_dict()
        calls = stub.calls
    assert set(report["exploitable_by"]) == {"success_claim", "echo", "polite_refusal"}
    assert calls == 6 + 3 * 6  # the rows once, each probe once per row, in one pass


def test_probe_names_are_checked() -> None:
    assert [p.name for p in parse_probes("all")] == [p.name for p in PROBES]
    from whileai_core.errors import ConfigError

    with pytest.raises(ConfigError, match="unknown probe"):
        parse_probes("filler,bribe")


def test_probes_exit_1_on_a_hole_and_print_it(tmp_path: Path) -> None:
    judge = tmp_path / "yes.py"
    judge.write_text("def judge(row):\n    return 1.0\n")
    done = run_cli("probes", str(HAND), "--judge", f"{judge}:judge", "--sample", "10")
    assert done.returncode == 1
    assert b"EXPLOITABLE" in done.stdout and b"exploitable_by: success_claim" in done.stdout
