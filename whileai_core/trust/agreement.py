"""Agreement between two judges, or two runs of one: the same statistics as judge trust,
with the second set of rows as gold.

    whileai agreement a.jsonl b.jsonl    # a's rewards measured against b's
    whileai agreement labelled.jsonl     # the rows' rewards against their gold_reward

Rows pair by scenario_id + rollout_index (or prompt + rollout_index); a row of either side
with no partner, or unjudged on either side, is counted and reported, not guessed at.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..metrics.tally import passed, reward_of
from .labels import row_key
from .measure import block_lines, measured, pairs_of, report_fields
from .trust import gold_of


@dataclass
class AgreementReport:
    judge: str
    gold: str
    block: dict[str, Any]
    counts: dict[str, int]

    def as_dict(self) -> dict[str, Any]:
        return {
            "judge": self.judge,
            "gold": self.gold,
            "measured": self.block["measured"],
            "n": self.block["stats"]["n"],
            **report_fields(self.block),
            "counts": self.counts,
        }

    def lines(self) -> list[str]:
        head = f"agreement of {self.judge} with {self.gold} as gold"
        counts = ", ".join(f"{k} {v}" for k, v in self.counts.items() if v)
        out = [f"{head} ({counts})" if counts else head]
        if not self.block["measured"]:
            out.append("nothing paired: NOT MEASURED")
            return out
        return out + block_lines(self.block)


def _name(rows: list[dict[str, Any]], fallback: str) -> str:
    names = sorted({str(r["judge_name"]) for r in rows if r.get("judge_name")})
    return ", ".join(names) or fallback


def judge_agreement(
    rows: Iterable[dict[str, Any]],
    gold_rows: Iterable[dict[str, Any]] | None = None,
    *,
    names: tuple[str, str] = ("first", "second"),
) -> AgreementReport:
    """`rows`' rewards against `gold_rows`' rewards (paired by task and rollout), or, with no
    second set, against each row's own gold_reward."""
    first = list(rows)
    if gold_rows is None:
        pairs, skipped = pairs_of(first, gold_of, reward_of)
        counts = {"rows": len(first), "paired": len(pairs), **skipped}
        return AgreementReport(_name(first, names[0]), "gold_reward", measured(pairs), counts)
    second = list(gold_rows)
    by_key: dict[Any, dict[str, Any]] = {}
    duplicates = 0
    for row in second:
        key = row_key(row)
        duplicates += key in by_key
        by_key.setdefault(key, row)
    matched = [(row, by_key.get(row_key(row))) for row in first]
    unpaired = sum(1 for _, other in matched if other is None)
    seen = {row_key(r) for r in first}
    gold_side = {id(r): other for r, other in matched if other is not None}

    def gold(row: dict[str, Any]) -> int | None:
        other = gold_side.get(id(row))
        reward = reward_of(other) if other is not None else None
        return None if reward is None else int(passed(reward))

    pairs, skipped = pairs_of([r for r, o in matched if o is not None], gold, reward_of)
    counts = {
        "rows": len(first),
        "gold_rows": len(second),
        "paired": len(pairs),
        "unpaired": unpaired,
        "gold_only": sum(1 for k in by_key if k not in seen),
        "duplicate_keys": duplicates,
        "unjudged": skipped["unjudged"],
        "gold_unjudged": skipped["no_gold"],
    }
    return AgreementReport(_name(first, names[0]), _name(second, names[1]), measured(pairs), counts)
