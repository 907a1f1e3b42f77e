"""Selection: which graded rows a trainer should see, and a report of what was dropped and why.

RL mode keeps whole groups (all rollouts of one ask), because a group-relative update
learns from the contrast inside a group. It drops rows that cannot be trusted (judge not
ok, no reward, empty reply, a reply that quotes its own privileged block), repeats of the
same trajectory inside an ask (they add nothing to an advantage), and truncated rollouts;
then whole asks that are unanimous (zero advantage) or whose pass rate lies outside the
difficulty band. Kept groups come out round-robin across fault kinds, so a prefix of the
file (or a `max_groups` cap) is not all timeouts.

SFT mode is rejection sampling: the best completion(s) per ask, or the best k overall,
above `min_reward`; the `random_*` rules are the chance controls that ignore reward.

Every kept row gets a `calibration` stamp measured on the rows as they came in, before any
of the trimming above, so `k` is the repeats the grader saw. A stamp the row already
carries (an earlier optimize) is kept, not re-measured on a remainder. Input rows are
never mutated: a kept row is a shallow copy with the new keys added, unknown keys intact.
"""

from __future__ import annotations

import hashlib
import random
from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import orjson

from .errors import ConfigError
from .gate import DEFAULT_BAND, in_band, publish_gate
from .groups import group_by_task, passed, reward_of
from .hygiene import (
    correlation_warnings,
    pass_at,
    reply_text,
    reward_correlations,
    survival_warnings,
)
from .privileged import quotes_privileged
from .stats import wilson

Mode = Literal["rl", "sft"]
TruncatedPolicy = Literal["drop", "keep", "penalize"]
SelectRule = Literal["top_per_prompt", "top_k_overall", "random_per_prompt", "random_k_overall"]
SELECT_RULES: tuple[str, ...] = (
    "top_per_prompt",
    "top_k_overall",
    "random_per_prompt",
    "random_k_overall",
)

Row = dict[str, Any]


@dataclass
class OptimizeOptions:
    """Every knob of a selection; the CLI flags map onto these one to one."""

    mode: Mode = "rl"
    band: tuple[float, float] = DEFAULT_BAND
    enforce_band: bool = True
    truncated: TruncatedPolicy = "drop"
    max_groups: int | None = None
    select: SelectRule = "top_per_prompt"
    min_reward: float = 1.0
    k: int | None = None
    seed: int = 0

    def check(self) -> None:
        lo, hi = self.band
        if not 0.0 <= lo <= hi <= 1.0:
            raise ConfigError(f"band {lo:g},{hi:g}: need 0 <= low <= high <= 1")
        if self.mode not in ("rl", "sft"):
            raise ConfigError(f"mode {self.mode!r}: expected 'rl' or 'sft'")
        if self.truncated not in ("drop", "keep", "penalize"):
            raise ConfigError(f"truncated {self.truncated!r}: expected drop, keep or penalize")
        if self.select not in SELECT_RULES:
            raise ConfigError(f"select {self.select!r}: expected one of {', '.join(SELECT_RULES)}")
        if self.k is not None and self.k < 1:
            raise ConfigError(f"k {self.k}: must be at least 1")
        if self.max_groups is not None and self.max_groups < 0:
            raise ConfigError(f"max_groups {self.max_groups}: must not be negative")
        if self.mode == "sft" and self.select.endswith("_overall") and self.k is None:
            raise ConfigError(f"select {self.select} needs k (how many rows to keep overall)")


@dataclass
class OptimizeReport:
    """Counts of everything the selection did; `as_dict()` is what `--report` writes."""

    mode: str = "rl"
    rows_in: int = 0
    rows_out: int = 0
    groups_in: int = 0
    groups_kept: int = 0
    dropped: dict[str, int] = field(default_factory=dict)
    band: tuple[float, float] = DEFAULT_BAND
    enforce_band: bool = True
    band_dropped: dict[str, int] = field(default_factory=lambda: {"too_easy": 0, "too_hard": 0})
    groups_dropped: dict[str, int] = field(default_factory=dict)
    truncated_policy: str = "drop"
    truncated_seen: int = 0
    fault_kinds: dict[str, int] = field(default_factory=dict)
    select: str | None = None
    calibration_carried: int = 0
    eval_sourced: int = 0
    correlations: dict[str, float | None] = field(default_factory=dict)
    pass_at_before: dict[str, Any] = field(default_factory=dict)
    pass_at_after: dict[str, Any] = field(default_factory=dict)
    gate: dict[str, Any] = field(default_factory=dict)
    hygiene_warnings: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def drop(self, reason: str, n: int = 1) -> None:
        self.dropped[reason] = self.dropped.get(reason, 0) + n

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["band"] = list(self.band)
        return data


def optimize(
    rows: Iterable[Row], options: OptimizeOptions | None = None
) -> tuple[list[Row], OptimizeReport]:
    """Select training rows from graded rows. Returns (kept rows, report); input untouched."""
    opts = options or OptimizeOptions()
    opts.check()
    groups = group_by_task(rows)
    report = OptimizeReport(
        mode=opts.mode,
        band=opts.band,
        enforce_band=opts.enforce_band,
        truncated_policy=opts.truncated,
        groups_in=len(groups),
        select=opts.select if opts.mode == "sft" else None,
    )
    report.rows_in = sum(len(g) for g in groups.values())
    report.pass_at_before = pass_at(r for g in groups.values() for r in g)
    cleaned: list[tuple[str, list[Row], dict[str, Any]]] = []
    for task_id, group in groups.items():
        stamp = calibration_stamp(task_id, group)
        kept = _clean_group(group, opts, report)
        cleaned.append((task_id, kept, stamp))
    if opts.mode == "rl":
        out = _select_rl(cleaned, opts, report)
    else:
        out = _select_sft(cleaned, opts, report)
    report.rows_out = len(out)
    report.eval_sourced = sum(1 for r in out if _is_eval_sourced(r))
    if report.eval_sourced:
        report.warnings.append(
            f"{report.eval_sourced} kept rows were scored by an eval (lineage.source == 'eval'): "
            "a held-out scorer used as a training reward is no longer held out"
        )
    report.correlations = reward_correlations(out)
    report.hygiene_warnings.extend(correlation_warnings(report.correlations))
    if opts.mode == "rl":
        report.pass_at_after = pass_at(out, k=report.pass_at_before.get("k"))
        report.hygiene_warnings.extend(
            survival_warnings(report.pass_at_before, report.pass_at_after)
        )
    gate = publish_gate(out, band=opts.band, strict=False)
    report.gate = gate.as_dict()
    return out, report


def calibration_stamp(task_id: str, group: list[Row]) -> dict[str, Any]:
    """The ask's pass rate over its graded rollouts, with a Wilson 95% interval."""
    graded = [r for r in (reward_of(row) for row in group) if r is not None]
    k = len(graded)
    wins = sum(1 for r in graded if passed(r))
    lo, hi = wilson(wins, k)
    policies = Counter(_policy(row) for row in group)
    policy = policies.most_common(1)[0][0] if policies else None
    return {
        "task_id": task_id,
        "k": k,
        "pass_rate": round(wins / k, 4) if k else None,
        "ci95": [round(lo, 4), round(hi, 4)],
        "policy": policy,
    }


def _policy(row: Row) -> str | None:
    for key in ("policy_version", "model_version"):
        value = row.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def _is_truncated(row: Row) -> bool:
    return row.get("truncated") is True or row.get("finish_reason") == "length"


def _trajectory_key(row: Row) -> bytes:
    """What the agent did: its steps and reply (or its assistant turns when it has no steps)."""
    steps = row.get("steps")
    if steps:
        acted: Any = steps
    else:
        acted = [
            m
            for m in row.get("messages") or []
            if isinstance(m, dict) and m.get("role") == "assistant"
        ]
    payload = orjson.dumps([acted, reply_text(row)], option=orjson.OPT_SORT_KEYS)
    return hashlib.blake2b(payload, digest_size=16).digest()


def _junk_reason(row: Row) -> str | None:
    status = row.get("judge_status")
    if status not in (None, "ok"):
        return "judge_status"
    if reward_of(row) is None:
        return "ungraded"
    if isinstance(row.get("privileged"), dict) and quotes_privileged(row):
        return "quotes_privileged"
    if not reply_text(row).strip():
        return "empty_final_text"
    return None


def _clean_group(group: list[Row], opts: OptimizeOptions, report: OptimizeReport) -> list[Row]:
    """Row-level drops inside one ask. Returned rows are copies only where they change."""
    kept: list[Row] = []
    seen: set[bytes] = set()
    for row in group:
        reason = _junk_reason(row)
        if reason is not None:
            report.drop(reason)
            continue
        if _is_truncated(row):
            report.truncated_seen += 1
            if opts.truncated == "drop":
                report.drop("truncated")
                continue
            if opts.truncated == "keep":
                row = {**row, "overlong": True}
            else:
                row = {**row, "reward_before_penalty": row["reward"], "reward": 0.0}
        key = _trajectory_key(row)
        if key in seen:
            report.drop("duplicate")
            continue
        seen.add(key)
        kept.append(row)
    return kept


def fault_kind(group: list[Row]) -> str:
    """The fault a group is about: faults that fired, else the planned tool condition."""
    kinds: Counter[str] = Counter()
    for row in group:
        fired = row.get("faults_fired")
        modes = [str(f["mode"]) for f in fired or [] if isinstance(f, dict) and f.get("mode")]
        if modes:
            kinds.update(modes)
            continue
        dims = row.get("scenario_dimensions")
        condition = dims.get("tool_condition") if isinstance(dims, dict) else None
        kinds["none" if condition in (None, "success") else str(condition)] += 1
    return kinds.most_common(1)[0][0] if kinds else "none"


def _group_stats(rewards: list[float]) -> dict[str, Any]:
    n = len(rewards)
    n1 = sum(1 for r in rewards if passed(r))
    mean = sum(rewards) / n
    std = (sum((r - mean) ** 2 for r in rewards) / n) ** 0.5
    return {"n0": n - n1, "n1": n1, "reward_mean": round(mean, 4), "reward_std": round(std, 4)}


def _select_rl(
    cleaned: list[tuple[str, list[Row], dict[str, Any]]],
    opts: OptimizeOptions,
    report: OptimizeReport,
) -> list[Row]:
    in_tier: dict[str, list[tuple[list[Row], dict[str, Any]]]] = {}
    ranked: list[tuple[float, str, list[Row], dict[str, Any]]] = []
    for _, group, _stamp in cleaned:
        if not group:
            continue
        rewards = [float(r["reward"]) for r in group]
        wins = sum(1 for r in rewards if passed(r))
        rate = wins / len(rewards)
        if wins in (0, len(rewards)):
            report.groups_dropped["unanimous"] = report.groups_dropped.get("unanimous", 0) + 1
            report.drop("unanimous", len(group))
            continue
        stats = _group_stats(rewards)
        kind = fault_kind(group)
        if not in_band(rate, opts.band):
            side = "too_easy" if rate > opts.band[1] else "too_hard"
            if opts.enforce_band:
                report.band_dropped[side] += 1
                report.groups_dropped[side] = report.groups_dropped.get(side, 0) + 1
                report.drop("out_of_band", len(group))
                continue
            distance = opts.band[0] - rate if side == "too_hard" else rate - opts.band[1]
            ranked.append((distance, kind, group, {**stats, "in_band": False, "band_side": side}))
            continue
        extra = dict(stats)
        if not opts.enforce_band:
            extra["in_band"] = True
        in_tier.setdefault(kind, []).append((group, extra))
    ordered = _round_robin(in_tier)
    ranked.sort(key=lambda item: item[0])
    ordered.extend((kind, group, extra) for _, kind, group, extra in ranked)
    stamps = {id(group): stamp for _, group, stamp in cleaned}
    if opts.max_groups is not None and len(ordered) > opts.max_groups:
        cut = ordered[opts.max_groups :]
        ordered = ordered[: opts.max_groups]
        report.groups_dropped["max_groups"] = len(cut)
        report.drop("max_groups", sum(len(g) for _, g, _ in cut))
    out: list[Row] = []
    for kind, group, extra in ordered:
        report.fault_kinds[kind] = report.fault_kinds.get(kind, 0) + 1
        stamp = stamps[id(group)]
        for row in group:
            out.append(_stamped(row, stamp, extra, report))
    report.groups_kept = len(ordered)
    return out


def _round_robin(
    by_kind: dict[str, list[tuple[list[Row], dict[str, Any]]]],
) -> list[tuple[str, list[Row], dict[str, Any]]]:
    """One group of each fault kind in turn (kinds in first-seen order), until all are used."""
    queues = [(kind, list(reversed(items))) for kind, items in by_kind.items()]
    out: list[tuple[str, list[Row], dict[str, Any]]] = []
    while queues:
        still: list[tuple[str, list[tuple[list[Row], dict[str, Any]]]]] = []
        for kind, queue in queues:
            group, extra = queue.pop()
            out.append((kind, group, extra))
            if queue:
                still.append((kind, queue))
        queues = still
    return out


def _stamped(row: Row, stamp: dict[str, Any], extra: dict[str, Any], report: OptimizeReport) -> Row:
    new = {**row, **extra}
    if isinstance(row.get("calibration"), dict):
        report.calibration_carried += 1
    else:
        new["calibration"] = stamp
    return new


def _select_sft(
    cleaned: list[tuple[str, list[Row], dict[str, Any]]],
    opts: OptimizeOptions,
    report: OptimizeReport,
) -> list[Row]:
    rng = random.Random(opts.seed)
    chosen: list[tuple[Row, dict[str, Any]]] = []
    per_prompt = opts.k or 1
    if opts.select in ("top_per_prompt", "top_k_overall"):
        pool: list[tuple[float, int, Row, dict[str, Any]]] = []
        order = 0
        for _, group, stamp in cleaned:
            eligible = []
            for row in group:
                if float(row["reward"]) >= opts.min_reward:
                    eligible.append((float(row["reward"]), order, row, stamp))
                else:
                    report.drop("below_min_reward")
                order += 1
            if opts.select == "top_per_prompt":
                eligible.sort(key=lambda item: (-item[0], item[1]))
                chosen.extend((row, stamp) for _, _, row, stamp in eligible[:per_prompt])
                report.drop("not_selected", max(0, len(eligible) - per_prompt))
                report.groups_kept += 1 if eligible else 0
            else:
                pool.extend(eligible)
        if opts.select == "top_k_overall":
            pool.sort(key=lambda item: (-item[0], item[1]))
            assert opts.k is not None
            chosen = [(row, stamp) for _, _, row, stamp in pool[: opts.k]]
            report.drop("not_selected", max(0, len(pool) - opts.k))
    else:
        # Chance controls: same counts as the top_* rules, reward ignored.
        everything: list[tuple[Row, dict[str, Any]]] = []
        for _, group, stamp in cleaned:
            if opts.select == "random_per_prompt":
                picks = rng.sample(group, min(per_prompt, len(group))) if group else []
                chosen.extend((row, stamp) for row in picks)
                report.drop("not_selected", len(group) - len(picks))
                report.groups_kept += 1 if picks else 0
            else:
                everything.extend((row, stamp) for row in group)
        if opts.select == "random_k_overall":
            assert opts.k is not None
            n = min(opts.k, len(everything))
            chosen = rng.sample(everything, n)
            report.drop("not_selected", len(everything) - n)
    if opts.select.endswith("_overall"):
        report.groups_kept = len({stamp["task_id"] for _, stamp in chosen})
    return [_stamped(row, stamp, {}, report) for row, stamp in chosen]


def _is_eval_sourced(row: Row) -> bool:
    lineage = row.get("lineage")
    return isinstance(lineage, dict) and lineage.get("source") == "eval"
