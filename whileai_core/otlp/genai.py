"""The conversation a trace's model calls carried, whichever GenAI instrumentation sent it.

Agents ship four shapes of telemetry today, and each model call (a span, with the span
events and log records that belong to it) is read in whichever it uses:

- current OpenTelemetry GenAI conventions: `gen_ai.input.messages` /
  `gen_ai.output.messages` (role + `parts`: `text`, `tool_call`, `tool_call_response`),
  `gen_ai.system_instructions`, `gen_ai.tool.definitions`; as span attributes, or as the
  attributes of a `gen_ai.client.inference.operation.details` event (a log record);
- the older per-message events `gen_ai.system.message`, `gen_ai.user.message`,
  `gen_ai.assistant.message`, `gen_ai.tool.message` and `gen_ai.choice` (span events or
  log records), `gen_ai.content.prompt` / `.completion` events, and the deprecated
  `gen_ai.prompt` / `gen_ai.completion` attributes holding a JSON message list;
- OpenInference (Arize Phoenix): `llm.input_messages.N.message.*`,
  `llm.output_messages.N.message.*`, `llm.tools.N.tool.json_schema`;
- OpenLLMetry's flattened `gen_ai.prompt.N.*` / `gen_ai.completion.N.*` and
  `llm.request.functions.N.*`.

Every shape becomes OpenAI chat messages (what rows carry): `role`, `content`,
`tool_calls` (`{"id", "type": "function", "function": {"name", "arguments"}}`, arguments a
JSON string) and `tool_call_id`. Each call of an agent run sends the whole history, so the
run's conversation is its last call's input followed by that call's first output.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import orjson

Span = dict[str, Any]
Message = dict[str, Any]
Tool = dict[str, Any]

# Flattened keys nest at most this deep (`llm.input_messages.2.message.tool_calls.0.
# tool_call.function.arguments` is 8 below its prefix); deeper keys are not a shape we read.
_MAX_KEY_PARTS = 12
# An event's role by its name (the older per-message conventions).
_EVENT_ROLES = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}
DETAILS_EVENT = "gen_ai.client.inference.operation.details"


@dataclass
class Call:
    """One model call: what it was sent and what it answered."""

    start: int
    key: str
    inputs: list[Message] = field(default_factory=list)
    outputs: list[Message] = field(default_factory=list)
    system: str | None = None
    tools: list[Tool] = field(default_factory=list)

    def empty(self) -> bool:
        return not (self.inputs or self.outputs)


@dataclass
class Conversation:
    """What a trace's model calls carried: the run's messages (system prompt first when
    one was sent), the tool schemas offered, and the system prompt on its own."""

    messages: list[Message]
    tools: list[Tool]
    system_prompt: str | None


def conversation(spans: Iterable[Span], logs: Iterable[Span] = ()) -> Conversation | None:
    """The trace's conversation, or None when no call in it carried messages."""
    calls = model_calls(spans, logs)
    filled = [c for c in calls if not c.empty()]
    if not filled:
        return None
    last = filled[-1]
    outputs = [m for m in last.outputs if m.get("role") == "assistant"][:1] or last.outputs[:1]
    messages = pair_tool_results([*last.inputs, *outputs])
    system = last.system or next((c.system for c in reversed(calls) if c.system), None)
    if system and not (messages and messages[0].get("role") == "system"):
        messages.insert(0, {"role": "system", "content": system})
    if messages and messages[0].get("role") == "system":
        system = _string(messages[0].get("content"))
    tools: dict[str, Tool] = {}
    for call in calls:  # a later call's schema of a tool replaces an earlier one
        for tool in call.tools:
            tools[tool["function"]["name"]] = tool
    return Conversation(messages=messages, tools=list(tools.values()), system_prompt=system)


def model_calls(spans: Iterable[Span], logs: Iterable[Span] = ()) -> list[Call]:
    """Each span read as a model call, with its span events and the log records that name
    it; log records whose span has not arrived form a call of their own."""
    by_span: dict[str, list[Span]] = {}
    for n, entry in enumerate(logs):
        by_span.setdefault(entry.get("parentSpanId") or "", []).append({**entry, "_n": n})
    calls: list[Call] = []
    for span in spans:
        call = Call(start=int(span.get("start") or 0), key=str(span.get("spanId") or ""))
        _read_attributes(call, span.get("attributes") or {})
        events = [
            {"name": e.get("name"), "time": e.get("time") or 0, "attributes": e.get("attributes")}
            for e in span.get("events") or []
            if isinstance(e, dict)
        ]
        events += [_log_event(e) for e in by_span.pop(call.key, [])] if call.key else []
        _read_events(call, events)
        calls.append(call)
    for key, entries in by_span.items():
        first = min(int(e.get("start") or 0) for e in entries)
        call = Call(start=first, key=key or "~")
        _read_events(call, [_log_event(e) for e in entries])
        calls.append(call)
    calls.sort(key=lambda c: (c.start, c.key))
    return calls


def _log_event(entry: Span) -> dict[str, Any]:
    return {
        "name": entry.get("name") or (entry.get("attributes") or {}).get("event.name"),
        "time": entry.get("start") or 0,
        "n": entry.get("_n", 0),
        "attributes": entry.get("attributes") or {},
        "body": entry.get("body"),
    }


# --- span attributes ----------------------------------------------------------------


def _read_attributes(call: Call, attrs: dict[str, Any]) -> None:
    """Whichever attribute shape the span carries; the current conventions win."""
    inputs = _message_list(attrs.get("gen_ai.input.messages"))
    outputs = _message_list(attrs.get("gen_ai.output.messages"))
    if not inputs:
        inputs = _nested_messages(attrs, "llm.input_messages.") or _nested_messages(
            attrs, "gen_ai.prompt."
        )
    if not outputs:
        outputs = _nested_messages(attrs, "llm.output_messages.") or _nested_messages(
            attrs, "gen_ai.completion."
        )
    if not inputs:  # deprecated: a JSON message list in `gen_ai.prompt`
        inputs = _message_list(attrs.get("gen_ai.prompt"), json_only=True)
    if not outputs:
        outputs = _message_list(attrs.get("gen_ai.completion"), json_only=True)
    call.inputs = call.inputs or inputs
    call.outputs = call.outputs or [_as_output(m) for m in outputs]
    call.system = call.system or _system_text(attrs.get("gen_ai.system_instructions"))
    call.tools = call.tools or (
        _tool_list(attrs.get("gen_ai.tool.definitions"))
        or _openinference_tools(attrs)
        or _flattened_functions(attrs)
    )


def _decoded(value: Any) -> Any:
    if isinstance(value, str) and value[:1] in ("[", "{"):
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            return value
    return value


def _message_list(value: Any, json_only: bool = False) -> list[Message]:
    """A list of messages in either the conventions' shape (`parts`) or OpenAI's."""
    if json_only and not isinstance(value, str):
        return []
    value = _decoded(value)
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list):
        return []
    out: list[Message] = []
    for item in value:
        if isinstance(item, dict):
            out += _messages_of(item)
    return out


def _messages_of(item: dict[str, Any]) -> list[Message]:
    """One message of any shape -> OpenAI messages (a tool turn with several responses is
    one tool message per response)."""
    if isinstance(item.get("message"), dict):  # a choice: {"index", "message", ...}
        merged = {**item["message"]}
        if item.get("tool_calls") and not merged.get("tool_calls"):
            merged["tool_calls"] = item["tool_calls"]
        merged.setdefault("role", "assistant")
        item = merged
    role = item.get("role")
    role = role if isinstance(role, str) and role else "assistant"
    parts = item.get("parts")
    if isinstance(parts, list):
        return _from_parts(role, parts)
    return _openai(
        role,
        _text(item.get("content")),
        _tool_calls(item.get("tool_calls")),
        item.get("tool_call_id") or (item.get("id") if role == "tool" else None),
        item.get("name") if role == "tool" else None,
    )


def _from_parts(role: str, parts: list[Any]) -> list[Message]:
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    responses: list[Message] = []
    for part in parts:
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind == "text" or (kind is None and "content" in part):
            texts.append(_string(part.get("content", part.get("text"))))
        elif kind == "tool_call":
            calls.append(_call(part.get("id"), part.get("name"), part.get("arguments")))
        elif kind == "tool_call_response":
            result = part.get("response", part.get("result"))
            responses += _openai("tool", _string(result), [], part.get("id"), None)
    if responses:
        return responses
    return _openai(role, "".join(texts), calls, None, None)


def _openai(
    role: str, content: str, calls: list[dict[str, Any]], call_id: Any, name: Any
) -> list[Message]:
    message: Message = {"role": role, "content": content}
    if calls:
        message["tool_calls"] = calls
    if isinstance(call_id, str) and call_id:
        message["tool_call_id"] = call_id
    if isinstance(name, str) and name:
        message["name"] = name
    if role != "tool" and not content and not calls:
        return []  # an empty turn (a reasoning-only or blob part) carries nothing to train on
    return [message]


def _tool_calls(value: Any) -> list[dict[str, Any]]:
    value = _decoded(value)
    if isinstance(value, dict):  # a flattened list: {0: {...}, 1: {...}}
        value = [value[k] for k in sorted(value, key=_index)]
    out = []
    for raw in value if isinstance(value, list) else []:
        if not isinstance(raw, dict):
            continue
        raw = raw.get("tool_call", raw)  # OpenInference nests each under `tool_call`
        fn = raw.get("function") if isinstance(raw.get("function"), dict) else raw
        name = fn.get("name")
        if isinstance(name, str) and name:
            out.append(_call(raw.get("id"), name, fn.get("arguments")))
    return out


def _call(call_id: Any, name: Any, arguments: Any) -> dict[str, Any]:
    if not isinstance(arguments, str):
        arguments = orjson.dumps(arguments if arguments is not None else {}).decode()
    call: dict[str, Any] = {
        "type": "function",
        "function": {"name": str(name or ""), "arguments": arguments},
    }
    if isinstance(call_id, str) and call_id.strip():
        call = {"id": call_id.strip(), **call}
    return call


def _as_output(message: Message) -> Message:
    return message if message.get("role") else {**message, "role": "assistant"}


def _string(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else orjson.dumps(value).decode()


def _text(content: Any) -> str:
    """Content as text: a string, or the text of a list of content parts."""
    parts = _decoded(content) if isinstance(content, str) else content
    if (
        isinstance(parts, list)
        and parts
        and all(isinstance(p, dict) and "type" in p for p in parts)
    ):
        return "".join(
            _string(p.get("text", p.get("content")))
            for p in parts
            if p.get("type") in ("text", "input_text", "output_text")
        )
    return content if isinstance(content, str) else _string(content)


def _system_text(value: Any) -> str | None:
    value = _decoded(value)
    if isinstance(value, str):
        return value or None
    if isinstance(value, list):
        text = "\n".join(
            _string(p.get("content", p.get("text")))
            for p in value
            if isinstance(p, dict) and p.get("type", "text") == "text"
        )
        return text or None
    return None


# --- flattened attributes (OpenInference, OpenLLMetry) ------------------------------------


def _index(key: Any) -> int:
    return int(key) if isinstance(key, str) and key.isdigit() else 1 << 30


def nested(attrs: dict[str, Any], prefix: str) -> dict[str, Any]:
    """`prefix.0.message.role = "user"` and its siblings as `{"0": {"message": {"role":
    "user"}}}`: dotted keys under `prefix`, split into a tree."""
    tree: dict[str, Any] = {}
    for key, value in attrs.items():
        if not key.startswith(prefix):
            continue
        path = key[len(prefix) :].split(".", _MAX_KEY_PARTS)
        if len(path) > _MAX_KEY_PARTS or not path[0].isdigit():
            continue
        node = tree
        for part in path[:-1]:
            child = node.get(part)
            if not isinstance(child, dict):
                child = node[part] = {}
            node = child
        node[path[-1]] = value
    return tree


def _nested_messages(attrs: dict[str, Any], prefix: str) -> list[Message]:
    tree = nested(attrs, prefix)
    out: list[Message] = []
    for index in sorted(tree, key=_index):
        entry = tree[index]
        if not isinstance(entry, dict):
            continue
        message = entry.get("message", entry)  # OpenInference: N.message.*
        if not isinstance(message, dict):
            continue
        contents = message.get("contents")
        if message.get("content") is None and isinstance(contents, dict):
            message = {**message, "content": _openinference_contents(contents)}
        out += _messages_of({k: v for k, v in message.items() if k != "contents"})
    return out


def _openinference_contents(contents: dict[str, Any]) -> str:
    texts = []
    for index in sorted(contents, key=_index):
        part = contents[index]
        part = part.get("message_content", part) if isinstance(part, dict) else {}
        if isinstance(part, dict) and part.get("type", "text") == "text":
            texts.append(_string(part.get("text")))
    return "".join(texts)


# --- tools ------------------------------------------------------------------------------


def openai_tool(raw: Any) -> Tool | None:
    """A tool schema in OpenAI's shape, from either it or the conventions' flat one."""
    raw = _decoded(raw)
    if not isinstance(raw, dict):
        return None
    inner = raw.get("function")
    fn: dict[str, Any] = inner if isinstance(inner, dict) else raw
    name = fn.get("name")
    if not isinstance(name, str) or not name:
        return None
    out: dict[str, Any] = {"name": name}
    if isinstance(fn.get("description"), str):
        out["description"] = fn["description"]
    parameters = _decoded(fn.get("parameters"))
    out["parameters"] = parameters if isinstance(parameters, dict) else {"type": "object"}
    return {"type": "function", "function": out}


def _tool_list(value: Any) -> list[Tool]:
    value = _decoded(value)
    if not isinstance(value, list):
        return []
    return [t for t in (openai_tool(v) for v in value) if t is not None]


def _openinference_tools(attrs: dict[str, Any]) -> list[Tool]:
    tree = nested(attrs, "llm.tools.")
    tools = []
    for index in sorted(tree, key=_index):
        entry = tree[index]
        tool = entry.get("tool", entry) if isinstance(entry, dict) else {}
        schema = openai_tool(tool.get("json_schema")) if isinstance(tool, dict) else None
        if schema is None and isinstance(tool, dict):
            schema = openai_tool(tool)
        if schema is not None:
            tools.append(schema)
    return tools


def _flattened_functions(attrs: dict[str, Any]) -> list[Tool]:
    tree = nested(attrs, "llm.request.functions.")
    return [t for t in (openai_tool(tree[i]) for i in sorted(tree, key=_index)) if t]


# --- events (span events and log records) ------------------------------------------------


def _read_events(call: Call, events: list[dict[str, Any]]) -> None:
    """Events in time order: a details event is read like span attributes; per-message
    events append to the call's input, `gen_ai.choice` to its output."""
    events = sorted(events, key=lambda e: (int(e.get("time") or 0), int(e.get("n") or 0)))
    inputs: list[Message] = []
    outputs: list[Message] = []
    for event in events:
        name = str(event.get("name") or "")
        attrs = event.get("attributes") or {}
        body = event.get("body")
        if name == DETAILS_EVENT or "gen_ai.input.messages" in attrs:
            _read_attributes(call, attrs)
        elif name in _EVENT_ROLES:
            inputs += _messages_of({"role": _EVENT_ROLES[name], **_event_fields(body, attrs)})
        elif name == "gen_ai.choice":
            outputs += [_as_output(m) for m in _messages_of(_event_fields(body, attrs))]
        elif name == "gen_ai.content.prompt":
            inputs += _message_list(attrs.get("gen_ai.prompt"))
        elif name == "gen_ai.content.completion":
            outputs += _message_list(attrs.get("gen_ai.completion"))
    call.inputs = call.inputs or inputs
    call.outputs = call.outputs or outputs


def _event_fields(body: Any, attrs: dict[str, Any]) -> dict[str, Any]:
    """An event's message fields: its body (a map), else its attributes (older SDKs)."""
    body = _decoded(body)
    if isinstance(body, dict):
        return body
    fields = {  # span events carry no body: the fields are attributes, nested ones as JSON
        k: _decoded(v) if k in ("message", "tool_calls") else v
        for k, v in attrs.items()
        if not k.startswith(("gen_ai.", "event."))
    }
    if isinstance(body, str):
        fields.setdefault("content", body)
    return fields


# --- the run's tool steps -----------------------------------------------------------------


def pair_tool_results(messages: list[Message]) -> list[Message]:
    """Tool messages that arrived without the id of the call they answer (the older
    per-message events carry none) take the next unanswered call's id, in order."""
    pending: list[str] = []
    out = []
    for message in messages:
        if message.get("role") == "assistant":
            pending = [c["id"] for c in message.get("tool_calls") or [] if c.get("id")]
        elif message.get("role") == "tool":
            call_id = message.get("tool_call_id")
            if call_id in pending:
                pending.remove(call_id)
            elif call_id is None and pending:
                message = {**message, "tool_call_id": pending.pop(0)}
        out.append(message)
    return out


def steps_of(messages: list[Message]) -> list[dict[str, Any]]:
    """The run's tool steps (`tool`, `arguments`, `result`) read off its messages: each
    call with the tool message that answered it."""
    results = {
        m.get("tool_call_id"): m.get("content")
        for m in messages
        if m.get("role") == "tool" and m.get("tool_call_id")
    }
    steps = []
    for message in messages:
        if message.get("role") != "assistant":
            continue
        for call in message.get("tool_calls") or []:
            fn = call["function"]
            result = _decoded(results.get(call.get("id"), {}))
            steps.append({"tool": fn["name"], "arguments": _decoded(fn["arguments"]),
                          "result": result})  # fmt: skip
    return steps
