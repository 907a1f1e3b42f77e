"""One rule for empty input (issue 23): every row-reading command given rows that hold
none exits 3, "no rows", whatever it would have made of them, so a cron chain stops
before the next stage and can tell an empty day (3) from a failure (1). docs/exit-codes.md
states the rule; these tests hold every command to it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from ..helpers import ORDERS_SPEC, REPO, SDK_ROWS, run_cli

NO_ROWS = 3
DEAD = "vllm:m@http://127.0.0.1:9/v1"  # never called: there are no rows to send


def _commands(empty: str, full: str, labels: str, out: str) -> dict[str, list[str]]:
    """Every command that reads rows, as a cron job would run it on an empty day."""
    return {
        "grade": ["grade", empty, "-o", out],
        "evaluate": ["evaluate", empty],
        "report": ["report", empty],
        "optimize": ["optimize", empty, "-o", out],
        "optimize-sft": ["optimize", empty, "--mode", "sft"],
        "export": ["export", empty, "-o", out],
        "mark": ["mark", empty],
        "scan": ["scan", empty],
        "audit": ["audit", "style", empty],
        "curriculum": ["curriculum", empty],
        "decontaminate": ["decontaminate", empty, "--against", full],
        "compare": ["compare", empty, empty],
        "delta": ["delta", "--before", empty, "--after", empty],
        "variance": ["variance", empty, empty, empty],
        "logprobs-report": ["logprobs", "report", empty],
        "logprobs-ref": ["logprobs", "ref", empty, "--model", DEAD],
        "logprobs-kl": ["logprobs", "kl", empty],
        "logprobs-staleness": ["logprobs", "staleness", empty],
        "label": ["label", empty, "--labels", labels, "--annotator", "ana"],
        "trust": ["trust", empty],
        "probes": ["probes", empty],
        "agreement": ["agreement", empty],
        "pairs": ["pairs", empty, "--judge", DEAD],
        "rubrics": ["rubrics", empty],
        "validate": ["validate", empty],
        "split": ["split", empty, "--production", out],
        "leakage": ["leakage", empty, "--sources", full],
        "push": ["push", empty, "--name", "daily"],
        "merge": ["merge", empty, empty],
        "simulate-traces": ["simulate", str(ORDERS_SPEC), "--traces", empty, "--budget", "2"],
        "simulate-tasks": ["simulate", str(ORDERS_SPEC), "--tasks", empty],
        "traces-report": ["traces", "report", empty],
    }


COMMANDS = sorted(_commands("", "", "", ""))


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    empty, blank = tmp_path / "empty.jsonl", tmp_path / "blank.jsonl"
    empty.write_bytes(b"")
    blank.write_bytes(b"\n  \n\t\n")  # blank lines are no rows
    full = tmp_path / "full.jsonl"
    full.write_bytes(b"".join(SDK_ROWS.read_bytes().splitlines(keepends=True)[:3]))
    labels = tmp_path / "labels.jsonl"
    labels.write_bytes(orjson.dumps({"scenario_id": "x", "rollout_index": 0, "gold_reward": 1}))
    return {
        "empty": str(empty), "blank": str(blank), "full": str(full), "labels": str(labels),
        "out": str(tmp_path / "out.jsonl"),
    }  # fmt: skip


@pytest.mark.parametrize("command", COMMANDS)
def test_every_row_reading_command_exits_3_on_an_empty_file(
    command: str, files: dict[str, str]
) -> None:
    args = _commands(files["empty"], files["full"], files["labels"], files["out"])[command]
    result = run_cli(*args)
    assert result.returncode == NO_ROWS, result.stderr
    last = result.stderr.decode().strip().splitlines()[-1]
    assert last.startswith("whileai: ") and last.endswith("(exit 3)"), last
    assert "no rows" in last or "no traces" in last, last
    if "-o" in args:  # the empty output is written, so no stale file survives
        assert Path(files["out"]).read_bytes() == b""


@pytest.mark.parametrize("command", ["grade", "optimize", "export", "validate", "push"])
def test_only_blank_lines_and_an_empty_pipe_are_no_rows_too(
    command: str, files: dict[str, str]
) -> None:
    args = _commands(files["blank"], files["full"], files["labels"], files["out"])[command]
    assert run_cli(*args).returncode == NO_ROWS
    piped = ["-" if a == files["blank"] else a for a in args]
    result = run_cli(*piped, input=b"")
    assert result.returncode == NO_ROWS, result.stderr
    assert b"<stdin>" in result.stderr or b"no rows" in result.stderr


def test_one_empty_file_among_full_ones_is_not_no_rows(files: dict[str, str]) -> None:
    result = run_cli("grade", files["full"], files["empty"])
    assert result.returncode == 0, result.stderr
    assert len(result.stdout.splitlines()) == 3


def test_either_side_empty_is_no_rows_where_two_sets_are_weighed(files: dict[str, str]) -> None:
    assert run_cli("agreement", files["full"], files["empty"]).returncode == NO_ROWS
    assert run_cli("compare", files["full"], files["empty"]).returncode == NO_ROWS


def test_bad_lines_are_not_no_rows(files: dict[str, str], tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"not json\n")
    result = run_cli("grade", str(bad))
    assert result.returncode == 1 and b"bad.jsonl:1: not valid JSON" in result.stderr
    result = run_cli("push", str(bad), "--name", "daily", "--on-error", "skip")
    assert result.returncode == 1 and b"1 bad lines skipped" in result.stderr
    result = run_cli("compare", str(bad), files["full"], "--on-error", "skip")
    assert result.returncode == 1 and b"no usable rows" in result.stderr


def test_an_empty_shard_beside_full_ones_is_a_failed_shard(files: dict[str, str]) -> None:
    result = run_cli("merge", files["full"], files["empty"])
    assert result.returncode == 1  # the full file is refused first, or the empty one named


def test_a_cron_chain_stops_at_the_first_empty_stage_and_can_tell_why(tmp_path: Path) -> None:
    python = f"{sys.executable} -m whileai_cli"
    script = (
        f"set -o pipefail; : | {python} grade | {python} optimize -o {tmp_path}/train.jsonl"
        f" && {python} push {tmp_path}/train.jsonl --name daily; echo code=$?"
    )
    result = subprocess.run(
        ["bash", "-c", script], capture_output=True, cwd=REPO, timeout=120,
        env={**os.environ, "NO_COLOR": "1"},
    )  # fmt: skip
    assert result.stdout.strip() == b"code=3"
    assert b"push" not in result.stderr and b"stored" not in result.stderr
