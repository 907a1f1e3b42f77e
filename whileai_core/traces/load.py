"""`load_traces`: any trace source, normalised to one shape.

A trace is a plain row: `prompt` (or `messages`) and `steps` are what matter, `reward`
is optional (ungraded traces still aim the grid, with less signal). Exports from other
stacks name things their own way, so the common variants are read too:

- `tool_trace` / `trace` for `steps`; a step's tool may be `tool`, `name`, `tool_name` or
  an OpenAI `function` object, its arguments `arguments` / `args` / `input` /
  `parameters` (a JSON string is decoded), its result `result` / `output` /
  `observation` / `response` / `content`;
- `final` / `output` / `response` for `final_text`;
- OpenAI-style `messages` with tool calls in either shape (the wire's nested `function`
  or the flat `name` + `arguments`), each call paired with its tool message by
  `tool_call_id`, or in order;
- rows built from OTLP spans (`whileai traces ingest`, `whileai serve`), whose verdict
  passes at 1.0 (the trace rule), so a 0.7 quality score reads as a fail;
- a `reward` given as `score`, `label`, or a boolean `passed` / `success`.

A row with neither an ask (a prompt or a user message) nor a tool step is dropped and
counted by reason. Sources: a JSONL path ('-' for stdin), a dataset id (`ds_…`),
`agent:NAME` (the traces ingested for that agent, `--since 7d` to narrow them),
`platform` (every ingested trace), or any iterable of dicts.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson

from ..errors import ConfigError
from ..row import call_function

_STEP_KEYS = ("steps", "tool_trace", "trace")
_FINAL_KEYS = ("final_text", "final", "output", "response")
_ARG_KEYS = ("arguments", "args", "input", "parameters")
_RESULT_KEYS = ("result", "output", "observation", "response", "content")
_TOOL_KEYS = ("tool", "name", "tool_name")
TRACE_PASS_AT = 1.0  # the trace rule (otlp.decode.PASS_AT): a score of 1.0 or above passes


@dataclass
class LoadedTraces:
    """The normalised traces, what was dropped and why, and where they came from."""

    source: str
    traces: list[dict[str, Any]] = field(default_factory=list)
    read: int = 0
    dropped: Counter[str] = field(default_factory=Counter)

    def prompts(self) -> list[str]:
        return [t["prompt"] for t in self.traces if t.get("prompt")]


def _decoded(value: Any) -> Any:
    if isinstance(value, str) and value.strip()[:1] in ("{", "["):
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            return value
    return value


def _text(value: Any) -> str | None:
    """A reply as text: a string, or the `content` / `text` of a message-like object."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        for key in ("content", "text"):
            if isinstance(value.get(key), str):
                return str(value[key])
    return None


def _first(row: dict[str, Any], keys: tuple[str, ...]) -> Any:
    return next((row[k] for k in keys if row.get(k) is not None), None)


def normal_step(step: Any) -> dict[str, Any] | None:
    """One step in the row vocabulary: a tool call with its result, or a text turn."""
    if not isinstance(step, dict):
        return None
    fn = call_function(step)
    tool = _first(fn, _TOOL_KEYS)
    if isinstance(tool, str) and tool and step.get("role") not in ("user", "assistant"):
        out = {"tool": tool, "arguments": _decoded(_first(fn, _ARG_KEYS)) or {}}
        out["result"] = _decoded(_first(step, _RESULT_KEYS))
        if out["result"] is None:
            out["result"] = {}
        return out
    text = _text(step.get("text")) or _text(step.get("content"))
    if text is None:
        return None
    return {"role": "user", "text": text} if step.get("role") == "user" else {"text": text}


def steps_from_messages(messages: list[Any]) -> list[dict[str, Any]]:
    """Steps rebuilt from an OpenAI-style transcript (after its first user message)."""
    steps: list[dict[str, Any]] = []
    pending: dict[str, dict[str, Any]] = {}  # call id -> its step
    order: list[dict[str, Any]] = []
    seen_user = False
    for message in messages:
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        content = _text(message.get("content")) if message.get("content") is not None else None
        if role == "user":
            if seen_user and content:
                steps.append({"role": "user", "text": content})
            seen_user = True
        elif role == "assistant":
            calls = message.get("tool_calls") or []
            if content and calls:
                steps.append({"text": content})
            for call in calls if isinstance(calls, list) else []:
                if not isinstance(call, dict):
                    continue
                fn = call_function(call)
                step = {"tool": str(fn.get("name") or ""),
                        "arguments": _decoded(fn.get("arguments")) or {}, "result": {}}  # fmt: skip
                steps.append(step)
                order.append(step)
                if call.get("id"):
                    pending[str(call["id"])] = step
            if content and not calls:
                steps.append({"text": content})
        elif role in ("tool", "function"):
            waiting = pending.pop(str(message.get("tool_call_id") or ""), None)
            if waiting is None:  # no id: the oldest call still waiting for its result
                waiting = next((s for s in order if s["result"] == {}), None)
            if waiting is not None:
                waiting["result"] = _decoded(message.get("content"))
    if steps and "text" in steps[-1] and "role" not in steps[-1]:
        steps.pop()  # the final reply is final_text, not a step
    return steps


def _reward(row: dict[str, Any]) -> float | None:
    for key in ("reward", "score", "label"):
        value = row.get(key)
        if isinstance(value, bool):
            return float(value)
        if isinstance(value, (int, float)):
            return float(value)
    scores = row.get("scores")
    if isinstance(scores, dict) and isinstance(scores.get("score"), (int, float)):
        return float(scores["score"])
    for key in ("passed", "success"):
        if isinstance(row.get(key), bool):
            return float(row[key])
    return None


def normal_trace(raw: Any) -> tuple[dict[str, Any] | None, str | None]:
    """(the trace in the canonical shape, None) or (None, why it was dropped)."""
    if not isinstance(raw, dict):
        return None, "not an object"
    row = {k: v for k, v in raw.items() if k not in (*_STEP_KEYS, *_FINAL_KEYS, "privileged")}
    messages = raw.get("messages") if isinstance(raw.get("messages"), list) else None
    prompt = raw.get("prompt") if isinstance(raw.get("prompt"), str) else None
    if not prompt and messages:
        prompt = next((_text(m.get("content")) for m in messages
                       if isinstance(m, dict) and m.get("role") == "user"), None)  # fmt: skip
    raw_steps = _first(raw, _STEP_KEYS)
    steps = [s for s in map(normal_step, raw_steps) if s] if isinstance(raw_steps, list) else []
    if not steps and messages:
        steps = steps_from_messages(messages)
    final = next((t for t in map(_text, (raw.get(k) for k in _FINAL_KEYS)) if t is not None), None)
    if final is None and messages:
        final = next((_text(m.get("content")) for m in reversed(messages)
                      if isinstance(m, dict) and m.get("role") == "assistant"
                      and _text(m.get("content"))), None)  # fmt: skip
    if not (prompt and prompt.strip()) and not any("tool" in s for s in steps):
        return None, "neither an ask nor a tool step"
    row["prompt"] = (prompt or "").strip()
    row["steps"] = steps
    row["final_text"] = final or ""
    reward = _reward(raw)
    if reward is not None and raw.get("judge_name") == "trace-score":
        reward = 1.0 if reward >= TRACE_PASS_AT else 0.0
    row.pop("reward", None)
    if reward is not None:
        row["reward"] = reward
    return row, None


def _source_rows(source: str, since: str | None) -> Iterator[dict[str, Any]]:
    from ..store.source import iter_source_rows

    platform = source == "platform" or source.startswith("agent:")
    if not platform:
        if since:
            raise ConfigError("--since narrows ingested traces: use it with agent:NAME")
        yield from iter_source_rows(source, check=False)
        return
    from ..store import iter_all_traces, open_store
    from ..store.base import parse_since

    agent = source.split(":", 1)[1] if source.startswith("agent:") else None
    if agent is not None and not agent:
        raise ConfigError("agent:NAME needs the agent's name")
    store = open_store()
    try:
        for trace in iter_all_traces(store, agent=agent, since=parse_since(since)):
            yield {k: v for k, v in trace.items() if k != "traceId"}
    finally:
        store.close()


def load_traces(
    source: str | Iterable[dict[str, Any]], *, since: str | None = None
) -> LoadedTraces:
    """Read and normalise every trace of `source`; see the module docstring."""
    label = source if isinstance(source, str) else "traces"
    rows = _source_rows(source, since) if isinstance(source, str) else iter(source)
    loaded = LoadedTraces(source=label)
    for raw in rows:
        loaded.read += 1
        trace, why = normal_trace(raw)
        if trace is None:
            loaded.dropped[why or "unreadable"] += 1
        else:
            loaded.traces.append(trace)
    return loaded


def as_trace(row: dict[str, Any]) -> dict[str, Any]:
    """A graded row in the trace shape `simulate --traces` reads: what the agent was asked,
    did and said, its verdict, and the cell it was on when the row says (never its
    privileged block)."""
    keep = ("prompt", "steps", "final_text", "reward", "scenario_id", "scenario_dimensions",
            "faults_fired", "judge_name", "reason", "model_version")  # fmt: skip
    return {k: row[k] for k in keep if k in row}
