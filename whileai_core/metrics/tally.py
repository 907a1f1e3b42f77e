"""Tasks and their groups: the unit pass@k, the difficulty band and the gate all count in.

A task is its `scenario_id`; rows from other stacks without one fall back to the prompt
(or the first user message), so repeats of one ask still group together.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

# Partial credit splits at 0.5: a reward at or above it counts as a pass.
PASS_THRESHOLD = 0.5


def task_key(row: dict[str, Any]) -> str:
    """The identity of the ask this row is a rollout of."""
    sid = row.get("scenario_id")
    if isinstance(sid, str) and sid:
        return sid
    prompt = row.get("prompt")
    if isinstance(prompt, str) and prompt:
        return prompt
    for message in row.get("messages") or []:
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str):
                return content
    return ""


def reward_of(row: dict[str, Any]) -> float | None:
    """The row's reward when it was judged cleanly, else None (unjudged is not a fail)."""
    status = row.get("judge_status")
    if status not in (None, "ok"):
        return None
    reward = row.get("reward")
    if isinstance(reward, bool):
        return float(reward)
    if isinstance(reward, (int, float)):
        return float(reward)
    return None


def passed(reward: float) -> bool:
    return reward >= PASS_THRESHOLD


def group_by_task(rows: Iterable[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Rows grouped by task, in first-seen order."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(task_key(row), []).append(row)
    return groups
