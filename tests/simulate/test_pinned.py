"""`simulate --tasks BASE`: the same asks, on their own scenario_ids, worlds and faults."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from whileai_core.metrics.tally import task_key
from whileai_core.spec import load_spec

from ..helpers import REPO, run_cli

SPECS = ("orders", "airline", "repo-maint")


def _simulate(*args: str) -> tuple[list[dict], dict]:
    proc = run_cli("simulate", *args, "--json")
    assert proc.returncode == 0, proc.stderr.decode()
    rows = [json.loads(line) for line in proc.stdout.splitlines()]
    report, _ = json.JSONDecoder().raw_decode(proc.stderr.decode().split("\n", 1)[-1])
    return rows, report


def _simulate_to(out: Path, *args: str) -> tuple[list[dict], dict]:
    proc = run_cli("simulate", *args, "-o", str(out), "--json")
    assert proc.returncode == 0, proc.stderr.decode()
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    return rows, json.loads(proc.stdout)


def _paired_share(base: list[dict], rerun: list[dict]) -> float:
    a, b = {task_key(r) for r in base}, {task_key(r) for r in rerun}
    return len(a & b) / len(a | b)


@pytest.mark.parametrize("spec", SPECS)
def test_tasks_rerun_pairs_every_task_and_inherits_k(tmp_path: Path, spec: str) -> None:
    base, _ = _simulate_to(
        tmp_path / "base.jsonl", f"specs/{spec}", "--mode", "rl", "--repeats", "4",
        "--budget", "120", "--reproducible",
    )  # fmt: skip
    rerun, report = _simulate_to(
        tmp_path / "rerun.jsonl", f"specs/{spec}", "--mode", "rl", "--tasks",
        str(tmp_path / "base.jsonl"), "--reproducible", "--seed", "7",
    )  # fmt: skip
    assert _paired_share(base, rerun) == 1.0
    assert report["stopped"] == "tasks_done"
    assert report["tasks"]["k"] == 4 and report["tasks"]["rebuilt_exactly"] == len(
        {r["scenario_id"] for r in base}
    )
    sizes = Counter(r["scenario_id"] for r in rerun)
    assert set(sizes.values()) == {4}  # every ask got its k, stopped groups resumed at the end
    firsts = {r["scenario_id"]: r for r in reversed(base)}
    for row in rerun:
        before = firsts[row["scenario_id"]]
        assert row["prompt"] == before["prompt"]
        assert row["situation_id"] == before["situation_id"]  # the same entity ids
        assert row["faults"] == before["faults"]
        assert row["scenario_dimensions"] == before["scenario_dimensions"]
        assert row["selection_reason"].startswith("pinned task ")


def test_same_seed_rerun_reproduces_the_base_rollouts(tmp_path: Path) -> None:
    base, _ = _simulate_to(
        tmp_path / "base.jsonl", "specs/orders", "--mode", "sft", "--budget", "30",
        "--concurrency", "1",
    )  # fmt: skip
    rerun, report = _simulate_to(
        tmp_path / "rerun.jsonl", "specs/orders", "--tasks", str(tmp_path / "base.jsonl"),
        "--concurrency", "1",
    )  # fmt: skip
    assert report["tasks"]["k"] == 1 and len(rerun) == 30
    for a, b in zip(base, rerun, strict=True):
        # Same world, same person, same seed: the same conversation, phrasings included.
        assert (a["scenario_id"], a["steps"], a["final_text"]) == (
            b["scenario_id"], b["steps"], b["final_text"]
        )  # fmt: skip


def test_the_groups_report_counts_what_happened(tmp_path: Path) -> None:
    """With a grader (unanimous verdicts are common) every pinned group is filled to its
    k: the report calls them complete, none stopped, nothing saved."""
    _simulate_to(
        tmp_path / "base.jsonl", "specs/orders", "--mode", "rl", "--repeats", "8",
        "--budget", "160", "--reproducible",
    )  # fmt: skip
    rerun, report = _simulate_to(
        tmp_path / "rerun.jsonl", "specs/orders", "--tasks", str(tmp_path / "base.jsonl"),
        "--grader", "checklist", "--reproducible",
    )  # fmt: skip
    sizes = Counter(r["scenario_id"] for r in rerun)
    assert set(sizes.values()) == {8}
    groups = report["groups"]
    assert groups["complete"] == len(sizes) and groups["partial"] == 0
    assert groups["stopped"] == 0 and groups["rollouts_saved"] == 0
    assert groups["mixed"] + groups["unanimous"] == len(sizes) and groups["unanimous"] > 0


def test_repeats_overrides_the_inherited_k(tmp_path: Path) -> None:
    _simulate_to(tmp_path / "base.jsonl", "specs/orders", "--budget", "10")
    rerun, report = _simulate_to(
        tmp_path / "rerun.jsonl", "specs/orders", "--tasks", str(tmp_path / "base.jsonl"),
        "--repeats", "3", "--repeat-policy", "fixed",
    )  # fmt: skip
    assert report["tasks"]["k"] == 3 and len(rerun) == 30
    assert set(Counter(r["scenario_id"] for r in rerun).values()) == {3}


def _edited(tmp_path: Path) -> tuple[Path, str, str]:
    """specs/orders with clause 3 reworded: (spec file, old clause, new clause)."""
    raw = json.loads((REPO / "specs/orders/spec.json").read_text())
    old = "Never cancel an order that has already shipped; offer a return instead."
    new = "Do not cancel shipped orders; suggest a return."
    assert old in raw["policy"]
    raw["policy"] = raw["policy"].replace(old, new)
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(raw))
    return path, old, new


def test_a_one_clause_edit_keeps_every_task_paired(tmp_path: Path) -> None:
    edited, old, new = _edited(tmp_path)
    assert new in load_spec(edited).rules
    base, _ = _simulate_to(
        tmp_path / "base.jsonl", "specs/orders", "--budget", "200", "--concurrency", "1"
    )
    rerun, report = _simulate_to(
        tmp_path / "rerun.jsonl", str(edited), "--tasks", str(tmp_path / "base.jsonl")
    )
    assert _paired_share(base, rerun) == 1.0  # the edited clause's tasks too
    on_old = {r["scenario_id"] for r in base if r["scenario_dimensions"]["rule"] == old}
    assert on_old and report["tasks"]["on_an_edited_clause"] == len(on_old)
    for row in rerun:
        if row["scenario_id"] in on_old:
            assert row["scenario_dimensions"]["rule"] == new
            assert new in row["privileged"]["reference"]
    # A fresh run on the edited policy (no --tasks) still shares every task of the
    # untouched clauses with the base: each clause owns its block of cells.
    fresh, _ = _simulate_to(tmp_path / "fresh.jsonl", str(edited), "--budget", "200",
                            "--concurrency", "1")  # fmt: skip
    untouched = [r for r in base if r["scenario_dimensions"]["rule"] != old]
    assert untouched
    assert {task_key(r) for r in untouched} <= {task_key(r) for r in fresh}


def test_a_bad_task_source_is_one_line(tmp_path: Path) -> None:
    proc = run_cli("simulate", "specs/orders", "--tasks", str(tmp_path / "nope.jsonl"))
    assert proc.returncode == 1 and proc.stdout == b""
    assert proc.stderr.decode().strip().splitlines()[-1].endswith("nope.jsonl: no such file "
                                                                  "(nor a dataset id, which "
                                                                  "starts ds_)")  # fmt: skip
    empty = tmp_path / "empty.jsonl"
    empty.write_text("{}\n")
    proc = run_cli("simulate", "specs/orders", "--tasks", str(empty))
    assert proc.returncode == 1 and f"{empty}:1: row has none of".encode() in proc.stderr
    empty.write_text('{"final_text": "a reply with no task"}\n')
    proc = run_cli("simulate", "specs/orders", "--tasks", str(empty))
    assert proc.returncode == 1 and b"no task in it" in proc.stderr


def test_a_dataset_id_works_as_the_base(tmp_path: Path) -> None:
    env = {"WHILEAI_HOME": str(tmp_path / "home")}
    base = tmp_path / "base.jsonl"
    proc = run_cli("simulate", "specs/orders", "--budget", "12", "-o", str(base), env=env)
    assert proc.returncode == 0, proc.stderr
    pushed = run_cli("push", str(base), "--name", "base", "--no-gate", env=env)
    assert pushed.returncode == 0, pushed.stderr
    dataset = pushed.stdout.decode().split()[0]
    assert dataset.startswith("ds_")
    proc = run_cli("simulate", "specs/orders", "--tasks", dataset, env=env)
    assert proc.returncode == 0, proc.stderr
    rerun = [json.loads(line) for line in proc.stdout.splitlines()]
    # push keeps back rows that quote their privileged block: pair with what was stored.
    pulled = run_cli("pull", dataset, env=env)
    stored = [json.loads(line) for line in pulled.stdout.splitlines()]
    assert stored and _paired_share(stored, rerun) == 1.0
