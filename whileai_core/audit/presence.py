"""How often a yes/no behaviour shows up, and whether the reward pays for it.

The style and trajectory-flag reports ask the same three questions of each behaviour: its
rate (with a Wilson interval), a few rows that show it, and whether the reward tracks it,
asked of the hack scan's cheap mode (`scan.quick`): its correlation with reward within ask
against the shuffle floor of the behaviours reported together. A behaviour the reward
pays for is one the policy will learn; the report warns when that correlation is
positive and above the floor, in at least `MIN_ROWS_WITH` rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..metrics.stats import wilson
from ..scan.quick import QuickScan

MIN_ROWS_WITH = 5
EXAMPLES = 3


@dataclass
class PresenceTally:
    """Counts, examples and the reward correlation of each named behaviour."""

    names: Sequence[str]
    rows: int = 0
    judged: int = 0
    counts: dict[str, int] = field(default_factory=dict)
    examples: dict[str, list[dict[str, str]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._scan = QuickScan(self.names)
        for name in self.names:
            self.counts.setdefault(name, 0)
            self.examples.setdefault(name, [])

    def add(
        self, task: str, label: str, present: dict[str, str | None], reward: float | None
    ) -> None:
        """`present`: behaviour -> the fragment that showed it (None or absent: it did not)."""
        self.rows += 1
        for name in self.names:
            fragment = present.get(name)
            if fragment is None:
                continue
            self.counts[name] += 1
            if len(self.examples[name]) < EXAMPLES:
                self.examples[name].append({"row": label, "fragment": fragment})
        if reward is not None:
            self.judged += 1
            values = [0.0 if present.get(n) is None else 1.0 for n in self.names]
            self._scan.add(task, reward, values)

    def summary(self) -> dict[str, dict[str, Any]]:
        correlations = self._scan.result()["features"]
        out: dict[str, dict[str, Any]] = {}
        for name in self.names:
            count = self.counts[name]
            corr = correlations[name]
            lo, hi = wilson(count, self.rows)
            out[name] = {
                "rows_with": count,
                "rate": count / self.rows if self.rows else None,
                "rate_ci95": [lo, hi] if self.rows else None,
                "reward_corr": corr,
                "reward_pays": self._pays(count, corr),
                "examples": self.examples[name],
            }
        return out

    def _pays(self, count: int, corr: dict[str, Any]) -> bool:
        return count >= MIN_ROWS_WITH and bool(corr["above_floor"]) and corr["r"] > 0

    def note(self) -> str | None:
        """Why no correlation could be measured, when none could."""
        if not self.judged:
            return "no row carries a clean reward: rates only (grade the rows to see what pays)"
        if self._scan.asks and self._scan.asks == self.judged:
            return "every ask has one judged row: no within-ask correlation (needs repeats)"
        return None


def pays_line(what: str, entry: dict[str, Any]) -> str:
    corr = entry["reward_corr"]
    return (
        f"reward pays for {what} (corr {corr['r']:+.2f} within ask, above its noise floor "
        f"{corr['floor']:.2f}; {entry['rows_with']} rows show it): a policy trained on this "
        "reward learns it"
    )
