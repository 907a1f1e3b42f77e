"""The hack scan's cheap mode: does the reward track one of these named features?

The full scan (`engine.py`) reads rows twice and ranks hundreds of candidates. A stage that
asks the same question of a few features it names (reply length, tool calls and turns for
optimize, the publish gate and `audit correlations`; each style tic or trajectory flag
for the audit's "the reward pays for it") asks the same engine, `scan.analyse`, with those
columns only: one pass, no vocabulary, no ANDs. So the answer is the scan's: reward and
each feature centred within ask over the asks with both higher and lower rewards, against
the noise floor tau, the 95th percentile over `shuffles` reshuffles of reward within each
ask of the largest |r| any of the named features reaches by chance. A feature **tracks**
the reward when its |r| is above tau; no fixed cut-off (0.3, p < 0.05) decides it.

It keeps per row an ask id, a reward and the feature values (a few words a row, never
the row), so an accumulator fed a stream of any length holds columns, not rows.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..metrics.grouped import pooled_correlations
from .collect import ScanData
from .engine import ScanOptions, analyse
from .features import Vocabulary

SHUFFLES = ScanOptions.shuffles


class QuickScan:
    """Feed (ask, reward, feature values) row by row; `result()` is the scan's verdict."""

    def __init__(self, names: Sequence[str], *, shuffles: int = SHUFFLES, seed: int = 0) -> None:
        self.names = tuple(names)
        self.shuffles = shuffles
        self.seed = seed
        self.rows = 0
        self._ask_index: dict[str, int] = {}
        self._asks: array[int] = array("q")
        self._rewards: array[float] = array("d")
        self._values: array[float] = array("d")
        self._result: dict[str, Any] | None = None

    def add(self, task: str, reward: float | None, values: Sequence[float]) -> None:
        """One row; a row with no clean reward is counted and carries no signal."""
        self.rows += 1
        if reward is None:
            return
        ask = self._ask_index.setdefault(task, len(self._ask_index))
        self._asks.append(ask)
        self._rewards.append(float(reward))
        self._values.extend(map(float, values))
        self._result = None

    @property
    def judged(self) -> int:
        return len(self._rewards)

    @property
    def asks(self) -> int:
        return len(self._ask_index)

    def result(self) -> dict[str, Any]:
        """regime, tau, mixed_asks and, per feature, {r, pooled_r, n, floor, above_floor}
        (r None when the feature does not vary within a mixed ask)."""
        if self._result is None:
            self._result = self._analyse()
        return self._result

    def tracking(self) -> list[tuple[str, float]]:
        """(feature, within-ask r) of each feature above the floor, strongest first."""
        found = [(n, f["r"]) for n, f in self.result()["features"].items() if f["above_floor"]]
        return sorted(found, key=lambda item: -abs(item[1]))

    def _analyse(self) -> dict[str, Any]:
        k, m = len(self.names), self.judged
        values = np.frombuffer(self._values, dtype=np.float64).reshape(m, k) if m else None
        data = ScanData(Vocabulary([]), rows=m, asks=self._asks, rewards=self._rewards)
        data.hand_names = list(self.names)
        data.ask_names = list(self._ask_index)
        if values is not None:
            # What counts as one trajectory here: the same feature values.
            data.traj = array("Q", (hash(row.tobytes()) & (2**64 - 1) for row in values))
            rows, cols = np.nonzero(values)
            data.hand_row = array("i", rows.astype(np.int32).tobytes())
            data.hand_col = array("i", cols.astype(np.int32).tobytes())
            data.hand_val = array("d", values[rows, cols].tobytes())
        opts = ScanOptions(shuffles=self.shuffles, seed=self.seed, parents=0, top=max(k, 1))
        scan = analyse(data, opts)
        tau = scan["tau"]
        found = {f["name"]: f for f in scan["features"]}
        pooled = (
            pooled_correlations(values, np.frombuffer(self._rewards, dtype=np.float64))
            if values is not None
            else np.full(k, np.nan)
        )
        n = _mixed_rows(self._asks, self._rewards)
        features: dict[str, dict[str, Any]] = {}
        for i, name in enumerate(self.names):
            hit = found.get(name)
            features[name] = {
                "r": hit["r"] if hit else None,
                "pooled_r": None if np.isnan(pooled[i]) else round(float(pooled[i]), 4),
                "n": n,
                "floor": tau,
                "above_floor": bool(hit and hit["above_floor"]),
            }
        return {
            "regime": scan["regime"],
            "cause": scan.get("cause"),
            "tau": tau,
            "shuffles": self.shuffles,
            "mixed_asks": scan.get("mixed_asks", 0),
            "features": features,
        }


def _mixed_rows(asks: array[int], rewards: array[float]) -> int:
    """Rows in asks whose rewards differ: the rows a grouped update learns from."""
    if not len(asks):
        return 0
    a = np.frombuffer(asks, dtype=np.int64)
    y = np.frombuffer(rewards, dtype=np.float64)
    lo = np.full(int(a.max()) + 1, np.inf)
    hi = np.full(int(a.max()) + 1, -np.inf)
    np.minimum.at(lo, a, y)
    np.maximum.at(hi, a, y)
    return int(((hi - lo) > 1e-12)[a].sum())


def tracking_warning(name: str, entry: dict[str, Any], what: str | None = None) -> str:
    """The one wording of 'the reward tracks this feature', wherever it is found."""
    return (
        f"reward tracks {what or name} within ask (r={entry['r']:+.2f}, above its noise floor "
        f"{entry['floor']:.2f}): a policy trained on it may learn {what or name} instead of "
        "the task; check the judge"
    )
