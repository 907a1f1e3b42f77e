"""OpenAI's fine-tuning line formats, written and checked strictly.

Two documented line shapes (the fine-tuning file of a chat model):

- supervised: `{"messages": [...], "tools": [...], "parallel_tool_calls": bool}` and no other
  key. Assistant messages may carry `weight` (0 or 1: whether that turn is trained on);
  an assistant turn that calls tools has `content: null`; a tool message is `role`,
  `tool_call_id` and `content` (no `name`); `function.arguments` is a JSON string.
- preference (DPO): `{"input": {"messages", "tools", "parallel_tool_calls"},
  "preferred_output": [one assistant message], "non_preferred_output": [one]}`.

`line_problems(line)` checks a line against these with `jsonschema` (unknown keys
anywhere are problems: the check is meant to catch a file a trainer would reject or
misread) and then what a schema cannot say: every tool call is answered by a tool
message with its id, arguments decode to a JSON object, called tools are among the
line's `tools`, and a supervised line trains at least one assistant turn. The deprecated
`functions` / `function_call` keys are not accepted: tools replaced them.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import orjson
from jsonschema import Draft202012Validator

from .conversation import Message

_TEXT_PARTS = {
    "type": "array",
    "minItems": 1,
    "items": {
        "type": "object",
        "additionalProperties": False,
        "required": ["type", "text"],
        "properties": {"type": {"const": "text"}, "text": {"type": "string"}},
    },
}
_USER_PARTS = {
    "type": "array",
    "minItems": 1,
    "items": {
        "oneOf": [
            _TEXT_PARTS["items"],
            {
                "type": "object",
                "additionalProperties": False,
                "required": ["type", "image_url"],
                "properties": {
                    "type": {"const": "image_url"},
                    "image_url": {
                        "type": "object",
                        "additionalProperties": False,
                        "required": ["url"],
                        "properties": {
                            "url": {"type": "string"},
                            "detail": {"enum": ["auto", "low", "high"]},
                        },
                    },
                },
            },
        ]
    },
}
_TOOL_CALL = {
    "type": "object",
    "additionalProperties": False,
    "required": ["id", "type", "function"],
    "properties": {
        "id": {"type": "string", "minLength": 1},
        "type": {"const": "function"},
        "function": {
            "type": "object",
            "additionalProperties": False,
            "required": ["name", "arguments"],
            "properties": {"name": {"type": "string"}, "arguments": {"type": "string"}},
        },
    },
}


def _message_schemas(*, weighted: bool) -> dict[str, Any]:
    assistant_props: dict[str, Any] = {
        "role": {"const": "assistant"},
        "content": {"anyOf": [{"type": "string"}, {"type": "null"}, _TEXT_PARTS]},
        "refusal": {"type": ["string", "null"]},
        "name": {"type": "string"},
        "tool_calls": {"type": "array", "minItems": 1, "items": _TOOL_CALL},
    }
    if weighted:
        assistant_props["weight"] = {"enum": [0, 1]}
    assistant = {
        "type": "object",
        "additionalProperties": False,
        "required": ["role"],
        "properties": assistant_props,
        # Content may be null only when the turn calls tools.
        "anyOf": [
            {"required": ["tool_calls"]},
            {"required": ["content"], "properties": {"content": {"not": {"type": "null"}}}},
        ],
    }

    def plain(role: str, content: dict[str, Any]) -> dict[str, Any]:
        return {
            "type": "object",
            "additionalProperties": False,
            "required": ["role", "content"],
            "properties": {"role": {"const": role}, "content": content, "name": {"type": "string"}},
        }

    text = {"anyOf": [{"type": "string"}, _TEXT_PARTS]}
    tool = {
        "type": "object",
        "additionalProperties": False,
        "required": ["role", "content", "tool_call_id"],
        "properties": {
            "role": {"const": "tool"},
            "content": text,
            "tool_call_id": {"type": "string", "minLength": 1},
        },
    }
    return {
        "system": plain("system", text),
        "developer": plain("developer", text),
        "user": plain("user", {"anyOf": [{"type": "string"}, _USER_PARTS]}),
        "assistant": assistant,
        "tool": tool,
    }


_TOOLS = {
    "type": "array",
    "items": {
        "type": "object",
        "additionalProperties": False,
        "required": ["type", "function"],
        "properties": {
            "type": {"const": "function"},
            "function": {
                "type": "object",
                "additionalProperties": False,
                "required": ["name"],
                "properties": {
                    "name": {"type": "string", "pattern": "^[a-zA-Z0-9_-]{1,64}$"},
                    "description": {"type": "string"},
                    "parameters": {"type": "object"},
                    "strict": {"type": ["boolean", "null"]},
                },
            },
        },
    },
}


def _messages(weighted: bool) -> dict[str, Any]:
    schemas = _message_schemas(weighted=weighted)
    return {
        "type": "array",
        "minItems": 1,
        "items": {
            "type": "object",
            "required": ["role"],
            "properties": {"role": {"enum": sorted(schemas)}},
            "allOf": [
                {"if": {"properties": {"role": {"const": role}}}, "then": schema}
                for role, schema in schemas.items()
            ],
        },
    }


SUPERVISED_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "additionalProperties": False,
    "required": ["messages"],
    "properties": {
        "messages": _messages(weighted=True),
        "tools": _TOOLS,
        "parallel_tool_calls": {"type": "boolean"},
    },
}
_ONE_ASSISTANT = {
    "type": "array",
    "minItems": 1,
    "maxItems": 1,
    "items": _message_schemas(weighted=False)["assistant"],
}
PREFERENCE_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "additionalProperties": False,
    "required": ["input", "preferred_output", "non_preferred_output"],
    "properties": {
        "input": {
            "type": "object",
            "additionalProperties": False,
            "required": ["messages"],
            "properties": {
                "messages": _messages(weighted=False),
                "tools": _TOOLS,
                "parallel_tool_calls": {"type": "boolean"},
            },
        },
        "preferred_output": _ONE_ASSISTANT,
        "non_preferred_output": _ONE_ASSISTANT,
    },
}


@lru_cache(maxsize=2)
def _validator(kind: str) -> Draft202012Validator:
    schema = PREFERENCE_SCHEMA if kind == "preference" else SUPERVISED_SCHEMA
    return Draft202012Validator(schema)


def line_problems(line: Any) -> list[str]:
    """Why `line` is not a valid OpenAI fine-tuning line (supervised or preference), or []."""
    kind = "preference" if isinstance(line, dict) and "input" in line else "supervised"
    problems = [
        f"{'/'.join(map(str, error.absolute_path)) or '<line>'}: {error.message}"
        for error in sorted(_validator(kind).iter_errors(line), key=lambda e: list(e.path))
    ]
    if problems:
        return problems
    if kind == "preference":
        body = line["input"]
        outputs = [*line["preferred_output"], *line["non_preferred_output"]]
        return _conversation_problems(body["messages"], body.get("tools"), outputs, trains=False)
    return _conversation_problems(line["messages"], line.get("tools"), [], trains=True)


def _conversation_problems(
    messages: list[Message], tools: list[Any] | None, outputs: list[Message], *, trains: bool
) -> list[str]:
    problems: list[str] = []
    names = {t["function"]["name"] for t in tools or []}
    open_calls: dict[str, str] = {}
    for index, message in enumerate([*messages, *outputs]):
        role = message["role"]
        if role == "tool":
            if message["tool_call_id"] not in open_calls:
                problems.append(f"messages/{index}: answers no open tool call")
            open_calls.pop(message["tool_call_id"], None)
            continue
        if open_calls and index < len(messages):
            problems.append(f"messages/{index}: tool calls {sorted(open_calls)} are unanswered")
            open_calls = {}
        for call in message.get("tool_calls") or []:
            fn = call["function"]
            if tools is not None and fn["name"] not in names:
                problems.append(f"messages/{index}: calls {fn['name']!r}, not among `tools`")
            try:
                decoded = orjson.loads(fn["arguments"])
            except orjson.JSONDecodeError:
                decoded = None
            if not isinstance(decoded, dict):
                problems.append(f"messages/{index}: arguments of {fn['name']!r} are not an object")
            open_calls[call["id"]] = fn["name"]
    assistants = [m for m in messages if m["role"] == "assistant"]
    if trains and not any(m.get("weight", 1) == 1 for m in assistants):
        problems.append("messages: no assistant turn is trained (every weight is 0)")
    return problems


def openai_messages(messages: list[Message], weights: list[int] | None = None) -> list[Message]:
    """Wire messages in OpenAI's documented shape; `weights` (one per message) set the
    0/1 `weight` of each assistant turn."""
    out: list[Message] = []
    for i, message in enumerate(messages):
        role = message["role"]
        shaped: Message = {"role": role}
        if role == "tool":
            shaped["tool_call_id"] = message["tool_call_id"]
            shaped["content"] = message.get("content") or ""
        elif role == "assistant":
            calls = message.get("tool_calls")
            content = message.get("content")
            shaped["content"] = None if calls and not content else (content or "")
            if calls:
                shaped["tool_calls"] = calls
            if weights is not None:
                shaped["weight"] = weights[i]
        else:
            shaped["content"] = message.get("content") or ""
            if message.get("name"):
                shaped["name"] = message["name"]
        out.append(shaped)
    return out


def parallel_calls(messages: list[Message]) -> bool:
    """Whether any agent turn calls more than one tool at once."""
    return any(len(m.get("tool_calls") or []) > 1 for m in messages)
