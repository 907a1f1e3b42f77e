"""What a dataset holds, measured from its rows: the numbers `GET /datasets/{id}/profile`
answers and `whileai datasets` shows.

Counted in one pass so a large dataset is profiled without holding it in memory; only
per-task tallies are kept. A row passes when its clean `reward` is 0.5 or more
(`metrics.tally.passed`, the split of every row reader); a trace's verdict, which passes only at
1.0, has already become a 1.0 or 0.0 reward by the time `cut` stores it as a row.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from ..metrics.tally import TaskTally


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
    tally = TaskTally()
    tools: Counter[str] = Counter()
    rows_with_tools = 0
    for row in rows:
        tally.add_row(row)
        used = _tools_of(row)
        rows_with_tools += bool(used)
        tools.update(used)
    counts = [c for _, c in tally]
    graded = sum(c.graded for c in counts)
    passes = sum(c.passes for c in counts)
    per_task = [
        {
            "task": key,
            "runs": c.rows,
            "graded": c.graded,
            "passRate": round(c.passes / c.graded, 4) if c.graded else None,
        }
        for key, c in list(tally)[:per_task_limit]
    ]
    return {
        "rows": sum(c.rows for c in counts),
        "graded": graded,
        "passRate": round(passes / graded, 4) if graded else None,
        "tasks": len(tally),
        "mixedTasks": sum(1 for c in counts if c.mixed),
        "unanimousTasks": sum(1 for c in counts if c.graded and c.passes in (0, c.graded)),
        "toolUse": dict(tools.most_common()),
        "rowsWithTools": rows_with_tools,
        "perTask": per_task,
    }
