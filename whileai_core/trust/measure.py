"""The numbers every trust and agreement report gives, over (judge, gold) pairs of rows.

Agreement with its Wilson interval, Cohen's kappa, the confusion counts and
`pass_when_gold_fail` (from `metrics.agreement`); agreement on two halves of the tasks
(split by the fixed task hash the holdout uses, so a rubric tuned on one half can be read
on the other); the judge's pass rate on short versus long replies within each gold label
(a gap the humans did not make is length bias); and the disagreements, gold failures the
judge passed first, as a review queue.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..metrics.agreement import LABEL_FLOOR, Confusion, agreement_stats, confusion_of
from ..metrics.holdout import holdout_side
from ..metrics.tally import task_key
from ..row import reply_text

# A pass-rate gap this wide between short and long replies of one gold label is flagged.
LENGTH_GAP = 0.2
# Each side of a length comparison needs this many rows to be read at all.
LENGTH_MIN = 5


@dataclass(frozen=True)
class Pair:
    """One labelled row: what the judge said, what gold says."""

    row: dict[str, Any]
    reward: float
    judge_pass: bool
    gold_pass: bool


def _words(row: dict[str, Any]) -> int:
    return len(reply_text(row).split())


def halves(pairs: list[Pair]) -> dict[str, Any]:
    """Agreement on each half of the tasks: a judge tuned on one half, read on the other."""
    sides: dict[str, list[Pair]] = {"a": [], "b": []}
    for pair in pairs:
        sides["b" if holdout_side(task_key(pair.row), 0.5) else "a"].append(pair)
    out: dict[str, Any] = {}
    for name, group in sides.items():
        stats = agreement_stats(confusion_of((p.judge_pass, p.gold_pass) for p in group))
        out[name] = {k: stats[k] for k in ("n", "agreement", "ci95", "kappa")}
    return out


def length_bias(pairs: list[Pair]) -> dict[str, Any]:
    """Within each gold label, the judge's pass rate on replies shorter and longer than
    that label's median length. Humans ruled length out by labelling within a class; a gap
    is the judge's."""
    out: dict[str, Any] = {}
    for label, gold in (("gold_pass", True), ("gold_fail", False)):
        group = [p for p in pairs if p.gold_pass is gold]
        if len(group) < 2 * LENGTH_MIN:
            out[label] = {"n": len(group), "note": f"fewer than {2 * LENGTH_MIN} rows"}
            continue
        median = statistics.median(_words(p.row) for p in group)
        short = [p for p in group if _words(p.row) <= median]
        long = [p for p in group if _words(p.row) > median]
        if len(short) < LENGTH_MIN or len(long) < LENGTH_MIN:
            out[label] = {"n": len(group), "note": "replies too alike in length to split"}
            continue
        rate_s = sum(p.judge_pass for p in short) / len(short)
        rate_l = sum(p.judge_pass for p in long) / len(long)
        out[label] = {
            "n": len(group),
            "median_words": median,
            "short": {"n": len(short), "judge_pass_rate": rate_s},
            "long": {"n": len(long), "judge_pass_rate": rate_l},
            "gap": rate_l - rate_s,
            "flagged": abs(rate_l - rate_s) >= LENGTH_GAP,
        }
    return out


def review_queue(pairs: list[Pair], limit: int = 100) -> list[dict[str, Any]]:
    """Disagreements to look at by hand: gold failures the judge passed first (those are
    the ones a training run learns the failure from), then gold passes it failed."""
    wrong = [p for p in pairs if p.judge_pass != p.gold_pass]
    wrong.sort(key=lambda p: (p.gold_pass, task_key(p.row)))
    return [
        {
            "scenario_id": p.row.get("scenario_id"),
            "rollout_index": p.row.get("rollout_index"),
            "gold_reward": int(p.gold_pass),
            "judge_reward": p.reward,
            "why": "judge passed a gold failure" if p.judge_pass else "judge failed a gold pass",
            "reason": p.row.get("reason"),
            "reply": reply_text(p.row)[:200],
        }
        for p in wrong[:limit]
    ]


def measured(pairs: list[Pair]) -> dict[str, Any]:
    """The agreement block of a report; `notes` say what could not be read and why."""
    counts: Confusion = confusion_of((p.judge_pass, p.gold_pass) for p in pairs)
    stats = agreement_stats(counts)
    notes: list[str] = []
    if not pairs:
        return {"stats": stats, "notes": ["no labelled rows: NOT MEASURED"], "measured": False}
    if stats["gold_classes"] < 2:
        only = "passes" if counts.tp + counts.fn else "failures"
        notes.append(f"gold labels are all {only}: kappa and length bias are not read")
    if len(pairs) < LABEL_FLOOR:
        notes.append(
            f"{len(pairs)} labelled rows, below the floor of {LABEL_FLOOR}: "
            "read these figures as rough"
        )
    block: dict[str, Any] = {
        "stats": stats,
        "halves": halves(pairs),
        "review_queue": review_queue(pairs),
        "notes": notes,
        "measured": True,
    }
    if stats["gold_classes"] == 2:
        block["length_bias"] = length_bias(pairs)
    return block


HEADLINE = ("agreement", "ci95", "kappa", "confusion", "pass_when_gold_fail", "fail_when_gold_pass")


def report_fields(block: dict[str, Any]) -> dict[str, Any]:
    """The keys every trust and agreement report carries at its top level."""
    stats = block["stats"]
    return {
        **{k: stats[k] for k in HEADLINE},
        "stats": stats,
        "halves": block.get("halves"),
        "length_bias": block.get("length_bias"),
        "review_queue": block.get("review_queue", []),
        "notes": block.get("notes", []),
    }


def stats_lines(stats: dict[str, Any]) -> list[str]:
    """The agreement figures as a reader wants them."""
    if not stats["n"]:
        return []
    lo, hi = stats["ci95"]
    kappa = "n/a" if stats["kappa"] is None else f"{stats['kappa']:.3f}"
    c = stats["confusion"]
    pwgf = stats["pass_when_gold_fail"]
    return [
        f"agreement {stats['agreement']:.3f} [{lo:.3f}, {hi:.3f}] over {stats['n']} rows, "
        f"kappa {kappa}",
        f"confusion: judge pass/gold pass {c['tp']}, pass/fail {c['fp']}, fail/pass {c['fn']}, "
        f"fail/fail {c['tn']}",
        "pass_when_gold_fail "
        + (
            "n/a (no gold failures)"
            if pwgf is None
            else f"{pwgf:.3f} ({c['fp']} of {c['fp'] + c['tn']} gold failures passed)"
        ),
    ]


def block_lines(block: dict[str, Any]) -> list[str]:
    out = stats_lines(block["stats"])
    for name, half in (block.get("halves") or {}).items():
        if half["n"]:
            kappa = "n/a" if half["kappa"] is None else f"{half['kappa']:.3f}"
            out.append(
                f"half {name}: agreement {half['agreement']:.3f} over {half['n']}, kappa {kappa}"
            )
    for label, bias in (block.get("length_bias") or {}).items():
        if "gap" in bias:
            flag = "  <- length bias" if bias["flagged"] else ""
            out.append(
                f"{label}: judge passes {bias['short']['judge_pass_rate']:.2f} of short and "
                f"{bias['long']['judge_pass_rate']:.2f} of long replies{flag}"
            )
    out += [f"note: {n}" for n in block.get("notes", [])]
    queue = block.get("review_queue") or []
    if queue:
        out.append(f"review queue: {len(queue)} disagreement(s); first:")
        for item in queue[:5]:
            out.append(
                f"  {item['scenario_id']}#{item['rollout_index']}: {item['why']}: "
                f"{item['reply'][:80]!r}"
            )
    return out


def pairs_of(
    rows: Iterable[dict[str, Any]], gold_of: Any, reward_of: Any
) -> tuple[list[Pair], dict[str, int]]:
    """Pairs from rows; `skipped` counts rows with no gold or an unjudged verdict."""
    from ..metrics.tally import passed

    out: list[Pair] = []
    skipped = {"no_gold": 0, "unjudged": 0}
    for row in rows:
        gold = gold_of(row)
        if gold is None:
            skipped["no_gold"] += 1
            continue
        reward = reward_of(row)
        if reward is None:
            skipped["unjudged"] += 1
            continue
        out.append(Pair(row, reward, passed(reward), bool(gold)))
    return out, skipped
