"""A row's conversation in the shape a trainer reads, and the checks every export shares.

Rows carry assistant tool calls in either the OpenAI wire shape or the SDK's flat
`{"name", "arguments"}` shape, and some rows carry only `steps`. Everything here turns
them into one wire shape, `{"id", "type": "function", "function": {"name", "arguments"}}`,
with `arguments` encoded one of two ways:

- `json_string` (the OpenAI API wire): `arguments` is a JSON-encoded string.
- `dict` (TRL / HF chat templates): `arguments` is an object. Templates render it with
  `| tojson`, so a pre-encoded string would be quoted twice and the student would learn
  to emit a string where an object belongs.

The privileged block never leaves: samples are stripped at any depth, and a sample whose
bytes still contain the word or one of the row's own privileged strings is refused.
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass, field
from typing import Any, Literal

import orjson

from ..errors import Refused
from ..row import call_function
from ..row.privileged import carries_privileged, leaks_answer_key, strip_privileged

Encoding = Literal["json_string", "dict"]
Row = dict[str, Any]
Message = dict[str, Any]

_MESSAGE_KEYS = ("role", "content", "name", "tool_calls", "tool_call_id")


@dataclass
class RoundTrip:
    """The tool-call round-trip check: every exported call decodes back to the same object."""

    encoding: Encoding
    checked: int = 0
    invalid: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {"encoding": self.encoding, "checked": self.checked, "invalid": self.invalid}


@dataclass
class Counters:
    """Counts every export keeps, whatever it writes."""

    rows_in: int = 0
    refused: dict[str, int] = field(default_factory=dict)
    rebuilt_from_steps: int = 0
    tool_outputs_truncated: int = 0
    tool_output_chars_cut: int = 0

    def refuse(self, reason: str) -> None:
        self.refused[reason] = self.refused.get(reason, 0) + 1

    def summary(self) -> dict[str, Any]:
        """The keys every export report starts with: rows read, refused, rebuilt."""
        return {
            "rows_in": self.rows_in,
            "refused": dict(self.refused),
            "rebuilt_from_steps": self.rebuilt_from_steps,
        }


@dataclass
class ExportReport:
    """What every export counts, whatever it writes: rows read, refused and rebuilt, the
    tool-call round trip, warnings. Subclasses add their own figures."""

    format: str
    _: KW_ONLY
    counters: Counters = field(default_factory=Counters)
    roundtrip: RoundTrip = field(default_factory=lambda: RoundTrip("json_string"))
    warnings: list[str] = field(default_factory=list)

    def common(self) -> dict[str, Any]:
        return {
            **self.counters.summary(),
            "tool_call_roundtrip": self.roundtrip.as_dict(),
            "warnings": list(self.warnings),
        }


def ask_of(row: Row, messages: list[Message]) -> str:
    """The ask: the row's `prompt`, else its first user message."""
    prompt = row.get("prompt")
    if isinstance(prompt, str) and prompt:
        return prompt
    for message in messages:
        if message.get("role") == "user" and isinstance(message.get("content"), str):
            return str(message["content"])
    return ""


def raw_conversation(row: Row, counters: Counters) -> list[Message]:
    """The row's messages, or messages rebuilt from its steps when it has none."""
    messages = row.get("messages")
    if messages:
        return [dict(m) for m in messages if isinstance(m, dict)]
    rebuilt = messages_from_steps(row)
    if not rebuilt:
        raise Refused("no_conversation")
    counters.rebuilt_from_steps += 1
    return rebuilt


def messages_from_steps(row: Row) -> list[Message]:
    """Chat messages from `prompt`, `steps` and `final_text` (one assistant turn per step)."""
    steps = [s for s in row.get("steps") or [] if isinstance(s, dict)]
    prompt = row.get("prompt")
    out: list[Message] = []
    first_is_user = bool(steps) and steps[0].get("role") == "user"
    if isinstance(prompt, str) and prompt and not first_is_user:
        out.append({"role": "user", "content": prompt})
    for i, step in enumerate(steps):
        text = step.get("text")
        if step.get("tool") is not None:
            call_id = f"call_{i}"
            out.append(
                {
                    "role": "assistant",
                    "content": text if isinstance(text, str) else "",
                    "tool_calls": [
                        {
                            "id": call_id,
                            "type": "function",
                            "function": {"name": step["tool"], "arguments": step.get("arguments")},
                        }
                    ],
                }
            )
            result = step.get("result")
            content = result if isinstance(result, str) else orjson.dumps(result).decode()
            out.append(
                {"role": "tool", "tool_call_id": call_id, "name": step["tool"], "content": content}
            )
        elif step.get("role") == "user":
            out.append({"role": "user", "content": text if isinstance(text, str) else ""})
        elif isinstance(text, str) and text:
            out.append({"role": "assistant", "content": text})
    final = row.get("final_text")
    if isinstance(final, str) and final:
        last = out[-1] if out else None
        if not (last and last.get("role") == "assistant" and last.get("content") == final):
            out.append({"role": "assistant", "content": final})
    if not any(m["role"] == "assistant" for m in out):
        return []
    return out


def wire_messages(
    messages: list[Message],
    encoding: Encoding,
    roundtrip: RoundTrip,
    *,
    max_tool_output_chars: int | None,
    counters: Counters,
) -> tuple[list[Message], int]:
    """Messages in the wire shape with `encoding`; returns them and the tool outputs cut."""
    out: list[Message] = []
    pending: list[tuple[str, str]] = []  # (call id, tool name) awaiting a tool message
    cuts = 0
    for index, raw in enumerate(messages):
        message: Message = {k: raw[k] for k in _MESSAGE_KEYS if raw.get(k) is not None}
        role = message.get("role")
        if not isinstance(role, str):
            raise Refused("bad_message")
        message["content"] = _text(raw.get("content"))
        if role == "assistant" and raw.get("tool_calls"):
            calls = [
                _wire_call(c, index, j, encoding, roundtrip)
                for j, c in enumerate(raw["tool_calls"])
            ]
            message["tool_calls"] = calls
            pending = [(c["id"], c["function"]["name"]) for c in calls]
        elif role == "tool":
            if "tool_call_id" not in message and pending:
                name = message.get("name")
                match = next((p for p in pending if p[1] == name), pending[0])
                pending.remove(match)
                message["tool_call_id"] = match[0]
            if "name" not in message:  # OpenAI's lines drop it; templates may render it
                answered = next((p for p in pending if p[0] == message["tool_call_id"]), None)
                if answered is not None:
                    message["name"] = answered[1]
            if max_tool_output_chars is not None:
                content = message["content"]
                if len(content) > max_tool_output_chars:
                    cut = len(content) - max_tool_output_chars
                    message["content"] = (
                        f"{content[:max_tool_output_chars]}\n"
                        f"[... {cut} chars of tool output truncated]"
                    )
                    cuts += 1
                    counters.tool_outputs_truncated += 1
                    counters.tool_output_chars_cut += cut
        out.append(message)
    return out, cuts


def _text(content: Any) -> str:
    """Content as one string: text parts joined, other objects JSON-encoded, None as ''."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            p.get("text", "") if isinstance(p, dict) else str(p)
            for p in content
            if not isinstance(p, dict) or p.get("type", "text") == "text"
        ]
        return "".join(str(p) for p in parts)
    return orjson.dumps(content).decode()


def _wire_call(
    call: Any, message_index: int, j: int, encoding: Encoding, roundtrip: RoundTrip
) -> dict[str, Any]:
    if not isinstance(call, dict):
        raise Refused("bad_tool_call")
    function = call_function(call)
    name = function.get("name")
    if not isinstance(name, str) or not name:
        raise Refused("bad_tool_call")
    arguments = _arguments_object(function.get("arguments"))
    encoded: Any = orjson.dumps(arguments).decode() if encoding == "json_string" else arguments
    roundtrip.checked += 1
    if not _round_trips(encoded, arguments, encoding):
        roundtrip.invalid += 1
        raise Refused("bad_tool_call")
    call_id = call.get("id")
    return {
        "id": call_id if isinstance(call_id, str) and call_id else f"call_{message_index}_{j}",
        "type": "function",
        "function": {"name": name, "arguments": encoded},
    }


def _arguments_object(arguments: Any) -> dict[str, Any]:
    if arguments is None or arguments == "":
        return {}
    if isinstance(arguments, str):
        try:
            arguments = orjson.loads(arguments)
        except orjson.JSONDecodeError:
            raise Refused("bad_tool_call") from None
    if not isinstance(arguments, dict):
        raise Refused("bad_tool_call")
    return arguments


def _round_trips(encoded: Any, arguments: dict[str, Any], encoding: Encoding) -> bool:
    try:
        if encoding == "json_string":
            return isinstance(encoded, str) and orjson.loads(encoded) == arguments
        return isinstance(encoded, dict) and orjson.loads(orjson.dumps(encoded)) == arguments
    except (orjson.JSONDecodeError, orjson.JSONEncodeError):
        return False


def guard_privileged(row: Row) -> None:
    """Refuse a row that leaks its answer key before building anything: the one check
    (`privileged.leaks_answer_key`) the judge's `no_leak` and push ask, so the rows the
    judge fails for a leak are the rows export refuses."""
    if leaks_answer_key(row):
        raise Refused("quotes_privileged")


def scrub(sample: dict[str, Any]) -> dict[str, Any]:
    """The sample with `privileged` removed at any depth; refused if any of it still shows
    (`privileged.carries_privileged`: a key, or the word in text no decoder could take
    apart), the test push and the server's finalize run on what they store."""
    clean: dict[str, Any] = strip_privileged(sample)
    if carries_privileged(clean):
        raise Refused("privileged_residue")
    return clean
