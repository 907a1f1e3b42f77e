"""The one correlation engine: reward against features, centred within group, on arrays.

A group-relative update (GRPO, RLOO) subtracts each ask's mean reward, so what it learns
is whatever separates reward *within* an ask; a feature that only tracks which ask it is
(a hard ask has long replies) is baselined away. So correlations are taken between
columns and a reward after both are centred within group (the hack scan, in full and in
its cheap mode, asks nothing else). Rows are sorted by group once (`Layout`), so every
group is a contiguous slice and a group mean is one `reduceat`; the null distribution
comes from shuffling the reward within each group, which keeps every group's mean and
spread and breaks only the link to the features. The pooled (uncentred) correlation is
the same computation over one group. numpy is imported by the modules that need it,
never at start-up.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

Floats = NDArray[np.float64]


@dataclass
class Layout:
    """`order` sorts rows by group; `starts`/`counts` delimit each group in that order."""

    order: NDArray[np.intp]
    starts: NDArray[np.intp]
    counts: NDArray[np.intp]
    groups: NDArray[np.int64]  # the group id of each sorted row

    @classmethod
    def of(cls, group_ids: NDArray[np.int64]) -> Layout:
        order = np.argsort(group_ids, kind="stable")
        sorted_ids = group_ids[order]
        if len(sorted_ids) == 0:
            empty = np.zeros(0, dtype=np.intp)
            return cls(order, empty, empty, sorted_ids)
        cut = np.flatnonzero(np.diff(sorted_ids)) + 1
        starts = np.concatenate(([0], cut)).astype(np.intp)
        counts = np.diff(np.concatenate((starts, [len(sorted_ids)]))).astype(np.intp)
        return cls(order, starts, counts, sorted_ids)

    def centre(self, block: NDArray[np.floating], *, inplace: bool = False) -> NDArray[np.floating]:
        """`block` (rows in sorted order, one column per feature) minus its group means;
        `inplace` reuses `block`'s memory (for a copy the caller made anyway)."""
        if block.shape[0] == 0:
            return block
        sums = np.add.reduceat(block, self.starts, axis=0)
        shape = (-1,) + (1,) * (block.ndim - 1)
        means = (sums / self.counts.reshape(shape)).astype(block.dtype, copy=False)
        if inplace:
            block -= np.repeat(means, self.counts, axis=0)
            return block
        return block - np.repeat(means, self.counts, axis=0)

    def shuffled_centred(self, values: Floats, times: int, seed: int) -> NDArray[np.float32]:
        """float32 columns: `values` centred, then `times` copies shuffled within every
        group and centred, filled one column at a time (no m-by-times temporaries)."""
        rng = np.random.default_rng(seed)
        out = np.empty((len(values), times + 1), dtype=np.float32)
        out[:, 0] = self.centre(values)
        rank = np.repeat(np.arange(len(self.counts), dtype=np.float64), self.counts)
        for t in range(times):
            perm = self.shuffle_order(rng.random(len(values)), rank)
            out[:, t + 1] = self.centre(values[perm])
        return out

    def shuffle_order(self, keys: Floats, rank: Floats) -> NDArray[np.intp]:
        """The rows ordered by group, then by `keys` (in [0, 1)) within it: what
        `np.lexsort((keys, self.groups))` answers, in one float sort of `rank + keys`
        (`rank`: each row's group's position, 0, 1, ...), a ninth of lexsort's time.
        Rounding is monotone, so where no two sums are equal the order is exactly
        lexsort's; where two are (rounding merged two keys), lexsort itself answers."""
        summed = rank + keys
        perm = np.argsort(summed, kind="stable")
        ordered = summed[perm]
        if len(ordered) > 1 and not (ordered[1:] > ordered[:-1]).all():
            return np.lexsort((keys, self.groups))
        return perm


def column_correlations(
    centred: NDArray[np.floating], y_centred: NDArray[np.floating]
) -> tuple[Floats, Floats]:
    """(r per column against each y column, column sums of squares). A column with no
    within-group variance gets r = 0 and a sum of squares of 0 (callers skip it)."""
    sxx = np.einsum("ij,ij->j", centred, centred).astype(np.float64)
    syy = np.einsum("ij,ij->j", y_centred, y_centred).astype(np.float64)
    cross = (centred.T @ y_centred).astype(np.float64)
    denom = np.sqrt(np.outer(sxx, syy))
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(denom > 1e-12, cross / np.where(denom > 0, denom, 1.0), 0.0)
    return np.clip(r, -1.0, 1.0), sxx


def pooled_correlations(columns: NDArray[np.floating], y: NDArray[np.floating]) -> Floats:
    """Pearson r of each column with `y` over all rows as one group (NaN for a column, or a
    `y`, with no variance, or fewer than three rows)."""
    if len(y) < 3:
        return np.full(columns.shape[1], np.nan)
    one = Layout.of(np.zeros(len(y), dtype=np.int64))
    r, sxx = column_correlations(one.centre(columns.astype(np.float64)), one.centre(y)[:, None])
    syy = float(np.dot(y - y.mean(), y - y.mean()))
    return np.where((sxx > 1e-12) & (syy > 1e-12), r[:, 0], np.nan)
