"""The strict check of OpenAI's documented fine-tuning lines, and every line `--format openai`
writes passing it."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from whileai_core.export import line_problems

from ..helpers import REPO, run_cli
from .rows import read

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_order",
            "description": "Look an order up.",
            "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}},
        },
    }
]
CALL = {"id": "call_0", "type": "function",
        "function": {"name": "get_order", "arguments": '{"order_id": "ORD-1234"}'}}  # fmt: skip
GOOD: dict[str, Any] = {
    "messages": [
        {"role": "system", "content": "You are the support agent."},
        {"role": "user", "content": "Where is ORD-1234?"},
        {"role": "assistant", "content": None, "tool_calls": [CALL], "weight": 0},
        {"role": "tool", "tool_call_id": "call_0", "content": '{"status": "ok"}'},
        {"role": "assistant", "content": "It shipped.", "weight": 1},
    ],
    "tools": TOOLS,
    "parallel_tool_calls": False,
}


def _broken(change: Any) -> dict[str, Any]:
    line = copy.deepcopy(GOOD)
    change(line)
    return line


def test_a_documented_line_passes() -> None:
    assert line_problems(GOOD) == []
    plain = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    assert line_problems({"messages": plain}) == []


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (lambda line: line.update(prompt="Where is ORD-1234?"), "'prompt' was unexpected"),
        (lambda line: line.update(loss_mask=[0, 0, 1, 0, 1]), "'loss_mask' was unexpected"),
        (lambda line: line.update(scenario_id="sc-1"), "'scenario_id' was unexpected"),
        (lambda line: line["messages"][3].update(name="get_order"), "messages/3"),
        (lambda line: line["messages"][4].update(weight=2), "messages/4"),
        (lambda line: line["messages"][2].update(content=None, tool_calls=None), "messages/2"),
        (lambda line: line["messages"].append({"role": "robot", "content": "x"}), "messages/5"),
        (lambda line: line["messages"][2]["tool_calls"][0]["function"].update(
            arguments={"order_id": "ORD-1234"}), "messages/2"),
        (lambda line: line["messages"][3].update(tool_call_id="call_9"), "answers no open"),
        (lambda line: line["messages"].pop(3), "unanswered"),
        (lambda line: line["messages"][2]["tool_calls"][0]["function"].update(
            arguments='["ORD-1234"]'), "not an object"),
        (lambda line: line["messages"][2]["tool_calls"][0]["function"].update(
            name="refund_order"), "not among `tools`"),
        (lambda line: line["messages"][4].update(weight=0), "no assistant turn is trained"),
        (lambda line: line.update(parallel_tool_calls="no"), "parallel_tool_calls"),
        (lambda line: line["tools"][0].update(strict=True, extra=1), "tools/0"),
    ],
    ids=[
        "prompt", "loss_mask", "meta", "tool-name", "weight-2", "empty-assistant", "role",
        "argument-object", "unknown-call-id", "unanswered", "argument-array", "unknown-tool",
        "nothing-trained", "parallel-type", "tool-extra",
    ],
)  # fmt: skip
def test_anything_off_the_documented_shape_is_named(change: Any, says: str) -> None:
    problems = line_problems(_broken(change))
    assert problems and any(says in p for p in problems), problems


def test_preference_lines_hold_one_assistant_message_on_each_side() -> None:
    line = {
        "input": {"messages": GOOD["messages"][:2], "tools": TOOLS, "parallel_tool_calls": False},
        "preferred_output": [{"role": "assistant", "content": None, "tool_calls": [CALL]}],
        "non_preferred_output": [{"role": "assistant", "content": "I cannot say."}],
    }
    assert line_problems(line) == []
    two = copy.deepcopy(line)
    two["preferred_output"].append({"role": "assistant", "content": "and more"})
    assert any("preferred_output" in p for p in line_problems(two))
    weighted = copy.deepcopy(line)
    weighted["non_preferred_output"][0]["weight"] = 1
    assert any("non_preferred_output/0" in p for p in line_problems(weighted))
    loose = copy.deepcopy(line)
    loose["chosen_reward"] = 1.0
    assert line_problems(loose)


@pytest.mark.parametrize("spec", ["orders", "airline", "repo-maint"])
def test_every_line_of_every_openai_export_passes(tmp_path: Path, spec: str) -> None:
    graded = REPO / "tests" / "golden" / "grade" / f"{spec}-rl.jsonl"
    runs = {
        "sft": [],
        "final": ["--mask", "final"],
        "unroll": ["--unroll", "--max-tool-output-chars", "60"],
        "failures": ["--include-failures"],
        "pairs": ["--pairs"],
    }
    checked = 0
    for name, extra in runs.items():
        out = tmp_path / f"{name}.jsonl"
        done = run_cli("export", str(graded), "--format", "openai", "--spec", f"specs/{spec}",
                       "-o", str(out), *extra)  # fmt: skip
        assert done.returncode == 0, done.stderr.decode()
        for number, line in enumerate(read(out), start=1):
            assert line_problems(line) == [], f"{name} line {number}: {line_problems(line)}"
            checked += 1
    assert checked > 50
