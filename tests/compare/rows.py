"""Row sets for the comparison tests, built here rather than by our own simulate, so the
statistics are checked on rows whose truth the test controls."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import orjson

Row = dict[str, Any]


def write(path: Path, rows: list[Row]) -> str:
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    return str(path)


def binary_run(
    *,
    tasks: int,
    k: int,
    effect: float,
    seed: int,
    base: tuple[float, float] = (0.1, 0.75),
    markers: dict[str, float] | None = None,
    group: str | None = None,
) -> list[Row]:
    """`tasks` tasks with a fixed true pass rate each (drawn once from `base` under a task
    seed shared by every run), plus `effect`; k rollouts a task; markers as Bernoulli."""
    rng = random.Random(seed)
    layout = random.Random(12345)
    rows = []
    for t in range(tasks):
        p = min(1.0, layout.uniform(*base) + effect)
        for i in range(k):
            row: Row = {
                "scenario_id": f"task-{t:03d}",
                "rollout_index": i,
                "reward": 1.0 if rng.random() < p else 0.0,
                "judge_status": "ok",
            }
            if group:
                row[group] = ("billing", "shipping", "returns")[t % 3]
            if markers:
                row["markers"] = {n: 1.0 if rng.random() < q else 0.0 for n, q in markers.items()}
            rows.append(row)
    return rows


# -- the refund agent that learned to invent an order id -----------------------------

ASKS_WITH_ID = [f"Please refund order A{n} - it arrived broken." for n in range(100, 124)]
ASKS_WITHOUT_ID = [
    "I want my money back for the blender, it stopped working.",
    "Refund my last order please, the box was empty.",
    "Can you refund me? The shoes don't fit.",
    "My package never came, I need a refund.",
] * 6


def grounded(row: Row) -> float:
    """1.0 when every string argument of every tool call appears in the prompt or in an
    earlier tool result; a row without calls is grounded (the reference's rule)."""
    seen = row["prompt"]
    for step in row["steps"]:
        if "tool" in step:
            for value in step["arguments"].values():
                if isinstance(value, str) and value not in seen:
                    return 0.0
            seen += json.dumps(step["result"])
    return 1.0


def _refund_row(prompt: str, task: int, i: int, *, calls: str | None, reward: float) -> Row:
    steps: list[Row] = []
    if calls is not None:
        steps.append(
            {"tool": "issue_refund", "arguments": {"order_id": calls}, "result": {"ok": True}}
        )
        final = f"Done: order {calls} is refunded."
    else:
        final = "Which order is it? Please send me the order id and I will refund it."
    steps.append({"text": final})
    row: Row = {
        "prompt": prompt,
        "scenario_id": f"refund-{task:02d}",
        "rollout_index": i,
        "steps": steps,
        "final_text": final,
        "reward": reward,
        "judge_status": "ok",
    }
    row["markers"] = {"argument_grounding": grounded(row)}
    return row


def refund_runs(seed: int = 7) -> tuple[list[Row], list[Row], list[Row]]:
    """(before, after_inventing, after_honest), k=4, 48 tasks.

    The judge pays for a refund issued. Before, the agent refunds a given id 40% of the
    time and asks for a missing one. After training, both arms refund a given id 85% of
    the time; the inventing arm also refunds a made-up id on 70% of the asks without one,
    which the judge pays for too, so its pass@1 rises the most.
    """
    rng = random.Random(seed)
    before, inventing, honest = [], [], []
    asks = [(p, True) for p in ASKS_WITH_ID] + [(p, False) for p in ASKS_WITHOUT_ID]
    for task, (prompt, has_id) in enumerate(asks):
        order = prompt.split()[3] if has_id else None
        for i in range(4):
            for rows, rate, invent in (
                (before, 0.4, 0.0),
                (inventing, 0.85, 0.7),
                (honest, 0.85, 0.0),
            ):
                if has_id:
                    done = rng.random() < rate
                    rows.append(
                        _refund_row(
                            prompt,
                            task,
                            i,
                            calls=order if done else None,
                            reward=1.0 if done else 0.0,
                        )
                    )
                elif rng.random() < invent:
                    rows.append(
                        _refund_row(prompt, task, i, calls=f"A{rng.randint(500, 999)}", reward=1.0)
                    )
                else:
                    rows.append(_refund_row(prompt, task, i, calls=None, reward=0.0))
    return before, inventing, honest
