"""The comparison statistics against exact computation on small fixed sets (to 1e-9)."""

from __future__ import annotations

import itertools
import math

import pytest

from whileai_core.metrics.distributions import normal_quantile, t_cdf, t_quantile
from whileai_core.metrics.paired import (
    compare_values,
    expanded_level,
    sign_flip_p,
    unpaired_diff_ci,
    verdict_of,
)
from whileai_core.metrics.power import (
    binomial_paired_sd,
    detectable_effect,
    model_detectable_effect,
    sample_std,
    tasks_needed,
)
from whileai_core.metrics.stats import wilson


def brute_sign_flip(diffs: list[float]) -> float:
    """Every one of the 2^n sign patterns, one by one (zeros included)."""
    observed = abs(sum(diffs))
    hits = total = 0
    for signs in itertools.product((1, -1), repeat=len(diffs)):
        total += 1
        if abs(sum(s * d for s, d in zip(signs, diffs, strict=True))) >= observed - 1e-12:
            hits += 1
    return hits / total


FIXED_SETS = [
    [0.25, 0.5, -0.25, 0.0, 0.75, 0.25, 0.5],
    [1.0, 1.0, 1.0, 1.0, 1.0, 1.0],
    [0.1, -0.3, 0.2, 0.4, -0.1, 0.0, 0.0, 0.3, 0.5, -0.2, 0.25, 1 / 3],
    [0.5, -0.5, 0.5, -0.5, 0.25],
    [2 / 3, 1 / 3, -1 / 3, 0.0, 1.0, 1 / 3, 0.0, -2 / 3, 1 / 3, 1 / 3, 0.0, 2 / 3, 1.0],
]


@pytest.mark.parametrize("diffs", FIXED_SETS)
def test_exact_sign_flip_matches_enumeration(diffs: list[float]) -> None:
    p, method = sign_flip_p(diffs)
    assert method == "exact"
    assert p == pytest.approx(brute_sign_flip(diffs), abs=1e-9)


def test_sign_flip_by_hand() -> None:
    # Six tasks all +1: only the all-plus and all-minus patterns reach |sum| 6 -> 2/64.
    assert sign_flip_p([1.0] * 6)[0] == pytest.approx(2 / 64, abs=1e-12)
    # Nothing moved: every pattern ties the observed 0.
    assert sign_flip_p([0.0, 0.0, 0.0]) == (1.0, "exact")


def test_monte_carlo_above_sixteen_tasks_is_seeded_and_near_exact() -> None:
    diffs = [0.25, 0.5, -0.25, 0.75, 0.25, 0.5, 0.25, -0.5, 0.25] * 2  # 18 nonzero
    p1, method = sign_flip_p(diffs, seed=3)
    assert method == "monte_carlo"
    assert sign_flip_p(diffs, seed=3)[0] == p1  # reproducible
    exact, _ = sign_flip_p(diffs, exact_max=18)
    assert exact == pytest.approx(brute_sign_flip(diffs), abs=1e-9)
    # 10,000 draws: the estimate sits within four standard errors of the exact value.
    se = math.sqrt(exact * (1 - exact) / 10_000)
    assert abs(p1 - exact) < 4 * se + 1e-4


def test_paired_difference_is_the_mean_of_per_task_differences() -> None:
    a = {"t1": 0.0, "t2": 0.5, "t3": 0.25, "t4": 1.0, "t5": 0.75, "only_a": 1.0}
    b = {"t1": 0.5, "t2": 0.5, "t3": 1.0, "t4": 0.75, "t5": 1.0, "only_b": 0.0}
    c = compare_values(a, b, metric="pass_at_1")
    by_hand = (0.5 + 0.0 + 0.75 - 0.25 + 0.25) / 5
    assert c.paired and c.n_paired == 5
    assert c.delta == pytest.approx(by_hand, abs=1e-12)
    assert c.mean_a == pytest.approx(3.5 / 6, abs=1e-12)
    assert c.mean_b == pytest.approx(3.75 / 6, abs=1e-12)
    assert (c.n_only_a, c.n_only_b) == (1, 1)
    assert c.paired_share == pytest.approx(5 / 7, abs=1e-12)
    assert "1 task(s) only in A and 1 only in B" in c.note
    assert c.p_value == pytest.approx(brute_sign_flip([0.5, 0.0, 0.75, -0.25, 0.25]), abs=1e-9)
    assert c.diff_sd == pytest.approx(sample_std([0.5, 0.0, 0.75, -0.25, 0.25]), abs=1e-12)
    assert c.ci95 is not None and c.ci95[0] <= c.delta <= c.ci95[1]


def test_fewer_than_five_shared_tasks_fall_back_to_unpaired() -> None:
    a = {"t1": 0.0, "t2": 0.0, "t3": 0.0, "t4": 0.25}
    b = {"t1": 1.0, "t2": 1.0, "t3": 0.75, "x": 1.0}
    c = compare_values(a, b, metric="pass_at_1")
    assert not c.paired and c.p_value is None
    assert c.delta == pytest.approx(3.75 / 4 - 0.25 / 4, abs=1e-12)
    assert "fewer than 5 shared tasks (3)" in c.note and "unpaired" in c.note
    assert c.verdict == "improved"
    tiny = compare_values({"t1": 0.0}, {"t1": 1.0}, metric="pass_at_1")
    assert tiny.verdict == "insufficient_data" and tiny.ci95 is None


def test_unpaired_interval_holds_the_point_and_is_seeded() -> None:
    va, vb = [0.0, 0.5, 0.25, 1.0], [0.5, 1.0, 0.75]
    ci = unpaired_diff_ci(va, vb, seed=1)
    assert ci == unpaired_diff_ci(va, vb, seed=1)
    assert ci is not None and ci[0] <= (2.25 / 3 - 1.75 / 4) <= ci[1]


def test_verdict_reads_the_interval_only() -> None:
    assert verdict_of((0.01, 0.2)) == "improved"
    assert verdict_of((-0.2, -0.01)) == "regressed"
    assert verdict_of((0.0, 0.2)) == "no_difference_detected"  # touching zero covers it
    assert verdict_of((-0.1, 0.1)) == "no_difference_detected"
    assert verdict_of(None) == "insufficient_data"


def test_wilson_bounds_are_the_roots_of_the_score_equation() -> None:
    # The Wilson interval is where (phat - p)^2 = z^2 p (1 - p) / n: solve the quadratic.
    z = 1.96
    for k, n in [(7, 10), (0, 12), (12, 12), (31, 50), (1, 3)]:
        phat = k / n
        a = 1 + z * z / n
        b = -(2 * phat + z * z / n)
        c = phat * phat
        disc = math.sqrt(b * b - 4 * a * c)
        lo, hi = (-b - disc) / (2 * a), (-b + disc) / (2 * a)
        got = wilson(k, n)
        assert got[0] == pytest.approx(max(0.0, lo), abs=1e-9)
        assert got[1] == pytest.approx(min(1.0, hi), abs=1e-9)


def _t_density(x: float, df: int) -> float:
    c = math.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2)) / math.sqrt(df * math.pi)
    return c * (1 + x * x / df) ** (-(df + 1) / 2)


@pytest.mark.parametrize("df", [1, 2, 3, 4, 7, 10, 29])
def test_t_cdf_matches_the_integrated_density(df: int) -> None:
    for t in (0.3, 1.0, 2.1, 4.0):
        steps = 20_000  # Simpson's rule from 0 to t, plus the half below zero
        h = t / steps
        total = _t_density(0, df) + _t_density(t, df)
        total += sum((4 if i % 2 else 2) * _t_density(i * h, df) for i in range(1, steps))
        assert t_cdf(t, df) == pytest.approx(0.5 + total * h / 3, abs=1e-9)
        assert t_cdf(-t, df) == pytest.approx(1 - t_cdf(t, df), abs=1e-12)


def test_t_quantiles_against_the_table() -> None:
    table = {1: 12.706, 2: 4.303, 4: 2.776, 9: 2.262, 30: 2.042, 99: 1.984, 1000: 1.962}
    for df, value in table.items():
        assert t_quantile(0.975, df) == pytest.approx(value, abs=6e-4)
        assert t_cdf(t_quantile(0.975, df), df) == pytest.approx(0.975, abs=1e-6)


def test_expanded_level_widens_small_samples_only() -> None:
    # 100 tasks: sqrt(100/99) * t(0.975, 99) = 1.99416 -> 2 * Phi(1.99416) - 1
    assert expanded_level(100) == pytest.approx(0.95387, abs=2e-5)
    assert expanded_level(20) > expanded_level(100) > 0.95
    assert expanded_level(100_000) == pytest.approx(0.95, abs=1e-4)


def test_power_formulas_by_hand() -> None:
    z = normal_quantile(0.975) + normal_quantile(0.8)  # 1.959964 + 0.841621
    assert z == pytest.approx(2.8015852, abs=1e-6)
    assert tasks_needed(0.05, 0.3) == math.ceil((z * 0.3 / 0.05) ** 2) == 283
    assert detectable_effect(283, 0.3) == pytest.approx(z * 0.3 / math.sqrt(283), abs=1e-12)
    sd = binomial_paired_sd(0.4, 0.1, 4)
    assert sd == pytest.approx(math.sqrt((0.4 * 0.6 + 0.5 * 0.5) / 4), abs=1e-12)
    d = model_detectable_effect(100, 0.4, 4)
    assert d == pytest.approx(z * binomial_paired_sd(0.4, d, 4) / 10, abs=1e-9)
    assert sample_std([1.0, 2.0, 4.0]) == pytest.approx(math.sqrt(7 / 3), abs=1e-12)
    assert sample_std([1.0]) is None
