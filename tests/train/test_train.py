"""`whileai train`: each method trains a tiny model a few steps on what `export` writes, as a
store run with its points, knobs, status, adapter and the holdout before and after.

Everything here runs in the training side venv (skipped, saying how to build it, where it
is missing), on CPU, with a model built from nothing downloaded."""

from __future__ import annotations

import json
from pathlib import Path

from ..helpers import run_cli
from .side import ROWS, SPEC, side_cli, train, write_jsonl

FAST = ("--max-length", "2048", "--max-completion-length", "16", "--seed", "3")


def _metrics(record: dict) -> set[str]:
    return {k for point in record["series"] for k in point if k not in ("step", "ts")}


def test_sft_on_a_stored_dataset_is_a_run_with_points_knobs_adapter_and_its_holdout(
    tiny: Path,
) -> None:
    pushed = run_cli("push", str(ROWS), "--name", "orders-sft", "--mode", "sft",
                     "--holdout", "0.1", "--no-gate", "--json")  # fmt: skip
    assert pushed.returncode == 0, pushed.stderr.decode()
    made = json.loads(pushed.stdout)
    dataset, held = made["train"]["datasetId"], made["holdout"]
    # No --holdout: the dataset's holdout sibling (push --holdout) is played.
    record = train(dataset, "--method", "sft", "--base-model", str(tiny), "--spec", str(SPEC),
                   "--steps", "2", "--lora-r", "4", "--learning-rate", "0.001", *FAST)  # fmt: skip
    assert record["datasetId"] == dataset
    assert record["status"] == "done" and record["step"] == 2 and record["totalSteps"] == 2
    assert record["trainer"] == "trl SFTTrainer" and record["baseModel"] == str(tiny)
    assert {"loss", "lr", "grad_norm"} <= _metrics(record)
    config = record["config"]
    assert config["method"] == "sft" and config["steps"] == 2 and config["lora_r"] == 4
    assert config["learning_rate"] == 0.001 and config["seed"] == 3
    assert config["shape"] == "trl messages (needs assistant_only_loss=True)"
    adapter = Path(record["adapter"])
    assert (adapter / "adapter_config.json").is_file()
    about = json.loads((adapter / "whileai-run.json").read_text())
    assert about == {"run_id": record["runId"], "base_model": str(tiny), "method": "sft"}
    # The holdout's two tasks, played by the base and by the trained policy, same judge.
    summary = record["summary"]
    assert 0 <= summary["holdoutPassBefore"] <= 1 and 0 <= summary["holdoutPassAfter"] <= 1
    tasks = {
        json.loads(x)["scenario_id"] for x in run_cli("pull", held["datasetId"]).stdout.splitlines()
    }
    assert summary["holdout_rows"]["before"] == summary["holdout_rows"]["after"] == len(tasks)
    assert "pass_at_1" in summary["delta"]["metrics"]
    assert record["holdout"]["word"]
    # The run reads back like any other run on the store.
    shown = run_cli("runs", "show", record["runId"])
    assert shown.returncode == 0 and b"holdout:" in shown.stdout and b"adapter:" in shown.stdout


def test_dpo_on_pass_fail_pairs_logs_margins(tiny: Path) -> None:
    record = train(
        str(ROWS),
        "--method",
        "dpo",
        "--base-model",
        str(tiny),
        "--spec",
        str(SPEC),
        "--steps",
        "2",
        "--beta",
        "0.2",
        "--holdout",
        "none",
        *FAST,
    )
    assert record["status"] == "done" and record["trainer"] == "trl DPOTrainer"
    assert {"loss", "margin", "pair_accuracy", "grad_norm"} <= _metrics(record)
    assert record["config"]["beta"] == 0.2 and record["config"]["shape"] == "trl preference pairs"
    assert "holdoutPassBefore" not in record["summary"]


def test_grpo_from_rows_trains_on_the_exported_reward_and_plays_the_env_holdout(tiny: Path) -> None:
    record = train(
        str(ROWS),
        "--method",
        "grpo",
        "--base-model",
        str(tiny),
        "--spec",
        str(SPEC),
        "--steps",
        "2",
        "--generations",
        "2",
        "--batch-size",
        "2",
        "--beta",
        "0.05",
        *FAST,
    )
    assert record["status"] == "done" and record["trainer"] == "trl GRPOTrainer"
    assert {"reward", "reward_std", "kl", "reward_whileai_reward_mean"} <= _metrics(record)
    assert record["config"]["generations"] == 2
    # No --holdout: the environment's own holdout split was played before and after.
    assert "holdoutPassBefore" in record["summary"] and "delta" in record["summary"]


def test_a_reward_model_grades_rows_through_the_judge_contract(tiny: Path, tmp_path: Path) -> None:
    record = train(
        str(ROWS),
        "--method",
        "rm",
        "--base-model",
        str(tiny),
        "--steps",
        "2",
        "--holdout",
        "none",
        *FAST,
    )
    assert record["status"] == "done" and record["trainer"] == "trl RewardTrainer"
    assert {"loss", "pair_accuracy", "margin"} <= _metrics(record)
    threshold = record["summary"]["rm_threshold"]
    rows = write_jsonl(
        tmp_path / "rows.jsonl", [json.loads(x) for x in ROWS.read_text().splitlines()[:6]]
    )
    graded = side_cli("grade", str(rows), "--judge", f"rm:{record['runId']}")
    assert graded.returncode == 0, graded.stderr.decode()[-3000:]
    out = [json.loads(line) for line in graded.stdout.splitlines()]
    assert len(out) == 6
    for row in out:
        assert row["judge_name"] == f"rm:{record['runId']}" and row["judge_status"] == "ok"
        score = row["judge_meta"]["rm_score"]
        assert row["reward"] == (1.0 if score >= threshold else 0.0)
        assert row["judge_meta"]["rm_threshold"] == threshold
    # `whileai reward-model RUN` is the same judge.
    again = side_cli("reward-model", record["adapter"], str(rows))
    assert again.returncode == 0, again.stderr.decode()[-3000:]
    assert [json.loads(x)["reward"] for x in again.stdout.splitlines()] == [
        r["reward"] for r in out
    ]


def test_a_run_that_cannot_load_its_base_is_failed_with_the_error(tmp_path: Path) -> None:
    done = side_cli(
        "train",
        str(ROWS),
        "--method",
        "sft",
        "--base-model",
        str(tmp_path / "no-such-model"),
        "--steps",
        "1",
        "--holdout",
        "none",
    )
    assert done.returncode == 1
    assert b"failed:" in done.stderr
    listed = json.loads(run_cli("runs", "--json").stdout)["runs"]
    assert [r["status"] for r in listed] == ["failed"]
    assert "no-such-model" in listed[0]["error"]
