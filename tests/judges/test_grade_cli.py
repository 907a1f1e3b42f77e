"""`whileai grade` and `whileai report` as a user runs them: real subprocesses, pipes."""

from __future__ import annotations

import json
from pathlib import Path

import orjson

from ..helpers import SDK_ROWS, run_cli


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
                {"scenario_id": "a", "prompt": "6x7?", "final_text": "42", "meta": {"want": "42"}},
                {"scenario_id": "b", "prompt": "6x7?", "final_text": "41", "meta": {"want": "42"}},
            ]
        )
    )
    out = tmp_path / "graded.jsonl"
    result = run_cli("grade", str(src), "-j", "exact-match", "--field", "meta.want", "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert [r["reward"] for r in _lines(out.read_bytes())] == [1.0, 0.0]
    assert result.stdout == b""


def test_rows_without_gold_are_reported_as_errors_not_zeros_and_the_run_fails() -> None:
    result = run_cli("grade", str(SDK_ROWS), "-j", "exact-match")
    # Every row is still written (reward null), and a cron job sees the run failed.
    assert result.returncode == 1
    rows = _lines(result.stdout)
    assert len(rows) == 40
    assert all(r["reward"] is None and r["judge_status"] == "error" for r in rows)
    err = result.stderr.decode()
    assert "40 row(s) not judged (error); first:" in err
    assert (
        err.strip().splitlines()[-1]
        == "whileai: error: exact-match: judged none of 40 rows (see above)"
    )


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


def test_grade_json_report_goes_to_stderr_when_rows_own_stdout(tmp_path: Path) -> None:
    piped = run_cli("grade", str(SDK_ROWS), "--json")
    assert piped.returncode == 0
    assert len(_lines(piped.stdout)) == 40
    report = json.loads(piped.stderr.decode()[piped.stderr.decode().index("{") :])
    assert report["rows"] == 40 and report["judged"] == 40
    to_file = run_cli("grade", str(SDK_ROWS), "--json", "-o", str(tmp_path / "g.jsonl"))
    assert to_file.returncode == 0 and json.loads(to_file.stdout)["rows"] == 40


def test_an_unwritable_report_file_fails_before_any_row_is_graded(tmp_path: Path) -> None:
    out = tmp_path / "graded.jsonl"
    result = run_cli(
        "grade", str(SDK_ROWS), "-o", str(out), "--report", str(tmp_path / "no" / "r.json")
    )
    assert result.returncode == 1 and not out.exists()
    assert result.stderr.decode().strip().splitlines() == [
        f"whileai: error: {tmp_path / 'no' / 'r.json'}: cannot write report "
        f"(no folder {tmp_path / 'no'})"
    ]


def test_cron_options_read_their_environment_variables() -> None:
    wanted = {
        "simulate": ["WHILEAI_BUDGET", "WHILEAI_MODE", "WHILEAI_SIMULATE_SEED",
                     "WHILEAI_SIMULATE_CONCURRENCY",
                     "WHILEAI_TIME_BUDGET", "WHILEAI_REPEATS", "WHILEAI_FAULT_RATE",
                     "WHILEAI_AVG_TURNS", "WHILEAI_WRITER", "WHILEAI_GRADER", "WHILEAI_AGENT",
                     "WHILEAI_TEMPERATURE", "WHILEAI_MAX_TOKENS", "WHILEAI_TOP_P",
                     "WHILEAI_UNTIL", "WHILEAI_REPRODUCIBLE", "WHILEAI_CACHE"],
        "grade": ["WHILEAI_JUDGE", "WHILEAI_SPEC", "WHILEAI_RUBRIC", "WHILEAI_JUDGE_MODEL",
                  "WHILEAI_JUDGE_CONCURRENCY", "WHILEAI_JUDGE_TIMEOUT", "WHILEAI_ON_ERROR",
                  "WHILEAI_BOOTSTRAP_SEED", "WHILEAI_CACHE"],
        "optimize": ["WHILEAI_OPTIMIZE_MODE", "WHILEAI_BAND", "WHILEAI_TRUNCATED",
                     "WHILEAI_MAX_GROUPS", "WHILEAI_SELECT", "WHILEAI_MIN_REWARD",
                     "WHILEAI_OPTIMIZE_SEED",
                     "WHILEAI_ON_ERROR"],
        "push": ["WHILEAI_NAME", "WHILEAI_PURPOSE", "WHILEAI_MODE", "WHILEAI_AGENT_NAME",
                 "WHILEAI_PUSH_HOLDOUT"],
        "cut": ["WHILEAI_AGENT_NAME", "WHILEAI_KIND", "WHILEAI_BAND", "WHILEAI_SINCE",
                "WHILEAI_CUT_HOLDOUT"],
        "export": ["WHILEAI_EXPORT_FORMAT", "WHILEAI_SPEC", "WHILEAI_BAND",
                   "WHILEAI_EXPORT_HOLDOUT", "WHILEAI_MASK", "WHILEAI_MAX_TOOL_OUTPUT_CHARS",
                   "WHILEAI_ON_ERROR"],
    }  # fmt: skip
    for command, names in wanted.items():
        # `export` is a group now: its variables are on its kinds' options.
        kinds = ["sft", "pairs", "hub", "env"] if command == "export" else [""]
        shown = "".join(
            run_cli(*f"{command} {kind}".split(), "--help", env={"COLUMNS": "400"}).stdout.decode()
            for kind in kinds
        )
        missing = [name for name in names if name not in shown]
        assert not missing, (command, missing)
    env = {"WHILEAI_TRUNCATED": "bogus"}
    bad = run_cli("optimize", str(SDK_ROWS), env=env)
    assert bad.returncode == 2 and b"WHILEAI_TRUNCATED" in bad.stderr


def test_no_environment_variable_means_two_things() -> None:
    """Every option that reads a variable, across every command: a name read by two
    commands must mean one thing (the same help), except the old shared names, which are
    read second, after each command's own name, with a deprecation warning."""
    import click

    from whileai_cli.app import COMMANDS, load_command
    from whileai_cli.options import RENAMED_ENV

    meanings: dict[str, set[str]] = {}

    def walk(command: click.Command, path: str) -> None:
        if isinstance(command, click.Group):
            for name, sub in command.commands.items():
                walk(sub, f"{path} {name}")
            return
        for param in command.params:
            names = param.envvar if isinstance(param.envvar, list) else [param.envvar]
            for env in filter(None, names):
                if env in RENAMED_ENV:
                    assert names[0] == RENAMED_ENV[env][path.split()[0]], (path, env)
                    continue
                meanings.setdefault(env, set()).add(str(param.name))

    for name in COMMANDS:
        walk(load_command(name), name)
    assert {env: opts for env, opts in meanings.items() if len(opts) > 1} == {}


def test_an_old_shared_variable_still_works_with_one_warning(tmp_path: Path) -> None:
    done = run_cli("simulate", "specs/orders", "--budget", "2", env={"WHILEAI_CONCURRENCY": "3"})
    assert done.returncode == 0
    warned = [ln for ln in done.stderr.decode().splitlines() if "deprecated" in ln]
    assert warned == [
        "warning: WHILEAI_CONCURRENCY is deprecated for `whileai simulate`: set "
        "WHILEAI_SIMULATE_CONCURRENCY (read WHILEAI_CONCURRENCY for now)"
    ]
    scoped = run_cli(
        "simulate", "specs/orders", "--budget", "2",
        env={"WHILEAI_CONCURRENCY": "3", "WHILEAI_SIMULATE_CONCURRENCY": "2"},
    )  # fmt: skip
    assert b"deprecated" not in scoped.stderr


def test_report_into_a_reader_that_went_away_exits_zero(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    graded = tmp_path / "graded.jsonl"
    assert run_cli("grade", str(SDK_ROWS), "-o", str(graded)).returncode == 0
    read_end, write_end = os.pipe()
    os.close(read_end)  # like `| head` that has already exited
    proc = subprocess.run(
        [sys.executable, "-m", "whileai_cli", "report", str(graded)],
        stdout=write_end,
        stderr=subprocess.PIPE,
        env={**os.environ, "NO_COLOR": "1"},
        timeout=60,
    )
    os.close(write_end)
    assert proc.returncode == 0 and proc.stderr == b""


def test_report_on_rows_nobody_judged_says_so_and_fails() -> None:
    result = run_cli("report", str(SDK_ROWS), "--json")
    assert result.returncode == 1
    assert json.loads(result.stdout)["judged"] == 0
    assert result.stderr.decode().strip().splitlines() == [
        "whileai: error: none of 40 rows is judged: grade them first"
    ]
