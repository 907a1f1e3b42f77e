"""No production traces yet? Hold out a slice of a simulation run as stand-in production.

The held-out slice is what `simulate --traces` aims at and what the next run is checked
against (`leakage`), so it must be disjoint from the rest by task: every row of a task
(`scenario_id`, else its prompt) lands on one side, and the slice is prompt-disjoint
from what is left. It must also carry every kind of failure the run shows: each distinct
flaw signature (the grid coordinates a failing or faulted row pins down, see `mine.py`)
lands on the held-out side at least once, chosen by a greedy cover that prefers tasks
holding several uncovered signatures. That rule wins over the share: when covering them
takes more than `fraction` of the tasks, the slice is larger, and the report says what
share it reached. The rest of the share is filled in the order of a fixed hash of the
task id (the one holdout splits use), so a rerun splits the same way.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError
from ..metrics.holdout import task_hash
from ..metrics.tally import task_key
from .mine import axes_for, flaw_signature, observe

Signature = tuple[tuple[str, str], ...]


@dataclass
class SplitReport:
    rows: int = 0
    tasks: int = 0
    production_rows: int = 0
    production_tasks: int = 0
    fraction: float = 0.2
    share_reached: float = 0.0  # of tasks
    row_share_reached: float = 0.0
    flaw_signatures: int = 0
    flaw_signatures_held_out: int = 0
    tasks_for_the_signatures: int = 0

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    def lines(self) -> list[str]:
        out = [
            f"held out {self.production_tasks} of {self.tasks} tasks "
            f"({self.production_rows} of {self.rows} rows) as pseudo-production: "
            f"share {self.share_reached:.3f} of tasks for a target of {self.fraction}",
            f"flaw signatures on the held-out side: {self.flaw_signatures_held_out} of "
            f"{self.flaw_signatures} (covered by {self.tasks_for_the_signatures} tasks)",
        ]
        if self.share_reached > self.fraction + 1e-9:
            out.append("the share is over target: every flaw signature must be held out once")
        return out


def choose_held_out(
    task_signatures: dict[str, set[Signature]], fraction: float
) -> tuple[set[str], int]:
    """The held-out tasks, and how many of them the signature cover took."""
    if not 0.0 < fraction < 1.0:
        raise ConfigError("--pseudo-production must be between 0 and 1 (a share of tasks)")
    order = sorted(task_signatures, key=lambda t: (task_hash(t), t))
    rank = {task: i for i, task in enumerate(order)}
    uncovered = set().union(*task_signatures.values()) if task_signatures else set()
    held: set[str] = set()
    flawed = [t for t in order if task_signatures[t]]
    while uncovered:
        best = max(flawed, key=lambda t: (len(task_signatures[t] & uncovered), -rank[t]))
        held.add(best)
        uncovered -= task_signatures[best]
    cover = len(held)
    target = round(fraction * len(order))
    for task in order:
        if len(held) >= target:
            break
        held.add(task)
    return held, cover


def signatures_by_task(rows: Iterable[dict[str, Any]]) -> tuple[dict[str, set[Signature]], int]:
    """Each task's distinct flaw signatures (an empty set: no flaw row), and the row count."""
    seen: dict[str, list[Any]] = {}
    n = 0
    for row in rows:
        n += 1
        seen.setdefault(task_key(row), []).append(observe(row))
    names = sorted({tool for obs in seen.values() for o in obs for tool in o.tools})
    axes = axes_for(None, names)
    out = {
        task: {flaw_signature(o, axes) for o in obs if o.flaw} for task, obs in seen.items()
    }
    return out, n


def split_pseudo_production(
    rows: list[dict[str, Any]], fraction: float = 0.2
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], SplitReport]:
    """(production, rest, report) for rows in memory."""
    by_task, n = signatures_by_task(rows)
    held, cover = choose_held_out(by_task, fraction)
    production = [r for r in rows if task_key(r) in held]
    rest = [r for r in rows if task_key(r) not in held]
    return production, rest, _report(by_task, held, cover, n, len(production), fraction)


def _report(
    by_task: dict[str, set[Signature]], held: set[str], cover: int, rows: int,
    production_rows: int, fraction: float,
) -> SplitReport:  # fmt: skip
    distinct = set().union(*by_task.values()) if by_task else set()
    held_sigs = set().union(*(by_task[t] for t in held)) if held else set()
    return SplitReport(
        rows=rows,
        tasks=len(by_task),
        production_rows=production_rows,
        production_tasks=len(held),
        fraction=fraction,
        share_reached=round(len(held) / len(by_task), 6) if by_task else 0.0,
        row_share_reached=round(production_rows / rows, 6) if rows else 0.0,
        flaw_signatures=len(distinct),
        flaw_signatures_held_out=len(distinct & held_sigs),
        tasks_for_the_signatures=cover,
    )


def split_files(
    inputs: list[str], production: str, rest: str | None, fraction: float = 0.2
) -> SplitReport:
    """`whileai split`: the held-out tasks' rows to `production`, the others to `rest`
    (stdout when None), each in input order and unchanged."""
    from ..jsonl import RowWriter, read_rows, spooled

    with spooled(inputs) as (paths, _labels):
        by_task, n = signatures_by_task(read_rows(paths))
        held, cover = choose_held_out(by_task, fraction)
        written = 0
        with RowWriter(production) as prod, RowWriter(rest) as other:
            for row in read_rows(paths):
                if task_key(row) in held:
                    prod.write(row)
                    written += 1
                else:
                    other.write(row)
    return _report(by_task, held, cover, n, written, fraction)
