"""Argument grounding: every value a tool call carries came from the conversation.

Ids, emails and amounts must appear in an earlier turn or result (case and punctuation
aside: `ord-55120` is `ORD-55120`). Free text is grounded when its words were said ("It is
the wrong size." from "the reason is it is the wrong size"). A one-word category
(`damaged`, `travel_credit`) is the agent's own choice of label; with a spec it must be one
the tool offers. This is what `conduct:grounded` and the reports on invented values read.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from typing import Any

import orjson

from ..spec import is_key_param
from . import replies as rp
from .evidence import Evidence, identifiers, leaves, numbers

_STOP = frozenset({"the", "and", "for", "with", "that", "this", "was", "are", "from", "have",
                   "has", "had", "but", "not", "you", "your", "our", "its", "it's", "is", "of",
                   "to", "a", "an", "in", "on", "it", "be", "me", "my", "i", "we"})  # fmt: skip


def ungrounded_arguments(ev: Evidence) -> list[str]:
    """`tool.key=value` for every argument no earlier turn or result holds. Ids and amounts
    must appear (case and punctuation aside); free text is grounded when its words were
    said; a one-word category (`damaged`, `travel_credit`) is the agent's choice, and with a
    spec it must be one the tool allows."""
    seen: list[str] = []
    invented: list[str] = []
    schemas = {t.name: t.properties for t in ev.spec.tools} if ev.spec else {}
    for event in ev.events:
        if event.kind == "user":
            seen.append(event.text)
        elif event.kind == "call":
            corpus = "\n".join(seen)
            for key, raw in event.arguments.items():
                schema = (schemas.get(event.tool) or {}).get(key)
                for value in _values(raw):
                    if not _grounded(
                        value, key, corpus, schema if isinstance(schema, dict) else None
                    ):
                        invented.append(f"{event.tool}.{key}={value[:40]!r}")
            if event.result is not None:
                seen.append(orjson.dumps(event.result).decode())
    return invented


def _values(value: Any) -> Iterator[str]:
    """The strings and numbers an argument holds (a bool is a flag, not a value)."""
    for leaf in leaves(value):
        if isinstance(leaf, str):
            yield leaf
        elif isinstance(leaf, (int, float)) and not isinstance(leaf, bool):
            yield repr(leaf) if isinstance(leaf, float) else str(leaf)


_CATEGORY = re.compile(r"[a-z]+(?:_[a-z]+){0,3}")


def _norm(text: str) -> str:
    return " ".join(rp.tokens(text))


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def _grounded(value: str, key: str, corpus: str, schema: dict[str, Any] | None) -> bool:
    text = value.strip()
    if len(text) < 3:
        return True
    if schema is not None:
        if text in map(str, schema.get("enum") or []) or text == str(schema.get("default")):
            return True
        if schema.get("enum") and _CATEGORY.fullmatch(text):
            return False  # a category the tool does not offer
    try:
        number = float(text)
    except ValueError:
        number = math.nan
    if math.isfinite(number):
        return any(abs(number - n) < 1e-9 for n in numbers(corpus))
    norm = _norm(text)
    if not norm or norm in _norm(corpus) or text.casefold() in corpus.casefold():
        return True
    if identifiers(text) or is_key_param(key) or "@" in text:
        return False  # ids and emails are copied, never paraphrased
    if _CATEGORY.fullmatch(text):
        return True
    words = [w for w in rp.tokens(text) if len(w) >= 3 and w not in _STOP]
    if len(rp.tokens(text)) >= 2 and words:
        heard = {_stem(w) for w in rp.tokens(corpus)}
        return sum(_stem(w) in heard for w in words) / len(words) >= 0.6
    return False
