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

Selection works on a compact record per row (task, reward, what was wrong with it, a
digest of its trajectory); the row itself is only carried along. `select(...,
compact=True)` carries it as its JSON bytes instead of a dict, which is what lets the CLI
hold 100,000 rows in a fraction of the memory their dicts would take.
"""

from __future__ import annotations

import hashlib
import random
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import orjson

from ..errors import ConfigError, WhileaiError
from ..metrics.stats import wilson
from ..metrics.tally import passed, reward_of, task_key
from ..privileged import privileged_texts
from ..row import reply_text
from ..rowbuffer import RowBuffer
from ..simulate.faults import CONDITION_TO_FAULT
from .gate import DEFAULT_BAND, in_band, publish_gate
from .hygiene import (
    correlate,
    correlation_warnings,
    pass_at_counts,
    row_features,
    survival_warnings,
)

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


# Keys selection writes onto a kept row (besides `calibration`).
_ADDED_KEYS = frozenset(
    {
        "n0",
        "n1",
        "reward_mean",
        "reward_std",
        "in_band",
        "band_side",
        "overlong",
        "reward_before_penalty",
    }
)


@dataclass(slots=True)
class _Rec:
    """What selection needs to know about one row; the row itself is `obj` or in a buffer."""

    obj: Row | None
    span: tuple[int, int]
    task: str
    reward: float | None
    junk: str | None
    truncated: bool
    kinds: tuple[str, ...]
    policy: str | None
    features: tuple[float, float, float]
    carried: bool
    eval_sourced: bool
    clash: bool = False  # the row already has a key selection adds: rebuild, never splice
    traj: bytes = b""
    change: str = ""  # "overlong" | "penalized" once the truncation policy applied


@dataclass
class Selection:
    """A finished selection: the full report now, the kept rows as they are written."""

    report: OptimizeReport
    _kept: list[tuple[_Rec, dict[str, Any], dict[str, Any]]]
    _payloads: RowBuffer | None = None

    def rows(self) -> Iterator[Row]:
        """The kept rows in output order, each a new dict (stamp and group stats added)."""
        for rec, stamp, extra in self._kept:
            if rec.obj is not None:
                row = rec.obj
            else:
                assert self._payloads is not None
                row = self._payloads.load(rec.span)
            new = {**row, **extra}
            if rec.change == "overlong":
                new["overlong"] = True
            elif rec.change == "penalized":
                new["reward_before_penalty"] = row["reward"]
                new["reward"] = 0.0
            if not rec.carried:
                new["calibration"] = stamp
            yield new

    def encoded(self) -> Iterator[Any]:
        """The same rows, ready for `orjson.dumps`: pre-serialized JSON where possible.

        A compact row whose keys do not collide with the ones selection adds is written by
        splicing the new keys onto its stored JSON, with no parse; anything else is a dict.
        """
        fragment = getattr(orjson, "Fragment", None)
        payloads = self._payloads
        if payloads is None or fragment is None:
            yield from self.rows()
            return
        for rec, stamp, extra in self._kept:
            if rec.clash or rec.change == "penalized":
                yield from Selection(self.report, [(rec, stamp, extra)], payloads).rows()
                continue
            added = dict(extra)
            if rec.change == "overlong":
                added["overlong"] = True
            if not rec.carried:
                added["calibration"] = stamp
            body = payloads.raw(rec.span)
            if not added:
                yield fragment(body)
            elif body == b"{}":
                yield fragment(orjson.dumps(added))
            else:
                yield fragment(body[:-1] + b"," + orjson.dumps(added)[1:])

    def __len__(self) -> int:
        return len(self._kept)


def optimize(
    rows: Iterable[Row], options: OptimizeOptions | None = None
) -> tuple[list[Row], OptimizeReport]:
    """Select training rows from graded rows. Returns (kept rows, report); input untouched."""
    selection = select(rows, options)
    return list(selection.rows()), selection.report


def select(
    rows: Iterable[Row], options: OptimizeOptions | None = None, *, compact: bool = False
) -> Selection:
    """The selection with its report; `compact=True` keeps each row as JSON bytes meanwhile."""
    opts = options or OptimizeOptions()
    opts.check()
    payloads = RowBuffer() if compact else None
    privileged_cache: dict[bytes, list[str]] = {}
    groups: dict[str, list[_Rec]] = {}
    for row in rows:
        rec = _record(row, payloads, privileged_cache)
        groups.setdefault(rec.task, []).append(rec)
    report = OptimizeReport(
        mode=opts.mode,
        band=opts.band,
        enforce_band=opts.enforce_band,
        truncated_policy=opts.truncated,
        groups_in=len(groups),
        select=opts.select if opts.mode == "sft" else None,
    )
    report.rows_in = sum(len(g) for g in groups.values())
    _refuse_ungraded(groups.values())
    report.pass_at_before = pass_at_counts(_counts(groups.values()))
    cleaned: list[tuple[str, list[_Rec], dict[str, Any]]] = []
    for task_id, group in groups.items():
        stamp = _stamp(task_id, group)
        cleaned.append((task_id, _clean_group(group, opts, report), stamp))
    if opts.mode == "rl":
        if groups and all(len(g) < 2 for g in groups.values()):
            report.warnings.append(
                "every ask has a single rollout, so no group can be mixed: RL selection needs "
                "repeats of each ask (whileai simulate --mode rl, or --repeats 8)"
            )
        kept = _select_rl(cleaned, opts, report)
    else:
        kept = _select_sft(cleaned, opts, report)
    _finish_report(kept, opts, report)
    return Selection(report, kept, payloads)


def _refuse_ungraded(groups: Iterable[list[_Rec]]) -> None:
    """Selecting from rows no judge scored drops every one; say so instead of writing nothing."""
    total = errors = 0
    for group in groups:
        for rec in group:
            if rec.reward is not None:
                return
            total += 1
            errors += rec.junk == "judge_status"
    if total:
        raise WhileaiError(
            f"none of the {total} rows carries a clean reward ({total - errors} ungraded, "
            f"{errors} with a judge error): run `whileai grade` first"
        )


def _record(row: Row, payloads: RowBuffer | None, privileged_cache: dict[bytes, list[str]]) -> _Rec:
    reward = reward_of(row)
    junk = _junk_reason(row, reward, privileged_cache)
    lineage = row.get("lineage")
    carried = isinstance(row.get("calibration"), dict)
    rec = _Rec(
        obj=None if payloads is not None else row,
        span=payloads.add(row) if payloads is not None else (0, 0),
        task=task_key(row),
        reward=reward,
        junk=junk,
        truncated=row.get("truncated") is True or row.get("finish_reason") == "length",
        kinds=_fault_kinds(row),
        policy=_policy(row),
        features=row_features(row),
        carried=carried,
        eval_sourced=isinstance(lineage, dict) and lineage.get("source") == "eval",
        clash=not _ADDED_KEYS.isdisjoint(row) or ("calibration" in row and not carried),
    )
    if junk is None:
        rec.traj = _trajectory_key(row)
    return rec


def _counts(groups: Iterable[list[_Rec]]) -> list[tuple[int, int]]:
    counts = []
    for group in groups:
        graded = [r.reward for r in group if r.reward is not None]
        if graded:
            counts.append((len(graded), sum(1 for r in graded if passed(r))))
    return counts


def _finish_report(
    kept: list[tuple[_Rec, dict[str, Any], dict[str, Any]]],
    opts: OptimizeOptions,
    report: OptimizeReport,
) -> None:
    recs = [rec for rec, _, _ in kept]
    report.rows_out = len(recs)
    report.calibration_carried = sum(1 for r in recs if r.carried)
    report.eval_sourced = sum(1 for r in recs if r.eval_sourced)
    if report.eval_sourced:
        report.warnings.append(
            f"{report.eval_sourced} kept rows were scored by an eval (lineage.source == 'eval'): "
            "a held-out scorer used as a training reward is no longer held out"
        )
    rewards = [_effective(r) for r in recs]
    report.correlations = correlate([r.features for r in recs], rewards)
    report.hygiene_warnings.extend(correlation_warnings(report.correlations))
    by_task: dict[str, list[_Rec]] = {}
    for rec in recs:
        by_task.setdefault(rec.task, []).append(rec)
    if opts.mode == "rl":
        after = [(len(g), sum(1 for r in g if passed(_effective(r)))) for g in by_task.values()]
        report.pass_at_after = pass_at_counts(after, k=report.pass_at_before.get("k"))
        report.hygiene_warnings.extend(
            survival_warnings(report.pass_at_before, report.pass_at_after)
        )
    # The gate reads only task, reward and whether a stamp is present: project onto those.
    projected = ({"scenario_id": r.task, "reward": _effective(r), "calibration": {}} for r in recs)
    report.gate = publish_gate(projected, band=opts.band, strict=False).as_dict()


def _effective(rec: _Rec) -> float:
    """The reward the trainer sees: 0 for a penalized truncation, else the judged one."""
    assert rec.reward is not None
    return 0.0 if rec.change == "penalized" else rec.reward


def calibration_stamp(task_id: str, group: list[Row]) -> dict[str, Any]:
    """The ask's pass rate over its graded rollouts, with a Wilson 95% interval."""
    rewards = [reward_of(row) for row in group]
    return _stamp_from(task_id, rewards, [_policy(row) for row in group])


def _stamp(task_id: str, group: list[_Rec]) -> dict[str, Any]:
    return _stamp_from(task_id, [r.reward for r in group], [r.policy for r in group])


def _stamp_from(
    task_id: str, rewards: list[float | None], policies: list[str | None]
) -> dict[str, Any]:
    graded = [r for r in rewards if r is not None]
    k = len(graded)
    wins = sum(1 for r in graded if passed(r))
    lo, hi = wilson(wins, k)
    common = Counter(policies).most_common(1)
    return {
        "task_id": task_id,
        "k": k,
        "pass_rate": round(wins / k, 4) if k else None,
        "ci95": [round(lo, 4), round(hi, 4)],
        "policy": common[0][0] if common else None,
    }


def _policy(row: Row) -> str | None:
    for key in ("policy_version", "model_version"):
        value = row.get(key)
        if isinstance(value, str) and value:
            return value
    return None


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


def _junk_reason(
    row: Row, reward: float | None, privileged_cache: dict[bytes, list[str]]
) -> str | None:
    status = row.get("judge_status")
    if status not in (None, "ok"):
        return "judge_status"
    if reward is None:
        return "ungraded"
    if _quotes_privileged(row, privileged_cache):
        return "quotes_privileged"
    if not reply_text(row).strip():
        return "empty_final_text"
    return None


def _quotes_privileged(row: Row, cache: dict[bytes, list[str]]) -> bool:
    """`privileged.quotes_privileged`, with the block's secrets computed once per block.

    The rollouts of one ask share a privileged block, and extracting its strings costs
    more than everything else selection does with a row.
    """
    block = row.get("privileged")
    if not isinstance(block, dict):
        return False
    key = orjson.dumps(block, option=orjson.OPT_SORT_KEYS)
    secrets = cache.get(key)
    if secrets is None:
        secrets = cache[key] = [s.lower() for s in privileged_texts(row)]
    if not secrets:
        return False
    texts = [reply_text(row)]
    texts += [
        m["content"]
        for m in row.get("messages") or []
        if isinstance(m, dict)
        and m.get("role") == "assistant"
        and isinstance(m.get("content"), str)
    ]
    haystack = "\n".join(texts).lower()
    return any(secret in haystack for secret in secrets)


def _clean_group(group: list[_Rec], opts: OptimizeOptions, report: OptimizeReport) -> list[_Rec]:
    """Row-level drops inside one ask, in a fixed order so each row counts once."""
    kept: list[_Rec] = []
    seen: set[bytes] = set()
    for rec in group:
        if rec.junk is not None:
            report.drop(rec.junk)
            continue
        if rec.truncated:
            report.truncated_seen += 1
            if opts.truncated == "drop":
                report.drop("truncated")
                continue
            rec.change = "overlong" if opts.truncated == "keep" else "penalized"
        if rec.traj in seen:
            report.drop("duplicate")
            continue
        seen.add(rec.traj)
        kept.append(rec)
    return kept


def _fault_kinds(row: Row) -> tuple[str, ...]:
    """The faults that fired in this rollout, else its planned tool condition."""
    fired = row.get("faults_fired")
    fired = fired if isinstance(fired, list) else []
    modes = tuple(str(f["mode"]) for f in fired if isinstance(f, dict) and f.get("mode"))
    if modes:
        return modes
    dims = row.get("scenario_dimensions")
    condition = dims.get("tool_condition") if isinstance(dims, dict) else None
    if condition in (None, "success"):
        return ("none",)
    # Name a planned condition by the fault it schedules, so fired and planned kinds agree.
    return (CONDITION_TO_FAULT.get(str(condition)) or str(condition),)


def _kind_of(kinds: list[tuple[str, ...]]) -> str:
    counts: Counter[str] = Counter()
    for row_kinds in kinds:
        counts.update(row_kinds)
    return counts.most_common(1)[0][0] if counts else "none"


def _group_stats(rewards: list[float]) -> dict[str, Any]:
    n = len(rewards)
    n1 = sum(1 for r in rewards if passed(r))
    mean = sum(rewards) / n
    std = (sum((r - mean) ** 2 for r in rewards) / n) ** 0.5
    return {"n0": n - n1, "n1": n1, "reward_mean": round(mean, 4), "reward_std": round(std, 4)}


_Kept = list[tuple[_Rec, dict[str, Any], dict[str, Any]]]
_Group = tuple[list[_Rec], dict[str, Any], dict[str, Any]]  # rows, stamp, group stats


def _select_rl(
    cleaned: list[tuple[str, list[_Rec], dict[str, Any]]],
    opts: OptimizeOptions,
    report: OptimizeReport,
) -> _Kept:
    in_tier: dict[str, list[_Group]] = {}
    ranked: list[tuple[float, str, _Group]] = []
    for _, group, stamp in cleaned:
        if not group:
            continue
        rewards = [_effective(r) for r in group]
        wins = sum(1 for r in rewards if passed(r))
        rate = wins / len(rewards)
        if wins in (0, len(rewards)):
            report.groups_dropped["unanimous"] = report.groups_dropped.get("unanimous", 0) + 1
            report.drop("unanimous", len(group))
            continue
        stats = _group_stats(rewards)
        kind = _kind_of([r.kinds for r in group])
        if not in_band(rate, opts.band):
            side = "too_easy" if rate > opts.band[1] else "too_hard"
            if opts.enforce_band:
                report.band_dropped[side] += 1
                report.groups_dropped[side] = report.groups_dropped.get(side, 0) + 1
                report.drop("out_of_band", len(group))
                continue
            distance = opts.band[0] - rate if side == "too_hard" else rate - opts.band[1]
            extra = {**stats, "in_band": False, "band_side": side}
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
    out: _Kept = []
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


def _select_sft(
    cleaned: list[tuple[str, list[_Rec], dict[str, Any]]],
    opts: OptimizeOptions,
    report: OptimizeReport,
) -> _Kept:
    rng = random.Random(opts.seed)
    chosen: list[tuple[_Rec, dict[str, Any]]] = []
    per_prompt = opts.k or 1
    if opts.select in ("top_per_prompt", "top_k_overall"):
        pool: list[tuple[float, int, _Rec, dict[str, Any]]] = []
        order = 0
        for _, group, stamp in cleaned:
            eligible = []
            for rec in group:
                reward = _effective(rec)
                if reward >= opts.min_reward:
                    eligible.append((reward, order, rec, stamp))
                else:
                    report.drop("below_min_reward")
                order += 1
            if opts.select == "top_per_prompt":
                eligible.sort(key=lambda item: (-item[0], item[1]))
                chosen.extend((rec, stamp) for _, _, rec, stamp in eligible[:per_prompt])
                report.drop("not_selected", max(0, len(eligible) - per_prompt))
                report.groups_kept += 1 if eligible else 0
            else:
                pool.extend(eligible)
        if opts.select == "top_k_overall":
            assert opts.k is not None
            pool.sort(key=lambda item: (-item[0], item[1]))
            chosen = [(rec, stamp) for _, _, rec, stamp in pool[: opts.k]]
            report.drop("not_selected", max(0, len(pool) - opts.k))
    else:
        # Chance controls: the same counts as the top_* rules, reward ignored.
        everything: list[tuple[_Rec, dict[str, Any]]] = []
        for _, group, stamp in cleaned:
            if opts.select == "random_per_prompt":
                picks = rng.sample(group, min(per_prompt, len(group))) if group else []
                chosen.extend((rec, stamp) for rec in picks)
                report.drop("not_selected", len(group) - len(picks))
                report.groups_kept += 1 if picks else 0
            else:
                everything.extend((rec, stamp) for rec in group)
        if opts.select == "random_k_overall":
            assert opts.k is not None
            n = min(opts.k, len(everything))
            chosen = rng.sample(everything, n)
            report.drop("not_selected", len(everything) - n)
    if opts.select.endswith("_overall"):
        report.groups_kept = len({stamp["task_id"] for _, stamp in chosen})
    return [(rec, stamp, {}) for rec, stamp in chosen]
