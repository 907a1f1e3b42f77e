"""Pairwise judging and per-prompt rubrics against the loopback OpenAI stub, and offline."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from whileai_core.judges import grade_rows, parse_judge
from whileai_core.judges.registry import JudgeOptions
from whileai_core.models.options import ModelOptions
from whileai_core.testing import OpenAIStub, Request, answer
from whileai_core.trust import judge_pairs, write_rubrics
from whileai_core.trust.rubrics import cell_items

from ..helpers import REPO, run_cli

HAND = REPO / "tests" / "data" / "handlabelled.jsonl"
PAIRS = [
    {"prompt": "Refund ORD-1", "a": "ORD-1 is refunded: $20 back.", "b": "Sorry, cannot help."},
    {
        "prompt": "Refund ORD-2",
        "chosen": [{"role": "assistant", "content": "Refunded ORD-2."}],
        "rejected": [{"role": "assistant", "content": "No."}],
    },
]


def _opts() -> ModelOptions:
    return ModelOptions(model="judge-m", retries=1, backoff=0.01)


def _by_content(request: Request) -> Any:
    """A fair judge: picks the slot holding the reply that says 'efunded'."""
    text = request.body["messages"][1]["content"]
    first = text.split("REPLY 1:")[1].split("REPLY 2:")[0]
    return answer(json.dumps({"winner": "1" if "efunded" in first else "2", "reason": "r"}))


def test_a_fair_judge_picks_the_same_side_both_ways_round() -> None:
    with OpenAIStub(default=_by_content) as stub:
        judged, report = judge_pairs(PAIRS, stub.base_url, options=_opts())
        assert stub.calls == 4
    assert [p["pair_verdict"]["winner"] for p in judged] == ["a", "a"]
    d = report.as_dict()
    assert d["position_flip_rate"] == 0.0 and d["a_wins"] == 2
    assert d["agreement_with_label"] == 1.0 and d["first_slot_rate"] == 0.5


def test_a_judge_that_reads_the_slot_flips_every_pair() -> None:
    with OpenAIStub(default=answer('{"winner": "1", "reason": "first is better"}')) as stub:
        judged, report = judge_pairs(PAIRS, stub.base_url, options=_opts())
    assert all(p["pair_verdict"]["flipped"] for p in judged)
    assert [p["pair_verdict"]["winner"] for p in judged] == ["tie", "tie"]
    d = report.as_dict()
    assert d["position_flip_rate"] == 1.0 and d["first_slot_rate"] == 1.0
    assert d["agreement_with_label"] == 0.0


def test_a_reply_that_names_no_winner_marks_the_pair_not_a_side() -> None:
    with OpenAIStub(default=answer("I like both.")) as stub:
        judged, report = judge_pairs(PAIRS[:1], stub.base_url, options=_opts())
    assert judged[0]["pair_verdict"]["status"] == "error" and report.errors == 1


def test_pairs_cli_writes_verdicts_and_reports(tmp_path: Path) -> None:
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text("".join(json.dumps(p) + "\n" for p in PAIRS))
    with OpenAIStub(default=_by_content) as stub:
        done = run_cli(
            "pairs", str(pairs), "--judge", stub.base_url, "--model", "judge-m", "--json"
        )
    assert done.returncode == 0, done.stderr.decode()
    assert len(done.stdout.splitlines()) == 2
    assert json.loads(done.stderr)["position_flip_rate"] == 0.0
    refused = run_cli("pairs", str(pairs), "--judge", "checklist")
    assert refused.returncode == 1 and b"need an LLM judge" in refused.stderr


@pytest.mark.parametrize("fmt", ["trl", "openai"])
def test_pairs_reads_both_files_export_pairs_writes(fmt: str, tmp_path: Path) -> None:
    """`export --pairs` in either shape (TRL's message-list prompt with chosen/rejected,
    OpenAI's input.messages with preferred/non_preferred_output) is what `pairs` judges."""
    written = tmp_path / f"pairs.{fmt}.jsonl"
    graded = REPO / "tests" / "golden" / "grade" / "orders-rl.jsonl"
    made = run_cli("export", str(graded), "--pairs", "--format", fmt, "--spec", "specs/orders",
                   "-o", str(written))  # fmt: skip
    assert made.returncode == 0, made.stderr.decode()
    count = len(written.read_text().splitlines())
    assert count > 0
    with OpenAIStub(default=answer('{"winner": "1", "reason": "r"}')) as stub:
        done = run_cli("pairs", str(written), "--judge", stub.base_url, "--model", "judge-m",
                       "--json")  # fmt: skip
        assert stub.calls == 2 * count
    assert done.returncode == 0, done.stderr.decode()
    report = json.loads(done.stderr)
    assert report["judged"] == report["labelled"] == count and report["errors"] == 0
    asked = stub.bodies[0]["messages"][1]["content"]
    assert "CONVERSATION:\nSYSTEM:" in asked and "REPLY 1:\nASSISTANT" in asked


def test_a_line_that_is_no_pair_is_counted_and_the_rest_judged(tmp_path: Path) -> None:
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(json.dumps({"prompt": "p", "only": "one side"}) + "\n"
                     + json.dumps(PAIRS[0]) + "\n")  # fmt: skip
    with OpenAIStub(default=_by_content) as stub:
        done = run_cli("pairs", str(pairs), "--judge", stub.base_url, "--model", "m", "--json")
    assert done.returncode == 0, done.stderr.decode()
    report = json.loads(done.stderr)
    assert report["judged"] == 1 and report["errors"] == 1
    assert "needs 'a' and 'b'" in report["first_error"]


# -- rubrics --------------------------------------------------------------------------------


def _hand() -> list[dict[str, Any]]:
    return [json.loads(line) for line in HAND.read_text().splitlines()]


def test_offline_rubric_items_come_from_the_grid_coordinates() -> None:
    rows = _hand()
    missing = next(r for r in rows if r["world_state"] == "entity missing")
    ids = [i["id"] for i in cell_items(missing)]
    assert "reports_missing" in ids and "acts" in ids and "truthful" in ids
    written, report = write_rubrics(rows)
    assert report.tasks == len(rows) and report.source == "grid"
    assert all(isinstance(r["privileged"]["rubric"], list) for r in written)
    assert written[0]["privileged"]["reference"] == rows[0]["privileged"]["reference"]


def test_the_rubric_judge_scores_item_by_item_with_markers() -> None:
    rows, _ = write_rubrics(_hand())
    graded = list(grade_rows(rows, parse_judge("rubric")))
    for row in graded:
        assert row["judge_status"] == "ok"
        assert row["markers"] and all(k.startswith("rubric:") for k in row["markers"])
        met = sum(row["markers"].values()) / len(row["markers"])
        assert row["reward"] == pytest.approx(met)
    clean = [r for r in graded if r["gold_reward"] == 1]
    mistakes = [r for r in graded if r["gold_reward"] == 0]
    assert sum(r["reward"] == 1.0 for r in clean) / len(clean) >= 0.95
    assert sum(r["reward"] < 1.0 for r in mistakes) / len(mistakes) >= 0.95


def _writer(request: Request) -> Any:
    ask = request.body["messages"][1]["content"]
    key = "refund" if "efund" in ask else "other"
    items = [
        {"id": f"Says {key}!", "criterion": f"The reply handles the {key}."},
        {"id": "grounded", "criterion": "Uses only given ids."},
    ]
    return answer(json.dumps({"items": items}))


def test_a_model_writes_rubrics_and_an_llm_judge_scores_them(tmp_path: Path) -> None:
    rows = _hand()[:4]
    with OpenAIStub(default=_writer) as stub:
        written, report = write_rubrics(rows, stub.base_url, options=_opts())
        assert stub.calls == 4  # one per task
    assert report.written == 4 and report.items == 8
    items = written[0]["privileged"]["rubric"]
    assert [i["id"] for i in items] == ["says_refund", "grounded"] or items[0]["id"] == (
        "says_other"
    )
    offline = next(iter(grade_rows(written[:1], parse_judge("rubric"))))
    assert offline["judge_status"] == "invalid_result" and offline["reward"] is None

    def grader(request: Request) -> Any:
        listed = re.findall(r"^- (\w+):", request.body["messages"][1]["content"], re.M)
        return answer(
            json.dumps({"items": {k: int(k == "grounded") for k in listed}, "reason": "ok"})
        )

    with OpenAIStub(default=grader) as stub:
        opts = JudgeOptions(models=_opts())
        judge = parse_judge(f"rubric({stub.base_url})", opts)
        graded = list(grade_rows(written, judge, concurrency=2, timeout=10))
    for row in graded:
        assert row["judge_status"] == "ok" and row["reward"] == 0.5
        assert row["markers"]["rubric:grounded"] == 1.0


def test_rubrics_cli_offline_then_grade(tmp_path: Path) -> None:
    out = tmp_path / "rubrics.jsonl"
    done = run_cli("rubrics", str(HAND), "-o", str(out), "--json")
    assert done.returncode == 0, done.stderr.decode()
    assert json.loads(done.stdout)["rubrics_written"] == 147
    graded = run_cli("grade", str(out), "--judge", "rubric", "--json")
    assert graded.returncode == 0, graded.stderr.decode()
    first = json.loads(graded.stdout.splitlines()[0])
    assert first["judge_name"] == "rubric" and "rubric:truthful" in first["markers"]
