"""`grade --scale` for rating judges, and the self-judging warning in the grade report."""

from __future__ import annotations

import json
from pathlib import Path

from whileai_core.testing import OpenAIStub, Request, answer

from ..helpers import run_cli

ROW = {"scenario_id": "s1", "prompt": "Hi", "final_text": "Hello!", "model_version": "judge-m"}


def _rows(tmp_path: Path, **extra: object) -> Path:
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps({**ROW, **extra}) + "\n")
    return path


def test_a_rating_is_kept_and_mapped_onto_0_1_with_a_declared_scale(tmp_path: Path) -> None:
    judge = tmp_path / "likert.py"
    judge.write_text("def judge(row):\n    return {'reward': 4, 'reason': 'good'}\n")
    rows = _rows(tmp_path)
    done = run_cli("grade", str(rows), "--judge", f"{judge}:judge", "--scale", "1,5")
    assert done.returncode == 0, done.stderr.decode()
    out = json.loads(done.stdout)
    assert out["reward"] == 0.75 and out["judge_meta"]["rating"] == 4
    assert out["judge_meta"]["scale"] == [1.0, 5.0]
    unscaled = run_cli("grade", str(rows), "--judge", f"{judge}:judge")
    assert unscaled.returncode == 1  # judged none: every verdict was invalid
    row = json.loads(unscaled.stdout)
    assert row["reward"] is None and row["judge_status"] == "invalid_result"
    assert "declared no scale" in row["reason"]
    bad = run_cli("grade", str(rows), "--judge", f"{judge}:judge", "--scale", "5,1")
    assert bad.returncode == 2 and b"--scale" in bad.stderr


def test_an_llm_judge_on_a_scale_is_asked_for_a_rating(tmp_path: Path) -> None:
    def rater(request: Request) -> object:
        assert (
            "a rating from 1 (does not meet the rubric) to 5"
            in (request.body["messages"][0]["content"])
        )
        return answer('{"reward": 3, "reason": "middling"}')

    rubric = tmp_path / "rubric.md"
    rubric.write_text("Be helpful.")
    with OpenAIStub(default=rater) as stub:
        done = run_cli(
            "grade",
            str(_rows(tmp_path)),
            "--judge",
            stub.base_url,
            "--model",
            "judge-x",
            "--rubric",
            str(rubric),
            "--scale",
            "1,5",
        )
    assert done.returncode == 0, done.stderr.decode()
    out = json.loads(done.stdout)
    assert out["reward"] == 0.5 and out["judge_meta"]["rating"] == 3


def test_the_grade_report_says_self_judged_when_the_judge_wrote_the_rows(tmp_path: Path) -> None:
    rubric = tmp_path / "rubric.md"
    rubric.write_text("Be helpful.")
    with OpenAIStub(default=answer('{"reward": 1, "reason": "fine"}')) as stub:
        args = [
            "--judge",
            stub.base_url,
            "--model",
            "judge-m",
            "--rubric",
            str(rubric),
            "--json",
            "-o",
            str(tmp_path / "out.jsonl"),
        ]
        same = run_cli("grade", str(_rows(tmp_path)), *args)
        other = run_cli("grade", str(_rows(tmp_path, model_version="vllm:Qwen/Qwen3-4B")), *args)
    assert json.loads(same.stdout)["self_judged"] is True
    assert b"self_judged: the judge model judge-m also wrote these rows" in same.stderr
    assert json.loads(other.stdout)["self_judged"] is False
