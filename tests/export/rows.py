"""Rows the export tests build: graded rollouts with flat SDK tool calls and privileged
material in two places, as someone else's stack would write them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson

REFERENCE = "Refund only after the carrier confirms delivery of the parcel"
HIDDEN = "carrier lost the parcel in transit"
SYSTEM = "You are the support agent for an online store. Look orders up before acting."


def row(
    task: str = "sc-1", i: int = 0, reward: float = 1.0, *, system: bool = False, **extra: Any
) -> dict[str, Any]:
    """A graded row: user ask, a get_order call, its result, the reply (agent turn 2)."""
    ask = f"Can you refund order {task}? It never arrived."
    result = {"status": "ok", "data": {"order_id": task}, "privileged": {"reference": REFERENCE}}
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": ask},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"name": "get_order", "arguments": {"order_id": task}}],
        },
        {"role": "tool", "name": "get_order", "content": json.dumps(result)},
        {"role": "assistant", "content": f"Order {task} is in transit; no refund yet. ({i})"},
    ]
    if system:
        messages.insert(0, {"role": "system", "content": SYSTEM})
    out: dict[str, Any] = {
        "prompt": ask,
        "scenario_id": task,
        "rollout_index": i,
        "messages": messages,
        "final_text": messages[-1]["content"],
        "privileged": {"reference": REFERENCE, "hidden_state": {"note": HIDDEN}},
        "reward": reward,
        "judge_status": "ok",
        "unknown_key": {"kept": True},
    }
    out.update(extra)
    return out


def leaky(task: str = "sc-1", i: int = 9, reward: float = 1.0) -> dict[str, Any]:
    out = row(task, i, reward)
    out["messages"][-1]["content"] = out["final_text"] = f"My notes say: {REFERENCE}."
    return out


def steps_only() -> dict[str, Any]:
    return {
        "prompt": "Cancel ORD-7 please.",
        "scenario_id": "sc-steps",
        "steps": [
            {"tool": "get_order", "arguments": {"order_id": "ORD-7"}, "result": {"status": "ok"}},
            {"tool": "cancel_order", "arguments": '{"order_id": "ORD-7"}', "result": "done"},
        ],
        "final_text": "ORD-7 is cancelled.",
        "reward": 1.0,
    }


def graded_set() -> list[dict[str, Any]]:
    rows = []
    for t in range(12):
        for i in range(4):
            rows.append(row(f"sc-{t:02d}", i, 1.0 if i < 1 + t % 3 else 0.0))
    rows += [row("sc-easy", i, 1.0) for i in range(4)]
    rows += [row("sc-hard", i, 1.0 if i == 0 else 0.0) for i in range(8)]
    rows.append(leaky("sc-00", 7, 0.0))
    return rows


def write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    return path


def read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def assert_clean(data: bytes) -> None:
    lowered = data.lower()
    assert b"privileged" not in lowered
    assert REFERENCE.lower().encode() not in lowered
    assert HIDDEN.lower().encode() not in lowered
