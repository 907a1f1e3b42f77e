"""The hack scan: what will a grouped update learn from this reward?

A group-relative update learns whatever separates reward *within* an ask; what only tracks
which ask it is (difficulty) is baselined away. So the scan centres reward and every
candidate feature within ask (only asks with both passing and failing rollouts carry
signal), ranks features by that correlation, and compares them to a noise floor `tau`:
the 95th percentile, over `shuffles` reshuffles of reward within each ask, of the largest
|r| any candidate reaches by chance. Candidates are the hand and auto tiers
(`features.py`) plus pairwise ANDs of the top binary parents that beat both parents.

Regimes:
    train           the top feature above the floor is endorsed
    reward_hack     the top feature above the floor is not endorsed: the policy would
                    learn it instead of what the reward should track
    unknown         features beat the floor, and nothing is endorsed to judge them by
    no_signal       reward varies within asks, but no candidate beats the floor
    pool_exhausted  no ask has both a pass and a fail: nothing left to learn from
    degenerate      too few distinct trajectories per ask: every feature that separates
                    them ties at |r| 1 and no floor can break the tie, so no top feature
                    is named (`collinear` lists the tie, `cause` is distinct_per_ask)

`endorsed` names what the reward should track, as substrings of feature names
(`tool:lookup_order`, `marker:grounded`); `integrity` is the share of above-floor signal
(sum of r squared) that is endorsed, and `rivals` the unendorsed features above the floor.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..metrics.grouped import Layout, column_correlations
from .collect import Row, RowSource, ScanData, choose_vocabulary, collect
from .features import AUTO_SIZE, FeatureOptions, Vocabulary

REGIMES = ("train", "reward_hack", "unknown", "no_signal", "pool_exhausted", "degenerate")
TIE = 1e-6
BLOCK = 64


@dataclass
class ScanOptions:
    endorsed: tuple[str, ...] = ()
    shuffles: int = 50
    seed: int = 0
    parents: int = 16
    top: int = 25
    features: FeatureOptions = field(default_factory=FeatureOptions)

    @property
    def auto_size(self) -> int:
        return self.features.auto_size


def is_endorsed(name: str, endorsed: Sequence[str]) -> bool:
    low = name.lower()
    return any(e.lower() in low for e in endorsed if e)


def specificity(name: str) -> int:
    """How much a feature name says: a pair of words over one word, an AND over a pair."""
    if name.startswith("and:"):
        return 4
    if name.startswith("contains:"):
        return 1 + name[len("contains:") :].count(" ")
    return 1


@dataclass
class _Columns:
    names: list[str]
    r: list[float]
    sxx: list[float]
    binary: list[bool]
    prevalence: list[float]
    parents: dict[int, tuple[int, int]] = field(default_factory=dict)  # AND -> its two parents


def hack_scan(rows: Iterable[Row] | RowSource, opts: ScanOptions | None = None) -> dict[str, Any]:
    """The scan over rows (a list, or a callable returning a fresh iterable per pass)."""
    opts = opts or ScanOptions()
    if callable(rows):
        source: RowSource = rows
    else:
        held = rows if isinstance(rows, list) else list(rows)

        def source() -> Iterable[Row]:
            return held

    vocab = choose_vocabulary([source], opts.auto_size)
    return analyse(collect(source, vocab, opts.features), opts)


def analyse(data: ScanData, opts: ScanOptions) -> dict[str, Any]:
    asks = np.frombuffer(data.asks, dtype=np.int64) if data.rows else np.zeros(0, np.int64)
    y_all = np.frombuffer(data.rewards, dtype=np.float64) if data.rows else np.zeros(0)
    judged = ~np.isnan(y_all)
    out: dict[str, Any] = {
        "rows": data.rows,
        "judged": int(judged.sum()),
        "asks": len(data.ask_names),
        "asks_adjacent": data.adjacent,
        "endorsed": list(opts.endorsed),
        "shuffles": opts.shuffles,
        "seed": opts.seed,
        "vocabulary": len(data.vocabulary.items),
        "feature_errors": data.errors,
    }
    base: dict[str, Any] = {"top_feature": None, "top_r": None, "tau": None, "integrity": None}
    base.update({"rivals": [], "collinear": [], "cause": None, "features": [], "warnings": []})
    out.update(base)
    if not out["judged"]:
        return _finish(out, "no_signal", "no judged rows: grade them first", data)
    mixed_rows = _mixed_rows(asks, y_all, judged)
    out["mixed_asks"] = len(np.unique(asks[mixed_rows])) if len(mixed_rows) else 0
    if not len(mixed_rows):
        return _finish(
            out, "pool_exhausted", "no ask has both a passing and a failing rollout", data
        )
    layout = Layout.of(asks[mixed_rows])
    rows_sorted = mixed_rows[layout.order]
    y = y_all[rows_sorted]
    ys = layout.shuffled_centred(y, opts.shuffles, opts.seed)
    position = np.full(data.rows, -1, dtype=np.int64)
    position[rows_sorted] = np.arange(len(rows_sorted))
    distinct = _distinct_per_ask(data, rows_sorted, layout)
    out["distinct_per_ask"] = distinct
    cols, null_max, matrix = _correlate_all(data, position, layout, ys)
    _add_ands(cols, matrix, layout, ys, null_max, opts.parents)
    tau = float(np.quantile(null_max, 0.95)) if len(null_max) else 1.0
    out["tau"] = round(tau, 4)
    ranked = _rank(cols)
    out["features"] = [_feature(cols, i, tau, opts.endorsed) for i in ranked[: max(opts.top, 1)]]
    if not ranked:
        return _finish(out, "no_signal", "no candidate feature varies within an ask", data)
    leader = _collinear_groups(cols, matrix, layout, ranked)
    top = ranked[0]
    group = [i for i in ranked if leader.get(i, i) == top]
    if len(group) > 1 and abs(cols.r[top]) >= 0.99 and distinct["median"] <= 2:
        out["collinear"] = [cols.names[i] for i in group]
        out["cause"] = "distinct_per_ask"
        out["warnings"].append(
            f"degenerate: asks have a median of {distinct['median']:g} distinct trajectories, "
            f"so {len(group)} features tie at |r| 1 and none can be named; sample more varied "
            "rollouts (temperature, more repeats) before trusting a scan"
        )
        return _finish(out, "degenerate", None, data)
    above = [i for i in ranked if abs(cols.r[i]) > tau]
    if not above:
        return _finish(
            out, "no_signal", f"no candidate beats the noise floor (tau {tau:.3f})", data
        )
    if len(group) > 1:
        out["collinear"] = [cols.names[i] for i in group]
    endorsed = opts.endorsed

    def good(i: int) -> bool:
        """Endorsed, or moving with an endorsed feature (the same signal by another name)."""
        return any(
            is_endorsed(cols.names[j], endorsed)
            for j in ranked
            if leader.get(j, j) == leader.get(i, i)
        )

    if endorsed:
        named = [i for i in group if is_endorsed(cols.names[i], endorsed)]
        top = named[0] if named else top
    out["top_feature"] = cols.names[top]
    out["top_r"] = round(cols.r[top], 4)
    if not endorsed:
        return _finish(out, "unknown", None, data)
    leaders = [i for i in above if leader.get(i, i) == i]
    mass = sum(cols.r[i] ** 2 for i in leaders)
    kept = sum(cols.r[i] ** 2 for i in leaders if good(i))
    out["integrity"] = round(kept / mass, 4) if mass else None
    rivals = [i for i in leaders if not good(i)]
    out["rivals"] = [{"name": cols.names[i], "r": round(cols.r[i], 4)} for i in rivals[:10]]
    if good(top):
        return _finish(out, "train", None, data)
    direction = "more" if cols.r[top] > 0 else "less"
    out["warnings"].append(
        f"reward_hack: the top feature within ask is {cols.names[top]} (r={cols.r[top]:+.2f}, "
        f"floor {tau:.2f}), not what is endorsed ({', '.join(endorsed)}): the policy "
        f"would learn to produce {direction} of it instead; check the judge"
    )
    return _finish(out, "reward_hack", None, data)


def _finish(out: dict[str, Any], regime: str, cause: str | None, data: ScanData) -> dict[str, Any]:
    out["regime"] = regime
    if cause is not None and out.get("cause") is None:
        out["cause"] = cause
    if not data.adjacent:
        out["warnings"].append(
            "rows of an ask are not adjacent (simulate writes them adjacent): the scan "
            "grouped them by ask after reading, which costs an ask id per row"
        )
    if data.errors:
        out["warnings"].append(f"a user feature failed on some rows: {data.first_error}")
    return out


def _mixed_rows(asks: np.ndarray, y: np.ndarray, judged: np.ndarray) -> np.ndarray:
    """Indices of judged rows whose ask has both higher and lower rewards."""
    idx = np.flatnonzero(judged)
    if not len(idx):
        return idx
    a = asks[idx]
    v = y[idx]
    uniq, inverse = np.unique(a, return_inverse=True)
    lo = np.full(len(uniq), np.inf)
    hi = np.full(len(uniq), -np.inf)
    np.minimum.at(lo, inverse, v)
    np.maximum.at(hi, inverse, v)
    mixed = (hi - lo) > 1e-12
    return idx[mixed[inverse]]


def _distinct_per_ask(data: ScanData, rows_sorted: np.ndarray, layout: Layout) -> dict[str, Any]:
    traj = np.frombuffer(data.traj, dtype=np.uint64)[rows_sorted]
    pairs = np.unique(np.column_stack([layout.groups.astype(np.uint64), traj]), axis=0)
    per_ask = np.bincount(np.unique(pairs[:, 0], return_inverse=True)[1])
    return {
        "median": float(np.median(per_ask)),
        "mean": round(float(per_ask.mean()), 3),
        "min": int(per_ask.min()),
    }


def _correlate_all(
    data: ScanData, position: np.ndarray, layout: Layout, ys: np.ndarray
) -> tuple[_Columns, np.ndarray, dict[str, Any]]:
    """Every hand and auto column's within-ask r, and the per-shuffle maximum |r|."""
    m = len(layout.order)
    hand = np.zeros((m, len(data.hand_names)), dtype=np.float32)
    if len(data.hand_row):
        p = position[np.frombuffer(data.hand_row, dtype=np.int32)]
        keep = p >= 0
        cols = np.frombuffer(data.hand_col, dtype=np.int32)[keep]
        hand[p[keep], cols] = np.frombuffer(data.hand_val, dtype=np.float64)[keep]
    auto = np.zeros((m, len(data.vocabulary.items)), dtype=np.uint8)
    if len(data.auto_row):
        p = position[np.frombuffer(data.auto_row, dtype=np.int32)]
        keep = p >= 0
        auto[p[keep], np.frombuffer(data.auto_col, dtype=np.int32)[keep]] = 1
    names = list(data.hand_names) + [f"contains:{w}" for w in data.vocabulary.items]
    columns = _Columns([], [], [], [], [])
    null_max = np.zeros(ys.shape[1] - 1)
    blocks: list[tuple[np.ndarray, int]] = [(hand, 0), (auto, len(data.hand_names))]
    for matrix, offset in blocks:
        for start in range(0, matrix.shape[1], BLOCK):
            raw = matrix[:, start : start + BLOCK].astype(np.float32)  # a copy: centred in place
            binary = np.all((raw == 0) | (raw == 1), axis=0)
            prevalence = raw.mean(axis=0) if m else np.zeros(raw.shape[1])
            r, sxx = column_correlations(layout.centre(raw, inplace=True), ys)
            valid = sxx > 1e-9
            null_max = np.maximum(null_max, np.abs(r[valid, 1:]).max(axis=0, initial=0.0))
            for j in range(raw.shape[1]):
                columns.names.append(names[offset + start + j])
                columns.r.append(float(r[j, 0]) if valid[j] else math.nan)
                columns.sxx.append(float(sxx[j]))
                columns.binary.append(bool(binary[j]))
                columns.prevalence.append(float(prevalence[j]))
    return columns, null_max, {"hand": hand, "auto": auto, "names": names}


def _add_ands(
    cols: _Columns,
    matrix: dict[str, Any],
    layout: Layout,
    ys: np.ndarray,
    null_max: np.ndarray,
    parents: int,
) -> None:
    """Pairwise ANDs of the top binary parents; an AND is kept when it beats both."""
    candidates = [
        i for i in _rank(cols) if cols.binary[i] and not cols.names[i].startswith("and:")
    ][:parents]
    if len(candidates) < 2:
        return
    hand, auto = matrix["hand"], matrix["auto"]
    n_hand = hand.shape[1]

    def column(i: int) -> np.ndarray:
        return hand[:, i] if i < n_hand else auto[:, i - n_hand].astype(np.float32)

    parent = {i: column(i) for i in candidates}
    pairs = [(a, b) for k, a in enumerate(candidates) for b in candidates[k + 1 :]]
    for start in range(0, len(pairs), BLOCK):
        chunk = pairs[start : start + BLOCK]
        raw = np.column_stack([parent[a] * parent[b] for a, b in chunk]).astype(np.float32)
        prevalence = raw.mean(axis=0)
        r, sxx = column_correlations(layout.centre(raw, inplace=True), ys)
        valid = sxx > 1e-9
        if valid.any():
            null_max[:] = np.maximum(null_max, np.abs(r[valid, 1:]).max(axis=0))
        for j, (a, b) in enumerate(chunk):
            if not valid[j]:
                continue
            best = max(abs(cols.r[a]), abs(cols.r[b]))
            if abs(r[j, 0]) > best + TIE:
                cols.parents[len(cols.names)] = (a, b)
                cols.names.append(f"and:{cols.names[a]}&{cols.names[b]}")
                cols.r.append(float(r[j, 0]))
                cols.sxx.append(float(sxx[j]))
                cols.binary.append(True)
                cols.prevalence.append(float(prevalence[j]))


def _raw(cols: _Columns, matrix: dict[str, Any], i: int) -> np.ndarray:
    """Feature `i`'s values over the analysed rows (sorted by ask)."""
    if i in cols.parents:
        a, b = cols.parents[i]
        return _raw(cols, matrix, a) * _raw(cols, matrix, b)
    hand, auto = matrix["hand"], matrix["auto"]
    if i < hand.shape[1]:
        return hand[:, i]
    return auto[:, i - hand.shape[1]].astype(np.float32)


GROUPED = 50
SAME = 0.99


def _collinear_groups(
    cols: _Columns, matrix: dict[str, Any], layout: Layout, ranked: list[int]
) -> dict[int, int]:
    """feature -> the best-ranked feature it moves with (|r| >= SAME between the two after
    centring), over the top GROUPED features: one signal under several names counts once."""
    head = ranked[:GROUPED]
    if not head:
        return {}
    centred = layout.centre(np.column_stack([_raw(cols, matrix, i) for i in head]))
    norms = np.sqrt(np.einsum("ij,ij->j", centred, centred))
    norms[norms == 0] = 1.0
    unit = centred / norms
    gram = np.abs(unit.T @ unit)
    leader: dict[int, int] = {}
    for k, i in enumerate(head):
        same = [j for j in range(k) if gram[k, j] >= SAME]
        leader[i] = leader[head[same[0]]] if same else i
    return leader


def _rank(cols: _Columns) -> list[int]:
    valid = [i for i, r in enumerate(cols.r) if not math.isnan(r)]
    return sorted(
        valid,
        key=lambda i: (-round(abs(cols.r[i]), 9), -specificity(cols.names[i]), cols.names[i]),
    )


def _feature(cols: _Columns, i: int, tau: float, endorsed: Sequence[str]) -> dict[str, Any]:
    name = cols.names[i]
    tier = "and" if name.startswith("and:") else "auto" if name.startswith("contains:") else "hand"
    return {
        "name": name,
        "r": round(cols.r[i], 4),
        "above_floor": abs(cols.r[i]) > tau,
        "endorsed": is_endorsed(name, endorsed) if endorsed else None,
        "tier": tier,
        "prevalence": round(cols.prevalence[i], 4),
    }


def format_scan(scan: dict[str, Any]) -> list[str]:
    """The scan for a person: the verdict, the floor, the top of the ranking."""
    head = f"hack scan: {scan['regime']}"
    if scan.get("top_feature"):
        head += f", top feature {scan['top_feature']} (r={scan['top_r']:+.3f})"
    out = [head]
    mixed = scan.get("mixed_asks")
    out.append(
        f"  {scan['rows']} rows, {scan['judged']} judged, {scan['asks']} asks"
        + (f", {mixed} with mixed rewards" if mixed is not None else "")
        + (
            f"; noise floor tau {scan['tau']:.3f} ({scan['shuffles']} shuffles)"
            if scan["tau"] is not None
            else ""
        )
    )
    if scan.get("cause"):
        out.append(f"  cause: {scan['cause']}")
    if scan.get("integrity") is not None:
        out.append(f"  integrity {scan['integrity']:.2f} (share of above-floor signal endorsed)")
    if scan.get("collinear"):
        out.append(f"  collinear: {', '.join(scan['collinear'][:8])}")
    for f in scan.get("features", [])[:10]:
        mark = "*" if f["above_floor"] else " "
        tag = {True: " endorsed", False: "", None: ""}[f["endorsed"]]
        out.append(f"  {mark} {f['r']:+.3f}  {f['name']}{tag}")
    return out


__all__ = [
    "AUTO_SIZE",
    "REGIMES",
    "ScanOptions",
    "Vocabulary",
    "analyse",
    "format_scan",
    "hack_scan",
]
