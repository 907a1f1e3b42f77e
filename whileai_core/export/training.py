"""SFT training files: one conversation per sample, with a per-message loss mask.

Two wire shapes:

- `openai`: the chat-completions wire. The whole conversation in `messages`,
  `function.arguments` a JSON string, and the ask alongside as `prompt`.
- `trl`: what TRL's SFTTrainer treats as conversational. `arguments` are objects and
  there is no `prompt` column: TRL decides "conversational" from the column set, and a
  `prompt` string next to `messages` makes it skip the chat template and train on the
  bare ask. The ask survives as `prompt_text`.

`loss_mask` has one 0/1 per message: 1 on the agent's turns, 0 on system, user and tool
turns (tool output is the environment's text, not the policy's). `mask="final"` trains
only the last agent turn. `unroll=True` makes one sample per agent turn, the k-th ending
at that turn with loss on it alone, so each turn trains once with the context it had.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

from .conversation import (
    Encoding,
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

Format = Literal["openai", "trl"]
MaskMode = Literal["all", "final"]
FORMATS: tuple[str, ...] = ("openai", "trl")


def encoding_for(fmt: str) -> Encoding:
    from ..errors import ConfigError

    if fmt not in FORMATS:
        raise ConfigError(f"format {fmt!r}: expected 'openai' or 'trl'")
    return "json_string" if fmt == "openai" else "dict"


@dataclass
class TrainingReport(ExportReport):
    """What the SFT export wrote and refused; `as_dict()` is the `--report` JSON."""

    mask: str
    unroll: bool
    max_tool_output_chars: int | None
    samples: int = 0
    rows_written: int = 0
    trained_messages: int = 0
    masked_messages: int = 0

    def as_dict(self) -> dict[str, Any]:
        c = self.counters
        return {
            "kind": "training",
            "format": self.format,
            "mask": self.mask,
            "unroll": self.unroll,
            "rows_written": self.rows_written,
            "samples": self.samples,
            "trained_messages": self.trained_messages,
            "masked_messages": self.masked_messages,
            "max_tool_output_chars": self.max_tool_output_chars,
            "tool_outputs_truncated": c.tool_outputs_truncated,
            "tool_output_chars_cut": c.tool_output_chars_cut,
            **self.common(),
        }


def loss_mask(messages: list[Message], mask: MaskMode = "all") -> list[int]:
    """1 on assistant turns (only the last one with mask='final'), 0 elsewhere."""
    flags = [1 if m.get("role") == "assistant" else 0 for m in messages]
    if mask == "final" and any(flags):
        last = max(i for i, f in enumerate(flags) if f)
        flags = [1 if i == last else 0 for i in range(len(flags))]
    return flags


def training_samples(
    rows: Iterable[Row],
    *,
    fmt: Format = "openai",
    mask: MaskMode = "all",
    unroll: bool = False,
    max_tool_output_chars: int | None = None,
    tools: list[dict[str, Any]] | None = None,
    report: TrainingReport | None = None,
) -> Iterator[dict[str, Any]]:
    """Yield SFT samples lazily; pass a `report` to read the counts afterwards.

    Rows are never mutated. A row that quotes its privileged block, has no conversation,
    or carries a tool call whose arguments are not a JSON object is refused and counted.
    `tools` (the spec's tools in the wire shape) is added as a column when given.
    """
    from ..errors import ConfigError

    encoding = encoding_for(fmt)
    if mask not in ("all", "final"):
        raise ConfigError(f"mask {mask!r}: expected 'all' or 'final'")
    if max_tool_output_chars is not None and max_tool_output_chars < 0:
        raise ConfigError("max_tool_output_chars must not be negative")
    rep = report or TrainingReport(fmt, mask, unroll, max_tool_output_chars)
    rep.roundtrip = RoundTrip(encoding)
    for row in rows:
        rep.counters.rows_in += 1
        try:
            built = _samples_for(row, fmt, encoding, mask, unroll, max_tool_output_chars, rep)
            built = [scrub(row, sample) for sample in built]
        except Refused as refusal:
            rep.counters.refuse(refusal.reason)
            continue
        rep.rows_written += 1
        for sample in built:
            rep.samples += 1
            trained = sum(sample["loss_mask"])
            rep.trained_messages += trained
            rep.masked_messages += len(sample["loss_mask"]) - trained
            if tools is not None:
                sample["tools"] = tools
            yield sample


def _samples_for(
    row: Row,
    fmt: str,
    encoding: Encoding,
    mask: MaskMode,
    unroll: bool,
    max_chars: int | None,
    rep: TrainingReport,
) -> list[dict[str, Any]]:
    guard_privileged(row)
    raw = raw_conversation(row, rep.counters)
    messages, cuts = wire_messages(
        raw, encoding, rep.roundtrip, max_tool_output_chars=max_chars, counters=rep.counters
    )
    if not any(m["role"] == "assistant" for m in messages):
        raise Refused("no_agent_turn")
    ask = ask_of(row, messages)
    reward = row.get("reward")
    meta = {
        "scenario_id": row.get("scenario_id"),
        "rollout_index": row.get("rollout_index"),
        "reward": float(reward) if isinstance(reward, (int, float)) else None,
        "tool_output_truncated": cuts,
    }
    if not unroll:
        return [_sample(fmt, messages, loss_mask(messages, mask), ask, meta)]
    samples = []
    turn = 0
    for i, message in enumerate(messages):
        if message["role"] != "assistant":
            continue
        prefix = messages[: i + 1]
        flags = [0] * i + [1]
        samples.append(_sample(fmt, prefix, flags, ask, {**meta, "turn": turn}))
        turn += 1
    return samples


def _sample(
    fmt: str, messages: list[Message], flags: list[int], ask: str, meta: dict[str, Any]
) -> dict[str, Any]:
    if fmt == "openai":
        return {"messages": messages, "prompt": ask, "loss_mask": flags, **meta}
    return {"messages": messages, "prompt_text": ask, "loss_mask": flags, **meta}
