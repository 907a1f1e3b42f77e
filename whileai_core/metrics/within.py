"""Correlation within groups: what a grouped update learns from, streamed.

A group-relative update (GRPO, RLOO) subtracts each ask's mean reward, so what it learns
is whatever separates reward *within* an ask; a feature that only tracks which ask it is
(a hard ask has long replies) is baselined away. `WithinGroup` measures exactly that:
reward and each feature centred within their group, then Pearson over the pooled
residuals. It keeps six running sums per group and feature (n, Σx, Σy, Σx², Σy², Σxy),
so a stream of any length costs memory in groups, not rows, and needs no ordering.
The pooled (uncentred) correlation comes out of the same sums for comparison.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Correlation:
    """A within-group correlation and what it rests on."""

    r: float | None  # None when either side has no within-group variance
    n: int  # rows in groups of two or more
    dof: int  # rows minus groups: the residual degrees of freedom
    pooled: float | None  # the same rows, not centred
    p: float | None  # two-sided, Fisher z on `dof`

    def as_dict(self) -> dict[str, Any]:
        return {
            "r": _round(self.r),
            "n": self.n,
            "dof": self.dof,
            "pooled_r": _round(self.pooled),
            "p": _round(self.p),
        }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def fisher_p(r: float, dof: int) -> float | None:
    """Two-sided p-value of a correlation under no association (Fisher's z)."""
    if dof < 4 or abs(r) >= 1.0:
        return 0.0 if abs(r) >= 1.0 and dof >= 4 else None
    z = math.atanh(r) * math.sqrt(dof - 2)
    return math.erfc(abs(z) / math.sqrt(2))


class WithinGroup:
    """Within-group correlation of `reward` with each of `features`, row by row."""

    def __init__(self, features: Sequence[str]) -> None:
        self.features = tuple(features)
        k = len(self.features)
        self._k = k
        # per group: [n, sy, syy, sx_0..sx_k, sxx_0..sxx_k, sxy_0..sxy_k]
        self._groups: dict[str, list[float]] = {}
        self._width = 3 + 3 * k

    def add(self, group: str, reward: float, values: Sequence[float]) -> None:
        sums = self._groups.get(group)
        if sums is None:
            sums = self._groups[group] = [0.0] * self._width
        k = self._k
        sums[0] += 1
        sums[1] += reward
        sums[2] += reward * reward
        for i, x in enumerate(values):
            sums[3 + i] += x
            sums[3 + k + i] += x * x
            sums[3 + 2 * k + i] += x * reward

    @property
    def groups(self) -> int:
        return len(self._groups)

    def result(self) -> dict[str, Correlation]:
        k = self._k
        syy_w = n_rows = groups = 0.0
        sxx_w, sxy_w = [0.0] * k, [0.0] * k
        tot = [0.0] * self._width
        for sums in self._groups.values():
            n = sums[0]
            for j, value in enumerate(sums):
                tot[j] += value
            if n < 2:
                continue
            n_rows += n
            groups += 1
            syy_w += sums[2] - sums[1] * sums[1] / n
            for i in range(k):
                sx = sums[3 + i]
                sxx_w[i] += sums[3 + k + i] - sx * sx / n
                sxy_w[i] += sums[3 + 2 * k + i] - sx * sums[1] / n
        out: dict[str, Correlation] = {}
        dof = int(n_rows - groups)
        for i, name in enumerate(self.features):
            r = _corr(sxy_w[i], sxx_w[i], syy_w)
            pooled = _pooled(tot, i, k)
            p = fisher_p(r, dof) if r is not None else None
            out[name] = Correlation(r, int(n_rows), dof, pooled, p)
        return out


def _corr(sxy: float, sxx: float, syy: float) -> float | None:
    if sxx <= 1e-12 or syy <= 1e-12:
        return None
    return max(-1.0, min(1.0, sxy / math.sqrt(sxx * syy)))


def _pooled(tot: list[float], i: int, k: int) -> float | None:
    n = tot[0]
    if n < 3:
        return None
    sx, sy = tot[3 + i], tot[1]
    sxx = tot[3 + k + i] - sx * sx / n
    syy = tot[2] - sy * sy / n
    sxy = tot[3 + 2 * k + i] - sx * sy / n
    return _corr(sxy, sxx, syy)
