"""The teacher-only block: what judges may read and what no export or push may carry.

`privileged` (hidden_state, reference, principle, rubric) puts the answer key one step
from a training file, so it is removed at any depth, including inside tool results
that arrive as JSON-encoded strings. `vector` (a raw embedding kept in memory during a
run) never ships either.
"""

from __future__ import annotations

from typing import Any

import orjson

PRIVILEGED_KEY = "privileged"
PRIVILEGED_FIELDS = ("hidden_state", "reference", "principle", "rubric")
NEVER_SHIPPED = frozenset({PRIVILEGED_KEY, "vector"})


def strip_privileged(value: Any) -> Any:
    """A copy of `value` with every `privileged` block (and `vector`) removed at any depth.

    Strings that hold a JSON object or array mentioning the block (a tool message's
    content is one) are decoded, stripped and re-encoded. The input is never mutated.
    """
    if isinstance(value, dict):
        return {k: strip_privileged(v) for k, v in value.items() if k not in NEVER_SHIPPED}
    if isinstance(value, list):
        return [strip_privileged(v) for v in value]
    if isinstance(value, str) and PRIVILEGED_KEY in value and value[:1] in ("{", "["):
        try:
            decoded = orjson.loads(value)
        except orjson.JSONDecodeError:
            return value
        return orjson.dumps(strip_privileged(decoded)).decode()
    return value


def has_privileged(value: Any) -> bool:
    """True when a `privileged` key survives anywhere in `value` (the test every export runs)."""
    if isinstance(value, dict):
        return any(k in NEVER_SHIPPED or has_privileged(v) for k, v in value.items())
    if isinstance(value, list):
        return any(has_privileged(v) for v in value)
    if isinstance(value, str) and PRIVILEGED_KEY in value and value[:1] in ("{", "["):
        try:
            return has_privileged(orjson.loads(value))
        except orjson.JSONDecodeError:
            return False
    return False


def privileged_texts(row: dict[str, Any], min_chars: int = 12) -> list[str]:
    """The privileged strings long enough that seeing one in a reply means it leaked."""
    block = row.get(PRIVILEGED_KEY)
    if not isinstance(block, dict):
        return []
    found: list[str] = []

    def walk(v: Any) -> None:
        if isinstance(v, str):
            if len(v.strip()) >= min_chars:
                found.append(v.strip())
        elif isinstance(v, dict):
            for item in v.values():
                walk(item)
        elif isinstance(v, list):
            for item in v:
                walk(item)

    for name in PRIVILEGED_FIELDS:
        value = block.get(name)
        if isinstance(value, (dict, list)):
            walk(value)
            walk(orjson.dumps(value).decode())
        else:
            walk(value)
    return found


def quotes_privileged(row: dict[str, Any]) -> bool:
    """True when the agent's reply repeats its own privileged block: a leaked answer key."""
    reply = row.get("final_text")
    texts = [reply] if isinstance(reply, str) else []
    for message in row.get("messages") or []:
        if isinstance(message, dict) and message.get("role") == "assistant":
            content = message.get("content")
            if isinstance(content, str):
                texts.append(content)
    if not texts:
        return False
    haystack = "\n".join(texts).lower()
    return any(secret.lower() in haystack for secret in privileged_texts(row))
