"""The calibration stamp: a task's pass rate over the k rollouts the grader saw.

A trainer builds a curriculum or retires solved tasks from it, so it is measured on the
rows as they came in, before any trimming, and a stamp a row already carries is kept
rather than re-measured on a remainder.
"""

from __future__ import annotations

from typing import Any

from ..metrics.stats import wilson
from ..metrics.tally import passed, reward_of
from .records import most_common, policy_of


def calibration_stamp(task_id: str, group: list[dict[str, Any]]) -> dict[str, Any]:
    """The ask's pass rate over its graded rollouts, with a Wilson 95% interval."""
    return stamp_from(task_id, [reward_of(row) for row in group], [policy_of(r) for r in group])


def stamp_from(
    task_id: str, rewards: list[float | None], policies: list[str | None]
) -> dict[str, Any]:
    graded = [r for r in rewards if r is not None]
    k = len(graded)
    wins = sum(1 for r in graded if passed(r))
    lo, hi = wilson(wins, k)
    return {
        "task_id": task_id,
        "k": k,
        "pass_rate": round(wins / k, 4) if k else None,
        "ci95": [round(lo, 4), round(hi, 4)],
        "policy": most_common(policies),
    }
