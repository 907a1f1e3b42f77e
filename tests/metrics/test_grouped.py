"""The one correlation engine (within-group and pooled, the shuffle null), bounded counting."""

from __future__ import annotations

import random

import numpy as np

from whileai_core.metrics.grouped import Layout, column_correlations, pooled_correlations
from whileai_core.metrics.sketch import TopCounts


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
    layout = Layout.of(np.array(groups, dtype=np.int64))
    xs, ys = np.array(x)[layout.order], np.array(y)[layout.order]
    r, _ = column_correlations(layout.centre(xs[:, None]), layout.centre(ys)[:, None])
    within = float(r[0, 0])
    assert abs(within - _reference(groups, x, y)) < 1e-9
    pooled = float(pooled_correlations(np.array(x)[:, None], np.array(y))[0])
    assert abs(pooled - float(np.corrcoef(x, y)[0, 1])) < 1e-9 and pooled > within


def test_a_constant_column_has_no_correlation() -> None:
    x = np.ones((10, 1))
    y = np.array([float(i % 2) for i in range(10)])
    assert np.isnan(pooled_correlations(x, y)[0])
    assert np.isnan(pooled_correlations(np.arange(2.0)[:, None], np.arange(2.0))[0])


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


def test_the_shuffle_orders_rows_exactly_as_a_lexsort_by_group_then_key() -> None:
    """The one-sort shuffle is lexsort's order on every input, including keys that round
    to the same sum (then lexsort answers) and keys that are equal (index order)."""
    rng = np.random.default_rng(7)
    for trial in range(20):
        n = int(rng.integers(1, 3000))
        ids = rng.integers(0, int(rng.integers(1, 2000)), n) * int(rng.integers(1, 10**9))
        layout = Layout.of(ids.astype(np.int64))
        rank = np.repeat(np.arange(len(layout.counts), dtype=np.float64), layout.counts)
        keys = rng.random(n)
        if trial % 3 == 0:  # repeated keys: ties inside a group
            keys = np.round(keys, 1)
        expected = np.lexsort((keys, layout.groups))
        assert np.array_equal(layout.shuffle_order(keys, rank), expected), trial
    # Two keys that differ but round to one sum past a large rank: lexsort decides.
    layout = Layout.of(np.array([5, 5, 5], dtype=np.int64))
    keys = np.array([0.5 + 2.0**-40, 0.5, 0.25])
    far = np.full(3, 2.0**20)
    assert far[0] + keys[0] == far[1] + keys[1]
    assert layout.shuffle_order(keys, far).tolist() == [2, 1, 0]
    assert np.lexsort((keys, layout.groups)).tolist() == [2, 1, 0]


def test_shuffled_centred_is_the_lexsort_shuffle() -> None:
    rng = np.random.default_rng(3)
    ids = rng.integers(0, 300, 2000).astype(np.int64)
    layout = Layout.of(ids)
    values = rng.random(2000)[layout.order]
    got = layout.shuffled_centred(values, 9, seed=11)
    draw = np.random.default_rng(11)
    assert np.array_equal(got[:, 0], layout.centre(values).astype(np.float32))
    for t in range(9):
        perm = np.lexsort((draw.random(2000), layout.groups))
        assert np.array_equal(got[:, t + 1], layout.centre(values[perm]).astype(np.float32))
