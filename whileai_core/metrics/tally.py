"""Tasks and their groups: the unit pass@k, the difficulty band and the gate all count in.

A task is its `scenario_id`; rows from other stacks without one fall back to the prompt
(or the first user message), so repeats of one ask still group together. `TaskTally` is
the one per-task count (rows, graded rollouts, passes) that every report reads: the pass@k
report, the selection, the gate, a dataset's profile and the trace cut all keep exactly
this and nothing else per task, so a stream of any length is tallied in memory that grows
with tasks, not rows.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from ..row import ask_text

# Partial credit splits at 0.5: a reward at or above it counts as a pass.
PASS_THRESHOLD = 0.5


def task_key(row: dict[str, Any]) -> str:
    """The identity of the ask this row is a rollout of."""
    sid = row.get("scenario_id")
    if isinstance(sid, str) and sid:
        return sid
    return ask_text(row)


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


@dataclass(slots=True)
class TaskCount:
    rows: int = 0
    graded: int = 0
    passes: int = 0
    # The rewards themselves, summed: a judge that scores 0.7 everywhere passes every
    # rollout at the 0.5 split, and the mean reward is what says it was 0.7.
    reward_sum: float = 0.0

    @property
    def rate(self) -> float | None:
        return self.passes / self.graded if self.graded else None

    @property
    def mixed(self) -> bool:
        """Some graded rollouts pass and some fail: the only tasks a grouped update learns from."""
        return 0 < self.passes < self.graded


class TaskTally:
    """Per-task counts in first-seen task order."""

    def __init__(self) -> None:
        self.tasks: dict[str, TaskCount] = {}

    def add(self, task: str, reward: float | None) -> TaskCount:
        count = self.tasks.get(task)
        if count is None:
            count = self.tasks[task] = TaskCount()
        count.rows += 1
        if reward is not None:
            count.graded += 1
            count.passes += passed(reward)
            count.reward_sum += reward
        return count

    def add_row(self, row: dict[str, Any]) -> TaskCount:
        return self.add(task_key(row), reward_of(row))

    def mean_reward(self) -> float | None:
        """The mean over tasks of each task's mean reward: pass@1's weighting, on the
        rewards as judged rather than split at PASS_THRESHOLD."""
        means = [c.reward_sum / c.graded for c in self.tasks.values() if c.graded]
        return sum(means) / len(means) if means else None

    def graded_counts(self) -> list[tuple[int, int]]:
        """(graded rollouts, passes) of every task with at least one graded rollout."""
        return [(c.graded, c.passes) for c in self.tasks.values() if c.graded]

    def __iter__(self) -> Iterator[tuple[str, TaskCount]]:
        return iter(self.tasks.items())

    def __len__(self) -> int:
        return len(self.tasks)


def tally(rows: Iterable[dict[str, Any]]) -> TaskTally:
    counts = TaskTally()
    for row in rows:
        counts.add_row(row)
    return counts
