"""Reply length and the other surface numbers a reward should not track.

`LengthReport` gives the spread of reply lengths (quantiles, p90/p10), the mean length of
passing and failing rollouts, and whether the reward tracks length within ask: a judge
that pays for length is the commonest reward hack there is. `RewardCorrelations` asks the
same of the three surface features (reply characters, tool calls, turns), with the pooled
number beside each. Both ask the hack scan's cheap mode (`scan.quick`), so they answer as
optimize, the publish gate and `whileai scan` do: within ask, against the shuffle floor.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from typing import Any

from ..metrics.tally import passed, reward_of, task_key
from ..row import reply_text
from ..scan.quick import QuickScan, tracking_warning
from ..select.hygiene import FEATURE_NAMES, row_features


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
    with_reward: bool = True  # ask whether the reward tracks length (the gate does not)

    def __post_init__(self) -> None:
        # The surface family, as `correlations` and the gate ask it: the same floor.
        self._scan = QuickScan(FEATURE_NAMES)

    def add(self, row: dict[str, Any], chars: int | None = None) -> None:
        n = len(reply_text(row)) if chars is None else chars
        reward = reward_of(row)
        self.add_length(n, reward)
        if reward is not None and self.with_reward:
            _, calls, turns = row_features(row)
            self._scan.add(task_key(row), reward, (float(n), calls, turns))

    def add_length(self, n: int, reward: float | None) -> None:
        """One reply's length and clean reward, with no row to read (the gate's facts);
        whether the reward tracks length is asked only of rows passed to `add`."""
        self.lengths.append(n)
        if reward is None:
            return
        if passed(reward):
            self.pass_sum, self.pass_n = self.pass_sum + n, self.pass_n + 1
        else:
            self.fail_sum, self.fail_n = self.fail_sum + n, self.fail_n + 1

    def as_dict(self) -> dict[str, Any]:
        values = sorted(self.lengths)
        p10, p50, p90 = (quantile(values, q) for q in (0.1, 0.5, 0.9))
        out = {
            "rows": len(values),
            "min": values[0] if values else None,
            "p10": p10,
            "median": p50,
            "p90": p90,
            "max": values[-1] if values else None,
            "spread_p90_p10": round(p90 / p10, 3) if p10 else None,
            "mean_pass": self.pass_sum / self.pass_n if self.pass_n else None,
            "mean_fail": self.fail_sum / self.fail_n if self.fail_n else None,
        }
        if self.with_reward:
            out["reward_corr"] = self._scan.result()["features"]["reply_chars"]
        return out

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
        corr = d.get("reward_corr") or {}
        if corr.get("r") is not None:
            out.append(
                f"  within-ask correlation of length with reward {corr['r']:+.2f} "
                f"(noise floor {corr['floor']:.2f})"
            )
        return out

    def warnings(self) -> list[str]:
        corr = self.as_dict().get("reward_corr") or {}
        if corr.get("above_floor"):
            return [tracking_warning("reply_chars", corr, "reply length")]
        return []


@dataclass
class RewardCorrelations:
    rows: int = 0

    def __post_init__(self) -> None:
        self._scan = QuickScan(FEATURE_NAMES)

    def add(self, row: dict[str, Any]) -> None:
        self.rows += 1
        self._scan.add(task_key(row), reward_of(row), row_features(row))

    def as_dict(self) -> dict[str, Any]:
        result = self._scan.result()
        return {
            "rows": self.rows,
            "asks": self._scan.asks,
            "mixed_asks": result["mixed_asks"],
            "floor": result["tau"],
            "shuffles": result["shuffles"],
            "features": result["features"],
        }

    def lines(self) -> list[str]:
        d = self.as_dict()
        floor = "n/a" if d["floor"] is None else f"{d['floor']:.3f}"
        out = [
            f"reward correlations over {d['rows']} rows in {d['asks']} asks (within ask; "
            f"pooled); noise floor {floor} over {d['mixed_asks']} asks with mixed rewards"
        ]
        for name, c in d["features"].items():
            within = "n/a" if c["r"] is None else f"{c['r']:+.3f}"
            pooled = "n/a" if c["pooled_r"] is None else f"{c['pooled_r']:+.3f}"
            flag = "  <- above the noise floor" if c["above_floor"] else ""
            out.append(f"  {name:12} {within}  (pooled {pooled}){flag}")
        return out

    def warnings(self) -> list[str]:
        return [
            tracking_warning(name, c)
            for name, c in self.as_dict()["features"].items()
            if c["above_floor"]
        ]
