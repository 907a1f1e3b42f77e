"""Tool calls written as text: `<tool_call>{"name": ..., "arguments": {...}}</tool_call>`.

Qwen, Hermes and most open chat templates render an assistant's tool call as a JSON
object between these tags, and a model trained on them writes its calls that way. A
server that hands the model's text to an OpenAI client (`serve-model`) and a reward that
grades a completion (an exported environment's `whileai_reward`) both need the calls out
of the text in the OpenAI wire shape; this is the one reader both use.

A block whose body is not a JSON object with a string `name` is not a call: it stays in
the text, so a model's half-written call reads as what it said, never as a call it did
not make. The text is cut at `MAX_TEXT_CHARS` first, so the work per completion is
bounded however long a policy rambles; the scan is `str.find`, never a regex.
"""

from __future__ import annotations

import json
from typing import Any

OPEN, CLOSE = "<tool_call>", "</tool_call>"
MAX_TEXT_CHARS = 32_000


def wire_call(name: str, arguments: Any, call_id: str) -> dict[str, Any]:
    """One call in the OpenAI wire shape: arguments as a JSON string."""
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments if arguments is not None else {})
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def split_tool_calls(text: str, *, prefix: str = "call_") -> tuple[str, list[dict[str, Any]]]:
    """(the text without its call blocks, the calls in the OpenAI wire shape). Ids are
    `prefix` + the call's index."""
    text = text[:MAX_TEXT_CHARS]
    kept: list[str] = []
    calls: list[dict[str, Any]] = []
    at = 0
    while (start := text.find(OPEN, at)) >= 0:
        end = text.find(CLOSE, start)
        if end < 0:
            break
        body = text[start + len(OPEN) : end].strip()
        try:
            parsed = json.loads(body)
        except json.JSONDecodeError:
            parsed = None
        if isinstance(parsed, dict) and isinstance(parsed.get("name"), str):
            kept.append(text[at:start])
            calls.append(
                wire_call(parsed["name"], parsed.get("arguments", {}), f"{prefix}{len(calls)}")
            )
        else:
            kept.append(text[at : end + len(CLOSE)])
        at = end + len(CLOSE)
    kept.append(text[at:])
    return "".join(kept).strip(), calls


def message_calls(message: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    """A chat message's text and its calls: the message's own `tool_calls` when it has
    them (arguments made JSON strings), else the calls written in its text."""
    text = message.get("content")
    text = text if isinstance(text, str) else ""
    calls = []
    for n, call in enumerate(message.get("tool_calls") or []):
        fn = call.get("function") or call
        calls.append(
            wire_call(str(fn.get("name") or ""), fn.get("arguments"), call.get("id") or f"call_{n}")
        )
    if calls:
        return text, calls
    return split_tool_calls(text)
