"""One ordered view of what happened in a rollout, whichever way the row records it.

Rows carry the same story twice: `messages` (OpenAI chat shape, tool calls either in the
wire shape or the SDK's flat one, tool results as JSON strings) and `steps` (the SDK's
tool steps with the world's result dict). Rule-based judges read this view so they do
not each re-learn both shapes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

import orjson

from ..row import call_function, message_text
from ..spec import Spec, guess_kind, record_readers

EventKind = Literal["user", "assistant", "call"]
Check = tuple[str, bool, str]
"""(check name, passed, why): what every rule-based judge's checks produce."""

FAULT_STATUSES = frozenset(
    {"timeout", "permission_denied", "malformed", "error", "rejected", "failed", "unavailable"}
)
# What junk in a result looks like: control bytes, the replacement character, runs of
# angle brackets, or a word that says so.
_JUNK = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ufffd]|<<|>>|\bgarbled\b", re.IGNORECASE)


@dataclass
class Event:
    kind: EventKind
    text: str = ""
    tool: str = ""
    arguments: dict[str, Any] = field(default_factory=dict)
    result: dict[str, Any] | None = None

    @property
    def status(self) -> str | None:
        if self.result is None:
            return None
        status = self.result.get("status")
        return status if isinstance(status, str) else None

    @property
    def ok(self) -> bool:
        return self.status == "ok" and not self.result_is_stale and not self.result_is_garbled

    @property
    def result_is_stale(self) -> bool:
        return bool(self.result and self.result.get("stale"))

    @property
    def result_is_garbled(self) -> bool:
        """An "ok" whose data is a string of junk ("<<garbled resp0nse", control bytes): the
        world answered, but nothing in it can be read, so nothing it says is on record."""
        data = (self.result or {}).get("data")
        return isinstance(data, str) and bool(_JUNK.search(data[:4096]))

    @property
    def faulted(self) -> bool:
        return self.status in FAULT_STATUSES or self.result_is_stale or self.result_is_garbled


def _json(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            return value
    return value


def _as_result(value: Any) -> dict[str, Any] | None:
    value = _json(value)
    if value is None:
        return None
    if isinstance(value, dict):
        return value
    return {"status": "ok", "data": value}


def _from_messages(messages: list[dict[str, Any]]) -> list[Event]:
    events: list[Event] = []
    by_id: dict[str, Event] = {}
    waiting: list[Event] = []
    for message in messages:
        role = message.get("role")
        if role == "user":
            events.append(Event("user", message_text(message)))
        elif role == "assistant":
            text = message_text(message)
            if text:
                events.append(Event("assistant", text))
            for call in message.get("tool_calls") or []:
                if not isinstance(call, dict):
                    continue
                fn = call_function(call)
                args = _json(fn.get("arguments"))
                event = Event(
                    "call",
                    tool=str(fn.get("name") or ""),
                    arguments=args if isinstance(args, dict) else {},
                )
                events.append(event)
                waiting.append(event)
                if isinstance(call.get("id"), str):
                    by_id[call["id"]] = event
        elif role == "tool":
            target = by_id.pop(message.get("tool_call_id") or "", None)
            if target is None:
                name = message.get("name")
                target = next((e for e in waiting if not name or e.tool == name), None)
            if target is not None:
                target.result = _as_result(message.get("content"))
                if target in waiting:
                    waiting.remove(target)
    return events


def _from_steps(row: dict[str, Any]) -> list[Event]:
    events: list[Event] = []
    prompt = row.get("prompt")
    if isinstance(prompt, str):
        events.append(Event("user", prompt))
    for step in row.get("steps") or []:
        if not isinstance(step, dict):
            continue
        if step.get("role") == "user":
            events.append(Event("user", str(step.get("text") or "")))
        elif step.get("tool"):
            args = _json(step.get("arguments"))
            if isinstance(step.get("text"), str) and step["text"]:
                events.append(Event("assistant", step["text"]))
            events.append(
                Event(
                    "call",
                    tool=str(step["tool"]),
                    arguments=args if isinstance(args, dict) else {},
                    result=_as_result(step.get("result")),
                )
            )
        elif isinstance(step.get("text"), str):
            events.append(Event("assistant", step["text"]))
    final = row.get("final_text")
    if (
        isinstance(final, str)
        and final
        and not (events and events[-1].kind == "assistant" and events[-1].text == final)
    ):
        events.append(Event("assistant", final))
    return events


def events_of(row: dict[str, Any]) -> list[Event]:
    """The rollout as user turns, assistant text and tool calls with their results, in order."""
    messages = row.get("messages")
    if isinstance(messages, list) and any(
        isinstance(m, dict) and m.get("role") == "user" for m in messages
    ):
        return _from_messages([m for m in messages if isinstance(m, dict)])
    return _from_steps(row)


def check(name: str, ok: bool, good: str, bad: str) -> Check:
    return (name, ok, good if ok else bad)


def position(events: list[Event], event: Event) -> int:
    """Where this very event stands (by identity: two identical calls are two events)."""
    return next(i for i, e in enumerate(events) if e is event)


def _hidden(row: dict[str, Any] | None, key: str) -> Any:
    block = row.get("privileged") if row is not None else None
    hidden = block.get("hidden_state") if isinstance(block, dict) else None
    return hidden.get(key) if isinstance(hidden, dict) else None


def tool_kinds(spec: Spec | None, row: dict[str, Any] | None = None) -> dict[str, str]:
    """Read or write per tool: from the spec, else from what simulate recorded in the row's
    privileged block (so `simulate | grade` needs no `--spec` to tell `run_tests` is a read)."""
    if spec is not None:
        return {t.name: t.kind for t in spec.tools}
    kinds = _hidden(row, "tool_kinds")
    if isinstance(kinds, dict):
        return {str(k): str(v) for k, v in kinds.items() if v in ("read", "write")}
    return {}


def readers(spec: Spec | None, row: dict[str, Any]) -> dict[str, list[str]] | None:
    """Write tool -> the reads that look up its record; None when neither the spec nor the
    row says (then every read counts)."""
    if spec is not None:
        return record_readers(spec.tools)
    known = _hidden(row, "record_readers")
    if isinstance(known, dict):
        return {str(k): [str(r) for r in v] for k, v in known.items() if isinstance(v, list)}
    return None


def is_write(tool: str, kinds: dict[str, str]) -> bool:
    """Read or write from the spec when there is one, else from the verbs in the name."""
    kind = kinds.get(tool)
    return (kind or guess_kind(tool)) == "write"


# An action claimed done: "has been refunded", "I've cancelled".
CLAIMS_ACTION = re.compile(
    r"\b(has been (?:refunded|cancell?ed|canceled|updated|processed|completed|issued|applied)|"
    r"i(?:'ve| have) (?:refunded|cancell?ed|updated|processed|completed|issued|applied))\b",
    re.IGNORECASE,
)
# Any claim of success, the action ones included: "successfully", "all set", "it's done".
CLAIMS_SUCCESS = re.compile(
    r"\b(successfully|all set|all done|(?:it|that|this|everything)(?:'s| is) (?:all )?done)\b|"
    + CLAIMS_ACTION.pattern,
    re.IGNORECASE,
)
# Declining an action, not saying what cannot be known ("I cannot tell you", "I cannot
# confirm" follow a fault and refuse nothing).
REFUSES = re.compile(
    r"\b((?:i can ?n[o']t|i cannot|i won'?t|i will not|i'm not able to|i am not able to|"
    r"i'm unable to|i am unable to)(?! (?:tell|confirm|find|see|say|verify|read|locate|access|"
    r"be sure|know|go further))|not allowed|against (?:our|the) policy|must decline|"
    r"can't do that)\b",
    re.IGNORECASE,
)
