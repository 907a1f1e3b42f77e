"""One side of a comparison: its rows, streamed once into per-task values.

A side is one or more JSONL files (or '-' for stdin, on one side only). Nothing but the
per-task sums is kept, so a side of any length costs memory in tasks, not rows. With a
group reader (`--by`), the rows also feed one accumulator per group.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigError, NoRows, WhileaiError
from ..jsonl import OnError, ReadStats, read_rows
from ..metrics.passat import pass_numbers
from ..metrics.taskvalues import PASS_AT_1, TaskValues

GroupOf = Callable[[dict[str, Any]], str | None]


@dataclass
class Side:
    label: str
    values: TaskValues
    read: ReadStats
    groups: dict[str, TaskValues] = field(default_factory=dict)

    @property
    def k(self) -> int:
        """Rollouts per task on pass@1 (the median, for sizing a holdout); 1 when unknown."""
        counts = list(self.values.counts(PASS_AT_1).values())
        return max(1, round(statistics.median(counts))) if counts else 1

    def pass_numbers(self, seed: int = 0) -> dict[str, Any]:
        """This side's pass@1 (with its interval), pass^k and pass@k: `metrics.passat`'s
        numbers off the same per-task counts the comparison uses."""
        counts = self.values.counts(PASS_AT_1)
        means = self.values.means(PASS_AT_1)
        groups = [(n, round(means[t] * n)) for t, n in counts.items()]
        return pass_numbers(groups, seed=seed)

    def warnings(self) -> list[str]:
        if not self.read.skipped:
            return []
        return [f"{self.label}: {self.read.skipped_warning()}"]


def check_stdin(sides: Sequence[Sequence[str]]) -> None:
    """Stdin can feed one side; two sides cannot both read it."""
    if sum(1 for inputs in sides for name in inputs if name == "-") > 1:
        raise ConfigError("only one side can read stdin ('-'); give the others as files")


def collect(
    rows: Iterable[dict[str, Any]],
    *,
    label: str,
    group_of: GroupOf | None = None,
    group_metric: str | None = None,
    read: ReadStats | None = None,
) -> Side:
    """Fold rows into a Side; `group_of` also splits them by group (`group_metric` is the
    one metric the groups keep)."""
    values = TaskValues()
    groups: dict[str, TaskValues] = {}
    for row in rows:
        values.add(row)
        if group_of is not None:
            group = group_of(row)
            if group is not None:
                acc = groups.get(group)
                if acc is None:
                    acc = groups[group] = TaskValues(only=group_metric)
                acc.add(row)
    if not values.rows:
        if read is not None and read.skipped:
            raise WhileaiError(f"{label}: no usable rows ({read.skipped_warning()})")
        raise NoRows(f"{label}: no rows")
    return Side(label=label, values=values, read=read or ReadStats(), groups=groups)


def read_side(
    inputs: Sequence[str],
    *,
    on_error: OnError = "fail",
    group_of: GroupOf | None = None,
    group_metric: str | None = None,
) -> Side:
    """`collect` over JSONL files, labelled by their names."""
    label = ", ".join("stdin" if i == "-" else i for i in inputs)
    stats = ReadStats()
    rows = read_rows(inputs, on_error=on_error, stats=stats)
    return collect(rows, label=label, group_of=group_of, group_metric=group_metric, read=stats)


def require_metric(side: Side, metric: str) -> None:
    """A metric neither judged nor marked on a side is an input problem, said plainly."""
    if metric in side.values:
        return
    if metric == PASS_AT_1:
        raise WhileaiError(
            f"{side.label}: none of its {side.values.rows} rows is judged (reward null or "
            "judge_status not ok): grade them first (whileai grade)"
        )
    have = ", ".join(m for m in side.values.metrics() if m != PASS_AT_1) or "none"
    raise WhileaiError(f"{side.label}: no row carries {metric} (markers present: {have})")
