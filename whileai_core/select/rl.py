"""RL selection: whole groups a group-relative update can learn from.

A group-relative update (GRPO, RLOO) learns from the contrast inside one ask, so an ask
is kept or dropped whole: unanimous asks (all pass or all fail) carry zero advantage and
go; asks whose pass rate lies outside the difficulty band go too (or, with
`enforce_band=False`, are ranked after the in-band ones). Kept groups come out
round-robin across fault kinds, so a prefix of the file (or a `max_groups` cap) is not
all timeouts. `platform.cut` classifies a trace group with the same `group_verdict`.
"""

from __future__ import annotations

from typing import Any, Literal

from ..metrics.band import Band, band_side
from ..metrics.tally import passed
from .options import OptimizeOptions, OptimizeReport
from .records import Record, kind_of

Verdict = Literal["keep", "unanimous", "too_easy", "too_hard"]
Kept = list[tuple[Record, dict[str, Any], dict[str, Any]]]
_Group = tuple[list[Record], dict[str, Any], dict[str, Any]]  # rows, stamp, group stats


def group_verdict(passes: int, n: int, band: Band) -> Verdict:
    """Whether a group of `n` graded rollouts with `passes` passing carries an advantage."""
    if passes in (0, n):
        return "unanimous"
    side = band_side(passes / n, band)
    return "keep" if side == "in_band" else side


def group_stats(rewards: list[float]) -> dict[str, Any]:
    n = len(rewards)
    n1 = sum(1 for r in rewards if passed(r))
    mean = sum(rewards) / n
    std = (sum((r - mean) ** 2 for r in rewards) / n) ** 0.5
    return {"n0": n - n1, "n1": n1, "reward_mean": round(mean, 4), "reward_std": round(std, 4)}


def select_rl(
    cleaned: list[tuple[str, list[Record], dict[str, Any]]],
    opts: OptimizeOptions,
    report: OptimizeReport,
) -> Kept:
    in_tier: dict[str, list[_Group]] = {}
    ranked: list[tuple[float, str, _Group]] = []
    for _, group, stamp in cleaned:
        if not group:
            continue
        rewards = [r.effective for r in group]
        wins = sum(1 for r in rewards if passed(r))
        verdict = group_verdict(wins, len(rewards), opts.band)
        if verdict == "unanimous":
            report.drop_group("unanimous", len(group))
            continue
        stats = group_stats(rewards)
        kind = kind_of([r.kinds for r in group])
        if verdict != "keep":
            if opts.enforce_band:
                report.band_dropped[verdict] += 1
                report.drop_group(verdict, len(group), as_row_reason="out_of_band")
                continue
            rate = wins / len(rewards)
            distance = opts.band[0] - rate if verdict == "too_hard" else rate - opts.band[1]
            extra = {**stats, "in_band": False, "band_side": verdict}
            ranked.append((distance, kind, (group, stamp, extra)))
            continue
        if not opts.enforce_band:
            stats["in_band"] = True
        in_tier.setdefault(kind, []).append((group, stamp, stats))
    ordered = _round_robin(in_tier)
    ranked.sort(key=lambda item: item[0])
    ordered.extend((kind, item) for _, kind, item in ranked)
    if opts.max_groups is not None and len(ordered) > opts.max_groups:
        cut = ordered[opts.max_groups :]
        ordered = ordered[: opts.max_groups]
        report.groups_dropped["max_groups"] = len(cut)
        report.drop("max_groups", sum(len(item[0]) for _, item in cut))
    out: Kept = []
    for kind, (group, stamp, extra) in ordered:
        report.fault_kinds[kind] = report.fault_kinds.get(kind, 0) + 1
        out.extend((rec, stamp, extra) for rec in group)
    report.groups_kept = len(ordered)
    return out


def _round_robin(by_kind: dict[str, list[_Group]]) -> list[tuple[str, _Group]]:
    """One group of each fault kind in turn (kinds in first-seen order), until all are used."""
    queues = [(kind, list(reversed(items))) for kind, items in by_kind.items()]
    out: list[tuple[str, _Group]] = []
    while queues:
        still: list[tuple[str, list[_Group]]] = []
        for kind, queue in queues:
            out.append((kind, queue.pop()))
            if queue:
                still.append((kind, queue))
        queues = still
    return out
