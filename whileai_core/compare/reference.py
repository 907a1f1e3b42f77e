"""Score the agent's own turns under a reference model: the other side of `mean_kl`.

`simulate --logprobs` records what the sampling policy thought of the tokens it
generated (`logprob`, `n_tokens` on each agent turn's first step, totals on the row).
The KL an RL update pays and the importance ratio an off-policy update forms both need
the same text scored under a second model. This sends each row's conversation to an
OpenAI-compatible endpoint through the one model client and sums the reference's
logprobs over exactly the spans the policy generated; no tokenizer is needed here,
because the reference scores the same text (its own token count is reported next to
the policy's: `token_count_gap` near zero says the two share a tokenizer).

Two routes:

- `echo`: `/completions` with `echo: true` and `logprobs`, over the conversation
  rendered by the reference model's chat template (`template`: a tokenizer folder, through
  `apply_chat_template` when transformers is installed, or a template file; see
  `templates.py`), else as ChatML (system and tools first, tool calls as `<tool_call>`
  JSON, tool results as `<tool_response>`); a turn's span is its content and tool calls
  plus the closing end token, and the tokens whose text offsets fall in it are summed.
  Any server with the legacy completions route; without `template` the rendering is
  ChatML, which matches the policy's only for ChatML models.
- `prompt-logprobs`: vLLM's `prompt_logprobs` on `/chat/completions`, rendered by the
  reference's own chat template. Per turn, the conversation before it is sent once with
  the generation prompt to learn its length in tokens, then with the turn, and the
  positions after that length are summed (the template's trailing newline after the
  end token is not a generated token and is dropped). Two calls a turn.

`auto` picks `prompt-logprobs` for a `vllm:` model and `echo` otherwise. Each scored
step gets `ref_logprob` and `ref_n_tokens`; the row gets their sums and `ref_model`. A
row whose call fails is written unchanged and counted; a refused endpoint stops the run.
"""

from __future__ import annotations

import asyncio
import json
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..errors import ConfigError, Failure, Refused
from ..export.conversation import Counters, RoundTrip, raw_conversation, wire_messages
from ..jsonl import OnError, ReadStats, RowWriter, read_rows
from ..models.client import ModelClient
from ..models.factory import client_for
from ..models.options import ModelOptions
from .templates import Render, load_renderer, render_turns

Route = Literal["auto", "echo", "prompt-logprobs"]
ROUTES = ("auto", "echo", "prompt-logprobs")
Turn = tuple[float, int]  # (summed reference logprob, reference tokens)
MAX_ERRORS = 5


@dataclass
class RefReport:
    model: str
    route: str
    rows: int = 0
    scored: int = 0
    skipped: int = 0
    failed: int = 0
    turns: int = 0
    n_tokens: int = 0
    turns_unmatched: int = 0
    gaps: list[int] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    read: ReadStats = field(default_factory=ReadStats)
    client: dict[str, Any] = field(default_factory=dict)

    @property
    def token_count_gap(self) -> float | None:
        return sum(self.gaps) / len(self.gaps) if self.gaps else None

    def as_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "route": self.route,
            "rows": self.rows,
            "scored": self.scored,
            "skipped": self.skipped,
            "failed": self.failed,
            "turns": self.turns,
            "n_tokens": self.n_tokens,
            "token_count_gap": self.token_count_gap,
            "turns_unmatched": self.turns_unmatched,
            "errors": self.errors,
            "skipped_lines": self.read.skipped,
            "client": self.client,
            "warnings": self.warnings(),
        }

    def lines(self) -> list[str]:
        gap = self.token_count_gap
        return [
            f"logprobs ref: {self.scored}/{self.rows} rows scored under {self.model} "
            f"({self.route}), {self.turns} turns, {self.n_tokens} reference tokens"
            + ("" if gap is None else f"; token count gap {gap:.2f} a turn")
        ]

    def warnings(self) -> list[str]:
        out = []
        if self.failed:
            out.append(
                f"{self.failed} row(s) not scored (written unchanged); first: "
                f"{self.errors[0] if self.errors else '?'}"
            )
        if self.skipped:
            out.append(f"{self.skipped} row(s) have no agent turn to score")
        if self.turns_unmatched:
            out.append(
                f"{self.turns_unmatched} row(s) have a different number of agent turns than "
                "steps with a logprob: their reference is on the row only, not per step"
            )
        gap = self.token_count_gap
        if gap is not None and gap > 2:
            out.append(
                f"the reference counts {gap:.1f} tokens a turn more or fewer than the policy: "
                "they do not share a tokenizer or a template, so mean_kl mixes in a length "
                "effect"
            )
        if self.read.skipped:
            out.append(self.read.skipped_warning())
        return out


def conversation(row: dict[str, Any], system: str | None) -> list[dict[str, Any]]:
    """The row's messages in the wire shape, the system prompt first when given."""
    counters = Counters()
    messages, _ = wire_messages(
        raw_conversation(row, counters),
        "json_string",
        RoundTrip("json_string"),
        max_tool_output_chars=None,
        counters=counters,
    )
    if system and not (messages and messages[0].get("role") == "system"):
        messages.insert(0, {"role": "system", "content": system})
    return messages


def _call_text(call: dict[str, Any]) -> str:
    fn = call.get("function") or {}
    raw = fn.get("arguments")
    try:
        arguments = json.loads(raw) if isinstance(raw, str) and raw.strip() else raw or {}
    except json.JSONDecodeError:
        arguments = raw
    payload = json.dumps({"name": fn.get("name"), "arguments": arguments}, ensure_ascii=False)
    return f"<tool_call>\n{payload}\n</tool_call>"


def render_chatml(
    messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]] | None = None
) -> tuple[str, list[tuple[int, int]]]:
    """ChatML text of the conversation, and each assistant turn's generated span."""
    parts: list[str] = []
    spans: list[tuple[int, int]] = []
    pos = 0

    def add(text: str) -> None:
        nonlocal pos
        parts.append(text)
        pos += len(text)

    rest = list(messages)
    system = rest.pop(0)["content"] if rest and rest[0].get("role") == "system" else ""
    if tools:
        block = "\n".join(json.dumps(t, ensure_ascii=False) for t in tools)
        system = f"{system}\n\n# Tools\n\n<tools>\n{block}\n</tools>".lstrip("\n")
    if system:
        add(f"<|im_start|>system\n{system}<|im_end|>\n")
    for message in rest:
        role = message.get("role")
        content = message.get("content") or ""
        if role == "assistant":
            body = "\n".join(
                [content] * bool(content) + [_call_text(c) for c in message.get("tool_calls") or []]
            )
            add("<|im_start|>assistant\n")
            start = pos
            add(f"{body}<|im_end|>")
            spans.append((start, pos))
            add("\n")
        elif role == "tool":
            add(f"<|im_start|>user\n<tool_response>\n{content}\n</tool_response><|im_end|>\n")
        else:
            add(f"<|im_start|>{role}\n{content}<|im_end|>\n")
    return "".join(parts), spans


def _echo_sums(raw: dict[str, Any], spans: list[tuple[int, int]], length: int) -> list[Turn]:
    choices = raw.get("choices") or [{}]
    lp = choices[0].get("logprobs") if isinstance(choices[0], dict) else None
    if not isinstance(lp, dict) or not isinstance(lp.get("text_offset"), list):
        raise Failure(
            "the endpoint echoed no token logprobs (needs /completions with echo and "
            "logprobs; vLLM: try --route prompt-logprobs)"
        )
    tokens, values = lp.get("tokens") or [], lp.get("token_logprobs") or []
    offsets = lp["text_offset"]
    sums: list[Turn] = []
    for start, end in spans:
        total, count = 0.0, 0
        for i, offset in enumerate(offsets):
            if offset >= length:
                break  # a generated token, not the prompt
            stop = offsets[i + 1] if i + 1 < len(offsets) else offset + len(tokens[i])
            if offset < end and stop > start and isinstance(values[i], (int, float)):
                total += float(values[i])
                count += 1
        sums.append((total, count))
    return sums


def _actual(entry: Any, token_id: Any) -> tuple[float, str] | None:
    """The scored token's (logprob, text) at one `prompt_logprobs` position: by id when the
    server returned ids, else the record with the worst rank (the top-1 rival ranks 1)."""
    if not isinstance(entry, dict) or not entry:
        return None
    hit = entry.get(str(token_id)) if token_id is not None else None
    if not isinstance(hit, dict):
        records = [v for v in entry.values() if isinstance(v, dict)]
        if not records:
            return None
        hit = max(records, key=lambda r: int(r.get("rank") or 0))
    value = hit.get("logprob")
    if not isinstance(value, (int, float)):
        return None
    return float(value), str(hit.get("decoded_token") or "")


async def _echo_turns(
    client: ModelClient, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None
) -> list[Turn]:
    text, spans = render_chatml(messages, tools)
    raw = await client.complete(text, echo=True, logprobs=1, max_tokens=1, temperature=0)
    return _echo_sums(raw, spans, len(text))


async def _template_turns(
    client: ModelClient,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None,
    render: Render,
) -> list[Turn]:
    text, spans = render_turns(render, messages, tools)
    raw = await client.complete(text, echo=True, logprobs=1, max_tokens=1, temperature=0)
    return _echo_sums(raw, spans, len(text))


async def _chat_turns(
    client: ModelClient, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None
) -> list[Turn]:
    extra: dict[str, Any] = {"max_tokens": 1, "temperature": 0}
    if tools:
        extra["tool_choice"] = "none"  # the template shows the tools; nothing is generated
    sums: list[Turn] = []
    for i, message in enumerate(messages):
        if message.get("role") != "assistant":
            continue
        prefix = await client.chat(messages[:i], tools, add_generation_prompt=True, **extra)
        start = prefix.usage["input_tokens"]
        full = await client.chat(
            messages[: i + 1],
            tools,
            add_generation_prompt=False,
            prompt_logprobs=1,
            return_token_ids=True,
            **extra,
        )
        entries = full.raw.get("prompt_logprobs")
        if not isinstance(entries, list) or start <= 0:
            raise Failure(
                "the endpoint returned no prompt_logprobs (vLLM's chat extension; other "
                "servers: --route echo)"
            )
        ids = full.raw.get("prompt_token_ids")
        ids = ids if isinstance(ids, list) and len(ids) == len(entries) else [None] * len(entries)
        scored = [_actual(entries[p], ids[p]) for p in range(start, len(entries))]
        while scored and (scored[-1] is None or not scored[-1][1].strip()):
            scored.pop()  # the template's newline after the end token
        values = [s[0] for s in scored if s is not None]
        sums.append((sum(values), len(values)))
    return sums


def stamp_reference(
    row: dict[str, Any], turns: list[Turn], model: str
) -> tuple[dict[str, Any], list[tuple[int, int]] | None]:
    """The row with `ref_logprob`/`ref_n_tokens` on each turn's step and in total, and
    (policy tokens, reference tokens) per turn the policy counted; None when the turns do
    not match the steps that carry the policy's logprob (the row's totals only, then)."""
    out = dict(row)
    steps = [dict(s) if isinstance(s, dict) else s for s in row.get("steps") or []]
    turn_steps = [i for i, s in enumerate(steps) if isinstance(s, dict) and "logprob" in s]
    counts: list[tuple[int, int]] | None = None
    if len(turn_steps) == len(turns):
        counts = []
        for index, (value, count) in zip(turn_steps, turns, strict=True):
            steps[index]["ref_logprob"] = value
            steps[index]["ref_n_tokens"] = count
            policy = steps[index].get("n_tokens")
            if isinstance(policy, int) and not isinstance(policy, bool) and policy > 0:
                counts.append((policy, count))
        out["steps"] = steps
    elif not turn_steps:
        counts = []
    out["ref_logprob"] = sum(v for v, _ in turns)
    out["ref_n_tokens"] = sum(n for _, n in turns)
    out["ref_model"] = model
    return out, counts


def pick_route(route: str, provider: str) -> str:
    if route not in ROUTES:
        raise ConfigError(f"--route {route!r}: expected one of {', '.join(ROUTES)}")
    if route == "auto":
        return "prompt-logprobs" if provider == "vllm" else "echo"
    return route


def reference_files(
    inputs: Iterable[str],
    ref: str,
    *,
    output: str | None = None,
    options: ModelOptions | None = None,
    route: str = "auto",
    system: str | None = None,
    tools: list[dict[str, Any]] | None = None,
    on_error: OnError = "fail",
    template: str | None = None,
) -> RefReport:
    """Score every row of `inputs` under `ref` (a model spec) into `output`, in order.
    `template` (a tokenizer folder or a template file) renders the echo route's text
    through the reference model's chat template instead of ChatML."""
    opts = options or ModelOptions()
    render = load_renderer(template) if template else None
    client = client_for(ref, opts)
    chosen = pick_route(route, client.spec.provider)
    report = RefReport(model=client.spec.label, route=chosen)
    scorer: Any = _echo_turns if chosen == "echo" else _chat_turns
    if chosen == "echo" and render is not None:

        async def scorer(
            client: ModelClient, messages: list[dict[str, Any]], tools: Any
        ) -> list[Turn]:
            return await _template_turns(client, messages, tools, render)

    window = max(1, opts.concurrency)

    async def one(row: dict[str, Any]) -> tuple[dict[str, Any], list[Turn] | None, str | None]:
        try:
            messages = conversation(row, system)
        except Refused:
            return row, None, None
        if not any(m.get("role") == "assistant" for m in messages):
            return row, None, None
        try:
            return row, await scorer(client, messages, tools), None
        except Failure as exc:
            return row, None, str(exc) or type(exc).__name__

    def finish(row: dict[str, Any], turns: list[Turn] | None, error: str | None) -> dict:
        report.rows += 1
        if error is not None:
            report.failed += 1
            if len(report.errors) < MAX_ERRORS:
                report.errors.append(error)
            return row
        if turns is None:
            report.skipped += 1
            return row
        stamped, counts = stamp_reference(row, turns, report.model)
        report.scored += 1
        report.turns += len(turns)
        report.n_tokens += stamped["ref_n_tokens"]
        if counts is None:
            report.turns_unmatched += 1
        else:
            report.gaps.extend(abs(policy - ref) for policy, ref in counts)
        return stamped

    async def run(writer: RowWriter) -> None:
        pending: deque[asyncio.Task[Any]] = deque()
        try:
            for row in read_rows(inputs, on_error=on_error, stats=report.read):
                pending.append(asyncio.ensure_future(one(row)))
                if len(pending) >= window:
                    writer.write(finish(*await pending.popleft()))
            while pending:
                writer.write(finish(*await pending.popleft()))
        finally:
            for task in pending:
                task.cancel()
            await client.aclose()

    with RowWriter(output) as writer:
        asyncio.run(run(writer))
    report.client = client.stats.as_dict()
    return report
