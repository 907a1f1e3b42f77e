"""`--executor ray`: shards as tasks on a real local Ray (2 CPUs, one per session), passed
to simulate, grade and evaluate as their executor.

Ray starts in 5-8 s, so every test here shares one session fixture, and the runs are
small. Without ray importable these tests skip and say why (`make test` installs it)."""

from __future__ import annotations

import json
import os
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from whileai_core.scale.ray_executor import RayExecutor
from whileai_core.simulate.run import run_simulation
from whileai_core.simulate.scheduler import SimulateConfig
from whileai_core.spec import load_spec

from ..helpers import REPO
from .test_shards import (
    check_resume_finishes_a_cut_run,
    check_shards_equal_the_unsharded_run,
    comparable,
)

ray = pytest.importorskip("ray", reason="ray is not installed (pip install 'whileai[ray]')")

SPEC = load_spec(REPO / "specs" / "orders")


@pytest.fixture(scope="session")
def local_ray() -> Iterator[Any]:
    """One real local Ray for the session: 2 CPUs, a small object store, files in a temp dir."""
    temp = tempfile.mkdtemp(prefix="ray-")
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        object_store_memory=200 * 1024 * 1024,
        _temp_dir=temp,
        log_to_driver=False,
    )
    try:
        yield ray
    finally:
        ray.shutdown()
        import shutil

        shutil.rmtree(temp, ignore_errors=True)


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _unsharded(spec: Any = SPEC, **kw: Any) -> list[dict]:
    rows: list[dict] = []
    run_simulation(spec, SimulateConfig(reproducible=True, **kw), sink=rows.append)
    return rows


@pytest.mark.parametrize("name", ["orders", "airline", "repo-maint"])
def test_four_ray_shards_merged_equal_the_unsharded_run(
    local_ray: Any, tmp_path: Path, name: str
) -> None:
    rows, _, said = check_shards_equal_the_unsharded_run(
        lambda progress: RayExecutor(shards=4, progress=progress), name, 120, 4, tmp_path
    )
    # Each shard's rows arrive together, as that shard finished.
    order = [row["shard"] for row in rows]
    assert sum(order[i] != order[i - 1] for i in range(1, len(order))) == 3
    assert sum("done:" in line for line in said) == 4


def test_resume_skips_complete_shards_and_finishes_a_cut_one(
    local_ray: Any, tmp_path: Path
) -> None:
    check_resume_finishes_a_cut_run(lambda: RayExecutor(shards=4), tmp_path)


def test_a_shard_whose_worker_is_killed_is_retried_without_duplicates(
    local_ray: Any, tmp_path: Path
) -> None:
    """The agent SIGKILLs its own worker on the first call of the whole run (a marker file
    says it has); Ray retries that shard, whose rows then come back once."""
    marker = tmp_path / "killed"
    agent = tmp_path / "killer_agent.py"
    agent.write_text(
        textwrap.dedent(
            f"""
            import os, signal

            MARKER = {str(marker)!r}

            def agent(message):
                try:
                    fd = os.open(MARKER, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
                except FileExistsError:
                    return {{"steps": [], "final_text": "Checked: " + message[:40]}}
                os.write(fd, str(os.getpid()).encode())
                os.close(fd)
                os.kill(os.getpid(), signal.SIGKILL)
            """
        )
    )
    out = tmp_path / "rows.jsonl"
    config = SimulateConfig(mode="explore", budget=60, reproducible=True, concurrency=1)
    report = run_simulation(
        SPEC, config, executor=RayExecutor(shards=4, max_retries=2), output=str(out),
        agent_ref=f"{agent}:agent",
    )  # fmt: skip
    assert marker.exists(), "the worker was killed once"
    killed_pid = int(marker.read_text())
    assert killed_pid != os.getpid()
    rows = _rows(out)
    keys = [(r["scenario_id"], r["rollout_index"]) for r in rows]
    assert len(keys) == len(set(keys)) == report.rows == 60
    expected = {(r["scenario_id"], r["rollout_index"]) for r in _unsharded(budget=60)}
    assert set(keys) == expected
    assert report.agent_errors == 0


def test_grade_and_evaluate_on_ray_equal_one_process(local_ray: Any, tmp_path: Path) -> None:
    from whileai_core.compare.evaluate import evaluate_files
    from whileai_core.judges.registry import JudgeOptions, parse_judge
    from whileai_core.judges.run import grade_files

    rows = tmp_path / "rows.jsonl"
    rows.write_text("".join(json.dumps(r) + "\n" for r in _unsharded(mode="sft", budget=60)))
    options = JudgeOptions(spec=SPEC)
    judge = parse_judge(None, options)
    here, there = tmp_path / "here.jsonl", tmp_path / "there.jsonl"
    local = grade_files([str(rows)], judge, output=str(here))
    on_ray = grade_files([str(rows)], judge, executor=RayExecutor(shards=3), output=str(there))
    assert comparable(_rows(there)) == comparable(_rows(here))
    assert on_ray.report["rows"] == local.report["rows"] == 60
    assert on_ray.report["pass_at_1"] == local.report["pass_at_1"]
    failed = tmp_path / "failed.jsonl"
    done = evaluate_files(
        [str(rows)], judge, output=str(tmp_path / "eval.jsonl"), failed_traces=str(failed),
        run_id="eval-test", executor=RayExecutor(shards=2),
    )  # fmt: skip
    evaluated = _rows(tmp_path / "eval.jsonl")
    assert len(evaluated) == 60
    assert {r["lineage"]["scoring_run_id"] for r in evaluated} == {"eval-test"}
    assert done.failed == len(_rows(failed)) == sum(1 for r in evaluated if r["reward"] < 0.5)
