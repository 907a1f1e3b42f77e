"""Is run B different from run A on one metric? Paired by task, with an interval.

Tasks both runs share are compared as per-task differences (B minus A). The interval is
a seeded bootstrap over those differences (`stats.bootstrap_ci`) at an *expanded* level:
a percentile bootstrap is too narrow on few tasks (it reads the sample's spread as the
population's, and a normal tail as the t tail), so the level is widened to
2·Φ(√(n/(n−1))·t₀.₉₇₅,ₙ₋₁) − 1 (Hesterberg's expanded percentile interval). At 100
tasks that is a 95.4% percentile; at 20 tasks 96.8%; and it brings the rate at which a
null comparison clears zero back to at most 5% (5.3% -> 4.8% at 100 tasks, 6.0% -> 4.5%
at 20, measured on binary tasks at k=4).

The p-value is a sign-flip permutation test: under "no difference" each paired difference
is as likely to have either sign. It is exact (every sign pattern counted) up to 16 tasks
with a nonzero difference, and 10,000 seeded draws above that. Both work on the distinct
magnitudes: a pattern's sum depends only on how many of each magnitude flipped, which is
Binomial(m, 1/2) (exact counts by binomial coefficient; a draw is the popcount of m
random bits), so neither grows with the number of tied tasks.

With fewer than 5 shared tasks the comparison falls back to the unpaired difference of
task means, with a two-sample bootstrap, and says so.

The verdict reads the interval: `improved` (it lies above zero), `regressed` (below),
`no_difference_detected` (it covers zero, which is not "equal"), `insufficient_data`. A
paired verdict of a change also needs the sign-flip p-value under 1 − level: on few tasks
the bootstrap cannot resolve the tail the expanded level asks for (at 5 tasks a 99.8%
percentile of 2,000 draws is the second-largest draw), so whether the interval touched
zero turned on the seed, while the exact test gives one answer. It also caps what a few
tasks can show: with m tasks that moved, the smallest two-sided p is 2 · 2⁻ᵐ, so a slice
needs at least 6 moved tasks to show a change at 0.05 (5 give 0.0625). The original SDK
reads a plain percentile interval and flags four drops in five tasks (p 0.125); this
does not.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from .distributions import normal_cdf, t_quantile
from .power import sample_std
from .stats import bootstrap_ci, mean

MIN_PAIRED = 5
MIN_SIDE = 3  # task means a side needs before an unpaired interval means anything
EXACT_MAX = 16
PERMUTATION_DRAWS = 10_000
N_BOOT = 2000
LEVEL = 0.95
MOSTLY_UNPAIRED = 0.5
VERDICTS = ("improved", "regressed", "no_difference_detected", "insufficient_data")


def expanded_level(n: int, level: float = LEVEL) -> float:
    """The percentile level that gives a `level` interval on `n` values (see the module)."""
    if n < 2:
        return level
    t = t_quantile((1 + level) / 2, n - 1)
    return 2 * normal_cdf(math.sqrt(n / (n - 1)) * t) - 1


def sign_flip_p(
    diffs: Sequence[float],
    *,
    exact_max: int = EXACT_MAX,
    draws: int = PERMUTATION_DRAWS,
    seed: int = 0,
) -> tuple[float, str]:
    """Two-sided sign-flip p-value of the mean difference, and `exact` or `monte_carlo`.

    Exact: the share of the 2^m sign patterns of the m nonzero differences whose sum is
    at least as far from zero as the observed one (zeros flip to themselves). Monte Carlo:
    (extreme draws + 1) / (draws + 1), which is never 0.
    """
    magnitudes = Counter(abs(d) for d in diffs if d != 0)
    observed = abs(sum(diffs))
    if not magnitudes:
        return 1.0, "exact"
    m = sum(magnitudes.values())
    tol = 1e-9 * max(1.0, observed)
    if m <= exact_max:
        sums: dict[float, int] = {0.0: 1}
        for magnitude, count in magnitudes.items():
            grown: dict[float, int] = {}
            for partial, weight in sums.items():
                for up in range(count + 1):
                    key = partial + magnitude * (2 * up - count)
                    grown[key] = grown.get(key, 0) + weight * math.comb(count, up)
            sums = grown
        extreme = sum(w for s, w in sums.items() if abs(s) >= observed - tol)
        return extreme / 2**m, "exact"
    rng = random.Random(seed)
    groups = list(magnitudes.items())
    hits = 0
    for _ in range(draws):
        total = 0.0
        for magnitude, count in groups:
            total += magnitude * (2 * rng.getrandbits(count).bit_count() - count)
        if abs(total) >= observed - tol:
            hits += 1
    return (hits + 1) / (draws + 1), "monte_carlo"


def unpaired_diff_ci(
    va: Sequence[float],
    vb: Sequence[float],
    *,
    n_boot: int = N_BOOT,
    seed: int = 0,
    level: float = LEVEL,
) -> tuple[float, float] | None:
    """Two-sample bootstrap interval of mean(vb) - mean(va); None below MIN_SIDE a side."""
    if len(va) < MIN_SIDE or len(vb) < MIN_SIDE:
        return None
    rng = random.Random(seed)
    wide = expanded_level(min(len(va), len(vb)), level)
    na, nb = len(va), len(vb)
    draws = sorted(
        sum(rng.choices(vb, k=nb)) / nb - sum(rng.choices(va, k=na)) / na for _ in range(n_boot)
    )
    lo = draws[math.floor((1 - wide) / 2 * n_boot)]
    hi = draws[min(n_boot - 1, math.ceil((1 + wide) / 2 * n_boot) - 1)]
    point = mean(vb) - mean(va)
    return (min(lo, point), max(hi, point))


def verdict_of(
    ci: tuple[float, float] | list[float] | None,
    p_value: float | None = None,
    alpha: float = 1 - LEVEL,
) -> str:
    """The verdict an interval gives; a change also needs `p_value` under `alpha` when
    there is one (see the module)."""
    if ci is None:
        return "insufficient_data"
    if p_value is not None and p_value >= alpha:
        return "no_difference_detected"
    if ci[0] > 0:
        return "improved"
    if ci[1] < 0:
        return "regressed"
    return "no_difference_detected"


@dataclass
class Comparison:
    """One metric, run A against run B (delta = B - A)."""

    metric: str
    paired: bool
    n_paired: int
    n_only_a: int
    n_only_b: int
    paired_share: float | None
    mean_a: float | None  # over every task of A that carries the metric
    mean_b: float | None
    delta: float | None  # mean paired difference (unpaired: difference of the means)
    ci95: list[float] | None
    p_value: float | None
    p_method: str | None
    verdict: str
    diff_sd: float | None  # sample sd of the paired differences, for sizing a holdout
    note: str
    seed: int

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def line(self) -> str:
        """`pass_at_1  0.420 -> 0.580  +0.160 [+0.080, +0.240]  p 0.0004  improved  (...)`"""
        if self.delta is None:
            return f"{self.metric}  {self.verdict}  ({self.note or 'no tasks on both sides'})"
        span = f" [{self.ci95[0]:+.3f}, {self.ci95[1]:+.3f}]" if self.ci95 else ""
        p = f"  p {self.p_value:.4f}" if self.p_value is not None else ""
        a = "n/a" if self.mean_a is None else f"{self.mean_a:.3f}"
        b = "n/a" if self.mean_b is None else f"{self.mean_b:.3f}"
        share = "" if self.paired_share is None else f", {self.paired_share:.0%} paired"
        how = f"{self.n_paired} paired tasks{share}" if self.paired else "unpaired"
        return f"{self.metric}  {a} -> {b}  {self.delta:+.3f}{span}{p}  {self.verdict}  ({how})"


def compare_values(
    ma: Mapping[str, float],
    mb: Mapping[str, float],
    *,
    metric: str,
    seed: int = 0,
    n_boot: int = N_BOOT,
    level: float = LEVEL,
    min_paired: int = MIN_PAIRED,
) -> Comparison:
    """Compare per-task values of A and B (`{task: value}`), paired where they share tasks."""
    shared = [t for t in ma if t in mb]
    n_only_a = len(ma) - len(shared)
    n_only_b = len(mb) - len(shared)
    n_all = len(shared) + n_only_a + n_only_b
    share = len(shared) / n_all if n_all else None
    mean_a = mean(list(ma.values())) if ma else None
    mean_b = mean(list(mb.values())) if mb else None
    paired = len(shared) >= min_paired
    p_value: float | None = None
    p_method: str | None = None
    diff_sd: float | None = None
    if paired:
        diffs = [mb[t] - ma[t] for t in shared]
        delta: float | None = mean(diffs)
        ci = bootstrap_ci(diffs, n_boot=n_boot, seed=seed, level=expanded_level(len(diffs), level))
        p_value, p_method = sign_flip_p(diffs, seed=seed)
        diff_sd = sample_std(diffs)
    else:
        va, vb = list(ma.values()), list(mb.values())
        delta = mean(vb) - mean(va) if va and vb else None
        ci = unpaired_diff_ci(va, vb, n_boot=n_boot, seed=seed, level=level)
    if not paired:
        note = (
            f"fewer than {min_paired} shared tasks ({len(shared)}): compared the unpaired "
            "task means, a weaker test"
        )
    elif n_only_a or n_only_b:
        note = (
            f"{n_only_a} task(s) only in A and {n_only_b} only in B were left out; the "
            f"verdict rests on the {len(shared)} shared"
        )
        if share is not None and share < MOSTLY_UNPAIRED:
            note = "most tasks unpaired: " + note
    else:
        note = ""
    return Comparison(
        metric=metric,
        paired=paired,
        n_paired=len(shared),
        n_only_a=n_only_a,
        n_only_b=n_only_b,
        paired_share=share,
        mean_a=mean_a,
        mean_b=mean_b,
        delta=delta,
        ci95=list(ci) if ci is not None and delta is not None else None,
        p_value=p_value,
        p_method=p_method,
        verdict=verdict_of(ci, p_value, 1 - level) if delta is not None else "insufficient_data",
        diff_sd=diff_sd,
        note=note,
        seed=seed,
    )
