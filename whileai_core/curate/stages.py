"""Stage lineage: which stage of the pipeline each row fed (rlhf-book ch. 3).

SFT, reward modelling, RL, mid-training and the eval that judges the result are stages;
`stamp_stage` records on a row the stage it went to (`stage`, and every stage it has
fed, in order, in `stages`). `stage_report` counts rows and tasks per stage and flags the
mistake that most needs catching: a task used in `eval` and in a training stage, which
makes the eval a measurement of what was trained on.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigError
from ..metrics.tally import task_key

STAGES = ("sft", "rm", "rl", "eval", "mid")
TRAINING_STAGES = ("sft", "rm", "rl", "mid")


def check_stage(stage: str) -> str:
    if stage not in STAGES:
        raise ConfigError(f"stage {stage!r}: expected one of {', '.join(STAGES)}")
    return stage


def stage_of(row: dict[str, Any]) -> str | None:
    """The stage this row last fed, or None when it was never stamped."""
    stage = row.get("stage")
    return stage if stage in STAGES else None


def stages_of(row: dict[str, Any]) -> list[str]:
    """Every stage this row fed, oldest first."""
    history = row.get("stages")
    found = [s for s in history if s in STAGES] if isinstance(history, list) else []
    last = stage_of(row)
    if last is not None and last not in found:
        found.append(last)
    return found


def stamp_stage(row: dict[str, Any], stage: str) -> dict[str, Any]:
    """A copy of `row` stamped as having fed `stage`; the history keeps earlier stages."""
    check_stage(stage)
    history = stages_of(row)
    if stage not in history:
        history.append(stage)
    return {**row, "stage": stage, "stages": history}


@dataclass
class StageReport:
    rows: int = 0
    unstamped: int = 0
    rows_by_stage: dict[str, int] = field(default_factory=lambda: dict.fromkeys(STAGES, 0))
    _tasks: dict[str, set[str]] = field(default_factory=dict)

    def add(self, row: dict[str, Any]) -> None:
        self.rows += 1
        stages = stages_of(row)
        if not stages:
            self.unstamped += 1
            return
        task = task_key(row)
        seen = self._tasks.setdefault(task, set())
        for stage in stages:
            self.rows_by_stage[stage] += 1
            seen.add(stage)

    def add_all(self, rows: Iterable[dict[str, Any]]) -> StageReport:
        for row in rows:
            self.add(row)
        return self

    def as_dict(self) -> dict[str, Any]:
        tasks_by_stage = dict.fromkeys(STAGES, 0)
        crossed: dict[str, list[str]] = {}
        for task, stages in self._tasks.items():
            for stage in stages:
                tasks_by_stage[stage] += 1
            if "eval" in stages:
                trained = sorted(s for s in stages if s in TRAINING_STAGES)
                if trained:
                    crossed[task] = trained
        return {
            "rows": self.rows,
            "unstamped": self.unstamped,
            "rows_by_stage": self.rows_by_stage,
            "tasks_by_stage": tasks_by_stage,
            "eval_and_training": len(crossed),
            "examples": [{"task": t, "also_in": s} for t, s in list(crossed.items())[:10]],
            "ok": not crossed,
        }

    def lines(self) -> list[str]:
        d = self.as_dict()
        counts = ", ".join(
            f"{s} {d['rows_by_stage'][s]} rows/{d['tasks_by_stage'][s]} tasks"
            for s in STAGES
            if d["rows_by_stage"][s]
        )
        out = [f"stages over {self.rows} rows: {counts or 'none stamped'}"]
        if self.unstamped:
            out.append(f"  {self.unstamped} rows carry no stage (whileai mark --stage S)")
        if d["eval_and_training"]:
            out.append(
                f"  {d['eval_and_training']} task(s) used in eval and in training: the eval "
                "measures what was trained on"
            )
            out += [f"    {e['task']}: eval + {', '.join(e['also_in'])}" for e in d["examples"]]
        else:
            out.append("  no task is in both eval and a training stage")
        return out
