"""Quantiles the comparison statistics need, with the standard library only.

The normal quantile comes from `statistics.NormalDist`. Student's t is needed for small
task counts (the expanded bootstrap interval, the re-run band): its distribution function
at integer degrees of freedom has a closed form as a finite trigonometric series
(Abramowitz & Stegun 26.7.3-4), which is exact and needs no special functions; the
quantile inverts it by bisection. Past `_CF_DF` degrees of freedom the series gets long
and the Cornish-Fisher expansion around the normal quantile is already within 1e-6.
"""

from __future__ import annotations

import math
from statistics import NormalDist

_NORMAL = NormalDist()
_CF_DF = 300


def normal_quantile(p: float) -> float:
    """z with P(Z <= z) = p."""
    return _NORMAL.inv_cdf(p)


def normal_cdf(z: float) -> float:
    return _NORMAL.cdf(z)


def t_cdf(t: float, df: int) -> float:
    """P(T <= t) for Student's t with `df` (a positive integer) degrees of freedom."""
    if df < 1:
        raise ValueError("degrees of freedom must be at least 1")
    theta = math.atan(abs(t) / math.sqrt(df))
    s, c2 = math.sin(theta), math.cos(theta) ** 2
    if df % 2 == 1:
        # P(|T| < t) = 2/pi * (theta + sin cos (1 + 2/3 c^2 + 2*4/(3*5) c^4 + ...))
        term, total = 1.0, 1.0 if df > 1 else 0.0
        for j in range(1, (df - 1) // 2):
            term *= c2 * (2 * j) / (2 * j + 1)
            total += term
        inside = 2 / math.pi * (theta + s * math.cos(theta) * total)
    else:
        # P(|T| < t) = sin (1 + 1/2 c^2 + 1*3/(2*4) c^4 + ...)
        term, total = 1.0, 1.0
        for j in range(1, df // 2):
            term *= c2 * (2 * j - 1) / (2 * j)
            total += term
        inside = s * total
    return 0.5 + inside / 2 if t >= 0 else 0.5 - inside / 2


def t_quantile(p: float, df: int) -> float:
    """t with P(T <= t) = p at `df` degrees of freedom."""
    if not 0 < p < 1:
        raise ValueError("p must lie strictly between 0 and 1")
    if p < 0.5:
        return -t_quantile(1 - p, df)
    if df > _CF_DF:
        z = normal_quantile(p)
        return (
            z
            + (z**3 + z) / (4 * df)
            + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)
            + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * df**3)
        )
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < p:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        if t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-12:
            break
    return (lo + hi) / 2
