"""Curriculum: graded tasks ordered easy to hard, the solved retired (rlhf-book ch. 7).

A task's difficulty is its pass rate over its rollouts (the one tally, `metrics.tally`).
Trainable tasks sit strictly between `floor` and `solved`; they are ordered easy to hard
(highest pass rate first) and cut into `tiers` equal parts for a staged schedule.
Retired tasks (pass rate at or above `solved`, 0.9 by default) are dead gradient; tasks
at or below `floor` (0.0) are not ready: no signal until the policy improves. The report
also counts how many trainable tasks sit in the difficulty band.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigError
from ..jsonl import OnError, ReadStats, RowWriter, read_rows, spooled
from ..metrics.band import DEFAULT_BAND, Band, in_band
from ..metrics.tally import TaskTally, task_key


@dataclass
class CurriculumOptions:
    solved: float = 0.9
    floor: float = 0.0
    tiers: int = 3
    band: Band = DEFAULT_BAND

    def check(self) -> None:
        if not 0.0 <= self.floor < self.solved <= 1.0:
            raise ConfigError(f"need 0 <= floor < solved <= 1, got {self.floor:g}, {self.solved:g}")
        if self.tiers < 1:
            raise ConfigError(f"tiers {self.tiers}: must be at least 1")


@dataclass
class Curriculum:
    options: CurriculumOptions
    trainable: list[dict[str, Any]] = field(default_factory=list)
    retired: list[dict[str, Any]] = field(default_factory=list)
    not_ready: list[dict[str, Any]] = field(default_factory=list)
    ungraded: int = 0
    rows: int = 0
    rows_written: int | None = None
    skipped_lines: int = 0

    @property
    def retired_ids(self) -> set[str]:
        return {t["task"] for t in self.retired}

    def tiers(self) -> list[list[str]]:
        ids = [t["task"] for t in self.trainable]
        k = min(self.options.tiers, len(ids)) or 1
        size, extra = divmod(len(ids), k)
        out, start = [], 0
        for i in range(k):
            end = start + size + (1 if i < extra else 0)
            out.append(ids[start:end])
            start = end
        return [tier for tier in out if tier]

    def as_dict(self) -> dict[str, Any]:
        o = self.options
        return {
            "rows": self.rows,
            "solved": o.solved,
            "floor": o.floor,
            "band": list(o.band),
            "trainable": len(self.trainable),
            "retired": len(self.retired),
            "not_ready": len(self.not_ready),
            "ungraded_tasks": self.ungraded,
            "in_band": sum(1 for t in self.trainable if in_band(t["pass_rate"], o.band)),
            "schedule": [t["task"] for t in self.trainable],
            "tiers": self.tiers(),
            "tasks": {
                "trainable": self.trainable,
                "retired": self.retired,
                "not_ready": self.not_ready,
            },
            "rows_written": self.rows_written,
            "skipped_lines": self.skipped_lines,
        }

    def lines(self) -> list[str]:
        d = self.as_dict()
        lo, hi = self.options.band
        out = [
            f"curriculum over {d['rows']} rows: {d['trainable']} trainable ({d['in_band']} in the "
            f"{lo:g}-{hi:g} band), {d['retired']} retired (pass rate >= {d['solved']:g}), "
            f"{d['not_ready']} not ready (<= {d['floor']:g})"
            + (f", {d['ungraded_tasks']} ungraded" if d["ungraded_tasks"] else "")
        ]
        by_id = {t["task"]: t for t in self.trainable}
        for i, tier in enumerate(d["tiers"], start=1):
            rates = [by_id[t]["pass_rate"] for t in tier]
            top, bottom = max(rates), min(rates)
            out.append(f"  tier {i}: {len(tier)} tasks, pass rate {top:.2f} down to {bottom:.2f}")
        if self.rows_written is not None:
            out.append(f"  wrote {self.rows_written} rows without the {d['retired']} retired tasks")
        return out


def curriculum_from(tally: TaskTally, options: CurriculumOptions, rows: int) -> Curriculum:
    options.check()
    cur = Curriculum(options, rows=rows)
    for task, count in tally:
        if not count.graded:
            cur.ungraded += 1
            continue
        rate = count.passes / count.graded
        entry = {"task": task, "pass_rate": round(rate, 4), "rollouts": count.graded}
        if rate >= options.solved - 1e-9:
            cur.retired.append(entry)
        elif rate <= options.floor + 1e-9:
            cur.not_ready.append(entry)
        else:
            cur.trainable.append(entry)
    cur.trainable.sort(key=lambda t: (-t["pass_rate"], t["task"]))
    return cur


def curriculum(
    rows: Iterable[dict[str, Any]], options: CurriculumOptions | None = None
) -> Curriculum:
    tally = TaskTally()
    n = 0
    for row in rows:
        n += 1
        tally.add_row(row)
    return curriculum_from(tally, options or CurriculumOptions(), n)


def retire_solved(
    rows: Sequence[dict[str, Any]], options: CurriculumOptions | None = None
) -> list[dict[str, Any]]:
    """The rows without the tasks the policy already aces."""
    retired = curriculum(rows, options).retired_ids
    return [row for row in rows if task_key(row) not in retired]


def curriculum_files(
    inputs: Sequence[str],
    options: CurriculumOptions | None = None,
    *,
    retire: bool = False,
    output: str | None = None,
    on_error: OnError = "fail",
) -> Curriculum:
    """`whileai curriculum`: the report, and with `retire` the rows minus retired tasks
    (a second pass over the input, so memory stays one count per task)."""
    stats = ReadStats()
    with spooled(inputs) as (paths, _labels):
        cur = curriculum(read_rows(paths, on_error=on_error, stats=stats), options)
        if retire:
            retired = cur.retired_ids
            with RowWriter(output) as writer:
                for row in read_rows(paths, on_error="skip"):
                    if task_key(row) not in retired:
                        writer.write(row)
            cur.rows_written = writer.count
    cur.skipped_lines = stats.skipped
    return cur
