"""A training run's one word over its held-out number before and after: Better, Worse, or
About the same.

The numbers arrive in a run's summary under the original SDK's keys
(`holdoutPassBefore`/`After`, a pass rate from 0 to 1, higher is better; or
`holdoutLossBefore`/`After`, a held-out loss, lower is better). How sure the word is
depends on what else came with them, strongest first:

1. a delta report's verdict on the holdout (`summary.holdout.verdict`, which knows the
   paired tasks and the eval's re-run noise): a move inside the noise is About the same;
2. the two sides' 95% intervals (`summary.holdout.before/after.ci95`, or Wilson intervals
   from `pass` and `n_tasks`): intervals that overlap are About the same;
3. two bare numbers: a change under `SAME_PASS` (two points of pass rate) or `SAME_LOSS`
   (1% of the loss before) is About the same.

`basis` says which of the three decided, so a page can show how much the word is worth.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from .stats import wilson

BETTER, WORSE, SAME = "Better", "Worse", "About the same"
HOLDOUT_KEYS = {
    "pass": ("holdoutPassBefore", "holdoutPassAfter"),
    "loss": ("holdoutLossBefore", "holdoutLossAfter"),
}
SAME_PASS = 0.02
SAME_LOSS = 0.01
_MOVED = {"moved": 1, "moved_unreplicated": 1, "moved_the_wrong_way": -1}
_STILL = {"within_eval_noise", "no_change_detected"}


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def _interval(side: Any) -> tuple[float, float] | None:
    if not isinstance(side, Mapping):
        return None
    ci = side.get("ci95")
    if isinstance(ci, (list, tuple)) and len(ci) == 2:
        lo, hi = _number(ci[0]), _number(ci[1])
        if lo is not None and hi is not None:
            return (lo, hi)
    rate, n = _number(side.get("pass")), side.get("n_tasks")
    if rate is not None and isinstance(n, int) and not isinstance(n, bool) and n > 0:
        return wilson(round(rate * n), n)
    return None


def holdout_word(
    before: float, after: float, metric: str = "pass", block: Mapping[str, Any] | None = None
) -> tuple[str, str]:
    """(word, basis) for one run; `block` is the summary's `holdout` block, when sent."""
    better = after > before if metric == "pass" else after < before
    moved = BETTER if better else WORSE
    if block:
        verdict = block.get("verdict")
        if verdict in _STILL:
            return SAME, f"delta report: {verdict}"
        if verdict in _MOVED:
            return moved, f"delta report: {verdict}"
        if metric == "pass":
            lo, hi = _interval(block.get("before")), _interval(block.get("after"))
            if lo is not None and hi is not None:
                overlap = lo[0] <= hi[1] and hi[0] <= lo[1]
                return (SAME if overlap else moved), "95% intervals " + (
                    "overlap" if overlap else "apart"
                )
    if metric == "pass":
        tolerance, basis = SAME_PASS, f"change under {SAME_PASS:.0%} counts as the same"
    else:
        tolerance = SAME_LOSS * abs(before)
        basis = f"change under {SAME_LOSS:.0%} of the loss counts as the same"
    if abs(after - before) < tolerance or after == before:
        return SAME, basis
    return moved, basis


def run_holdout(summary: Mapping[str, Any]) -> dict[str, Any] | None:
    """The holdout a run's summary carries, with its word; None when it carries none."""
    for metric, (key_before, key_after) in HOLDOUT_KEYS.items():
        before, after = _number(summary.get(key_before)), _number(summary.get(key_after))
        if before is None or after is None:
            continue
        block = summary.get("holdout")
        word, basis = holdout_word(
            before, after, metric, block if isinstance(block, Mapping) else None
        )
        return {
            "metric": metric,
            "before": before,
            "after": after,
            "change": after - before,
            "word": word,
            "basis": basis,
        }
    return None
