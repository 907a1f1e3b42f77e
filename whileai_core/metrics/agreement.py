"""How far one pass/fail signal agrees with another taken as gold: the judge against human
labels, or one judge (or run) against another.

A pair is (judge passed, gold passed). The confusion counts are named for the judge's
call measured against gold: `tp` the judge passed a gold pass, `fp` it passed a gold fail,
`fn` it failed a gold pass, `tn` it failed a gold fail. `pass_when_gold_fail` = fp / (fp +
tn) is the one a training run learns the failure from, so it is reported beside the
headline agreement. Cohen's kappa is agreement corrected for what two raters with these
pass rates would agree on by chance; it is undefined (None) when chance agreement is
total, i.e. both sides gave one class only.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .stats import wilson

# Below this many gold labels an agreement figure is too noisy to gate on (the SDK's floor).
LABEL_FLOOR = 50


@dataclass
class Confusion:
    """Counts of (judge, gold) outcomes; `add` one pair at a time."""

    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0

    def add(self, judge_pass: bool, gold_pass: bool) -> None:
        if judge_pass and gold_pass:
            self.tp += 1
        elif judge_pass:
            self.fp += 1
        elif gold_pass:
            self.fn += 1
        else:
            self.tn += 1

    @property
    def n(self) -> int:
        return self.tp + self.fp + self.fn + self.tn

    @property
    def agree(self) -> int:
        return self.tp + self.tn

    def as_dict(self) -> dict[str, int]:
        return {"tp": self.tp, "fp": self.fp, "fn": self.fn, "tn": self.tn}


def confusion_of(pairs: Iterable[tuple[bool, bool]]) -> Confusion:
    counts = Confusion()
    for judge_pass, gold_pass in pairs:
        counts.add(judge_pass, gold_pass)
    return counts


def cohen_kappa(c: Confusion) -> float | None:
    """(p_o - p_e) / (1 - p_e); None when there is nothing to correct for (p_e = 1) or no data."""
    n = c.n
    if n == 0:
        return None
    p_o = c.agree / n
    judge_pass, gold_pass = (c.tp + c.fp) / n, (c.tp + c.fn) / n
    p_e = judge_pass * gold_pass + (1 - judge_pass) * (1 - gold_pass)
    if p_e >= 1.0:
        return None
    return (p_o - p_e) / (1 - p_e)


def _rate(num: int, den: int) -> float | None:
    return num / den if den else None


def agreement_stats(c: Confusion) -> dict[str, Any]:
    """Agreement with its 95% Wilson interval, kappa, the confusion counts and the two
    error rates; what every trust and agreement report prints."""
    n = c.n
    lo, hi = wilson(c.agree, n)
    gold_classes = int(c.tp + c.fn > 0) + int(c.fp + c.tn > 0)
    return {
        "n": n,
        "agree": c.agree,
        "agreement": _rate(c.agree, n),
        "ci95": [lo, hi] if n else None,
        "kappa": cohen_kappa(c) if gold_classes == 2 else None,
        "confusion": c.as_dict(),
        "pass_when_gold_fail": _rate(c.fp, c.fp + c.tn),
        "fail_when_gold_pass": _rate(c.fn, c.tp + c.fn),
        "judge_pass_rate": _rate(c.tp + c.fp, n),
        "gold_pass_rate": _rate(c.tp + c.fn, n),
        "gold_classes": gold_classes,
    }
