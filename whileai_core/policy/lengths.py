"""Reply length and the other surface numbers a reward should not track.

`LengthReport` gives the spread of reply lengths (quantiles, p90/p10), the mean length of
passing and failing rollouts, and the within-ask correlation of length with reward: a
judge that pays for length is the commonest reward hack there is. `RewardCorrelations`
is the same within-ask read for the three surface features selection already measures
pooled (reply characters, tool calls, turns), with the pooled number beside it.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from typing import Any

from ..metrics.tally import passed, reward_of, task_key
from ..metrics.within import WithinGroup
from ..row import reply_text
from ..select.hygiene import FEATURE_NAMES, HACK_THRESHOLD, row_features


def quantile(sorted_values: list[int] | array[int], q: float) -> float:
    if not sorted_values:
        return 0.0
    pos = q * (len(sorted_values) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


@dataclass
class LengthReport:
    lengths: array[int] = field(default_factory=lambda: array("q"))
    pass_sum: float = 0.0
    pass_n: int = 0
    fail_sum: float = 0.0
    fail_n: int = 0

    def __post_init__(self) -> None:
        self._within = WithinGroup(["reply_chars"])

    def add(self, row: dict[str, Any], chars: int | None = None) -> None:
        n = len(reply_text(row)) if chars is None else chars
        self.add_value(task_key(row), reward_of(row), n)

    def add_value(self, task: str, reward: float | None, n: int) -> None:
        """One reply of `n` characters of ask `task` with its reward (None: ungraded)."""
        self.lengths.append(n)
        if reward is None:
            return
        if passed(reward):
            self.pass_sum, self.pass_n = self.pass_sum + n, self.pass_n + 1
        else:
            self.fail_sum, self.fail_n = self.fail_sum + n, self.fail_n + 1
        self._within.add(task, reward, [float(n)])

    def as_dict(self) -> dict[str, Any]:
        values = sorted(self.lengths)
        p10, p50, p90 = (quantile(values, q) for q in (0.1, 0.5, 0.9))
        corr = self._within.result()["reply_chars"]
        return {
            "rows": len(values),
            "min": values[0] if values else None,
            "p10": p10,
            "median": p50,
            "p90": p90,
            "max": values[-1] if values else None,
            "spread_p90_p10": round(p90 / p10, 3) if p10 else None,
            "mean_pass": self.pass_sum / self.pass_n if self.pass_n else None,
            "mean_fail": self.fail_sum / self.fail_n if self.fail_n else None,
            "reward_corr": corr.as_dict(),
        }

    def lines(self) -> list[str]:
        d = self.as_dict()
        if not d["rows"]:
            return ["lengths: no rows"]
        out = [
            f"reply length over {d['rows']} rows: median {d['median']:.0f} chars, p10 "
            f"{d['p10']:.0f}, p90 {d['p90']:.0f}, max {d['max']}"
            + (f" (p90/p10 {d['spread_p90_p10']:.1f})" if d["spread_p90_p10"] else "")
        ]
        if d["mean_pass"] is not None and d["mean_fail"] is not None:
            out.append(
                f"  passing {d['mean_pass']:.0f} chars on average, failing {d['mean_fail']:.0f}"
            )
        r = d["reward_corr"]["r"]
        if r is not None:
            out.append(f"  within-ask correlation of length with reward {r:+.2f}")
        return out

    def warnings(self) -> list[str]:
        r = self.as_dict()["reward_corr"]["r"]
        if r is not None and abs(r) > HACK_THRESHOLD:
            return [f"reward tracks reply length within ask (r={r:+.2f}): check the judge"]
        return []


@dataclass
class RewardCorrelations:
    rows: int = 0

    def __post_init__(self) -> None:
        self._within = WithinGroup(FEATURE_NAMES)

    def add(self, row: dict[str, Any]) -> None:
        self.rows += 1
        reward = reward_of(row)
        if reward is not None:
            self._within.add(task_key(row), reward, row_features(row))

    def as_dict(self) -> dict[str, Any]:
        result = self._within.result()
        return {
            "rows": self.rows,
            "asks": self._within.groups,
            "threshold": HACK_THRESHOLD,
            "features": {name: c.as_dict() for name, c in result.items()},
        }

    def lines(self) -> list[str]:
        d = self.as_dict()
        out = [
            f"reward correlations over {d['rows']} rows in {d['asks']} asks (within ask; pooled)"
        ]
        for name, c in d["features"].items():
            within = "n/a" if c["r"] is None else f"{c['r']:+.3f}"
            pooled = "n/a" if c["pooled_r"] is None else f"{c['pooled_r']:+.3f}"
            flag = (
                "  <- above threshold"
                if c["r"] is not None and abs(c["r"]) > HACK_THRESHOLD
                else ""
            )
            out.append(f"  {name:12} {within}  (pooled {pooled}){flag}")
        return out

    def warnings(self) -> list[str]:
        return [
            f"reward correlates with {name} within ask (r={c['r']:+.2f}): the policy may learn "
            f"{name} instead of the task"
            for name, c in self.as_dict()["features"].items()
            if c["r"] is not None and abs(c["r"]) > HACK_THRESHOLD
        ]
