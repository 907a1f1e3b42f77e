"""The executor seam: simulate, grade and evaluate take an `Executor` and work the same
whichever plays their parts. Ray's own tests are in tests/simulate/test_ray_executor.py;
here an in-process executor of a different shape (three shards, played in reverse order)
shows that the stages depend on the protocol, not on the two built-ins."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pytest

from whileai_core.compare.evaluate import evaluate_files
from whileai_core.errors import ConfigError
from whileai_core.judges.registry import JudgeOptions, parse_judge
from whileai_core.judges.run import grade_files
from whileai_core.scale.executor import LocalExecutor, Part, Sink, make_executor
from whileai_core.scale.ray_executor import RayExecutor
from whileai_core.scale.shards import Shard
from whileai_core.simulate.run import run_simulation
from whileai_core.simulate.scheduler import SimulateConfig
from whileai_core.spec import load_spec

from .helpers import REPO
from .simulate.test_shards import comparable

T = TypeVar("T")
SPEC = load_spec(REPO / "specs" / "orders")


@dataclass
class ReversedShards:
    """Three shards in this process, the last first: parts finish out of order."""

    count: int = 3
    said: list[str] = field(default_factory=list)
    name: str = "reversed"
    remote: bool = False

    def parts(self) -> list[Part]:
        return [Shard(i, self.count) for i in range(1, self.count + 1)]

    def concurrency(self, total: int) -> int:
        return total

    def run(
        self, task: Callable[[Part, Sink], T], parts: Sequence[Part], emit: Sink
    ) -> Iterator[tuple[Part, T]]:
        for part in reversed(parts):
            yield part, task(part, emit)

    def say(self, line: str) -> None:
        self.said.append(line)


def test_make_executor_builds_the_users_choice() -> None:
    assert make_executor() == LocalExecutor()
    assert make_executor("local", shard=Shard(2, 4)).parts() == [Shard(2, 4)]
    ray = make_executor("ray", shards=3, address="127.0.0.1:6379")
    assert isinstance(ray, RayExecutor) and ray.remote and ray.address == "127.0.0.1:6379"
    assert ray.parts() == [Shard(1, 3), Shard(2, 3), Shard(3, 3)]
    assert make_executor("ray").parts() == [Shard(i, 4) for i in range(1, 5)]
    with pytest.raises(ConfigError, match="--shards N"):
        make_executor("ray", shard=Shard(1, 2))
    with pytest.raises(ConfigError, match="for --executor processes or ray"):
        make_executor("local", shards=2)
    with pytest.raises(ConfigError, match="--shards N"):
        make_executor("processes", shard=Shard(1, 2))
    with pytest.raises(ConfigError, match="unknown executor 'dask'"):
        make_executor("dask")


def test_simulate_on_any_executor_writes_the_unsharded_runs_rows(tmp_path: Path) -> None:
    config = SimulateConfig(mode="sft", budget=60, reproducible=True)
    whole: list[dict[str, Any]] = []
    run_simulation(SPEC, config, sink=whole.append)
    executor = ReversedShards()
    out = tmp_path / "rows.jsonl"
    report = run_simulation(
        SPEC, SimulateConfig(mode="sft", budget=60, reproducible=True), executor=executor,
        output=str(out),
    )  # fmt: skip
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert comparable(rows) == comparable(whole)
    assert rows[0]["shard"] == "3/3"  # the last shard finished first
    assert report.rows == 60 and report.tasks["shards"] == 3
    assert report.shards["executor"] == "reversed" and report.shards["skipped"] == []
    assert sum("done:" in line for line in executor.said) == 3


def test_grade_and_evaluate_on_any_executor_equal_one_process(tmp_path: Path) -> None:
    rows = tmp_path / "rows.jsonl"
    made: list[dict[str, Any]] = []
    run_simulation(SPEC, SimulateConfig(mode="sft", budget=45, reproducible=True), sink=made.append)
    rows.write_text("".join(json.dumps(r) + "\n" for r in made))
    judge = parse_judge(None, JudgeOptions(spec=SPEC))
    here, there = tmp_path / "here.jsonl", tmp_path / "there.jsonl"
    local = grade_files([str(rows)], judge, output=str(here))
    seen: list[dict[str, Any]] = []
    parts = grade_files(
        [str(rows)], judge, output=str(there), executor=ReversedShards(), on_graded=seen.append
    )
    graded = [json.loads(line) for line in there.read_text().splitlines()]
    assert comparable(graded) == comparable([json.loads(x) for x in here.read_text().splitlines()])
    assert parts.report["pass_at_1"] == local.report["pass_at_1"]
    assert parts.read.rows == local.read.rows == 45 and len(seen) == 45
    done = evaluate_files(
        [str(rows)], judge, output=str(tmp_path / "eval.jsonl"), run_id="eval-x",
        executor=ReversedShards(), on_graded=seen.append,
    )  # fmt: skip
    assert done.grade.report["rows"] == 45 and len(seen) == 90


def test_a_remote_executor_reads_files_not_stdin() -> None:
    judge = parse_judge(None, JudgeOptions(spec=SPEC))
    with pytest.raises(ConfigError, match="give FILES, not stdin"):
        grade_files(["-"], judge, executor=RayExecutor(shards=2))
