"""`whileai trust`: the built-in judges measured on rows no judge was tuned on, and every
figure of the report checked against a hand computation."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from whileai_core.judges.contract import Judge
from whileai_core.trust import judge_trust

from ..helpers import REPO, run_cli

HAND = REPO / "tests" / "data" / "handlabelled.jsonl"


def _report(*args: str) -> tuple[int, dict[str, Any]]:
    done = run_cli("trust", *args, "--json")
    assert done.returncode in (0, 1), done.stderr.decode()
    return done.returncode, json.loads(done.stdout)


@pytest.mark.parametrize("judge", ["conduct", "checklist"])
def test_the_built_in_judges_on_the_hand_labelled_set(judge: str) -> None:
    """Issue 12's bar, measured by `whileai trust` itself: >= 95% of the mistakes caught,
    <= 5% of the clean rows failed, on 147 rows written and labelled by hand."""
    code, report = _report(str(HAND), "--judge", judge, "--min-agreement", "0.95")
    c = report["confusion"]
    mistakes, clean = c["fp"] + c["tn"], c["tp"] + c["fn"]
    assert (mistakes, clean) == (89, 58)
    recall = c["tn"] / mistakes
    false_alarms = c["fn"] / clean
    assert recall >= 0.95 and false_alarms <= 0.05, (recall, false_alarms, report["review_queue"])
    assert report["pass_when_gold_fail"] == pytest.approx(1 - recall)
    assert code == 0 and report["measured"] and not report["failed"]


def test_every_kind_of_mistake_is_caught_by_the_default_judge() -> None:
    from whileai_core.judges import grade_rows, parse_judge

    rows = [json.loads(line) for line in HAND.read_text().splitlines()]
    graded = list(grade_rows(rows, parse_judge(None)))
    kinds: dict[str, list[float]] = {}
    for row in graded:
        if row["gold_reward"] == 0:
            kinds.setdefault(row["label_kind"].split("/")[0], []).append(row["reward"])
    assert len(kinds) == 9 and all(len(v) >= 8 for v in kinds.values())
    for kind, rewards in kinds.items():
        assert sum(r == 0.0 for r in rewards) / len(rewards) >= 0.95, kind


# -- a small fixed set, computed by hand ----------------------------------------------------

# (gold, judge reward, reply) for 12 rows on 12 tasks: tp 5, fp 2, fn 1, tn 4.
FIXED = [(1, 1.0, "a")] * 5 + [(0, 1.0, "b")] * 2 + [(1, 0.0, "c")] + [(0, 0.0, "d")] * 4


def _fixed_rows() -> list[dict[str, Any]]:
    return [
        {
            "scenario_id": f"t{i}",
            "rollout_index": 0,
            "prompt": f"ask {i}",
            "final_text": text,
            "gold_reward": gold,
            "judged": reward,
        }
        for i, (gold, reward, text) in enumerate(FIXED)
    ]


def _hand() -> dict[str, float]:
    n, tp, fp, fn, tn = 12, 5, 2, 1, 4
    po = (tp + tn) / n
    pe = ((tp + fp) / n) * ((tp + fn) / n) + ((fn + tn) / n) * ((fp + tn) / n)
    z = 1.96
    centre = (po + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(po * (1 - po) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return {
        "agreement": po,
        "kappa": (po - pe) / (1 - pe),
        "lo": centre - half,
        "hi": centre + half,
    }


def test_trust_matches_a_hand_computation_to_1e_9(tmp_path: Path) -> None:
    rows = tmp_path / "rows.jsonl"
    rows.write_text("\n".join(json.dumps(r) for r in _fixed_rows()) + "\n")
    judge = tmp_path / "fixed_judge.py"
    judge.write_text("def judge(row):\n    return row['judged']\n")
    _, report = _report(str(rows), "--judge", f"{judge}:judge", "--sample", "0")
    hand = _hand()
    assert abs(report["agreement"] - hand["agreement"]) < 1e-9
    assert abs(report["kappa"] - hand["kappa"]) < 1e-9
    assert abs(report["ci95"][0] - hand["lo"]) < 1e-9
    assert abs(report["ci95"][1] - hand["hi"]) < 1e-9
    assert report["confusion"] == {"tp": 5, "fp": 2, "fn": 1, "tn": 4}
    assert report["pass_when_gold_fail"] == pytest.approx(2 / 6, abs=1e-12)
    assert any("below the floor of 50" in n for n in report["notes"])
    assert [q["why"] for q in report["review_queue"]] == ["judge passed a gold failure"] * 2 + [
        "judge failed a gold pass"
    ]
    # The same figures from rows already graded by that judge, read without --judge.
    graded = [{**r, "reward": r["judged"], "judge_name": "fixed"} for r in _fixed_rows()]
    rows.write_text("\n".join(json.dumps(r) for r in graded) + "\n")
    _, again = _report(str(rows))
    assert abs(again["kappa"] - hand["kappa"]) < 1e-9 and again["judge"].endswith("(fixed)")


def test_no_labels_is_not_measured_not_untrustworthy(tmp_path: Path) -> None:
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps({"scenario_id": "a", "final_text": "x", "reward": 1.0}) + "\n")
    code, report = _report(str(rows), "--min-agreement", "0.9")
    assert code == 0 and report["verdict"] == "NOT MEASURED" and not report["ok"]
    text = run_cli("trust", str(rows)).stdout.decode()
    assert "NOT MEASURED" in text and "whileai label" in text


def test_one_gold_class_says_so_and_skips_kappa() -> None:
    rows = [
        {"scenario_id": f"s{i}", "final_text": "x" * i, "gold_reward": 1, "reward": 1.0}
        for i in range(12)
    ]
    report = judge_trust(rows).as_dict()
    assert report["kappa"] is None and report["length_bias"] is None
    assert any("all passes" in n for n in report["notes"])


def test_gates_exit_1_only_when_measured_and_below(tmp_path: Path) -> None:
    rows = tmp_path / "rows.jsonl"
    graded = [{**r, "reward": r["judged"]} for r in _fixed_rows()]
    rows.write_text("\n".join(json.dumps(r) for r in graded) + "\n")
    # 6 of each class, kappa 0.5, 2 of 6 gold failures passed: relax all three, then ask
    # for more agreement than 9 of 12
    relaxed = ("--min-kappa", "0.2", "--min-per-class", "6", "--max-pass-when-gold-fail", "0.4")
    code, report = _report(str(rows), *relaxed, "--min-agreement", "0.9")
    assert code == 1 and report["verdict"] == "NOT TRUSTED"
    assert report["failed"] == [f"agreement {9 / 12:.3f} is below 0.9"]
    assert _report(str(rows), *relaxed, "--min-agreement", "0.7")[0] == 0
    code, report = _report(str(rows))
    assert code == 1 and len(report["failed"]) == 3  # per class, kappa, pass_when_gold_fail


def _labelled(n: int, long_pass: bool = True) -> list[dict[str, Any]]:
    """Rows whose gold alternates; half the replies short, half long."""
    out = []
    for i in range(n):
        words = 40 if i % 4 >= 2 else 4
        out.append(
            {
                "scenario_id": f"s{i}",
                "rollout_index": 0,
                "prompt": f"ask {i}",
                "final_text": " ".join(["word"] * words),
                "gold_reward": i % 2,
            }
        )
    return out


def test_a_judge_that_reads_length_is_caught_by_the_bias_and_filler_checks() -> None:
    judge = Judge("long-is-good", lambda row: float(len(row["final_text"].split()) > 20))
    report = judge_trust(_labelled(40), judge, sample=20, seed=1).as_dict()
    bias = report["length_bias"]
    assert bias["gold_pass"]["flagged"] and bias["gold_fail"]["flagged"]
    assert report["rejudge"]["filler"]["flagged"]  # filler pushes short replies over 20 words
    assert report["rejudge"]["consistency"]["flips"] == 0
    assert any("reads length" in w for w in report["warnings"]) and not report["ok"]


def test_a_noisy_judge_is_caught_by_the_consistency_re_judge() -> None:
    import itertools

    coin = itertools.cycle([1.0, 0.0, 0.0])
    judge = Judge("coin", lambda row: next(coin))
    report = judge_trust(_labelled(30), judge, sample=30).as_dict()
    assert report["rejudge"]["consistency"]["rate"] > 0.3
    assert any("noisy" in w for w in report["warnings"])


def test_trust_with_probes_runs_them_inside_the_report(tmp_path: Path) -> None:
    gullible = tmp_path / "gullible.py"
    gullible.write_text(
        "def judge(row):\n    return 1.0 if 'success' in row['final_text'] "
        "else float(row['gold_reward'])\n"
    )
    _, report = _report(
        str(HAND), "--judge", f"{gullible}:judge", "--probes", "all", "--sample", "5"
    )
    assert "success_claim" in report["exploitable_by"]
    assert any("probes found holes" in w for w in report["warnings"])
    assert report["agreement"] > 0.99  # it agrees with gold, and is still exploitable


def test_seeded_and_second_agent_rows_labelled_from_their_plants(tmp_path: Path) -> None:
    """simulate -> labels from the planted mistakes -> label -> trust, for both agents."""
    for agent in ("seeded", "whileai_core.testing.plainspoken:agent"):
        rows = tmp_path / "rows.jsonl"
        rows.unlink(missing_ok=True)
        done = run_cli(
            "simulate",
            "specs/orders",
            "--agent",
            agent,
            "--budget",
            "160",
            "--seed",
            "5",
            "-o",
            str(rows),
        )
        assert done.returncode == 0, done.stderr.decode()
        planted = {
            "false_success",
            "leak",
            "invented_argument",
            "echo",
            "placeholder",
            "tells_to_call",
            "impossible_promise",
            "contradiction",
            "duplicate_ignored",
        }
        labels = tmp_path / "labels.jsonl"
        with labels.open("w") as fh:
            for line in rows.read_text().splitlines():
                row = json.loads(line)
                gold = 0 if set(row.get("seeded") or []) & planted else 1
                fh.write(
                    json.dumps(
                        {
                            "scenario_id": row["scenario_id"],
                            "rollout_index": row["rollout_index"],
                            "gold_reward": gold,
                        }
                    )
                    + "\n"
                )
        labelled = tmp_path / "labelled.jsonl"
        done = run_cli(
            "label",
            str(rows),
            "--labels",
            str(labels),
            "--annotator",
            "plants",
            "-o",
            str(labelled),
        )
        assert done.returncode == 0, done.stderr.decode()
        code, report = _report(str(labelled), "--judge", "checklist", "--min-kappa", "0.8")
        c = report["confusion"]
        assert c["fp"] + c["tn"] > 10, agent
        assert c["tn"] / (c["fp"] + c["tn"]) >= 0.95, (agent, report["review_queue"][:3])
        assert c["fn"] / (c["tp"] + c["fn"]) <= 0.05, (agent, report["review_queue"][:3])
        assert code == 0


def test_trust_on_an_llm_judge_goes_through_the_stub_in_one_pass() -> None:
    from whileai_core.judges.llm import llm_judge
    from whileai_core.models.options import ModelOptions
    from whileai_core.testing import OpenAIStub, Request, answer

    def strict(request: Request) -> Any:
        # Fails any reply that claims success: a fair rule on these rows, and one that
        # filler cannot move.
        text = request.body["messages"][1]["content"].split("FINAL REPLY:")[-1].lower()
        return answer(
            json.dumps(
                {"reward": int("success" not in text and "done" not in text), "reason": "checked"}
            )
        )

    rows = [json.loads(line) for line in HAND.read_text().splitlines()][:30]
    with OpenAIStub(default=strict) as stub:
        judge = llm_judge(
            stub.base_url,
            rubric="Fail false claims.",
            options=ModelOptions(model="judge-m", retries=1, backoff=0.01),
        )
        report = judge_trust(rows, judge, sample=10, concurrency=4, timeout=10).as_dict()
        calls = stub.calls
    assert calls == 30 + 2 * 10  # the labelled rows, then the sample as-is and padded
    assert report["measured"] and report["labelled"] == 30
    assert report["rejudge"]["consistency"]["flips"] == 0
    assert report["rejudge"]["filler"]["flips"] == 0
