"""SFT training files in the shapes trainers honour, the system prompt first in each.

Which turns a sample trains on is written the way each trainer reads it; a trainer
ignores a side column such as a per-message loss mask:

- `openai`: OpenAI's documented supervised line, nothing else. Each assistant message
  carries `weight` 1 (trained) or 0. `mask="final"` weights only the last agent turn;
  `unroll=True` makes one line per agent turn with weight 1 on that turn alone.
- `trl`: conversational rows TRL's SFTTrainer reads. `mask="all"` is `{"messages"}` (train
  with `assistant_only_loss=True` and a template that marks assistant turns, or TRL trains
  on the tool output too); `mask="final"` and `unroll=True` are `{"prompt", "completion"}`
  rows, whose completion-only loss TRL applies by default. Arguments are objects.

Every sample carries the spec's `tools` when `--spec` gave them. Rows below the pass line
(reward < 0.5) are left out unless `include_failures`: SFT imitates what it is shown.
Metadata (scenario, rollout, reward, turn, the ask) goes where the caller says: inline
(the TRL default), to `on_meta` (a sidecar file), or nowhere (the OpenAI default).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from ..metrics.tally import passed
from .context import Context, ContextCounts, in_context, source_of
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
from .openai_format import line_problems, openai_messages, parallel_calls

Format = Literal["openai", "trl"]
MaskMode = Literal["all", "final"]
FORMATS: tuple[str, ...] = ("openai", "trl")
MetaSink = Callable[[dict[str, Any]], None]


def encoding_for(fmt: str) -> Encoding:
    from ..errors import ConfigError

    if fmt not in FORMATS:
        raise ConfigError(f"format {fmt!r}: expected 'openai' or 'trl'")
    return "json_string" if fmt == "openai" else "dict"


@dataclass
class PassLine:
    """What the pass line let through: SFT imitates every sample it is shown."""

    include_failures: bool = False
    left_out: int = 0
    ungraded: int = 0
    judge_failed: int = 0

    def admits(self, row: Row) -> bool:
        status = row.get("judge_status")
        reward = row.get("reward")
        if status not in (None, "ok"):
            if not self.include_failures:
                self.judge_failed += 1
            return self.include_failures
        if isinstance(reward, bool) or not isinstance(reward, (int, float)):
            self.ungraded += 1
            return True
        if passed(float(reward)) or self.include_failures:
            return True
        self.left_out += 1
        return False

    def as_dict(self) -> dict[str, Any]:
        return {
            "include_failures": self.include_failures,
            "left_out_below_pass_line": self.left_out,
            "left_out_judge_failed": self.judge_failed,
            "ungraded": self.ungraded,
        }

    def warnings(self) -> list[str]:
        out = []
        if self.left_out:
            out.append(
                f"left out {self.left_out} rows below the pass line (reward < 0.5); "
                "--include-failures keeps them"
            )
        if self.judge_failed:
            out.append(f"left out {self.judge_failed} rows whose judge did not return a verdict")
        if self.ungraded:
            out.append(
                f"{self.ungraded} rows carry no reward: exported without the pass-line check"
            )
        return out


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
    pass_line: PassLine = field(default_factory=PassLine)
    context: ContextCounts = field(default_factory=ContextCounts)
    meta: str = "dropped"

    def shape(self) -> str:
        if self.format == "openai":
            return "openai messages with per-message weight"
        if self.unroll or self.mask == "final":
            return "trl prompt/completion (completion-only loss)"
        return "trl messages (needs assistant_only_loss=True)"

    def as_dict(self) -> dict[str, Any]:
        c = self.counters
        return {
            "kind": "training",
            "format": self.format,
            "shape": self.shape(),
            "mask": self.mask,
            "unroll": self.unroll,
            "rows_written": self.rows_written,
            "samples": self.samples,
            "trained_messages": self.trained_messages,
            "masked_messages": self.masked_messages,
            **self.pass_line.as_dict(),
            "system_prompt": self.context.as_dict(),
            "meta": self.meta,
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


def place_meta(
    sample: dict[str, Any], meta: dict[str, Any], *, keep: bool, on_meta: MetaSink | None
) -> dict[str, Any]:
    """The line as written: metadata sent to the sidecar, kept inline, or dropped."""
    if on_meta is not None:
        on_meta(meta)
        return sample
    return {**sample, **meta} if keep else sample


def training_samples(
    rows: Iterable[Row],
    *,
    fmt: Format = "openai",
    mask: MaskMode = "all",
    unroll: bool = False,
    max_tool_output_chars: int | None = None,
    context: Context | None = None,
    include_failures: bool = False,
    keep_meta: bool | None = None,
    on_meta: MetaSink | None = None,
    report: TrainingReport | None = None,
) -> Iterator[dict[str, Any]]:
    """Yield SFT samples lazily; pass a `report` to read the counts afterwards.

    Rows are never mutated. A row that quotes its privileged block, has no conversation,
    carries a tool call whose arguments are not a JSON object, or would be given a system
    prompt its lineage says it did not run under is refused and counted. `keep_meta`
    defaults to True for `trl` (TRL reads only its own columns) and False for `openai`
    (OpenAI's line has no room for it); `on_meta` receives one dict per sample instead.
    """
    from ..errors import ConfigError

    encoding = encoding_for(fmt)
    if mask not in ("all", "final"):
        raise ConfigError(f"mask {mask!r}: expected 'all' or 'final'")
    if max_tool_output_chars is not None and max_tool_output_chars < 0:
        raise ConfigError("max_tool_output_chars must not be negative")
    ctx = context or Context()
    keep = fmt == "trl" if keep_meta is None else keep_meta
    rep = report or TrainingReport(fmt, mask, unroll, max_tool_output_chars)
    rep.roundtrip = RoundTrip(encoding)
    rep.pass_line.include_failures = include_failures
    rep.meta = "sidecar" if on_meta is not None else "inline" if keep else "dropped"
    for row in rows:
        rep.counters.rows_in += 1
        if not rep.pass_line.admits(row):
            continue
        try:
            built = _samples_for(row, fmt, encoding, mask, unroll, max_tool_output_chars, ctx, rep)
            built = [(scrub(sample), meta) for sample, meta in built]
        except Refused as refusal:
            rep.counters.refuse(refusal.reason)
            continue
        rep.rows_written += 1
        for sample, meta in built:
            rep.samples += 1
            yield place_meta(sample, meta, keep=keep, on_meta=on_meta)
    rep.warnings.extend(rep.pass_line.warnings())
    rep.warnings.extend(rep.context.warnings(ctx))
    if fmt == "openai" and keep and on_meta is None:
        rep.warnings.append(
            "--keep-meta: lines carry metadata keys, so the file is not OpenAI's documented "
            "shape; use --meta FILE for a sidecar instead"
        )


def _samples_for(
    row: Row,
    fmt: str,
    encoding: Encoding,
    mask: MaskMode,
    unroll: bool,
    max_chars: int | None,
    ctx: Context,
    rep: TrainingReport,
) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    guard_privileged(row)
    raw = raw_conversation(row, rep.counters)
    messages, cuts = wire_messages(
        raw, encoding, rep.roundtrip, max_tool_output_chars=max_chars, counters=rep.counters
    )
    if not any(m["role"] == "assistant" for m in messages):
        raise Refused("no_agent_turn")
    messages = in_context(row, messages, ctx, rep.context)
    tools = ctx.tools_for(row)
    if tools is None:
        rep.context.without_tools += 1
    # Messages after the last agent turn (a rollout cut mid-call) train nothing.
    last = max(i for i, m in enumerate(messages) if m["role"] == "assistant")
    messages = messages[: last + 1]
    reward = row.get("reward")
    meta: dict[str, Any] = {
        "scenario_id": row.get("scenario_id"),
        "rollout_index": row.get("rollout_index"),
        "reward": float(reward) if isinstance(reward, (int, float)) else None,
        "tool_output_truncated": cuts,
        "prompt_text": ask_of(row, messages),
        "system_prompt_source": source_of(raw, ctx),
    }
    turns = [i for i, m in enumerate(messages) if m["role"] == "assistant"]
    if not unroll:
        flags = loss_mask(messages, mask)
        return [(_sample(fmt, messages, flags, tools, rep), meta)]
    out = []
    for turn, i in enumerate(turns):
        flags = [0] * i + [1]
        sample = _sample(fmt, messages[: i + 1], flags, tools, rep)
        out.append((sample, {**meta, "turn": turn}))
    return out


def _sample(
    fmt: str,
    messages: list[Message],
    flags: list[int],
    schemas: list[dict[str, Any]] | None,
    rep: TrainingReport,
) -> dict[str, Any]:
    trained = sum(flags)
    rep.trained_messages += trained
    rep.masked_messages += len(flags) - trained
    tools = {"tools": schemas} if schemas is not None else {}
    if fmt == "openai":
        weights = [
            f if m["role"] == "assistant" else 0 for m, f in zip(messages, flags, strict=True)
        ]
        line: dict[str, Any] = {"messages": openai_messages(messages, weights)}
        if schemas is not None:
            line["tools"] = schemas
            line["parallel_tool_calls"] = parallel_calls(messages)
        problems = line_problems(line)
        if problems:
            raise Refused("openai_shape")
        return line
    one_at_end = trained == 1 and flags[-1] == 1 and len(messages) > 1
    if one_at_end and (rep.unroll or rep.mask == "final"):
        # One trained turn at the end: TRL's prompt/completion rows, completion-only loss.
        return {"prompt": messages[:-1], "completion": messages[-1:], **tools}
    return {"messages": messages, **tools}
