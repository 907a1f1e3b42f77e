"""`whileai grade` and `whileai report` as a user runs them: real subprocesses, pipes."""

from __future__ import annotations

import json
from pathlib import Path

import orjson

from .helpers import SDK_ROWS, run_cli


def _lines(data: bytes) -> list[dict]:
    return [orjson.loads(line) for line in data.splitlines() if line.strip()]


def test_default_grade_says_only_conduct_and_checklist_were_graded() -> None:
    result = run_cli("grade", str(SDK_ROWS))
    assert result.returncode == 0, result.stderr
    rows = _lines(result.stdout)
    assert len(rows) == 40 and all(r["judge_name"] == "checklist" for r in rows)
    stderr = result.stderr.decode()
    assert "only the conduct floor and the task checklist" in stderr
    assert "pass@1" in stderr and "40/40 rows judged" in stderr


def test_grade_through_a_pipe_then_report_json() -> None:
    graded = run_cli("grade", "-", "--judge", "conduct", input=SDK_ROWS.read_bytes())
    assert graded.returncode == 0, graded.stderr
    report = run_cli("report", "--json", "--seed", "3", input=graded.stdout)
    assert report.returncode == 0, report.stderr
    data = json.loads(report.stdout)
    assert data["rows"] == 40 and data["judge_status"]["ok"] == 40
    assert data["pass_at_k"] is None and "below k = 4" in data["k_note"]
    assert "conduct:grounded" in data["markers"]
    again = run_cli("report", "--json", "--seed", "3", input=graded.stdout)
    assert json.loads(again.stdout)["pass_at_1_ci95"] == data["pass_at_1_ci95"]


def test_report_prints_tables_without_json() -> None:
    graded = run_cli("grade", str(SDK_ROWS))
    report = run_cli("report", input=graded.stdout)
    assert report.returncode == 0
    text = report.stdout.decode()
    assert "pass@1" in text and "per-task pass rate" in text and "judge status" in text


def test_verifier_with_field_and_output_file(tmp_path: Path) -> None:
    src = tmp_path / "rows.jsonl"
    src.write_bytes(
        b"".join(
            orjson.dumps(r) + b"\n"
            for r in [
                {"scenario_id": "a", "final_text": "42", "meta": {"want": "42"}},
                {"scenario_id": "b", "final_text": "41", "meta": {"want": "42"}},
            ]
        )
    )
    out = tmp_path / "graded.jsonl"
    result = run_cli("grade", str(src), "-j", "exact-match", "--field", "meta.want", "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert [r["reward"] for r in _lines(out.read_bytes())] == [1.0, 0.0]
    assert result.stdout == b""


def test_rows_without_gold_are_reported_as_errors_not_zeros() -> None:
    result = run_cli("grade", str(SDK_ROWS), "-j", "exact-match")
    assert result.returncode == 0
    assert all(r["reward"] is None and r["judge_status"] == "error" for r in _lines(result.stdout))
    assert "40 row(s) not judged (error); first:" in result.stderr.decode()


def test_unknown_judge_is_one_clean_error_line() -> None:
    result = run_cli("grade", str(SDK_ROWS), "-j", "nope")
    assert result.returncode == 1
    assert result.stderr.decode().startswith("whileai: error: unknown judge 'nope'")
    assert result.stdout == b""


def test_bad_line_names_file_and_line(tmp_path: Path) -> None:
    src = tmp_path / "bad.jsonl"
    src.write_bytes(SDK_ROWS.read_bytes().splitlines()[0] + b"\n{oops\n")
    result = run_cli("grade", str(src))
    assert result.returncode == 1 and f"{src}:2" in result.stderr.decode()
    skipped = run_cli("grade", str(src), "--on-error", "skip")
    assert skipped.returncode == 0 and len(_lines(skipped.stdout)) == 1
    assert "skipped 1 bad line" in skipped.stderr.decode()


def test_cmd_judge_from_the_command_line(tmp_path: Path) -> None:
    script = tmp_path / "judge.sh"
    script.write_text('while read -r line; do echo \'{"reward": 1, "reason": "sh"}\'; done\n')
    result = run_cli("grade", str(SDK_ROWS), "-j", f"cmd:sh {script}")
    assert result.returncode == 0, result.stderr
    assert {r["reason"] for r in _lines(result.stdout)} == {"sh"}


def test_judge_from_the_environment() -> None:
    result = run_cli("grade", str(SDK_ROWS), env={"WHILEAI_JUDGE": "conduct"})
    assert {r["judge_name"] for r in _lines(result.stdout)} == {"conduct"}
    assert "only the conduct floor" not in result.stderr.decode()
