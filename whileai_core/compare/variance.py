"""`whileai variance RUN1 RUN2 RUN3...`: how much the eval moves when simply re-run.

Give it three or more evaluations of the same model on the same eval. Each run's metric
is its mean over tasks (the number `delta` compares); `run_std` is the sample standard
deviation of those means, for pass@1 and for every marker all runs carry
(`run_std_by_metric`: a marker on a subset of tasks is noisier than pass@1, so each
metric keeps its own floor). With `--by`, the same per group. The report is what
`delta --run-std FILE` reads; a delta inside 2 x run_std is what re-running the eval does
on its own.

Two runs give a difference, not a distribution, so fewer than three is refused.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from ..errors import ConfigError
from ..jsonl import OnError
from ..metrics.power import sample_std
from ..metrics.stats import mean
from ..metrics.taskvalues import PASS_AT_1, group_reader, metric_key
from .sides import Side, check_stdin, collect, read_side

MIN_RUNS = 3


@dataclass
class VarianceReport:
    metric: str
    runs: list[str]
    means: list[float | None]
    run_std: float | None
    run_std_by_metric: dict[str, float | None]
    tasks_in_every_run: int
    by: str | None = None
    groups: dict[str, dict[str, Any]] | None = None
    warnings: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        values = [m for m in self.means if m is not None]
        return {
            "metric": self.metric,
            "n_runs": len(self.runs),
            "runs": self.runs,
            "means": self.means,
            "mean": mean(values) if values else None,
            "run_std": self.run_std,
            "run_std_by_metric": self.run_std_by_metric,
            "noise_band": 2 * self.run_std if self.run_std is not None else None,
            "tasks_in_every_run": self.tasks_in_every_run,
            "by": self.by,
            "groups": self.groups,
            "warnings": self.warnings,
        }

    def lines(self) -> list[str]:
        std = "n/a" if self.run_std is None else f"{self.run_std:.4f}"
        out = [
            f"variance: {self.metric} run_std {std} over {len(self.runs)} runs "
            f"({self.tasks_in_every_run} tasks in every run)"
        ]
        for label, value in zip(self.runs, self.means, strict=True):
            out.append(f"  {label}: {'n/a' if value is None else f'{value:.4f}'}")
        for metric, value in self.run_std_by_metric.items():
            if metric != self.metric:
                out.append(f"  run_std {metric}: {'n/a' if value is None else f'{value:.4f}'}")
        if self.run_std is not None:
            out.append(
                f"a delta with |delta| < {2 * self.run_std:.4f} (2 x run_std) is the eval "
                "re-running: pass this report to `whileai delta --run-std FILE`"
            )
        if self.groups:
            out.append(f"by {self.by}:")
            for name, g in self.groups.items():
                shown = "n/a" if g["run_std"] is None else f"{g['run_std']:.4f}"
                out.append(f"  {name}: run_std {shown} ({g['n_runs']} runs)")
        return out


def check_runs(n: int) -> None:
    if n < MIN_RUNS:
        raise ConfigError(
            f"{n} run(s): variance needs {MIN_RUNS} or more evaluations of the same model "
            "(two give a difference, not a distribution)"
        )


def eval_variance(
    runs: Sequence[Iterable[dict[str, Any]]],
    *,
    metric: str = PASS_AT_1,
    by: str | None = None,
    labels: Sequence[str] | None = None,
) -> VarianceReport:
    """The re-run standard deviation of `metric` over row sets of the same eval."""
    check_runs(len(runs))
    key = metric_key(metric)
    group_of = group_reader(by) if by else None
    names = list(labels) if labels is not None else [f"run_{i + 1}" for i in range(len(runs))]
    sides = [
        collect(rows, label=name, group_of=group_of, group_metric=key)
        for rows, name in zip(runs, names, strict=True)
    ]
    return _report(sides, key, by)


def variance_files(
    runs: Sequence[str],
    *,
    metric: str = PASS_AT_1,
    by: str | None = None,
    on_error: OnError = "fail",
) -> VarianceReport:
    """`eval_variance` over JSONL files, one file per run."""
    check_runs(len(runs))
    check_stdin([[r] for r in runs])
    key = metric_key(metric)
    group_of = group_reader(by) if by else None
    sides = [read_side([r], on_error=on_error, group_of=group_of, group_metric=key) for r in runs]
    return _report(sides, key, by)


def _std_of(sides: Sequence[Side], metric: str) -> tuple[list[float | None], float | None]:
    means: list[float | None] = []
    for side in sides:
        values = list(side.values.means(metric).values())
        means.append(mean(values) if values else None)
    present = [m for m in means if m is not None]
    return means, sample_std(present)


def _report(sides: Sequence[Side], metric: str, by: str | None) -> VarianceReport:
    warnings = [w for s in sides for w in s.warnings()]
    means, std = _std_of(sides, metric)
    missing = [s.label for s, m in zip(sides, means, strict=True) if m is None]
    if missing:
        warnings.append(f"{metric} is not measured in {', '.join(missing)}: left out")
    shared = set(sides[0].values.metrics())
    for side in sides[1:]:
        shared &= set(side.values.metrics())
    floors = [PASS_AT_1] if PASS_AT_1 in shared else []
    floors += sorted(m for m in shared if m != PASS_AT_1)
    if metric not in floors:
        floors.append(metric)
    by_metric = {m: (std if m == metric else _std_of(sides, m)[1]) for m in floors}
    task_sets = [set(s.values.means(metric)) for s in sides]
    common = set.intersection(*task_sets)
    if any(ts != common for ts in task_sets):
        warnings.append(
            "the runs do not cover the same tasks: their means are not strictly comparable "
            "(re-run on pinned tasks: simulate --tasks)"
        )
    groups: dict[str, dict[str, Any]] | None = None
    if by is not None:
        groups = {}
        names = sorted({g for s in sides for g in s.groups})
        for name in names:
            per_run = []
            for s in sides:
                values = list(s.groups[name].means(metric).values()) if name in s.groups else []
                per_run.append(mean(values) if values else None)
            present = [m for m in per_run if m is not None]
            groups[name] = {
                "means": per_run,
                "n_runs": len(present),
                "run_std": sample_std(present),
            }
    return VarianceReport(
        metric=metric,
        runs=[s.label for s in sides],
        means=means,
        run_std=std,
        run_std_by_metric=by_metric,
        tasks_in_every_run=len(common),
        by=by,
        groups=groups,
        warnings=warnings,
    )


def load_run_std(text: str) -> float | dict[str, float | None]:
    """`delta --run-std`: a number, or a `variance --report` JSON file (its per-metric
    floors, so each metric is judged against its own)."""
    try:
        value = float(text)
    except ValueError:
        pass
    else:
        if not math.isfinite(value) or value < 0:
            raise ConfigError(f"--run-std {text}: expected a non-negative number or a file")
        return value
    path = Path(text)
    try:
        data = orjson.loads(path.read_bytes())
    except OSError as exc:
        raise ConfigError(
            f"--run-std {text}: not a number, and cannot read it as a file ({exc.strerror or exc})"
        ) from None
    except orjson.JSONDecodeError as exc:
        raise ConfigError(f"{text}: not JSON ({exc.msg})") from None
    floors = data.get("run_std_by_metric") if isinstance(data, Mapping) else None
    if not isinstance(floors, Mapping):
        raise ConfigError(
            f"{text}: no run_std_by_metric in it (write one with `whileai variance ... "
            "--report FILE`)"
        )
    out: dict[str, float | None] = {}
    for name, value in floors.items():
        if value is not None and not isinstance(value, (int, float)):
            raise ConfigError(f"{text}: run_std_by_metric[{name!r}] is not a number")
        out[str(name)] = None if value is None else float(value)
    return out
