"""`simulate --shard I/N`, `--blocks N` and `whileai merge`: shards split a run by task id,
and their rows, merged, are the unsharded run's rows (explore, sft, fixed repeats) or the
rows of the unsharded run with the same block count (rl, adaptive)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from whileai_core.errors import ConfigError
from whileai_core.simulate.grid import build_grid
from whileai_core.simulate.run import run_simulation
from whileai_core.simulate.scheduler import SimulateConfig
from whileai_core.simulate.shards import (
    Shard,
    ShardTasks,
    budget_shares,
    parse_shard,
    shard_of,
    task_key,
)
from whileai_core.simulate.tasks import GridTasks
from whileai_core.spec import load_spec

from ..helpers import REPO, run_cli

SPECS = ("orders", "airline", "repo-maint")
# The three modes whose rows do not depend on run-wide state: explore, sft, fixed repeats.
PLAIN_MODES: dict[str, dict[str, Any]] = {
    "explore": {"mode": "explore"},
    "sft": {"mode": "sft"},
    "fixed": {"mode": "rl", "repeat_policy": "fixed", "repeats": 4},
}


def _play(spec: str, *, shard: Shard | None = None, blocks: int = 1, **kw: Any) -> list[dict]:
    rows: list[dict] = []
    config = SimulateConfig(reproducible=True, **kw)
    run_simulation(
        load_spec(REPO / "specs" / spec), config, sink=rows.append, shard=shard, blocks=blocks
    )
    return rows


def comparable(rows: list[dict]) -> list[dict]:
    """Rows sorted by (scenario_id, rollout_index), without what says where they ran."""
    out = [{k: v for k, v in row.items() if k not in ("lineage", "shard")} for row in rows]
    return sorted(out, key=lambda r: (r["scenario_id"], r["rollout_index"]))


def check_shards_equal_the_unsharded_run(
    make: Callable[[Callable[[str], None]], Any], name: str, budget: int, shards: int,
    tmp_path: Path,
) -> tuple[list[dict], Any, list[str]]:
    """The row contract every sharded executor keeps: `make(progress)` builds the executor;
    its sft run of `budget` rows on spec `name` holds the unsharded run's rows, each
    labelled with its shard. Returns the rows as written, the report and the progress
    lines, for the executor's own checks (row order, its report)."""
    out = tmp_path / "rows.jsonl"
    said: list[str] = []
    report = run_simulation(
        load_spec(REPO / "specs" / name),
        SimulateConfig(mode="sft", budget=budget, reproducible=True),
        executor=make(said.append),
        output=str(out),
    )
    rows = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
    assert report.rows == len(rows) == budget
    assert comparable(rows) == comparable(_play(name, mode="sft", budget=budget))
    assert sorted({row["shard"] for row in rows}) == [f"{i}/{shards}" for i in range(1, shards + 1)]
    return rows, report, said


def check_resume_finishes_a_cut_run(executor: Callable[[], Any], tmp_path: Path) -> None:
    """The resume contract every sharded executor keeps (Ray's, the local processes'):
    a cut output (shard 1 complete, half of shard 3, a torn last line) resumes by
    skipping the complete shard and finishing with every row once."""
    spec = load_spec(REPO / "specs" / "orders")
    config = SimulateConfig(mode="explore", budget=80, reproducible=True)
    full = tmp_path / "full.jsonl"
    run_simulation(spec, config, executor=executor(), output=str(full))
    rows = [json.loads(line) for line in full.read_text().splitlines() if line.strip()]
    one = [r for r in rows if r["shard"] == "1/4"]
    three = [r for r in rows if r["shard"] == "3/4"]
    cut = tmp_path / "cut.jsonl"
    lines = [json.dumps(r) for r in one + three[: len(three) // 2]]
    cut.write_text("\n".join(lines) + "\n" + lines[-1][:40])
    report = run_simulation(spec, config, executor=executor(), output=str(cut), resume=True)
    assert report.shards["skipped"] == ["1/4"]
    assert report.resumed_rows == len(one) + len(three) // 2
    resumed = [json.loads(line) for line in cut.read_text().splitlines() if line.strip()]
    keys = [(r["scenario_id"], r["rollout_index"]) for r in resumed]
    assert len(keys) == len(set(keys)) == 80
    assert comparable(resumed) == comparable(rows)


@pytest.mark.parametrize("mode", list(PLAIN_MODES))
@pytest.mark.parametrize("spec", SPECS)
def test_merged_shards_equal_the_unsharded_run(spec: str, mode: str) -> None:
    kw = {**PLAIN_MODES[mode], "budget": 151}  # odd: the last fixed group is cut
    whole = _play(spec, **kw)
    parts = [_play(spec, shard=Shard(i, 4), **kw) for i in range(1, 5)]
    assert all(parts), "every shard got rows"
    assert all(row["shard"] == f"{i}/4" for i, part in enumerate(parts, 1) for row in part)
    assert all(row["lineage"]["shard"] == row["shard"] for part in parts for row in part)
    merged = [row for part in parts for row in part]
    assert len(merged) == len(whole) == 151
    assert comparable(merged) == comparable(whole)
    # Disjoint by task: no situation is in two shards.
    owners = {}
    for i, part in enumerate(parts, 1):
        for row in part:
            assert owners.setdefault(row["situation_id"], i) == i


@pytest.mark.parametrize(("spec", "mode"), [("orders", "rl"), ("airline", "adaptive")])
def test_rl_and_adaptive_shards_equal_the_run_with_as_many_blocks(spec: str, mode: str) -> None:
    kw = {"mode": mode, "budget": 160}
    merged = [row for i in range(1, 4) for row in _play(spec, shard=Shard(i, 3), **kw)]
    blocks = _play(spec, blocks=3, **kw)
    assert len(blocks) == 160
    assert comparable(merged) == comparable(blocks)
    assert all("shard" not in row for row in blocks)


def test_an_unsharded_run_is_unchanged_by_the_shard_code() -> None:
    """--blocks 1 is the plain run, row for row (the golden files hold it too)."""
    assert _play("orders", mode="sft", budget=40) == _play(
        "orders", mode="sft", budget=40, blocks=1
    )


def test_shares_split_the_budget_and_shards_follow_the_task_ids() -> None:
    spec = load_spec(REPO / "specs" / "orders")
    grid = build_grid(spec)
    tasks = GridTasks(spec, grid)
    shares = budget_shares(tasks, budget=1000, count=4, phrasings=1, cost=1)
    assert sum(shares) == 1000 and min(shares) > 150
    drawn = [tasks.situation(i, 1) for i in range(1000)]
    for index in (1, 4):
        shard = ShardTasks(GridTasks(spec, grid), Shard(index, 4))
        mine = [shard.situation(i, 1) for i in range(shares[index - 1])]
        assert [s["scenario_id"] for s in mine] == [
            s["scenario_id"] for s in drawn if shard_of(task_key(s), 4) == index
        ]
    # The hash is SHA-256 of the id, so every machine and every process agrees: pinned
    # here, so a change of hash (or of Python's str hashing leaking in) fails this line.
    assert [shard_of(i, 4) for i in ("st-0123456789", "st-0", "st-1", "orders-001")] == [3, 2, 3, 1]
    assert [shard_of(i, 3) for i in ("st-0123456789", "st-0", "st-2")] == [2, 1, 1]
    assert {shard_of(f"st-{i}", 3) for i in range(50)} == {1, 2, 3}


@pytest.mark.parametrize("text", ["0/4", "5/4", "2", "a/b", "2/0", "1/-1"])
def test_a_bad_shard_is_a_one_line_error(text: str) -> None:
    with pytest.raises(ConfigError, match="I/N"):
        parse_shard(text)


def _shard_files(tmp_path: Path, count: int = 3, budget: int = 60) -> list[Path]:
    files = []
    for i in range(1, count + 1):
        out = tmp_path / f"shard{i}.jsonl"
        done = run_cli(
            "simulate", "specs/orders", "--budget", str(budget), "--reproducible",
            "--shard", f"{i}/{count}", "-o", str(out),
        )  # fmt: skip
        assert done.returncode == 0, done.stderr.decode()
        files.append(out)
    return files


def test_merge_writes_shard_order_and_refuses_overlaps_and_gaps(tmp_path: Path) -> None:
    one, two, three = _shard_files(tmp_path)
    merged = tmp_path / "merged.jsonl"
    done = run_cli("merge", str(three), str(one), str(two), "-o", str(merged), "--json")
    assert done.returncode == 0, done.stderr.decode()
    report = json.loads(done.stdout)
    assert report["rows"] == 60 and report["shards"] == 3
    rows = [json.loads(line) for line in merged.read_text().splitlines()]
    assert [row["shard"] for row in rows] == sorted(row["shard"] for row in rows)
    again = tmp_path / "again.jsonl"
    assert run_cli("merge", str(one), str(two), str(three), "-o", str(again)).returncode == 0
    assert again.read_bytes() == merged.read_bytes()  # the order is the shards', not the args'
    whole = run_cli("simulate", "specs/orders", "--budget", "60", "--reproducible")
    expected = [json.loads(line) for line in whole.stdout.splitlines()]
    assert comparable(rows) == comparable(expected)

    def refused(*files: Path) -> str:
        failed = run_cli("merge", *map(str, files), "-o", str(tmp_path / "no.jsonl"))
        assert failed.returncode == 1
        lines = failed.stderr.decode().strip().splitlines()
        assert len(lines) == 1, lines
        assert not (tmp_path / "no.jsonl").exists()
        return lines[0]

    assert "missing shards: 2/3" in refused(one, three)
    assert "overlapping shards" in refused(one, two, three, two)
    unsharded = tmp_path / "plain.jsonl"
    unsharded.write_bytes(whole.stdout)
    assert "no shard field" in refused(one, two, unsharded)
    other = _shard_files(tmp_path / "other", count=2, budget=20)
    assert "merge one run's shards" in refused(one, two, three, other[0])
    forged = tmp_path / "forged.jsonl"
    row = json.loads(one.read_text().splitlines()[0])
    forged.write_text(json.dumps({**row, "shard": "2/3"}) + "\n")
    assert "belongs to shard 1/3" in refused(forged)


def test_shard_flags_that_cannot_work_are_usage_errors() -> None:
    for args, flag in [
        (["--shard", "5/4"], "--shard"),
        (["--shards", "3"], "--shards"),
        (["--ray-address", "127.0.0.1:6379"], "--ray-address"),
        (["--shard", "1/2", "--blocks", "2"], "--blocks"),
        (["--executor", "ray", "--shard", "1/2"], "--shard"),
        (["--executor", "processes", "--shard", "1/2"], "--shard"),
        (["--executor", "processes", "--blocks", "2"], "--blocks"),
        (["--executor", "processes", "--ray-address", "127.0.0.1:6379"], "--ray-address"),
    ]:
        done = run_cli("simulate", "specs/orders", "--budget", "4", *args)
        assert done.returncode == 2, (args, done.stderr)
        assert flag in done.stderr.decode() and len(done.stderr.decode().splitlines()) == 1
    for command in ("grade", "evaluate"):
        done = run_cli(command, "tests/fixtures/sdk-rows-orders-explore.jsonl", "--shards", "2")
        assert done.returncode == 2 and b"--executor ray" in done.stderr


def test_a_shard_with_no_share_of_a_tiny_budget_says_so() -> None:
    done = run_cli("simulate", "specs/orders", "--budget", "2", "--shard", "2/8")
    errors = [ln for ln in done.stderr.decode().splitlines() if "error" in ln]
    assert done.returncode == 1 and len(errors) == 1 and "without a row" in errors[0]


def test_executor_ray_without_ray_names_the_extra() -> None:
    import subprocess

    code = (
        "import sys; sys.modules['ray'] = None\n"
        "from whileai_cli.app import main\n"
        "sys.argv = ['whileai', 'simulate', 'specs/orders', '--budget', '4', "
        "'--executor', 'ray']\n"
        "main()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, cwd=REPO, timeout=60)
    assert done.returncode == 1
    lines = done.stderr.decode().strip().splitlines()
    assert len(lines) == 1 and "pip install 'whileai-toolkit[ray]'" in lines[0]


@pytest.mark.parametrize("command", ["grade", "evaluate"])
def test_grade_and_evaluate_shards_merge_to_the_whole_file(tmp_path: Path, command: str) -> None:
    rows = tmp_path / "rows.jsonl"
    made = run_cli("simulate", "specs/orders", "--mode", "sft", "--budget", "45", "-o", str(rows))
    assert made.returncode == 0, made.stderr.decode()
    whole = tmp_path / "whole.jsonl"
    assert run_cli(command, str(rows), "--spec", "specs/orders", "-o", str(whole)).returncode == 0
    parts = []
    for i in (1, 2):
        part = tmp_path / f"part{i}.jsonl"
        done = run_cli(
            command, str(rows), "--spec", "specs/orders", "--shard", f"{i}/2", "-o", str(part)
        )
        assert done.returncode == 0, done.stderr.decode()
        parts.append(part)
    merged = tmp_path / "merged.jsonl"
    assert run_cli("merge", *map(str, parts), "-o", str(merged)).returncode == 0

    def graded(path: Path) -> list[dict]:
        out = []
        for row in map(json.loads, path.read_text().splitlines()):
            row.get("lineage", {}).pop("scoring_run_id", None)  # evaluate: fresh per run
            out.append(row)
        return comparable(out)

    assert graded(merged) == graded(whole)
    bad = run_cli(command, str(rows), "--shard", "3/2")
    assert bad.returncode == 2 and b"--shard" in bad.stderr
