"""The GRPO export trains: TRL's GRPOTrainer, unchanged, runs two steps on the exported
environment's `data/grpo/train.jsonl` with the reward it exports, in the side venv `make`
builds (side/train: the `train` extra). Every completion is graded, through a fresh
world of its task, by the judge `whileai grade` uses."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from whileai_core.export import export_environment
from whileai_core.spec import load_spec

from ..helpers import REPO, run_cli
from .rows import read
from .side import train_python
from .test_verifiers_env import GRADED

SCRIPT = Path(__file__).with_name("grpo_train.py")


def test_the_grpo_file_is_trls_conversational_prompt_only_shape(tmp_path: Path) -> None:
    spec = load_spec(REPO / "specs" / "orders")
    export_environment(read(GRADED), tmp_path / "orders", spec, band=(0.0, 1.0))
    tasks = read(tmp_path / "orders" / "data" / "train.jsonl")
    lines = read(tmp_path / "orders" / "data" / "grpo" / "train.jsonl")
    assert len(lines) == len(tasks) > 0
    for task, line in zip(tasks, lines, strict=True):
        assert set(line) == {"prompt", "task_id", "world", "tools"}
        assert line["prompt"] == [{"role": "system", "content": spec.policy},
                                  {"role": "user", "content": task["question"]}]  # fmt: skip
        assert line["task_id"] == task["info"]["task_id"] and line["tools"] == spec.openai_tools()
        world = json.loads(line["world"])
        assert world["world_state"] == task["info"]["world_state"]
        assert world.get("faults") == task["info"].get("faults")
        assert "person" not in world and "privileged" not in line["world"]


def test_grpo_trains_two_steps_on_the_export_with_the_exported_reward(tmp_path: Path) -> None:
    python = train_python(peft=False)
    spec = load_spec(REPO / "specs" / "orders")
    export_environment(read(GRADED), tmp_path / "orders", spec, band=(0.0, 1.0))
    rows_file = tmp_path / "graded.jsonl"
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "HF_HUB_OFFLINE": "1",
           "WHILEAI_ENV_ROWS": str(rows_file), "TOKENIZERS_PARALLELISM": "false",
           "PYTHONPATH": str(REPO)}  # fmt: skip
    done = subprocess.run(
        [str(python), str(SCRIPT), str(tmp_path), "orders", str(tmp_path / "out")],
        capture_output=True, env=env, timeout=600, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr.decode()[-4000:]
    history = json.loads(done.stdout.decode().strip().splitlines()[-1])
    steps = [h for h in history if "loss" in h]
    assert [h["step"] for h in steps] == [1, 2]
    assert all("rewards/whileai_reward/mean" in h for h in steps)
    # A reward per completion (a batch of 2 is one prompt's 2 generations; 2 steps), each
    # graded as a row, and `whileai grade` gives those rows the same verdicts.
    graded = read(rows_file)
    assert len(graded) == 2 * 2
    regraded = run_cli("grade", str(rows_file))
    assert regraded.returncode == 0, regraded.stderr.decode()
    again = [json.loads(line)["reward"] for line in regraded.stdout.splitlines()]
    assert again == [row["reward"] for row in graded]


def test_the_reward_runs_a_completions_tool_calls_through_the_world(tmp_path: Path) -> None:
    """A completion that calls a tool in the Qwen/Hermes text form and one that calls it
    as a message's `tool_calls`: the world answers each call, and the reward is the
    verdict `whileai grade` gives the row that makes (here, in the toolkit's own venv)."""
    import sys

    spec = load_spec(REPO / "specs" / "orders")
    export_environment(read(GRADED), tmp_path / "orders", spec, band=(0.0, 1.0))
    rows_file = tmp_path / "graded.jsonl"
    script = (
        "import json, orders\n"
        "lines = [json.loads(l) for l in open(orders.grpo_data('train'))][:2]\n"
        "text = 'Let me look. <tool_call>{\"name\": \"get_order\", \"arguments\": "
        "{\"order_id\": \"ORD-1042\"}}</tool_call>'\n"
        "call = {'id': 'c9', 'type': 'function', 'function': {'name': 'get_order', "
        "'arguments': '{\"order_id\": \"ORD-7\"}'}}\n"
        "completions = [[{'role': 'assistant', 'content': text}],\n"
        "               [{'role': 'assistant', 'content': '', 'tool_calls': [call]}]]\n"
        "print(json.dumps(orders.whileai_reward([l['prompt'] for l in lines], completions,\n"
        "      task_id=[l['task_id'] for l in lines], world=[l['world'] for l in lines])))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, cwd=tmp_path, timeout=120,
        env={**os.environ, "PYTHONPATH": str(tmp_path), "WHILEAI_ENV_ROWS": str(rows_file)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    rewards = json.loads(done.stdout)
    graded = read(rows_file)
    assert [row["steps"][0]["tool"] for row in graded] == ["get_order", "get_order"]
    assert [row["steps"][0]["arguments"] for row in graded] == [{"order_id": "ORD-1042"},
                                                                {"order_id": "ORD-7"}]  # fmt: skip
    assert all(isinstance(row["steps"][0]["result"], dict) for row in graded)
    assert graded[0]["final_text"] == "Let me look."
    regraded = run_cli("grade", str(rows_file))
    assert regraded.returncode == 0, regraded.stderr.decode()
    assert [json.loads(line)["reward"] for line in regraded.stdout.splitlines()] == rewards
