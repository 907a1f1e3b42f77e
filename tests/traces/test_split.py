"""split --pseudo-production: task-disjoint, every flaw signature held out at least once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from whileai_core.metrics.tally import task_key
from whileai_core.traces.split import signatures_by_task, split_pseudo_production

from ..helpers import run_cli


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("split")
    rows = tmp / "rows.jsonl"
    proc = run_cli("simulate", "specs/orders", "--mode", "rl", "--repeats", "4", "--budget",
                   "400", "-o", str(rows))  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    out = tmp / "graded.jsonl"
    proc = run_cli("grade", str(rows), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    return out


def test_the_held_out_side_is_task_disjoint_and_holds_every_flaw(
    graded: Path, tmp_path: Path
) -> None:
    prod, rest = tmp_path / "prod.jsonl", tmp_path / "train.jsonl"
    proc = run_cli("split", str(graded), "--pseudo-production", "0.2", "--production",
                   str(prod), "-o", str(rest), "--json")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    held, kept, rows = _rows(prod), _rows(rest), _rows(graded)
    assert len(held) + len(kept) == len(rows) == report["rows"]
    assert not {task_key(r) for r in held} & {task_key(r) for r in kept}
    by_task, _ = signatures_by_task(rows)
    every = set().union(*by_task.values())
    held_sigs = set().union(*(by_task[task_key(r)] for r in held))
    assert every and every <= held_sigs
    assert report["flaw_signatures"] == report["flaw_signatures_held_out"] == len(every)
    tasks = len({task_key(r) for r in rows})
    assert report["share_reached"] == round(len({task_key(r) for r in held}) / tasks, 6)
    assert report["share_reached"] >= 0.2 - 1 / tasks
    again = tmp_path / "prod2.jsonl"
    proc = run_cli("split", str(graded), "--production", str(again), "-o", str(tmp_path / "x"))
    assert proc.returncode == 0 and again.read_bytes() == prod.read_bytes()  # the same split


def test_the_flaw_rule_wins_over_a_small_share(graded: Path) -> None:
    rows = _rows(graded)
    production, rest, report = split_pseudo_production(rows, 0.01)
    assert report.flaw_signatures_held_out == report.flaw_signatures > 1
    assert report.share_reached > 0.01
    assert any("over target" in line for line in report.lines())
    assert len(production) + len(rest) == len(rows)


def test_a_share_outside_zero_and_one_is_refused(graded: Path, tmp_path: Path) -> None:
    proc = run_cli("split", str(graded), "--pseudo-production", "1", "--production",
                   str(tmp_path / "p.jsonl"))  # fmt: skip
    assert proc.returncode == 1 and b"between 0 and 1" in proc.stderr
    assert not (tmp_path / "p.jsonl").exists()
