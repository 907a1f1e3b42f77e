"""Within-group correlation from running sums, the grouped numpy helpers, bounded counting."""

from __future__ import annotations

import random

import numpy as np

from whileai_core.metrics.grouped import Layout, column_correlations
from whileai_core.metrics.sketch import TopCounts
from whileai_core.metrics.within import WithinGroup, fisher_p


def _reference(groups: list[int], x: list[float], y: list[float]) -> float:
    g, xa, ya = np.array(groups), np.array(x), np.array(y)
    xc, yc = xa.copy(), ya.copy()
    for key in set(groups):
        mask = g == key
        xc[mask] -= xa[mask].mean()
        yc[mask] -= ya[mask].mean()
    return float((xc @ yc) / np.sqrt((xc @ xc) * (yc @ yc)))


def test_within_group_correlation_matches_centring_by_hand() -> None:
    rng = random.Random(0)
    groups, x, y = [], [], []
    for g in range(40):
        base = rng.random() * 10  # a group effect on both: pooled r is inflated by it
        for _ in range(6):
            xi = rng.random()
            groups.append(g)
            x.append(base + xi)
            y.append(base + 0.5 * xi + rng.random())
    within = WithinGroup(["x"])
    for g, xi, yi in zip(groups, x, y, strict=True):
        within.add(str(g), yi, [xi])
    got = within.result()["x"]
    assert abs(got.r - _reference(groups, x, y)) < 1e-9  # type: ignore[operator]
    assert got.pooled is not None and got.pooled > got.r  # type: ignore[operator]
    assert got.n == 240 and got.dof == 200 and got.p is not None and got.p < 1e-3


def test_singleton_groups_carry_no_within_signal() -> None:
    within = WithinGroup(["x"])
    for i in range(10):
        within.add(str(i), float(i % 2), [float(i)])
    result = within.result()["x"]
    assert result.r is None and result.n == 0 and result.pooled is not None
    assert fisher_p(0.0, 100) == 1.0 and fisher_p(0.5, 3) is None


def test_layout_centres_within_groups_and_shuffles_inside_them() -> None:
    ids = np.array([3, 1, 3, 1, 2, 2, 2], dtype=np.int64)
    layout = Layout.of(ids)
    values = np.arange(7, dtype=np.float64)[layout.order]
    centred = layout.centre(values)
    for start, count in zip(layout.starts, layout.counts, strict=True):
        assert abs(centred[start : start + count].sum()) < 1e-12
    shuffled = layout.shuffled_centred(values, 20, seed=1)
    assert shuffled.dtype == np.float32 and shuffled.shape == (7, 21)
    for start, count in zip(layout.starts, layout.counts, strict=True):
        group = sorted(np.round(centred[start : start + count], 5))
        for t in range(21):
            assert sorted(np.round(shuffled[start : start + count, t], 5)) == group
    r, sxx = column_correlations(layout.centre(np.column_stack([values, np.ones(7)])),
                                 layout.centre(values)[:, None])  # fmt: skip
    assert abs(r[0, 0] - 1.0) < 1e-12 and sxx[1] == 0 and r[1, 0] == 0


def test_top_counts_keeps_the_frequent_items_in_bounded_memory() -> None:
    counts = TopCounts(capacity=50)
    rng = random.Random(0)
    for i in range(20_000):
        items = {f"common{i % 5}", f"rare{rng.randrange(10**9)}"}
        counts.update(items)
    assert len(counts.counts) <= 100 and counts.pruned > 0
    top = [item for item, _ in counts.most_common(5)]
    assert sorted(top) == [f"common{i}" for i in range(5)]
