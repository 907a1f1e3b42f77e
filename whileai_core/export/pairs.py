"""Preference pairs: a passing and a failing rollout of one ask, split where the agent chose.

DPO scores every completion token, so a completion must be the policy's own text. Two
rollouts of one ask share a prefix (system prompt, the person's opener, often the same
first calls and tool output) until the first agent turn where they differ; the pair is
cut there: `prompt` is the shared prefix, `chosen`/`rejected` are the agent's turn at
that point in the passing and the failing rollout. Rollouts that first differ in text
the agent did not write (a tool answering differently, the person replying differently)
are not a preference between two agent choices and make no pair; they are counted.

`completions="continuation"` keeps everything from the divergence on (the environment's
later tool output and replies included) for trainers that want whole continuations; the
report says how many completions then carry tool output.

Shapes: `trl` is DPOTrainer's conversational `{"prompt", "chosen", "rejected"}` with
argument objects and the spec's `tools`; `openai` is OpenAI's preference line
`{"input": {"messages", "tools", "parallel_tool_calls"}, "preferred_output",
"non_preferred_output"}`, one assistant message on each side. With `length_matched=True`
a passing rollout is paired with the failing one whose reply length is closest, and
pairs whose two turns differ in length by more than `length_tolerance` are dropped: a
preference learner can otherwise learn "longer wins" from a judge that tolerates length.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

import orjson

from ..compare.lineage import eval_sourced_warning, is_eval_sourced
from ..errors import ConfigError
from ..metrics.tally import passed, reward_of, task_key
from ..row import reply_text
from ..row.buffer import RowBuffer, Span
from .context import Context, ContextCounts, in_context, source_of
from .conversation import (
    Counters,
    ExportReport,
    Message,
    Refused,
    RoundTrip,
    Row,
    ask_of,
    guard_privileged,
    raw_conversation,
    scrub,
    wire_messages,
)
from .openai_format import line_problems, openai_messages, parallel_calls
from .training import Format, MetaSink, encoding_for, place_meta

Completions = Literal["turn", "continuation"]

# Why an ask with a pass and a fail still gave no pair, in the words the report uses.
UNPAIRED_REASONS = {
    "environment": "whose rollouts first differed in text the agent did not write",
    "no_divergence": "whose passing and failing rollouts said the same",
    "length_unmatched": "with no pass and fail of similar length",
    "refused": "whose every pair was refused",
}


@dataclass
class PairsReport(ExportReport):
    """What the preference export wrote, and for every ask why it gave a pair or none:
    `asks == asks_with_pairs + asks_without_contrast + sum(asks_unpaired.values())`."""

    length_matched: bool
    completions: str = "turn"
    pairs: int = 0
    asks: int = 0
    asks_with_pairs: int = 0
    asks_without_contrast: int = 0
    asks_unpaired: dict[str, int] = field(default_factory=dict)
    length_unmatched: int = 0
    diverged_outside_agent_turn: int = 0
    no_divergence: int = 0
    completions_with_tool_output: int = 0
    eval_sourced: int = 0
    chosen_chars: int = 0
    rejected_chars: int = 0
    context: ContextCounts = field(default_factory=ContextCounts)
    meta: str = "dropped"
    reshaped: int = 0  # pairs read already made and only reshaped (`is_pair_line`)

    def as_dict(self) -> dict[str, Any]:
        n = max(self.pairs, 1)
        held = {"reshaped": self.reshaped} if self.reshaped else {}
        return {
            "kind": "pairs",
            "format": self.format,
            "completions": self.completions,
            "length_matched": self.length_matched,
            "asks": self.asks,
            "asks_with_pairs": self.asks_with_pairs,
            "asks_without_contrast": self.asks_without_contrast,
            "asks_unpaired": dict(self.asks_unpaired),
            "pairs": self.pairs,
            "length_unmatched": self.length_unmatched,
            "diverged_outside_agent_turn": self.diverged_outside_agent_turn,
            "no_divergence": self.no_divergence,
            "completions_contain_tool_output": self.completions_with_tool_output > 0,
            "completions_with_tool_output": self.completions_with_tool_output,
            "eval_sourced": self.eval_sourced,
            "mean_chosen_chars": round(self.chosen_chars / n, 1),
            "mean_rejected_chars": round(self.rejected_chars / n, 1),
            "system_prompt": self.context.as_dict(),
            "meta": self.meta,
            **held,
            **self.common(),
        }


@dataclass
class _Rollout:
    reward: float
    row: Row
    raw: list[Message]
    messages: list[Message]


def preference_pairs(
    rows: Iterable[Row],
    *,
    fmt: Format = "openai",
    length_matched: bool = False,
    length_tolerance: float = 0.25,
    completions: Completions = "turn",
    context: Context | None = None,
    keep_meta: bool | None = None,
    on_meta: MetaSink | None = None,
    report: PairsReport | None = None,
) -> Iterator[dict[str, Any]]:
    """Yield chosen/rejected pairs within each ask; each rollout is used at most once."""
    encoding = encoding_for(fmt)
    if completions not in ("turn", "continuation"):
        raise ConfigError(f"completions {completions!r}: expected 'turn' or 'continuation'")
    if completions == "continuation" and fmt == "openai":
        raise ConfigError(
            "whole continuations have no OpenAI shape: its preference outputs are one "
            "assistant message each; use --format trl"
        )
    ctx = context or Context()
    keep = fmt == "trl" if keep_meta is None else keep_meta
    rep = report or PairsReport(fmt, length_matched)
    rep.completions = completions
    rep.roundtrip = RoundTrip(encoding)
    rep.meta = "sidecar" if on_meta is not None else "inline" if keep else "dropped"
    # Pairs need whole asks: hold the input as JSON, not dicts (see RowBuffer).
    buffer = RowBuffer()
    spans: dict[str, list[Span]] = {}
    for row in rows:
        rep.counters.rows_in += 1
        if is_pair_line(row):  # a pair already made (either shape): reshaped as it is
            try:
                guard_privileged(row)
                reshaped = scrub(reshape_pair(row, fmt, ctx, rep.roundtrip))
            except Refused as refusal:
                rep.counters.refuse(refusal.reason)
                continue
            rep.pairs += 1
            rep.reshaped += 1
            yield reshaped
            continue
        spans.setdefault(task_key(row), []).append(buffer.add(row))
    for group_spans in spans.values():
        rep.asks += 1
        built = [
            b for b in (_rollout(buffer.load(s), encoding, ctx, rep) for s in group_spans) if b
        ]
        winners = sorted((b for b in built if passed(b.reward)), key=lambda b: -b.reward)
        losers = sorted((b for b in built if not passed(b.reward)), key=lambda b: b.reward)
        if not winners or not losers:
            rep.asks_without_contrast += 1
            continue
        made = 0
        failed: list[str] = []
        for pair, meta in _pairs(winners, losers, fmt, completions, length_matched,
                                 length_tolerance, ctx, rep, failed):  # fmt: skip
            made += 1
            rep.pairs += 1
            yield place_meta(pair, meta, keep=keep, on_meta=on_meta)
        if made:
            rep.asks_with_pairs += 1
        else:
            reason = failed[0] if failed else "length_unmatched"
            rep.asks_unpaired[reason] = rep.asks_unpaired.get(reason, 0) + 1
    _finish(rep, ctx, length_matched, fmt, keep, on_meta)


def _finish(
    rep: PairsReport, ctx: Context, length_matched: bool, fmt: str, keep: bool, on_meta: Any
) -> None:
    if rep.pairs and not length_matched and rep.chosen_chars > 1.2 * rep.rejected_chars:
        rep.warnings.append(
            f"chosen turns are {rep.chosen_chars / max(rep.rejected_chars, 1):.2f}x longer than "
            "rejected ones on average: a preference learner may learn length; "
            "try --length-matched"
        )
    if rep.completions_with_tool_output:
        rep.warnings.append(
            f"{rep.completions_with_tool_output} pairs have completions that contain tool "
            "output or the person's replies (whole continuations): DPO scores those tokens "
            "as if the policy wrote them"
        )
    if rep.diverged_outside_agent_turn:
        rep.warnings.append(
            f"{rep.diverged_outside_agent_turn} rollout pairs first differed in text the agent "
            "did not write (a tool or the person answered differently): not paired"
        )
    if rep.eval_sourced:
        rep.warnings.append(eval_sourced_warning(rep.eval_sourced, "rollouts in the pairs"))
    rep.warnings.extend(rep.context.warnings(ctx))
    if fmt == "openai" and keep and on_meta is None:
        rep.warnings.append(
            "--keep-meta: lines carry metadata keys, so the file is not OpenAI's documented "
            "shape; use --meta FILE for a sidecar instead"
        )


def _rollout(row: Row, encoding: Any, ctx: Context, rep: PairsReport) -> _Rollout | None:
    reward = reward_of(row)
    if reward is None:
        rep.counters.refuse("ungraded")
        return None
    try:
        guard_privileged(row)
        raw = raw_conversation(row, rep.counters)
        messages, _ = wire_messages(
            raw, encoding, rep.roundtrip, max_tool_output_chars=None, counters=rep.counters
        )
        messages = in_context(row, messages, ctx, rep.context)
    except Refused as refusal:
        rep.counters.refuse(refusal.reason)
        return None
    if ctx.tools is None:
        rep.context.without_tools += 1
    return _Rollout(reward, row, raw, messages)


def _pairs(
    winners: list[_Rollout],
    losers: list[_Rollout],
    fmt: str,
    completions: str,
    length_matched: bool,
    tolerance: float,
    ctx: Context,
    rep: PairsReport,
    failed: list[str],
) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """Each winner with the first loser it makes a pair with; `failed` collects why a
    candidate pair was not made, in UNPAIRED_REASONS' words."""
    pool = list(losers)
    for winner in winners:
        if length_matched:
            size = len(reply_text(winner.row))
            pool.sort(key=lambda b: abs(len(reply_text(b.row)) - size))
        for loser in list(pool):
            cut = divergence(winner.messages, loser.messages, whole=completions != "turn")
            if isinstance(cut, str):
                if cut == "environment":
                    rep.diverged_outside_agent_turn += 1
                    failed.append("environment")
                else:
                    rep.no_divergence += 1
                    failed.append("no_divergence")
                continue
            chosen = _completion(winner.messages, cut, completions)
            rejected = _completion(loser.messages, cut, completions)
            c_len, r_len = _chars(chosen), _chars(rejected)
            if length_matched and abs(c_len - r_len) > tolerance * max(c_len, r_len, 1):
                rep.length_unmatched += 1
                failed.append("length_unmatched")
                continue
            try:
                pair = _shape(fmt, winner.messages[:cut], chosen, rejected, ctx)
                pair = scrub(pair)
            except Refused as refusal:
                rep.counters.refuse(refusal.reason)
                failed.append("refused")
                continue
            pool.remove(loser)
            rep.eval_sourced += is_eval_sourced(winner.row) + is_eval_sourced(loser.row)
            rep.chosen_chars += c_len
            rep.rejected_chars += r_len
            if any(m["role"] != "assistant" for m in [*chosen, *rejected]):
                rep.completions_with_tool_output += 1
            meta = {
                "scenario_id": winner.row.get("scenario_id"),
                "chosen_reward": winner.reward,
                "rejected_reward": loser.reward,
                "diverged_at_turn": sum(
                    1 for m in winner.messages[:cut] if m["role"] == "assistant"
                ),
                "prompt_text": ask_of(winner.row, winner.messages),
                "system_prompt_source": source_of(winner.raw, ctx),
            }
            yield pair, meta
            break


def _comparable(message: Message) -> bytes:
    """A message without its call ids: two rollouts name the same call differently."""
    calls = [
        [c["function"]["name"], c["function"]["arguments"]] for c in message.get("tool_calls") or []
    ]
    return orjson.dumps([message.get("role"), message.get("content") or "", calls,
                         message.get("name") if message.get("role") != "tool" else None],
                        option=orjson.OPT_SORT_KEYS)  # fmt: skip


def divergence(chosen: list[Message], rejected: list[Message], *, whole: bool = False) -> int | str:
    """Index of the first message where the two conversations differ, when both are agent
    turns; else why there is no such turn ('environment' or 'none').

    With `whole` (continuations), a difference in the environment's text moves the cut
    back to the agent turn before it, so both completions start with the agent and carry
    the differing tool output or reply after it.
    """
    cut = 0
    for a, b in zip(chosen, rejected, strict=False):
        if _comparable(a) != _comparable(b):
            break
        cut += 1
    if cut >= len(chosen) or cut >= len(rejected):
        return "none"
    if chosen[cut]["role"] == rejected[cut]["role"] == "assistant":
        return cut
    if whole:
        back = next((i for i in range(cut - 1, -1, -1) if chosen[i]["role"] == "assistant"), None)
        if back is not None:
            return back
    return "environment"


def _completion(messages: list[Message], cut: int, completions: str) -> list[Message]:
    if completions == "turn":
        return messages[cut : cut + 1]
    rest = messages[cut:]
    last = max(i for i, m in enumerate(rest) if m["role"] == "assistant")
    return rest[: last + 1]


def _chars(messages: list[Message]) -> int:
    """What DPO scores on one side: the agent's text and call arguments."""
    total = 0
    for message in messages:
        if message["role"] != "assistant":
            continue
        total += len(message.get("content") or "")
        for call in message.get("tool_calls") or []:
            total += len(orjson.dumps(call["function"]["arguments"]))
    return total


_PAIR_SIDES = (("chosen", "rejected"), ("preferred_output", "non_preferred_output"))


def is_pair_line(line: Any) -> bool:
    """A preference pair already made: TRL's `prompt`/`chosen`/`rejected` with message
    lists, or OpenAI's `input`/`preferred_output`/`non_preferred_output`."""
    if not isinstance(line, dict):
        return False
    if isinstance(line.get("chosen"), list) and isinstance(line.get("rejected"), list):
        return isinstance(line.get("prompt"), list)
    return (
        isinstance(line.get("input"), dict)
        and isinstance(line.get("preferred_output"), list)
        and isinstance(line.get("non_preferred_output"), list)
    )


def pair_line_problem(line: Any) -> str | None:
    """What `export --pairs` reads: pairs already made pass as they are (to reshape them),
    anything else must be a row."""
    from ..row.rules import row_problem

    return None if is_pair_line(line) else row_problem(line)


def reshape_pair(
    line: dict[str, Any], fmt: str, ctx: Context, roundtrip: RoundTrip
) -> dict[str, Any]:
    """A pair from either shape in `fmt` (what the SDK's `to_trl` does to rows already
    held): the same messages, arguments encoded the way the shape wants, the tools the
    line carried (else the spec's)."""
    if "input" in line:
        prompt, chosen, rejected = (
            line["input"].get("messages"),
            line["preferred_output"],
            line["non_preferred_output"],
        )
        tools = line["input"].get("tools")
    else:
        prompt, chosen, rejected, tools = (
            line["prompt"], line["chosen"], line["rejected"], line.get("tools"),
        )  # fmt: skip
    if not isinstance(prompt, list):
        raise Refused("bad_message")
    encoding = encoding_for(fmt)
    counters = Counters()
    wired = [
        wire_messages([m for m in part if isinstance(m, dict)], encoding, roundtrip,
                      max_tool_output_chars=None, counters=counters)[0]
        for part in (prompt, [*prompt, *chosen], [*prompt, *rejected])
    ]  # fmt: skip
    cut = len(wired[0])
    held = Context(tools=tools if isinstance(tools, list) else ctx.tools)
    return _shape(fmt, wired[0], wired[1][cut:], wired[2][cut:], held)


def _shape(
    fmt: str, prompt: list[Message], chosen: list[Message], rejected: list[Message], ctx: Context
) -> dict[str, Any]:
    if fmt == "trl":
        tools = {"tools": ctx.tools} if ctx.tools is not None else {}
        return {"prompt": prompt, "chosen": chosen, "rejected": rejected, **tools}
    body: dict[str, Any] = {"messages": openai_messages(prompt)}
    if ctx.tools is not None:
        body["tools"] = ctx.tools
        body["parallel_tool_calls"] = parallel_calls([*prompt, *chosen, *rejected])
    line = {
        "input": body,
        "preferred_output": openai_messages(chosen),
        "non_preferred_output": openai_messages(rejected),
    }
    if line_problems(line):
        raise Refused("openai_shape")
    return line
