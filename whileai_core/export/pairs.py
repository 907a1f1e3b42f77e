"""Preference pairs: a passing and a failing rollout of the same ask.

Pairs are built only within an ask, so the pair differs in what the agent did, not in
what it was asked. With `length_matched=True` each passing rollout is paired with the
failing one whose reply length is closest, and pairs further apart than
`length_tolerance` (relative) are dropped: otherwise a preference learner can learn
"longer wins" from a judge that merely tolerates length.

Shapes:

- `openai`: `prompt` is the ask as a string; `chosen`/`rejected` are whole conversations
  (tool-call arguments as JSON strings).
- `trl`: what DPOTrainer loads. `prompt` is the message list up to the first agent turn;
  `chosen`/`rejected` are the completions only (arguments as objects). The string-prompt
  shape with full conversations on both sides breaks inside TRL.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..compare.lineage import eval_sourced_warning, is_eval_sourced
from ..metrics.tally import passed, reward_of, task_key
from ..row import reply_text
from ..rowbuffer import RowBuffer, Span
from .conversation import (
    ExportReport,
    Message,
    Refused,
    RoundTrip,
    Row,
    ask_of,
    first_agent_turn,
    guard_privileged,
    raw_conversation,
    scrub,
    wire_messages,
)
from .training import Format, encoding_for

# Why an ask with a pass and a fail still gave no pair, in the words the report uses.
UNPAIRED_REASONS = {
    "prompt_mismatch": "whose passing and failing rollouts saw different prompts",
    "length_unmatched": "with no pass and fail of similar length",
    "refused": "whose every pair was refused (it quoted privileged text)",
}


@dataclass
class PairsReport(ExportReport):
    """What the preference export wrote, and for every ask why it gave a pair or none:
    `asks == asks_with_pairs + asks_without_contrast + sum(asks_unpaired.values())`."""

    length_matched: bool
    pairs: int = 0
    asks: int = 0
    asks_with_pairs: int = 0
    asks_without_contrast: int = 0
    asks_unpaired: dict[str, int] = field(default_factory=dict)
    length_unmatched: int = 0
    prompt_mismatch: int = 0
    eval_sourced: int = 0
    chosen_chars: int = 0
    rejected_chars: int = 0

    def as_dict(self) -> dict[str, Any]:
        n = max(self.pairs, 1)
        return {
            "kind": "pairs",
            "format": self.format,
            "length_matched": self.length_matched,
            "asks": self.asks,
            "asks_with_pairs": self.asks_with_pairs,
            "asks_without_contrast": self.asks_without_contrast,
            "asks_unpaired": dict(self.asks_unpaired),
            "pairs": self.pairs,
            "length_unmatched": self.length_unmatched,
            "prompt_mismatch": self.prompt_mismatch,
            "eval_sourced": self.eval_sourced,
            "mean_chosen_chars": round(self.chosen_chars / n, 1),
            "mean_rejected_chars": round(self.rejected_chars / n, 1),
            **self.common(),
        }


def pairs_lines(data: dict[str, Any]) -> list[str]:
    """The human report of a pairs export (`PairsReport.as_dict()`): every ask accounted
    for, as paired or under the reason it gave none."""
    unpaired = [f"{data['asks_without_contrast']} without a pass and a fail"]
    unpaired += [
        f"{n} {UNPAIRED_REASONS.get(reason, reason)}"
        for reason, n in sorted(data.get("asks_unpaired", {}).items())
    ]
    rt = data["tool_call_roundtrip"]
    return [
        f"export --pairs --format {data['format']}: {data['pairs']} pairs from "
        f"{data['asks_with_pairs']} of {data['asks']} asks; chosen {data['mean_chosen_chars']}"
        f" / rejected {data['mean_rejected_chars']} reply chars on average",
        f"  asks without a pair: {', '.join(unpaired)}",
        f"  tool_call_roundtrip: encoding {rt['encoding']}, {rt['invalid']} invalid",
    ]


def preference_pairs(
    rows: Iterable[Row],
    *,
    fmt: Format = "openai",
    length_matched: bool = False,
    length_tolerance: float = 0.25,
    report: PairsReport | None = None,
) -> Iterator[dict[str, Any]]:
    """Yield chosen/rejected pairs within each ask; each rollout is used at most once."""
    encoding = encoding_for(fmt)
    rep = report or PairsReport(fmt, length_matched)
    rep.roundtrip = RoundTrip(encoding)
    # Pairs need whole asks: hold the input as JSON, not dicts (see RowBuffer).
    buffer = RowBuffer()
    spans: dict[str, list[Span]] = {}
    for row in rows:
        rep.counters.rows_in += 1
        spans.setdefault(task_key(row), []).append(buffer.add(row))
    for group_spans in spans.values():
        group = [buffer.load(span) for span in group_spans]
        rep.asks += 1
        built: list[tuple[float, Row, list[Message]]] = []
        for row in group:
            reward = reward_of(row)
            if reward is None:
                rep.counters.refuse("ungraded")
                continue
            try:
                guard_privileged(row)
                raw = raw_conversation(row, rep.counters)
                messages, _ = wire_messages(
                    raw, encoding, rep.roundtrip, max_tool_output_chars=None, counters=rep.counters
                )
            except Refused as refusal:
                rep.counters.refuse(refusal.reason)
                continue
            built.append((reward, row, messages))
        winners = sorted((b for b in built if passed(b[0])), key=lambda b: -b[0])
        losers = sorted((b for b in built if not passed(b[0])), key=lambda b: b[0])
        if not winners or not losers:
            rep.asks_without_contrast += 1
            continue
        made = 0
        failed: str | None = None
        for chosen, rejected in _match(winners, losers, length_matched, length_tolerance, rep):
            pair = _pair(fmt, chosen, rejected, rep)
            if isinstance(pair, str):
                failed = failed or pair
                continue
            made += 1
            rep.pairs += 1
            rep.eval_sourced += is_eval_sourced(chosen[1]) + is_eval_sourced(rejected[1])
            rep.chosen_chars += len(reply_text(chosen[1]))
            rep.rejected_chars += len(reply_text(rejected[1]))
            yield pair
        if made:
            rep.asks_with_pairs += 1
        else:
            # No candidate pair at all means length matching turned every winner away.
            reason = failed or "length_unmatched"
            rep.asks_unpaired[reason] = rep.asks_unpaired.get(reason, 0) + 1
    if rep.eval_sourced:
        rep.warnings.append(eval_sourced_warning(rep.eval_sourced, "rollouts in the pairs"))
    if rep.pairs and not length_matched and rep.chosen_chars > 1.2 * rep.rejected_chars:
        rep.warnings.append(
            f"chosen replies are {rep.chosen_chars / max(rep.rejected_chars, 1):.2f}x longer than "
            "rejected ones on average: a preference learner may learn length; "
            "try --length-matched"
        )


Built = tuple[float, Row, list[Message]]


def _match(
    winners: list[Built],
    losers: list[Built],
    length_matched: bool,
    tolerance: float,
    rep: PairsReport,
) -> Iterator[tuple[Built, Built]]:
    if not length_matched:
        yield from zip(winners, losers, strict=False)
        return
    pool = list(losers)
    for winner in winners:
        if not pool:
            return
        size = len(reply_text(winner[1]))
        best = min(pool, key=lambda b: abs(len(reply_text(b[1])) - size))
        other = len(reply_text(best[1]))
        if abs(other - size) > tolerance * max(size, other, 1):
            rep.length_unmatched += 1
            continue
        pool.remove(best)
        yield winner, best


def _pair(fmt: str, chosen: Built, rejected: Built, rep: PairsReport) -> dict[str, Any] | str:
    """The pair, or the reason it could not be made (counted in the report)."""
    c_reward, c_row, c_msgs = chosen
    r_reward, r_row, r_msgs = rejected
    meta = {
        "scenario_id": c_row.get("scenario_id"),
        "chosen_reward": c_reward,
        "rejected_reward": r_reward,
    }
    if fmt == "openai":
        pair: dict[str, Any] = {
            "prompt": ask_of(c_row, c_msgs),
            "chosen": c_msgs,
            "rejected": r_msgs,
            **meta,
        }
    else:
        cut_c, cut_r = first_agent_turn(c_msgs), first_agent_turn(r_msgs)
        if c_msgs[:cut_c] != r_msgs[:cut_r]:
            rep.prompt_mismatch += 1
            return "prompt_mismatch"
        pair = {
            "prompt": c_msgs[:cut_c],
            "chosen": c_msgs[cut_c:],
            "rejected": r_msgs[cut_r:],
            "prompt_text": ask_of(c_row, c_msgs),
            **meta,
        }
    try:
        return scrub(c_row, scrub(r_row, pair))
    except Refused as refusal:
        rep.counters.refuse(refusal.reason)
        return "refused"
