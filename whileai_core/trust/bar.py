"""The bar a judge clears before its reward is called trusted, and which part it missed.

Agreement alone misleads: on labels that are 93% passes, a judge that passes everything
agrees 93% of the time and has learned nothing, and a judge at kappa 0.18 that passes
half the gold failures can still print a high agreement. So trusted needs all of:

- enough labels of **both** classes (`min_per_class`, 10 each): with fewer gold failures
  than that, `pass_when_gold_fail` moves by more than the 0.1 it is held to with one row;
- Cohen's kappa at or above `min_kappa` (0.6: Landis and Koch's "substantial", the floor
  the original SDK holds its judge to as well);
- `pass_when_gold_fail` at or below `max_pass_when_gold_fail` (0.1: a judge that passes
  one gold failure in ten puts that many failures into a training set as wins; the
  SDK warns at the same share);
- agreement strictly above the majority-class baseline: the agreement of a judge that
  gives every row the label most rows carry. A judge that cannot beat that is not reading
  the rows;
- agreement at or above `min_agreement`, only when one is given (no default: kappa and
  the baseline already say whether agreement means anything).

Each check is reported with its value and its threshold, so the verdict line can say
exactly which part failed, and a trusted verdict says what it was measured against.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

MIN_KAPPA = 0.6
MAX_PASS_WHEN_GOLD_FAIL = 0.1
MIN_PER_CLASS = 10


@dataclass(frozen=True)
class TrustBar:
    """The thresholds a trusted verdict needs; the CLI flags map onto these."""

    min_kappa: float = MIN_KAPPA
    max_pass_when_gold_fail: float = MAX_PASS_WHEN_GOLD_FAIL
    min_per_class: int = MIN_PER_CLASS
    min_agreement: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Check:
    """One part of the bar: what was measured, what it had to be, and whether it was."""

    name: str
    value: float | int | None
    threshold: float | int
    op: str  # ">=", "<=" or ">": how value must compare with threshold
    ok: bool
    why: str  # the sentence the verdict gives when this check fails

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def short(self) -> str:
        """`kappa 0.18 >= 0.6`, or `kappa n/a >= 0.6`: the check as the verdict line shows it."""
        shown = "n/a" if self.value is None else _num(self.value)
        return f"{self.name} {shown} {self.op} {_num(self.threshold)}"


def _num(x: float | int) -> str:
    return str(x) if isinstance(x, int) else f"{x:.3g}" if abs(x) < 1 else f"{x:g}"


def majority_baseline(stats: dict[str, Any]) -> float | None:
    """The agreement of a judge that gives every row the majority gold label."""
    rate = stats.get("gold_pass_rate")
    return None if rate is None else max(rate, 1.0 - rate)


def checks(stats: dict[str, Any], bar: TrustBar) -> list[Check]:
    """Every part of the bar against `metrics.agreement.agreement_stats` output."""
    c = stats["confusion"]
    passes, fails = c["tp"] + c["fn"], c["fp"] + c["tn"]
    fewest = min(passes, fails)
    out = [
        Check(
            "labels_per_class",
            fewest,
            bar.min_per_class,
            ">=",
            fewest >= bar.min_per_class,
            f"not enough labels of both classes: {passes} gold pass and {fails} gold fail, "
            f"{bar.min_per_class} of each needed",
        )
    ]
    kappa = stats.get("kappa")
    out.append(
        Check(
            "kappa",
            kappa,
            bar.min_kappa,
            ">=",
            kappa is not None and kappa >= bar.min_kappa,
            (
                "kappa cannot be read (one gold class)"
                if kappa is None
                else f"kappa {kappa:.3f} is below {bar.min_kappa:g}"
            ),
        )
    )
    leak = stats.get("pass_when_gold_fail")
    out.append(
        Check(
            "pass_when_gold_fail",
            leak,
            bar.max_pass_when_gold_fail,
            "<=",
            leak is not None and leak <= bar.max_pass_when_gold_fail,
            (
                "pass_when_gold_fail cannot be read (no gold failures)"
                if leak is None
                else f"the judge passed {c['fp']} of {fails} gold failures ({leak:.0%}), "
                f"over {bar.max_pass_when_gold_fail:g}"
            ),
        )
    )
    agreement = stats.get("agreement")
    base = majority_baseline(stats)
    if base is not None and agreement is not None:
        label = "pass" if (stats.get("gold_pass_rate") or 0.0) >= 0.5 else "fail"
        out.append(
            Check(
                "agreement_over_baseline",
                agreement,
                base,
                ">",
                agreement > base,
                f"agreement {agreement:.3f} is not above the majority-class baseline "
                f"{base:.3f} (a judge that says {label} to every row)",
            )
        )
    if bar.min_agreement is not None and agreement is not None:
        out.append(
            Check(
                "agreement",
                agreement,
                bar.min_agreement,
                ">=",
                agreement >= bar.min_agreement,
                f"agreement {agreement:.3f} is below {bar.min_agreement:g}",
            )
        )
    return out
