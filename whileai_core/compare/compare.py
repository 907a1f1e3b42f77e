"""`whileai compare A B`: did B move one metric against A, paired by task?

The statistics are `metrics.paired.compare_values`; this module reads the two sides and
words the answer. A verdict over a share of the eval says how large that share is, since
the tasks on one side only are not in it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..jsonl import OnError
from ..metrics.paired import N_BOOT, Comparison, compare_values
from ..metrics.taskvalues import PASS_AT_1, metric_key
from .sides import Side, check_stdin, collect, read_side, require_metric

_MEANING = {
    "improved": "B is better than A: the interval lies above zero",
    "regressed": "B is worse than A: the interval lies below zero",
    "no_difference_detected": (
        "the interval covers zero: no difference this eval can detect, which is not the "
        "same as no difference"
    ),
    "insufficient_data": "too few tasks for an interval",
}


@dataclass
class CompareReport:
    a: str
    b: str
    comparison: Comparison
    warnings_: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"a": self.a, "b": self.b, **self.comparison.as_dict(), "warnings": self.warnings()}

    def lines(self) -> list[str]:
        c = self.comparison
        out = [c.line(), f"verdict: {c.verdict} ({_MEANING[c.verdict]})"]
        if c.p_method is not None:
            how = "exact" if c.p_method == "exact" else "10,000 seeded sign flips"
            out.append(
                f"p-value: sign-flip permutation test ({how}); interval: seeded "
                f"bootstrap over paired tasks, seed {c.seed}"
            )
        return out

    def warnings(self) -> list[str]:
        found = list(self.warnings_)
        if self.comparison.note:
            found.insert(0, self.comparison.note)
        return found


def compare_runs(
    rows_a: Iterable[dict[str, Any]],
    rows_b: Iterable[dict[str, Any]],
    *,
    metric: str = PASS_AT_1,
    seed: int = 0,
    n_boot: int = N_BOOT,
) -> CompareReport:
    """Compare two row sets on `metric` (`pass_at_1` or `marker:NAME`)."""
    a = collect(rows_a, label="A")
    b = collect(rows_b, label="B")
    return _compare(a, b, metric_key(metric), seed, n_boot)


def compare_files(
    a: Sequence[str],
    b: Sequence[str],
    *,
    metric: str = PASS_AT_1,
    seed: int = 0,
    n_boot: int = N_BOOT,
    on_error: OnError = "fail",
) -> CompareReport:
    """`compare_runs` over two sets of JSONL files, streamed."""
    check_stdin([a, b])
    key = metric_key(metric)
    side_a = read_side(a, on_error=on_error)
    side_b = read_side(b, on_error=on_error)
    return _compare(side_a, side_b, key, seed, n_boot)


def _compare(a: Side, b: Side, metric: str, seed: int, n_boot: int) -> CompareReport:
    require_metric(a, metric)
    require_metric(b, metric)
    comparison = compare_values(
        a.values.means(metric), b.values.means(metric), metric=metric, seed=seed, n_boot=n_boot
    )
    return CompareReport(a.label, b.label, comparison, [*a.warnings(), *b.warnings()])
