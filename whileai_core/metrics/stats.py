"""Small, dependency-free statistics every report shares: intervals and pass@k estimators.

Bootstraps are seeded so a report printed twice prints the same interval.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence


def wilson(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval for a proportion; sane at 0 and n, unlike the normal one."""
    if n <= 0:
        return (0.0, 1.0)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


def bootstrap_ci(
    values: Sequence[float],
    *,
    stat: Callable[[Sequence[float]], float] = mean,
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> tuple[float, float] | None:
    """Percentile bootstrap interval of `stat` over `values`; None when there is nothing."""
    if not values:
        return None
    if len(values) == 1:
        return (values[0], values[0])
    rng = random.Random(seed)
    n = len(values)
    draws = sorted(stat(rng.choices(values, k=n)) for _ in range(n_boot))
    lo_idx = math.floor((1 - level) / 2 * n_boot)
    hi_idx = min(n_boot - 1, math.ceil((1 + level) / 2 * n_boot) - 1)
    point = stat(values)
    # The percentile interval always contains the point estimate when reported with it.
    return (min(draws[lo_idx], point), max(draws[hi_idx], point))


def pass_pow_k(n: int, c: int, k: int) -> float:
    """Unbiased chance that k draws without replacement from n rollouts (c passing) all pass."""
    if k > n:
        raise ValueError("k must not exceed the group size")
    return math.comb(c, k) / math.comb(n, k)


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased chance that at least one of k draws from n rollouts (c passing) passes."""
    if k > n:
        raise ValueError("k must not exceed the group size")
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pearson(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """Pearson correlation; None when either side is constant or too short."""
    n = len(xs)
    if n < 3 or n != len(ys):
        return None
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    syy = sum((y - my) ** 2 for y in ys)
    if sxx == 0 or syy == 0:
        return None
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=False))
    return sxy / math.sqrt(sxx * syy)


def pearson_ci(r: float, n: int, z: float = 1.96) -> tuple[float, float] | None:
    """Fisher-z interval of a Pearson correlation over n pairs; None below four pairs."""
    if n < 4 or not -1 <= r <= 1:
        return None
    if abs(r) == 1:
        return (r, r)
    centre, half = math.atanh(r), z / math.sqrt(n - 3)
    return (math.tanh(centre - half), math.tanh(centre + half))
