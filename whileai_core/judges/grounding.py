"""Argument grounding: every value a tool call carries came from the conversation.

Ids, emails and amounts must appear in an earlier turn or result (case and punctuation
aside: `ord-55120` is `ORD-55120`). Free text is grounded when its words were said ("It is
the wrong size." from "the reason is it is the wrong size"). A one-word category
(`damaged`, `travel_credit`) is the agent's own choice of label; with a spec it must be one
the tool offers. A write is held to more (when the tool kinds are known): every number it
sends was said (an `amount` of 0 nobody asked for is invented, however short), and a
category it files (a refund `reason`) was said, or the person said in their own words
what the category labels, or it is a catch-all (`other`). This is what `conduct:grounded`
and the reports on invented values read.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from ..spec import Spec, is_key_param, name_words
from . import replies as rp
from .evidence import Evidence, identifiers, leaves, numbers, result_json
from .trajectory import Event, is_write

_STOP = frozenset({"the", "and", "for", "with", "that", "this", "was", "are", "from", "have",
                   "has", "had", "but", "not", "you", "your", "our", "its", "it's", "is", "of",
                   "to", "a", "an", "in", "on", "it", "be", "me", "my", "i", "we"})  # fmt: skip


@dataclass(frozen=True)
class Invented:
    """An argument value no earlier turn, system prompt or tool result holds."""

    tool: str
    key: str
    value: str

    def __str__(self) -> str:
        return f"{self.tool}.{self.key}={self.value[:40]!r}"


def invented_arguments(
    events: list[Event],
    spec: Spec | None = None,
    *,
    context: Iterable[str] = (),
    ignore_keys: Iterable[str] = (),
    allow: Iterable[str] = (),
    kinds: dict[str, str] | None = None,
) -> list[Invented]:
    """Every argument value no earlier turn or result holds: the one grounding check that
    the conduct judge and the `argument_grounding` marker both read, so they never disagree
    about a value. Ids and amounts must appear (case and punctuation aside); free text is
    grounded when its words were said; a one-word category (`damaged`, `travel_credit`) is
    the agent's choice, and with a spec it must be one the tool allows. `context` (a system
    prompt) counts as said; `ignore_keys` (`key` or `tool.key`) are free text not checked;
    `allow` lists values that are always fine; `kinds` (tool -> read/write) holds writes to
    the stricter rule."""
    seen: list[str] = list(context)
    said: list[str] = []
    invented: list[Invented] = []
    skip, allowed = set(ignore_keys), set(allow)
    schemas = {t.name: t.properties for t in spec.tools} if spec else {}
    names = {*(kinds or {}), *(e.tool for e in events if e.kind == "call")}
    tool_said = frozenset(
        w for n in names for w in (*name_words(n), *(v + "s" for v in name_words(n)))
    )
    for event in events:
        if event.kind == "user":
            seen.append(event.text)
            said.append(event.text)
        elif event.kind == "call":
            corpus = "\n".join(seen)
            write = kinds is not None and is_write(event.tool, kinds)
            for key, raw in event.arguments.items():
                if key in skip or f"{event.tool}.{key}" in skip:
                    continue
                schema = (schemas.get(event.tool) or {}).get(key)
                shape = schema if isinstance(schema, dict) else None
                for value in _values(raw):
                    if value in allowed:
                        continue
                    if not _grounded(value, key, corpus, shape) or (
                        write and not _written_grounded(value, key, corpus, said, shape, tool_said)
                    ):
                        invented.append(Invented(event.tool, key, value))
            if event.result is not None:
                seen.append(result_json(event))
    return invented


def ungrounded_arguments(ev: Evidence) -> list[str]:
    """`tool.key=value` for every argument `invented_arguments` finds in one rollout."""
    return [str(item) for item in invented_arguments(ev.events, ev.spec, kinds=ev.kinds)]


# Values that file a thing under no particular label: choosing one invents nothing.
_CATCH_ALL = frozenset(
    {"other", "others", "unspecified", "unknown", "none", "n/a", "na", "not_specified",
     "general", "default", "misc", "miscellaneous"}
)  # fmt: skip


def _written_grounded(
    value: str,
    key: str,
    corpus: str,
    said: list[str],
    schema: dict[str, Any] | None,
    tool_said: frozenset[str],
) -> bool:
    """What a write sends beyond the read rule: a number was said (an amount of 0 is no
    exception); a category was said, is a catch-all or the schema's default, or labels
    something the person told in their own words."""
    text = value.strip()
    if _NUMERIC_VALUE.fullmatch(text):
        return any(abs(float(text) - n) < 1e-9 for n in numbers(corpus))
    if not _CATEGORY.fullmatch(text) or is_key_param(key) or _is_handle(key):
        return True
    if text.casefold() in _CATCH_ALL or (schema and text == str(schema.get("default"))):
        return True
    heard = {rp.stem(w) for w in rp.tokens(_loose("\n".join(said)))}
    if all(rp.stem(w) in heard for w in text.split("_") if w not in rp.FUNCTION_WORDS):
        return True
    return _told(said, tool_said)


def _told(said: list[str], tool_said: frozenset[str]) -> bool:
    """The person told something in their own words beyond the request itself (what went
    wrong, why): a word of substance outside the tools' own words, ids, numbers and
    function words ("it never showed up", "I just don't like it")."""
    words = {
        w
        for w in rp.tokens("\n".join(said))
        if w not in rp.FUNCTION_WORDS
        and w not in _REQUEST_WORDS
        and w not in tool_said
        and not any(c.isdigit() for c in w)
    }
    return bool(words)


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


_SEPARATORS = re.compile(r"[\s_\-/.:,;]+")
_NUMERIC_VALUE = re.compile(r"-?\d+(?:\.\d+)?")
# The words of a bare request beyond the tools' own ("hi, I want this done now,
# thanks"): not an account of what happened.
_REQUEST_WORDS = frozenset(
    {"hi", "hello", "hey", "thanks", "thank", "cheers", "want", "wanted", "need",
     "needs", "help", "asap", "quickly", "urgent", "urgently", "kindly", "regards"}
)  # fmt: skip
_NUMERIC = re.compile(r"[$€£]?\d[\d\s:.,/-]*")
_HANDLES = ("username", "user", "login", "handle", "account")


def _loose(text: str) -> str:
    return " " + " ".join(p for p in _SEPARATORS.split(text.casefold()) if p) + " "


def _is_handle(key: str) -> bool:
    """A user name (`mike_r`) looks like a category but names a person: copied, not chosen."""
    return key.lower().endswith(_HANDLES)


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
    if _loose(text) in _loose(corpus):
        return True  # separators aside: `sales-dashboard` is the "sales dashboard" asked for
    if _NUMERIC.fullmatch(text):
        # A number said another way: 10:00 for "at 10", 09:40 for "the 9:40".
        wanted = {n for n in numbers(text.replace(":", " ")) if n}
        heard = set(numbers(corpus.replace(":", " ")))
        return bool(wanted) and wanted <= heard
    if identifiers(text) or is_key_param(key) or _is_handle(key) or "@" in text:
        return False  # ids, handles and emails are copied, never paraphrased
    if _CATEGORY.fullmatch(text):
        return True
    said = rp.tokens(_loose(text))  # `build-agent` is the words "build agent"
    words = [w for w in said if len(w) >= 3 and w not in _STOP]
    if len(said) >= 2 and words:
        words_heard = {rp.stem(w) for w in rp.tokens(_loose(corpus))}
        return sum(rp.stem(w) in words_heard for w in words) / len(words) >= 0.6
    return False
