"""Per-task values of every metric a comparison can read, from one pass over the rows.

A comparison is over tasks, never rows: a task's value is the mean over its rollouts of
the metric, so a task run eight times weighs the same as one run once, and the bootstrap
and the sign-flip test resample tasks. Two kinds of metric:

    pass_at_1       a rollout passes when its reward is at or above the pass line (0.5);
                    unjudged rows (judge_status not ok, reward null) are left out, not
                    counted as fails
    marker:NAME     the row's `markers[NAME]` (1.0 = good), over the rows that carry it

Memory grows with tasks x metrics (a running sum and a count each), not with rows.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

from ..errors import ConfigError
from .tally import passed, reward_of, task_key

PASS_AT_1 = "pass_at_1"
MARKER = "marker:"


def metric_key(name: str) -> str:
    """`pass_at_1`, `marker:NAME`, or a bare marker name (read as `marker:NAME`)."""
    text = name.strip()
    if not text:
        raise ConfigError("empty metric name: expected pass_at_1 or marker:NAME")
    if text == PASS_AT_1 or text.startswith(MARKER):
        if text == MARKER:
            raise ConfigError("marker: needs a name, e.g. marker:argument_grounding")
        return text
    return MARKER + text


def marker_value(row: dict[str, Any], name: str) -> float | None:
    markers = row.get("markers")
    if not isinstance(markers, dict):
        return None
    value = markers.get(name)
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)) and math.isfinite(value):
        return float(value)
    return None


class TaskValues:
    """Running per-task sums of pass@1 and of every numeric marker.

    `only` restricts the accumulator to one metric (a `--by` group needs only the
    target's).
    """

    def __init__(self, only: str | None = None) -> None:
        self.only = only
        self.rows = 0
        self._sums: dict[str, dict[str, list[float]]] = {}

    def _bump(self, metric: str, task: str, value: float) -> None:
        per_task = self._sums.get(metric)
        if per_task is None:
            per_task = self._sums[metric] = {}
        cell = per_task.get(task)
        if cell is None:
            per_task[task] = [value, 1.0]
        else:
            cell[0] += value
            cell[1] += 1.0

    def add(self, row: dict[str, Any]) -> None:
        self.rows += 1
        task = task_key(row)
        only = self.only
        if only is None or only == PASS_AT_1:
            reward = reward_of(row)
            if reward is not None:
                self._bump(PASS_AT_1, task, 1.0 if passed(reward) else 0.0)
        if only == PASS_AT_1:
            return
        markers = row.get("markers")
        if not isinstance(markers, dict):
            return
        names = markers if only is None else (only[len(MARKER) :],)
        for name in names:
            value = marker_value(row, name)
            if value is not None:
                self._bump(MARKER + str(name), task, value)

    def add_all(self, rows: Iterable[dict[str, Any]]) -> TaskValues:
        for row in rows:
            self.add(row)
        return self

    def metrics(self) -> list[str]:
        """pass_at_1 first (when any row was judged), then the markers by name."""
        names = sorted(m for m in self._sums if m != PASS_AT_1)
        return ([PASS_AT_1] if PASS_AT_1 in self._sums else []) + names

    def means(self, metric: str) -> dict[str, float]:
        """{task: the metric's mean over that task's rollouts}, in first-seen task order."""
        return {t: s / n for t, (s, n) in self._sums.get(metric, {}).items()}

    def counts(self, metric: str) -> dict[str, int]:
        """{task: how many rollouts carried the metric}."""
        return {t: int(n) for t, (_, n) in self._sums.get(metric, {}).items()}

    def __contains__(self, metric: str) -> bool:
        return metric in self._sums


def group_reader(by: str) -> Callable[[dict[str, Any]], str | None]:
    """What `--by KEY|marker:NAME` groups a row under: a top-level row key (a dotted path
    reaches into a dict, e.g. `scenario_dimensions.tool_condition`) or a marker's value."""
    if by.startswith(MARKER):
        name = by[len(MARKER) :]

        def by_marker(row: dict[str, Any]) -> str | None:
            value = marker_value(row, name)
            return None if value is None else f"{value:g}"

        return by_marker
    path = by.split(".")

    def by_key(row: dict[str, Any]) -> str | None:
        value: Any = row
        for part in path:
            if not isinstance(value, dict):
                return None
            value = value.get(part)
        if value is None or value == "" or isinstance(value, (dict, list)):
            return None
        return str(value)

    return by_key
