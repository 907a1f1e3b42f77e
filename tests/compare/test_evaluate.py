"""evaluate: grade's contract with an eval stamp, failures as traces, and the selectors and
the pairs export counting what an eval scored."""

from __future__ import annotations

from pathlib import Path

import orjson

from whileai_core.compare.evaluate import TRACE_KEYS, evaluate_files
from whileai_core.judges.contract import as_judge

from ..helpers import SDK_ROWS, run_cli
from .rows import write

# The reference's five-line loop judge: pass unless the reply apologises.
JUDGE = """
def no_sorry(row):
    return {"reward": int("sorry" not in row["final_text"].lower()), "reason": "apology check"}
"""


def _rows(path: Path) -> list[dict]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def _judge_file(tmp_path: Path) -> str:
    path = tmp_path / "judge.py"
    path.write_text(JUDGE)
    return f"{path}:no_sorry"


def test_evaluate_grades_like_grade_and_stamps_the_eval(tmp_path: Path) -> None:
    judge = _judge_file(tmp_path)
    graded, evald, traces = tmp_path / "g.jsonl", tmp_path / "e.jsonl", tmp_path / "t.jsonl"
    assert run_cli("grade", str(SDK_ROWS), "--judge", judge, "-o", str(graded)).returncode == 0
    proc = run_cli(
        "evaluate", str(SDK_ROWS), "--judge", judge, "-o", str(evald),
        "--failed-traces", str(traces), "--run-id", "eval-test-1",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr.decode()
    assert b"scoring_run_id eval-test-1" in proc.stderr
    before, by_grade, by_eval = _rows(SDK_ROWS), _rows(graded), _rows(evald)
    assert len(by_eval) == len(by_grade) == len(before)
    for original, g, e in zip(before, by_grade, by_eval, strict=True):
        lineage = e.pop("lineage")
        g.pop("lineage", None)
        assert e == g  # the same judge contract: every other key identical
        assert lineage["source"] == "eval" and lineage["scoring_run_id"] == "eval-test-1"
        assert lineage["model"] == original["model_version"]
        assert lineage["judge"] == by_grade[0]["judge_name"]
        for key, value in (original.get("lineage") or {}).items():
            assert lineage[key] == value  # the run's own lineage is kept
    failed = [e for e in by_eval if e["reward"] == 0]
    written = _rows(traces)
    assert 0 < len(written) == len(failed)
    for trace, row in zip(written, failed, strict=True):
        assert set(trace) <= set(TRACE_KEYS)
        assert trace["prompt"] == row["prompt"] and trace["steps"] == row["steps"]
        assert trace["final_text"] == row["final_text"] and trace["reward"] == 0
        assert "privileged" not in orjson.dumps(trace).decode()


def test_selectors_and_the_pairs_export_count_eval_rows(tmp_path: Path) -> None:
    judge = _judge_file(tmp_path)
    evald = tmp_path / "e.jsonl"
    run_cli("evaluate", str(SDK_ROWS), "--judge", judge, "-o", str(evald))
    proc = run_cli("optimize", str(evald), "--mode", "sft", "-o", str(tmp_path / "o.jsonl"),
                   "--report", str(tmp_path / "opt.json"))  # fmt: skip
    report = orjson.loads((tmp_path / "opt.json").read_bytes())
    assert b"kept rows were scored by an eval" in proc.stderr
    assert report["eval_sourced"] == report["rows_out"] > 0
    assert any("scored by an eval" in w for w in report["warnings"])
    # Pairs need a pass and a fail in one ask: two rollouts of each of three asks.
    rows = []
    for task in range(3):
        for i, text in enumerate(("Done, refunded.", "Sorry, I cannot.")):
            rows.append({
                "prompt": f"refund order {task}", "scenario_id": f"t{task}", "rollout_index": i,
                "steps": [{"text": text}], "final_text": text,
            })  # fmt: skip
    src = write(tmp_path / "rows.jsonl", rows)
    run_cli("evaluate", src, "--judge", judge, "-o", str(tmp_path / "pe.jsonl"))
    proc = run_cli("export", str(tmp_path / "pe.jsonl"), "--pairs", "-o",
                   str(tmp_path / "pairs.jsonl"), "--report", str(tmp_path / "r.json"))  # fmt: skip
    assert proc.returncode == 0, proc.stderr.decode()
    data = orjson.loads((tmp_path / "r.json").read_bytes())
    assert data["pairs"] == 3 and data["eval_sourced"] == 6
    assert b"6 rollouts in the pairs were scored by an eval" in proc.stderr
    plain = tmp_path / "pg.jsonl"
    run_cli("grade", src, "--judge", judge, "-o", str(plain))
    run_cli("export", str(plain), "--pairs", "-o", str(tmp_path / "p2.jsonl"), "--report",
            str(tmp_path / "r2.json"))  # fmt: skip
    assert orjson.loads((tmp_path / "r2.json").read_bytes())["eval_sourced"] == 0


def test_evaluate_files_from_python_and_the_stdout_clash(tmp_path: Path) -> None:
    judge = as_judge(lambda row: {"reward": int("sorry" not in row["final_text"].lower())})
    out, traces = tmp_path / "o.jsonl", tmp_path / "t.jsonl"
    result = evaluate_files([str(SDK_ROWS)], judge, output=str(out), failed_traces=str(traces))
    assert result.run_id.startswith("eval-") and result.failed == len(_rows(traces))
    assert result.grade.report["judged"] == len(_rows(SDK_ROWS))
    proc = run_cli("evaluate", str(SDK_ROWS), "--judge", _judge_file(tmp_path),
                   "--failed-traces", "-")  # fmt: skip
    assert proc.returncode == 1 and b"give -o" in proc.stderr
