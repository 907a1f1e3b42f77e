"""What a dataset holds, measured from its rows: the numbers `GET /datasets/{id}/profile`
answers and `whileai datasets` shows.

Counted in one pass so a large dataset is profiled without holding it in memory; only
per-task tallies are kept. A row passes when its clean `reward` is 0.5 or more
(`groups.passed`, the split of every row reader); a trace's verdict, which passes only at
1.0, has already become a 1.0 or 0.0 reward by the time `cut` stores it as a row.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..metrics.tally import passed, reward_of, task_key


@dataclass
class _Task:
    runs: int = 0
    graded: int = 0
    passes: int = 0


@dataclass
class _Profile:
    rows: int = 0
    graded: int = 0
    passes: int = 0
    tasks: dict[str, _Task] = field(default_factory=dict)
    tools: Counter[str] = field(default_factory=Counter)
    rows_with_tools: int = 0


def _tools_of(row: dict[str, Any]) -> list[str]:
    names: list[str] = []
    for step in row.get("steps") or []:
        if isinstance(step, dict) and isinstance(step.get("tool"), str):
            names.append(step["tool"])
    if not names:
        used = row.get("tools_used")
        if isinstance(used, list):
            names = [t for t in used if isinstance(t, str)]
    return names


def profile_rows(rows: Iterable[dict[str, Any]], *, per_task_limit: int = 50) -> dict[str, Any]:
    """Pass rate over graded rows, tasks, mixed tasks (some runs pass, some fail: the only
    tasks a grouped update learns from) and tool use."""
    p = _Profile()
    for row in rows:
        p.rows += 1
        task = p.tasks.setdefault(task_key(row), _Task())
        task.runs += 1
        reward = reward_of(row)
        if reward is not None:
            p.graded += 1
            task.graded += 1
            if passed(reward):
                p.passes += 1
                task.passes += 1
        tools = _tools_of(row)
        if tools:
            p.rows_with_tools += 1
        p.tools.update(tools)
    mixed = [k for k, t in p.tasks.items() if 0 < t.passes < t.graded]
    per_task = [
        {
            "task": key,
            "runs": t.runs,
            "graded": t.graded,
            "passRate": round(t.passes / t.graded, 4) if t.graded else None,
        }
        for key, t in list(p.tasks.items())[:per_task_limit]
    ]
    return {
        "rows": p.rows,
        "graded": p.graded,
        "passRate": round(p.passes / p.graded, 4) if p.graded else None,
        "tasks": len(p.tasks),
        "mixedTasks": len(mixed),
        "unanimousTasks": sum(
            1 for t in p.tasks.values() if t.graded and t.passes in (0, t.graded)
        ),
        "toolUse": dict(p.tools.most_common()),
        "rowsWithTools": p.rows_with_tools,
        "perTask": per_task,
    }
