"""compare, delta and variance as a user runs them: real subprocesses, exit codes, JSON."""

from __future__ import annotations

import math
import random
from pathlib import Path

import orjson

from ..helpers import run_cli
from .rows import binary_run, refund_runs, write


def _json(proc) -> dict:  # type: ignore[no-untyped-def]
    assert proc.returncode in (0, 1), proc.stderr.decode()
    return orjson.loads(proc.stdout)


def test_compare_pairs_tasks_and_reports_an_improvement(tmp_path: Path) -> None:
    a = write(tmp_path / "a.jsonl", binary_run(tasks=60, k=4, effect=0.0, seed=1))
    b = write(tmp_path / "b.jsonl", binary_run(tasks=60, k=4, effect=0.25, seed=2))
    proc = run_cli("compare", a, b, "--json")
    data = _json(proc)
    assert proc.returncode == 0
    assert data["verdict"] == "improved" and data["paired"] and data["n_paired"] == 60
    assert data["paired_share"] == 1.0 and data["p_method"] == "monte_carlo"
    assert data["ci95"][0] > 0 and data["p_value"] < 0.01
    human = run_cli("compare", a, b)
    text = human.stdout.decode()
    assert text.splitlines()[0].startswith("pass_at_1  ")
    assert "improved" in text and "60 paired tasks" in text


def test_compare_on_a_marker_and_the_note_on_unpaired_tasks(tmp_path: Path) -> None:
    rows_a = binary_run(tasks=40, k=2, effect=0.0, seed=1, markers={"polite": 0.9})
    rows_b = binary_run(tasks=40, k=2, effect=0.0, seed=2, markers={"polite": 0.9})
    a = write(tmp_path / "a.jsonl", rows_a)
    b = write(tmp_path / "b.jsonl", [r for r in rows_b if r["scenario_id"] >= "task-010"])
    proc = run_cli("compare", a, b, "--metric", "marker:polite", "--json")
    data = _json(proc)
    assert data["metric"] == "marker:polite" and data["n_paired"] == 30
    assert data["n_only_a"] == 10 and data["paired_share"] == 0.75
    assert "10 task(s) only in A" in data["note"]
    assert "only in A" in proc.stderr.decode()  # the note is a warning a person sees


def test_compare_refuses_what_it_cannot_compare(tmp_path: Path) -> None:
    a = write(tmp_path / "a.jsonl", binary_run(tasks=6, k=1, effect=0.0, seed=1))
    proc = run_cli("compare", a, a, "--metric", "marker:nope")
    assert proc.returncode == 1
    assert b"no row carries marker:nope" in proc.stderr
    ungraded = write(tmp_path / "u.jsonl", [{"scenario_id": "x", "prompt": "hi"}])
    proc = run_cli("compare", ungraded, a)
    assert proc.returncode == 1 and b"grade them first" in proc.stderr
    proc = run_cli("compare", "-", "-", input=b"")
    assert proc.returncode == 1 and b"only one side can read stdin" in proc.stderr
    proc = run_cli("compare", a, str(tmp_path / "missing.jsonl"))
    assert proc.returncode == 1 and b"cannot open" in proc.stderr


def test_delta_fails_the_run_that_learned_to_invent_arguments(tmp_path: Path) -> None:
    before, inventing, honest = refund_runs()
    b = write(tmp_path / "before.jsonl", before)
    bad = write(tmp_path / "inventing.jsonl", inventing)
    good = write(tmp_path / "honest.jsonl", honest)
    guard = ("--must-not-regress", "argument_grounding")
    proc = run_cli("delta", "--before", b, "--after", bad, *guard, "--json")
    data = _json(proc)
    assert proc.returncode == 1
    assert data["target_verdict"] == "improved" and data["target_delta"] > 0.2  # pass@1 rose
    assert data["regressions"] == ["marker:argument_grounding"] and not data["ok"]
    # each side's pass@1 is metrics.passat's, off the same per-task counts
    assert data["pass_at"]["before"]["pass_at_1"] == data["metrics"]["pass_at_1"]["mean_a"]
    assert data["pass_at"]["after"]["k"] == 4 and data["pass_at"]["after"]["pass_at_1_ci95"]
    human = run_cli("delta", "--before", b, "--after", bad, *guard)
    assert human.returncode == 1
    line = next(x for x in human.stdout.decode().splitlines() if "argument_grounding" in x)
    assert "regressed" in line and "FAIL" in line
    proc = run_cli("delta", "--before", b, "--after", good, *guard, "--json")
    data = _json(proc)
    assert proc.returncode == 0, proc.stdout.decode()
    assert data["ok"] and data["target_verdict"] == "improved" and not data["regressions"]


def test_delta_groups_down_while_the_headline_rose(tmp_path: Path) -> None:
    before = binary_run(tasks=90, k=4, effect=0.0, seed=1, group="category")
    after = binary_run(tasks=90, k=4, effect=0.3, seed=2, group="category")
    rng = random.Random(5)
    for row in after:  # returns got worse while the other two got much better
        if row["category"] == "returns" and rng.random() < 0.6:
            row["reward"] = 0.0
    b = write(tmp_path / "b.jsonl", before)
    a = write(tmp_path / "a.jsonl", after)
    data = _json(run_cli("delta", "--before", b, "--after", a, "--by", "category", "--json"))
    assert data["target_verdict"] == "improved"
    assert data["groups_down"] == ["returns"] and set(data["groups"]) == {
        "billing",
        "returns",
        "shipping",
    }
    assert any("returns while the headline rose" in w for w in data["warnings"])
    assert data["ok"]  # a group is reported, not a guard


def test_delta_run_std_makes_small_moves_within_noise(tmp_path: Path) -> None:
    b = write(tmp_path / "b.jsonl", binary_run(tasks=60, k=4, effect=0.0, seed=1))
    a = write(tmp_path / "a.jsonl", binary_run(tasks=60, k=4, effect=0.12, seed=2))
    plain = _json(run_cli("delta", "--before", b, "--after", a, "--json"))
    assert plain["target_verdict"] == "improved"
    wide = _json(run_cli("delta", "--before", b, "--after", a, "--run-std", "0.08", "--json"))
    assert wide["target_verdict"] == "within_eval_noise"
    assert wide["within_noise"] == ["pass_at_1"] and wide["metrics"]["pass_at_1"]["noise_band"]
    assert wide["noise_rule"] == "|delta| < 2 x run_std"
    narrow = _json(run_cli("delta", "--before", b, "--after", a, "--run-std", "0.01", "--json"))
    assert narrow["target_verdict"] == "improved" and not narrow["within_noise"]
    proc = run_cli("delta", "--before", b, "--after", a, "--run-std", "lots")
    assert proc.returncode == 2 and b"--run-std lots" in proc.stderr


def test_variance_feeds_delta_and_refuses_two_runs(tmp_path: Path) -> None:
    runs = []
    for i in range(3):
        rows = binary_run(tasks=30, k=4, effect=0.0, seed=20 + i, markers={"polite": 0.8})
        runs.append(write(tmp_path / f"run{i}.jsonl", rows))
    report = tmp_path / "variance.json"
    data = _json(run_cli("variance", *runs, "--json", "--report", str(report)))
    means = data["means"]
    centre = sum(means) / 3
    by_hand = math.sqrt(sum((m - centre) ** 2 for m in means) / 2)
    assert data["run_std"] == by_hand and data["n_runs"] == 3
    assert set(data["run_std_by_metric"]) == {"pass_at_1", "marker:polite"}
    assert orjson.loads(report.read_bytes())["run_std"] == data["run_std"]
    out = _json(
        run_cli(
            "delta", "--before", runs[0], "--after", runs[1], "--run-std", str(report), "--json"
        )
    )
    assert out["run_std"] == data["run_std_by_metric"]
    proc = run_cli("variance", runs[0], runs[1])
    assert proc.returncode == 2 and b"3 or more" in proc.stderr


def test_delta_prints_the_holdout_size_when_nothing_is_detected(tmp_path: Path) -> None:
    b = write(tmp_path / "b.jsonl", binary_run(tasks=30, k=2, effect=0.0, seed=1))
    a = write(tmp_path / "a.jsonl", binary_run(tasks=30, k=2, effect=0.0, seed=2))
    proc = run_cli("delta", "--before", b, "--after", a, "--mde", "0.05")
    assert proc.returncode == 0
    text = proc.stdout.decode()
    assert "no_difference_detected" in text.splitlines()[0]
    sizing = next(x for x in text.splitlines() if x.startswith("sizing:"))
    assert "30 paired tasks detect a delta of about" in sizing
    assert "to detect 0.050 a holdout needs about" in sizing
    data = _json(run_cli("delta", "--before", b, "--after", a, "--mde", "0.05", "--json"))
    s = data["sizing"]
    assert s["effect_source"] == "given" and s["sd_source"] == "rows"
    z = 1.959963984540054 + 0.8416212335729143
    assert s["tasks_needed"] == math.ceil((z * s["sd"] / 0.05) ** 2)


def test_delta_fails_on_over_optimization_and_unmeasured_guards(tmp_path: Path) -> None:
    b = write(
        tmp_path / "b.jsonl",
        binary_run(tasks=40, k=4, effect=0.0, seed=1, markers={"first_action": 0.3}),
    )
    a = write(
        tmp_path / "a.jsonl",
        binary_run(tasks=40, k=4, effect=0.0, seed=2, markers={"first_action": 0.9}),
    )
    proc = run_cli("delta", "--before", b, "--after", a, "--proxy", "marker:first_action", "--json")
    data = _json(proc)
    assert proc.returncode == 1 and data["over_optimized"]
    assert any(f.startswith("over-optimized") for f in data["failures"])
    proc = run_cli("delta", "--before", b, "--after", a, "--must-not-regress", "honest_claims")
    assert proc.returncode == 1
    assert b"marker:honest_claims (--must-not-regress) is not measured" in proc.stdout


def test_delta_refuses_two_different_task_sets(tmp_path: Path) -> None:
    rows_a = binary_run(tasks=40, k=2, effect=0.0, seed=1)
    rows_b = binary_run(tasks=40, k=2, effect=0.0, seed=2)
    for row in rows_b:  # 30 of 40 tasks renamed: 10 shared of 70
        if row["scenario_id"] >= "task-010":
            row["scenario_id"] += "-new"
    a = write(tmp_path / "a.jsonl", rows_a)
    b = write(tmp_path / "b.jsonl", rows_b)
    data = _json(run_cli("delta", "--before", a, "--after", b, "--json"))
    assert not data["ok"] and any(f.startswith("not comparable") for f in data["failures"])
    assert data["paired_share"] == 10 / 70
