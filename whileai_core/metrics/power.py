"""How big an eval has to be: spreads, the smallest detectable delta, tasks needed.

A paired comparison over n tasks whose per-task differences have standard deviation sd
detects a true delta D at two-sided level alpha with the given power when

    n >= ((z[1 - alpha/2] + z[power]) * sd / D) ** 2

so at n tasks the smallest such D is (z[1 - alpha/2] + z[power]) * sd / sqrt(n). The sd
is measured on the paired tasks in hand when there are enough of them (it then carries
the covariance pairing buys); otherwise it comes from a binomial model of k rollouts a
side, sqrt((p(1-p) + q(1-q)) / k) with p the base pass rate and q = p + D, which treats
the two sides as independent and so asks for more tasks than pairing needs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from .distributions import normal_quantile

ALPHA = 0.05
POWER = 0.8
MIN_TASKS = 2
MIN_MEASURED = 3  # paired tasks before their spread is read off the rows
_FIXED_POINT_STEPS = 20


def sample_std(values: Sequence[float]) -> float | None:
    """Sample standard deviation (n - 1); None below two values."""
    n = len(values)
    if n < 2:
        return None
    centre = sum(values) / n
    return math.sqrt(sum((v - centre) ** 2 for v in values) / (n - 1))


def _z_sum(alpha: float, power: float) -> float:
    if not 0 < alpha < 1 or not 0 < power < 1:
        raise ValueError("alpha and power must lie strictly between 0 and 1")
    return normal_quantile(1 - alpha / 2) + normal_quantile(power)


def tasks_needed(effect: float, sd: float, *, alpha: float = ALPHA, power: float = POWER) -> int:
    """Paired tasks that detect a true delta of `effect` when differences spread by `sd`."""
    if effect <= 0:
        raise ValueError("effect must be positive")
    n = (_z_sum(alpha, power) * sd / effect) ** 2
    return max(MIN_TASKS, math.ceil(n - 1e-9))


def detectable_effect(n: int, sd: float, *, alpha: float = ALPHA, power: float = POWER) -> float:
    """The smallest true delta `n` paired tasks detect when differences spread by `sd`."""
    if n < 1:
        raise ValueError("n must be at least 1")
    return _z_sum(alpha, power) * sd / math.sqrt(n)


def binomial_paired_sd(base: float, effect: float, k: int) -> float:
    """sd of one task's (after - before) pass rate over k rollouts a side, the two sides
    independent, before at `base` and after at `base + effect`."""
    p = min(1.0, max(0.0, base))
    q = min(1.0, max(0.0, p + effect))
    return math.sqrt((p * (1 - p) + q * (1 - q)) / max(1, k))


def model_tasks_needed(
    effect: float, base: float, k: int, *, alpha: float = ALPHA, power: float = POWER
) -> int:
    """`tasks_needed` with the sd from the binomial model."""
    return tasks_needed(effect, binomial_paired_sd(base, effect, k), alpha=alpha, power=power)


def model_detectable_effect(
    n: int, base: float, k: int, *, alpha: float = ALPHA, power: float = POWER
) -> float:
    """`detectable_effect` under the binomial model, whose sd depends on the effect: the
    fixed point of D = z * sd(base, D, k) / sqrt(n) (a contraction; it settles in a few
    steps)."""
    effect = 0.0
    for _ in range(_FIXED_POINT_STEPS):
        effect = min(
            1.0, detectable_effect(n, binomial_paired_sd(base, effect, k), alpha=alpha, power=power)
        )
    return effect
