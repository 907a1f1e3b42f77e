"""The report numbers off graded rows: pass@1, pass^k, pass@k, headroom, and what else the
rows say about the judge and the markers.

pass@1 is the headline (the agent runs once in production): the mean over tasks of each
task's pass rate, with a seeded bootstrap over tasks. pass^k (all k repeats pass) is the
reliability line and pass@k (at least one passes) the ceiling; both use the unbiased
per-group estimators comb(c,k)/comb(n,k) and 1 - comb(n-c,k)/comb(n,k), averaged over
groups, with the same bootstrap. headroom = pass@k - pass@1 is what a grouped RL update
has to learn from.

A reward between 0 and 1 (a rubric's share of items met) counts as a pass at 0.5 and over
(`tally.PASS_THRESHOLD`), so a judge that scores 0.7 everywhere reads pass@1 1.00. That is
the row contract, and the report does not hide it: `partial_rewards` counts such rewards,
`mean_reward` is the same task-weighted mean on the rewards as judged, and the summary
line says both whenever there is one. (The original SDK instead leaves partial rewards out
of pass@1, and prints n/a when every reward is partial; a 0.7 is a verdict the judge
reached, and dropping it drops the rows a rubric judge scores most carefully.)

k defaults to the smallest group, and the report says so when groups are uneven. Below
k = 4 the k-way numbers are `None` with the reason, not a noisy figure. Fewer than three
groups: no intervals.

Memory is per task, not per row: the accumulator keeps (rollouts, passes) per task and
running sums per marker, so a report over ten million rows fits where one over ten does.
The bootstrap draws how many tasks of each distinct value a resample holds (a multinomial
over the few distinct per-task values) rather than resampling tasks one by one, which is
the same bootstrap at a cost that does not grow with the number of tasks.
"""

from __future__ import annotations

import functools
import math
import random
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..models.spec import bare_model, self_judged_warning
from ..row import JUDGE_STATUSES
from .stats import pass_at_k, pass_pow_k, wilson
from .tally import PASS_THRESHOLD, TaskTally, reward_of, task_key

MIN_K = 4
MIN_GROUPS_FOR_CI = 3
N_BOOT = 1000
HISTOGRAM_BINS: tuple[tuple[str, float, float], ...] = (
    ("0", 0.0, 0.0),
    ("(0, .25]", 0.0, 0.25),
    ("(.25, .5]", 0.25, 0.5),
    ("(.5, .75]", 0.5, 0.75),
    ("(.75, 1)", 0.75, 1.0),
    ("1", 1.0, 1.0),
)


@functools.lru_cache(maxsize=256)
def _bare(model: str) -> str:
    return bare_model(model)


def _binomial(rng: random.Random, n: int, p: float) -> int:
    """A Binomial(n, p) draw: exact by inversion when n·p is small, else the normal
    approximation (off by well under one task in a thousand at that size)."""
    if n <= 0 or p <= 0.0:
        return 0
    if p >= 1.0:
        return n
    flip = p > 0.5
    q = 1.0 - p if flip else p
    if n * q < 30:
        # Inversion: count geometric gaps until they pass n.
        log_q = math.log1p(-q)
        count, pos = 0, 0
        while True:
            u = rng.random()
            pos += int(math.log(1.0 - u) / log_q) + 1
            if pos > n:
                break
            count += 1
    else:
        sd = math.sqrt(n * q * (1.0 - q))
        count = min(n, max(0, round(rng.gauss(n * q, sd))))
    return n - count if flip else count


def bootstrap_mean_ci(
    values: Sequence[float], *, seed: int = 0, n_boot: int = N_BOOT, level: float = 0.95
) -> tuple[float, float] | None:
    """Percentile bootstrap interval of the mean, reproducible with `seed`, always holding
    the point estimate. None with fewer than three values."""
    if len(values) < MIN_GROUPS_FOR_CI:
        return None
    counts = Counter(values)
    distinct = sorted(counts)
    n = len(values)
    rng = random.Random(seed)
    draws: list[float] = []
    for _ in range(n_boot):
        left, mass, total = n, 1.0, 0.0
        for value in distinct[:-1]:
            p = counts[value] / n
            taken = _binomial(rng, left, min(1.0, p / mass)) if mass > 0 else 0
            total += taken * value
            left -= taken
            mass -= p
        total += left * distinct[-1]
        draws.append(total / n)
    draws.sort()
    lo = draws[math.floor((1 - level) / 2 * n_boot)]
    hi = draws[min(n_boot - 1, math.ceil((1 + level) / 2 * n_boot) - 1)]
    point = sum(values) / n
    return (min(lo, point), max(hi, point))


@dataclass
class _MarkerStats:
    n: int = 0
    total: float = 0.0
    total_sq: float = 0.0
    binary: bool = True

    def add(self, value: float) -> None:
        self.n += 1
        self.total += value
        self.total_sq += value * value
        if value not in (0.0, 1.0):
            self.binary = False

    def summary(self) -> dict[str, Any]:
        mean = self.total / self.n
        if self.binary:
            lo, hi = wilson(round(self.total), self.n)
        else:
            var = max(0.0, self.total_sq / self.n - mean * mean)
            half = 1.96 * math.sqrt(var / self.n) if self.n > 1 else 0.0
            lo, hi = mean - half, mean + half
        return {"mean": mean, "n": self.n, "ci95": [lo, hi]}


@dataclass
class PassReport:
    """Accumulates graded rows one at a time; `result()` gives the report dict."""

    k: int | None = None
    seed: int = 0
    rows: int = 0
    judged: int = 0
    statuses: Counter[str] = field(default_factory=Counter)
    judges: Counter[str] = field(default_factory=Counter)
    first_reasons: dict[str, str] = field(default_factory=dict)
    # Rows whose judge names a model (judge_meta.model), and those of them that model
    # wrote (its model_version): a judge grading its own writing tends to prefer it.
    # Rewards strictly between 0 and 1: pass@1 splits them at PASS_THRESHOLD.
    partial: int = 0
    model_judged: int = 0
    self_judged: int = 0
    self_judged_pair: tuple[str, str] | None = None
    _tasks: TaskTally = field(default_factory=TaskTally)
    _markers: dict[str, _MarkerStats] = field(default_factory=dict)

    def add(self, row: dict[str, Any]) -> None:
        self.rows += 1
        status = row.get("judge_status")
        if status is None:
            status = "ungraded" if row.get("reward") is None else "ok"
        self.statuses[status if status in JUDGE_STATUSES else str(status)] += 1
        if status not in ("ok", "ungraded") and status not in self.first_reasons:
            self.first_reasons[str(status)] = str(row.get("reason") or "")[:200]
        name = row.get("judge_name")
        if isinstance(name, str):
            self.judges[name] += 1
        self._check_self_judged(row)
        markers = row.get("markers")
        if isinstance(markers, dict):
            for key, value in markers.items():
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    stats = self._markers.get(key)
                    if stats is None:
                        stats = self._markers[key] = _MarkerStats()
                    stats.add(float(value))
        reward = reward_of(row)
        if reward is None:
            return
        self.judged += 1
        self.partial += 0.0 < reward < 1.0
        self._tasks.add(task_key(row), reward)

    def _check_self_judged(self, row: dict[str, Any]) -> None:
        meta = row.get("judge_meta")
        model = meta.get("model") if isinstance(meta, dict) else None
        if not isinstance(model, str):
            return
        self.model_judged += 1
        version = row.get("model_version")
        if isinstance(version, str) and _bare(version) == _bare(model):
            self.self_judged += 1
            if self.self_judged_pair is None:
                self.self_judged_pair = (model, version)

    def add_all(self, rows: Iterable[dict[str, Any]]) -> PassReport:
        for row in rows:
            self.add(row)
        return self

    def result(self) -> dict[str, Any]:
        groups = self._tasks.graded_counts()
        report: dict[str, Any] = {"rows": self.rows, "judged": self.judged}
        report.update(pass_numbers(groups, k=self.k, seed=self.seed))
        report["seed"] = self.seed
        report["mean_reward"] = self._tasks.mean_reward()
        report["partial_rewards"] = self.partial
        report["histogram"] = _histogram([c / n for n, c in groups])
        report["judge_status"] = {s: self.statuses.get(s, 0) for s in JUDGE_STATUSES}
        for status, count in self.statuses.items():
            if status not in JUDGE_STATUSES:
                report["judge_status"][status] = count
        report["judges"] = dict(self.judges)
        report["first_reasons"] = dict(self.first_reasons)
        report["markers"] = {k: self._markers[k].summary() for k in sorted(self._markers)}
        if not self.judged:
            report["note"] = "no judged rows: grade them first (whileai grade)"
        if self.model_judged:
            report["self_judged"] = bool(self.self_judged)
        if self.self_judged_pair is not None:
            model, version = self.self_judged_pair
            which = (
                "these rows"
                if self.self_judged == self.model_judged
                else f"{self.self_judged} of these {self.model_judged} rows"
            )
            report["warnings"] = [self_judged_warning(model, version, which)]
        return report


def pass_numbers(
    groups: Sequence[tuple[int, int]], *, k: int | None = None, seed: int = 0
) -> dict[str, Any]:
    """pass@1 with its interval and the k-way numbers, from per-task (graded, passes).

    The one place the numbers and the minimum-k rule live: `report`, `grade`'s summary,
    the selection's before/after figures and the gate all call this.
    """
    rates = [c / n for n, c in groups]
    p1 = sum(rates) / len(rates) if rates else None
    out: dict[str, Any] = {
        "tasks": len(groups),
        "pass_at_1": p1,
        "pass_at_1_ci95": _list(bootstrap_mean_ci(rates, seed=seed)),
    }
    out.update(_k_way(groups, p1, k, seed))
    return out


def _k_way(
    groups: Sequence[tuple[int, int]], p1: float | None, asked: int | None, seed: int
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "k": None,
        "pass_pow_k": None,
        "pass_at_k": None,
        "pass_pow_k_ci95": None,
        "pass_at_k_ci95": None,
        "headroom": None,
        "k_groups": 0,
        "k_note": None,
    }
    if not groups:
        out["k_note"] = "no judged groups"
        return out
    sizes = [n for n, _ in groups]
    smallest, largest = min(sizes), max(sizes)
    k = asked if asked is not None else smallest
    notes = []
    if asked is None and smallest != largest:
        notes.append(
            f"groups are uneven ({smallest}-{largest} rollouts): k = the smallest group, {smallest}"
        )
    if k < MIN_K:
        reason = (
            f"k = {k} is below {MIN_K}: k-way numbers would be noise"
            if asked is not None
            else f"smallest group has {smallest} rollout{'s' if smallest != 1 else ''}, "
            f"below k = {MIN_K}: k-way numbers would be noise"
        )
        out["k_note"] = "; ".join([*notes, reason])
        return out
    eligible = [(n, c) for n, c in groups if n >= k]
    if len(eligible) < len(groups):
        notes.append(f"{len(groups) - len(eligible)} group(s) smaller than k={k} left out")
    if not eligible:
        out["k_note"] = "; ".join([*notes, f"no group has {k} rollouts"])
        return out
    pow_vals = [pass_pow_k(n, c, k) for n, c in eligible]
    at_vals = [pass_at_k(n, c, k) for n, c in eligible]
    pass_pow = sum(pow_vals) / len(pow_vals)
    pass_at = sum(at_vals) / len(at_vals)
    out.update(
        k=k,
        k_groups=len(eligible),
        pass_pow_k=pass_pow,
        pass_at_k=pass_at,
        pass_pow_k_ci95=_list(bootstrap_mean_ci(pow_vals, seed=seed + 1)),
        pass_at_k_ci95=_list(bootstrap_mean_ci(at_vals, seed=seed + 2)),
        headroom=None if p1 is None else pass_at - p1,
        k_note="; ".join(notes) or None,
    )
    return out


def _list(ci: tuple[float, float] | None) -> list[float] | None:
    return list(ci) if ci is not None else None


def _histogram(rates: list[float]) -> dict[str, int]:
    hist = {label: 0 for label, _, _ in HISTOGRAM_BINS}
    for rate in rates:
        for label, lo, hi in HISTOGRAM_BINS:
            if (lo == hi and rate == lo) or (lo < rate <= hi and not (hi == 1.0 and rate == 1.0)):
                hist[label] += 1
                break
        else:
            hist["(.75, 1)"] += 1
    return hist


def pass_report(
    rows: Iterable[dict[str, Any]], *, k: int | None = None, seed: int = 0
) -> dict[str, Any]:
    """The report over graded rows, streamed."""
    return PassReport(k=k, seed=seed).add_all(rows).result()


def _fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.2f}"


def _ci(ci: list[float] | None) -> str:
    return "" if ci is None else f" [{ci[0]:.2f}, {ci[1]:.2f}]"


def summary_line(report: dict[str, Any]) -> str:
    """`pass@1 0.61 [0.55, 0.67] | pass^8 0.32 | pass@8 0.88 | headroom 0.27 (200 groups, k=8)`"""
    k = report.get("k")
    kk = str(k) if k else "k"
    parts = [
        f"pass@1 {_fmt(report['pass_at_1'])}{_ci(report['pass_at_1_ci95'])}",
        f"pass^{kk} {_fmt(report['pass_pow_k'])}",
        f"pass@{kk} {_fmt(report['pass_at_k'])}",
        f"headroom {_fmt(report['headroom'])}",
    ]
    tail = f"{report['tasks']} groups" + (f", k={k}" if k else "")
    partial = report.get("partial_rewards") or 0
    if partial:
        tail += (
            f"; {partial} of {report['judged']} rewards partial: pass@1 counts >= "
            f"{PASS_THRESHOLD:g} as a pass, mean reward {_fmt(report.get('mean_reward'))}"
        )
    bad = report["rows"] - report["judged"]
    tail += f"; {report['judged']}/{report['rows']} rows judged"
    if bad:
        failed = {s: c for s, c in report["judge_status"].items() if s != "ok" and c}
        tail += " (" + ", ".join(f"{c} {s}" for s, c in failed.items()) + ")"
    return " | ".join(parts) + f" ({tail})"


Table = tuple[str, tuple[str, ...], list[tuple[Any, ...]]]


def report_text(report: dict[str, Any]) -> tuple[list[str], list[Table]]:
    """What `whileai report` shows a person: lines, then (title, header, rows) tables.
    Built here, next to the numbers, so every command that prints them says the same."""
    lines = [summary_line(report)]
    if report.get("k_note"):
        lines.append(f"k-way: {report['k_note']}")
    if report.get("note"):
        lines.append(str(report["note"]))
    tables: list[Table] = [
        ("per-task pass rate", ("pass rate", "tasks"), list(report["histogram"].items())),
        ("judge status", ("status", "rows"), list(report["judge_status"].items())),
    ]
    if report["markers"]:
        rows = [
            (name, f"{m['mean']:.2f}", f"[{m['ci95'][0]:.2f}, {m['ci95'][1]:.2f}]", m["n"])
            for name, m in report["markers"].items()
        ]
        tables.append(("markers (1.0 = good)", ("marker", "mean", "95% interval", "rows"), rows))
    return lines, tables
