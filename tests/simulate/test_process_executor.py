"""`--executor processes`: a run's shards in real local processes (spawned), passed to
simulate, grade and evaluate as their executor, and through the CLI: rows equal the
one-process run's, come in shard order, survive a killed worker and an interrupted run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from whileai_core.scale.executor import make_executor
from whileai_core.scale.process_executor import ProcessExecutor
from whileai_core.scale.shards import Shard
from whileai_core.simulate.run import run_simulation
from whileai_core.simulate.scheduler import SimulateConfig
from whileai_core.spec import load_spec
from whileai_core.testing import OpenAIStub

from ..helpers import ORDERS_SPEC, REPO, hears_sigint, run_cli
from .test_model_simulate import _chooser
from .test_shards import (
    check_resume_finishes_a_cut_run,
    check_shards_equal_the_unsharded_run,
    comparable,
)

SPEC = load_spec(REPO / "specs" / "orders")


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _unsharded(spec: Any = SPEC, **kw: Any) -> list[dict]:
    rows: list[dict] = []
    run_simulation(spec, SimulateConfig(reproducible=True, **kw), sink=rows.append)
    return rows


def _in_shard_order(rows: list[dict]) -> bool:
    order = [Shard(*map(int, row["shard"].split("/"))).index for row in rows]
    return order == sorted(order)


def test_make_executor_builds_processes_and_splits_the_concurrency() -> None:
    procs = make_executor("processes", shards=3)
    assert isinstance(procs, ProcessExecutor) and procs.remote
    assert procs.parts() == [Shard(1, 3), Shard(2, 3), Shard(3, 3)]
    assert [procs.concurrency(c) for c in (1, 3, 64, 65)] == [1, 1, 22, 22]
    assert make_executor("processes").parts() == [
        Shard(i, os.cpu_count() or 1) for i in range(1, (os.cpu_count() or 1) + 1)
    ]
    assert make_executor("local").concurrency(64) == 64


@pytest.mark.parametrize("name", ["orders", "airline"])
def test_process_shards_equal_the_one_process_run_in_shard_order(tmp_path: Path, name: str) -> None:
    rows, report, said = check_shards_equal_the_unsharded_run(
        lambda progress: ProcessExecutor(shards=3, progress=progress), name, 90, 3, tmp_path
    )
    assert _in_shard_order(rows)  # 1, 2, 3 whichever process finished first
    assert sum("done:" in line for line in said) == 3
    assert report.shards["executor"] == "processes" and report.tasks["shards"] == 3


def test_rl_process_shards_equal_the_run_with_as_many_blocks(tmp_path: Path) -> None:
    kw: dict[str, Any] = {"mode": "rl", "budget": 120}
    out = tmp_path / "rows.jsonl"
    run_simulation(
        SPEC, SimulateConfig(reproducible=True, concurrency=5, **kw),
        executor=ProcessExecutor(shards=3), output=str(out),
    )  # fmt: skip
    blocks: list[dict] = []
    run_simulation(SPEC, SimulateConfig(reproducible=True, **kw), sink=blocks.append, blocks=3)
    assert comparable(_rows(out)) == comparable(blocks)


def test_a_model_run_on_processes_equals_one_process(tmp_path: Path) -> None:
    """The model agent on the loopback stub: each worker builds its own client with its
    share of --concurrency; the rows and the summed model counts equal one process's."""
    one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    with OpenAIStub(default=_chooser) as stub:
        flags = ["simulate", str(ORDERS_SPEC), "--agent", stub.base_url, "--model", "m",
                 "--budget", "24", "--concurrency", "6", "--reproducible"]  # fmt: skip
        runs = [
            run_cli(*flags, "-o", str(out), "--report", f"{out}.report.json", *extra)
            for out, extra in ((one, ()), (two, ("--executor", "processes", "--shards", "2")))
        ]
    for done in runs:
        assert done.returncode == 0, done.stderr.decode()
    assert len(_rows(two)) == 24 and _in_shard_order(_rows(two))
    assert comparable(_rows(two)) == comparable(_rows(one))
    reports = [json.loads(Path(f"{out}.report.json").read_text()) for out in (one, two)]
    assert reports[1]["models"]["agent m"]["calls"] == reports[0]["models"]["agent m"]["calls"]
    assert reports[1]["models"]["agent m"]["failed"] == 0


def test_resume_skips_complete_shards_and_finishes_a_cut_one(tmp_path: Path) -> None:
    check_resume_finishes_a_cut_run(lambda: ProcessExecutor(shards=4), tmp_path)


def _agent(path: Path, body: str) -> str:
    path.write_text(textwrap.dedent(body))
    return f"{path}:agent"


def test_a_killed_worker_is_a_one_line_error_and_resume_finishes_the_run(tmp_path: Path) -> None:
    """The agent SIGKILLs its own worker on its 80th call in that process, once in the
    whole run (a marker file says it has), after the worker's first round of 64 rows
    (`--reproducible` runs in rounds) went out: the run exits 1 naming the shard, the rows
    already sent are in the output, and --resume finishes the run with no duplicate."""
    marker = tmp_path / "killed"
    agent = _agent(
        tmp_path / "killer_agent.py",
        f"""
        import os, signal

        CALLS = 0

        def agent(message):
            global CALLS
            CALLS += 1
            if CALLS == 80:
                try:
                    fd = os.open({str(marker)!r}, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
                except FileExistsError:
                    pass
                else:
                    os.write(fd, str(os.getpid()).encode())
                    os.close(fd)
                    os.kill(os.getpid(), signal.SIGKILL)
            return {{"steps": [], "final_text": "Checked: " + message[:40]}}
        """,
    )
    out = tmp_path / "rows.jsonl"
    flags = [
        "simulate", "specs/orders", "--agent", agent, "--mode", "explore", "--budget", "300",
        "--reproducible", "--concurrency", "3", "--executor", "processes", "--shards", "3",
        "-o", str(out),
    ]  # fmt: skip
    done = run_cli(*flags)
    assert done.returncode == 1, done.stderr.decode()
    errors = [line for line in done.stderr.decode().splitlines() if "failed" in line]
    assert len(errors) == 1 and "killed by SIGKILL" in errors[0], done.stderr.decode()
    assert "shard " in errors[0] and "Traceback" not in done.stderr.decode()
    killed = int(marker.read_text())
    assert killed != os.getpid()
    kept = _rows(out)
    assert len(kept) >= 64, "the rows sent before the kill are written"
    keys = [(r["scenario_id"], r["rollout_index"]) for r in kept]
    assert len(keys) == len(set(keys)) < 300
    resumed = run_cli(*flags, "--resume")
    assert resumed.returncode == 0, resumed.stderr.decode()
    rows = _rows(out)
    keys = [(r["scenario_id"], r["rollout_index"]) for r in rows]
    assert len(keys) == len(set(keys)) == 300
    expected = _unsharded(mode="explore", budget=300)
    assert {(r["scenario_id"], r["rollout_index"]) for r in expected} == set(keys)


def _dead(pid: int) -> bool:
    """Gone, or a zombie nobody reaps (no init in a container)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return True
    return state in ("Z", "X")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_stopped_run_stops_its_workers_and_keeps_its_rows(tmp_path: Path, sig: int) -> None:
    pids = tmp_path / "pids"
    pids.mkdir()
    agent = _agent(
        tmp_path / "slow_agent.py",
        f"""
        import os, time

        def agent(message):
            open(os.path.join({str(pids)!r}, str(os.getpid())), "w").close()
            time.sleep(0.1)
            return {{"steps": [], "final_text": "Checked: " + message[:40]}}
        """,
    )
    out = tmp_path / "rows.jsonl"
    proc = subprocess.Popen(
        [sys.executable, "-m", "whileai_cli", "simulate", "specs/orders", "--agent", agent,
         "--mode", "explore", "--budget", "400", "--concurrency", "2", "--executor",
         "processes", "--shards", "2", "-o", str(out)],
        cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        env={**os.environ, "NO_COLOR": "1"}, preexec_fn=hears_sigint,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120  # a safety bound, not a timing claim
        while len(list(pids.iterdir())) < 2 or not (out.exists() and out.read_text()):
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.1)
        proc.send_signal(sig)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, stderr.decode()  # interrupted, as a one-process run
    assert "Traceback" not in stderr.decode()
    workers = [int(p.name) for p in pids.iterdir()]
    assert len(workers) == 2 and proc.pid not in workers
    assert all(_dead(pid) for pid in workers)
    rows = _rows(out)
    keys = [(r["scenario_id"], r["rollout_index"]) for r in rows]
    assert rows and len(keys) == len(set(keys)) < 400


def test_grade_and_evaluate_on_processes_equal_one_process(tmp_path: Path) -> None:
    from whileai_core.compare.evaluate import evaluate_files
    from whileai_core.judges.registry import JudgeOptions, parse_judge
    from whileai_core.judges.run import grade_files

    rows = tmp_path / "rows.jsonl"
    rows.write_text("".join(json.dumps(r) + "\n" for r in _unsharded(mode="sft", budget=60)))
    judge = parse_judge(None, JudgeOptions(spec=SPEC))
    here, there = tmp_path / "here.jsonl", tmp_path / "there.jsonl"
    local = grade_files([str(rows)], judge, output=str(here))
    on_procs = grade_files(
        [str(rows)], judge, executor=ProcessExecutor(shards=2), output=str(there)
    )
    assert comparable(_rows(there)) == comparable(_rows(here))
    assert _in_shard_order(_rows(there))
    assert on_procs.report["rows"] == local.report["rows"] == 60
    assert on_procs.report["pass_at_1"] == local.report["pass_at_1"]
    done = evaluate_files(
        [str(rows)], judge, output=str(tmp_path / "eval.jsonl"), run_id="eval-p",
        executor=ProcessExecutor(shards=2),
    )  # fmt: skip
    evaluated = _rows(tmp_path / "eval.jsonl")
    assert len(evaluated) == 60 and done.grade.report["rows"] == 60
    assert {r["lineage"]["scoring_run_id"] for r in evaluated} == {"eval-p"}


def test_grade_on_processes_through_the_cli(tmp_path: Path) -> None:
    rows = tmp_path / "rows.jsonl"
    rows.write_text("".join(json.dumps(r) + "\n" for r in _unsharded(mode="sft", budget=30)))
    out = tmp_path / "graded.jsonl"
    done = run_cli(
        "grade", str(rows), "--spec", "specs/orders", "--executor", "processes", "--shards", "2",
        "-o", str(out),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr.decode()
    assert len(_rows(out)) == 30 and _in_shard_order(_rows(out))
    assert "shard 2/2 done" in done.stderr.decode()
