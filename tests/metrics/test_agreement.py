"""Agreement statistics against a hand computation."""

from __future__ import annotations

import math

import pytest

from whileai_core.metrics.agreement import Confusion, agreement_stats, cohen_kappa, confusion_of


def test_kappa_agreement_and_wilson_match_a_hand_computation() -> None:
    # 20 rows: judge pass & gold pass 9, pass/fail 3, fail/pass 2, fail/fail 6.
    pairs = [(True, True)] * 9 + [(True, False)] * 3 + [(False, True)] * 2 + [(False, False)] * 6
    c = confusion_of(pairs)
    assert c.as_dict() == {"tp": 9, "fp": 3, "fn": 2, "tn": 6}
    stats = agreement_stats(c)
    n, po = 20, 15 / 20
    pe = (12 / 20) * (11 / 20) + (8 / 20) * (9 / 20)
    assert stats["agreement"] == pytest.approx(po, abs=1e-12)
    assert stats["kappa"] == pytest.approx((po - pe) / (1 - pe), abs=1e-12)
    z = 1.96
    centre = (po + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(po * (1 - po) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    assert stats["ci95"] == pytest.approx([centre - half, centre + half], abs=1e-12)
    assert stats["pass_when_gold_fail"] == pytest.approx(3 / 9)
    assert stats["fail_when_gold_pass"] == pytest.approx(2 / 11)


def test_kappa_is_undefined_when_both_sides_give_one_class() -> None:
    assert cohen_kappa(Confusion(tp=5)) is None
    assert cohen_kappa(Confusion()) is None
    one_gold_class = agreement_stats(Confusion(tp=4, fn=1))
    assert one_gold_class["kappa"] is None and one_gold_class["gold_classes"] == 1
    assert one_gold_class["pass_when_gold_fail"] is None


def test_perfect_and_chance_agreement() -> None:
    assert cohen_kappa(Confusion(tp=5, tn=5)) == pytest.approx(1.0)
    assert cohen_kappa(Confusion(tp=5, fp=5, fn=5, tn=5)) == pytest.approx(0.0)
