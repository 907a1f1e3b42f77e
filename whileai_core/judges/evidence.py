"""What the conversation and the world's results hold, and whether a reply and the tool
arguments agree with it.

The rule-based judges judge a claim against the world, not against a phrase list: a
success is false when no result confirms it, an id is wrong when the conversation never
held it, an amount or a date when no result carries it, a status when the record says
otherwise. `Evidence` is one rollout read once: the person's turns, the calls with their
results, the reply, which tools read and which write.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import orjson

from ..models.scaffold import not_an_answer
from ..spec import Spec, guess_kind, name_words, past_tense
from . import replies as rp
from .trajectory import Event, events_of, final_text, is_write, tool_kinds

_ID = re.compile(
    r"(?<![\w@.-])(?=[A-Za-z0-9-]*[A-Za-z])(?=[A-Za-z0-9-]*\d)[A-Za-z0-9]+(?:-[A-Za-z0-9]+)+"
    r"(?![\w-])|(?<![\w@.-])(?=[A-Z0-9]*[A-Z])(?=[A-Z0-9]*\d)[A-Z0-9]{5,12}(?![\w-])|#\d{3,}"
)
EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_NUMBER = re.compile(r"(?<![\w.])-?\d[\d,]*(?:\.\d+)?")
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_MONTH = r"(jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
_DATE_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})")
_DATE_DM = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH}(?:,?\s+(\d{{4}}))?",
                      re.IGNORECASE)  # fmt: skip
_DATE_MD = re.compile(rf"\b{_MONTH}\s+(\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+(\d{{4}}))?",
                      re.IGNORECASE)  # fmt: skip
_DATE_MY = re.compile(rf"\b{_MONTH}\s+(\d{{4}})\b", re.IGNORECASE)
_NOT_FINAL = re.compile(r"pending|queued|awaiting|requested|in_progress|scheduled|submitted")
_DONE_WORDS = re.compile(
    r"\b(already|previously|earlier|before|again|no longer|nothing (?:more|left|else) to)\b",
    re.IGNORECASE,
)
_MISSING = re.compile(
    r"\b(not found|missing|unknown|invalid|does ?n[o']t exist|did ?n[o']t exist|no such|no "
    r"longer exists?|not (?:in|on) (?:our|the) (?:system|records?|file))\b",
    re.IGNORECASE,
)
_FINDING = frozenset(
    {"find", "found", "locate", "located", "exist", "exists", "match", "matches", "matching",
     "see", "show", "shows", "come", "comes", "turn", "turns", "appear", "appears", "recognise",
     "recognize", "record", "records", "result", "results", "entry", "trace", "sign", "hit",
     "file", "system", "database", "account", "books"}
)  # fmt: skip
_PERCEIVE = frozenset(
    {"confirm", "see", "tell", "get", "read", "reach", "access", "load", "complete", "verify",
     "rely", "process", "do", "go", "work", "respond", "answer", "connect", "finish", "say",
     "trust", "sure", "able", "permitted", "allowed", "changed", "change", "touched", "acted"}
)  # fmt: skip
NAMED = re.compile(
    r"(?i:\b(?:last name|surname|family name|name))(?:'s| is|:)?\s+([A-Z][a-z]{1,})"
    r"|\(([A-Z][a-z]{1,})\)|\b(?:for|under)\s+(?:(?i:mr|ms|mrs|dr)\.?\s+)?([A-Z][a-z]{2,})\b"
)


def leaves(value: Any) -> Iterator[Any]:
    """Every value inside nested dicts and lists that is neither: what a check compares."""
    if isinstance(value, dict):
        for item in value.values():
            yield from leaves(item)
    elif isinstance(value, list):
        for item in value:
            yield from leaves(item)
    else:
        yield value


def identifiers(text: str) -> set[str]:
    """Ids (ORD-3966, K7XQ2M, #48213) and emails, lower-cased. An id has three digits or
    an upper-case letter, so '24-hour' and '3-day' are words, not ids."""
    return set(_identifiers(text))


@functools.lru_cache(maxsize=8192)
def _identifiers(text: str) -> frozenset[str]:
    found = {m.casefold() for m in EMAIL.findall(text)}
    for match in _ID.finditer(text):
        token = match.group(0)
        if token.startswith("#") or sum(c.isdigit() for c in token) >= 3 or token != token.lower():
            found.add(token.casefold())
    return frozenset(found)


def numbers(text: str) -> list[float]:
    out = []
    for raw in _NUMBER.findall(text):
        try:
            out.append(float(raw.replace(",", "")))
        except ValueError:
            continue
    return out


def _month(name: str) -> int:
    return _MONTHS.index(name[:3].lower()) + 1


def dates(text: str) -> set[tuple[int | None, int, int | None]]:
    """(year or None, month, day or None) for every date written in the text."""
    found: set[tuple[int | None, int, int | None]] = set()
    for y, m, d in _DATE_ISO.findall(text):
        if 1 <= int(m) <= 12:
            found.add((int(y), int(m), int(d)))
    for d, mon, y in _DATE_DM.findall(text):
        found.add((int(y) if y else None, _month(mon), int(d)))
    for mon, d, y in _DATE_MD.findall(text):
        found.add((int(y) if y else None, _month(mon), int(d)))
    for mon, y in _DATE_MY.findall(text):
        found.add((int(y), _month(mon), None))
    return found


def _statuses(value: Any) -> Iterator[str]:
    """Every record status inside a result's data (not the envelope's own status)."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "status" and isinstance(item, str):
                yield item
            elif isinstance(item, (dict, list)):
                yield from _statuses(item)
    elif isinstance(value, list):
        for item in value:
            yield from _statuses(item)


def _records(result: dict[str, Any] | None) -> list[Any]:
    """What a result shows of the records: its data, its matches and a search's results
    (not the envelope)."""
    result = result or {}
    return [result.get("data"), result.get("matches"), result.get("results")]


def status_words(status: str) -> list[str]:
    return rp.tokens(status.replace("_", " "))


@dataclass
class Evidence:
    """One rollout, read once: what was said, what was called, what the world answered."""

    row: dict[str, Any]
    spec: Spec | None = None
    events: list[Event] = field(init=False)
    kinds: dict[str, str] = field(init=False)
    reply: str = field(init=False)

    def __post_init__(self) -> None:
        self.events = events_of(self.row)
        self.kinds = tool_kinds(self.spec, self.row)
        self.reply = final_text(self.row, self.events)

    # -- what happened ----------------------------------------------------------------------

    @cached_property
    def calls(self) -> list[Event]:
        return [e for e in self.events if e.kind == "call"]

    @cached_property
    def tools(self) -> list[str]:
        """Every tool the agent had, as far as the row (or the spec) says."""
        return list(dict.fromkeys([*self.kinds, *(c.tool for c in self.calls)]))

    def writes(self) -> list[Event]:
        return [c for c in self.calls if is_write(c.tool, self.kinds)]

    @staticmethod
    def landed(call: Event) -> bool:
        """The world accepted and finished the call: ok, fresh, one record, a final state."""
        if not call.ok or (call.result or {}).get("matches"):
            return False
        data = (call.result or {}).get("data")
        state = data.get("status") if isinstance(data, dict) else None
        return not (isinstance(state, str) and _NOT_FINAL.search(state))

    @staticmethod
    def accepted(call: Event) -> bool:
        """The world took the request, finished or still pending."""
        return (
            Evidence.landed(call)
            or call.status in ("pending", "accepted", "queued")
            or (call.ok and not (call.result or {}).get("matches"))
        )

    def landed_writes(self) -> list[Event]:
        return [c for c in self.writes() if self.landed(c)]

    @cached_property
    def write_verbs(self) -> list[str]:
        """The verbs of the write tools; with no tool known at all (a bare row), the write
        verbs the reply itself uses in the past tense ("has been refunded")."""
        if self.tools:
            return list(
                dict.fromkeys(rp.tool_verb(t) for t in self.tools if is_write(t, self.kinds))
            )
        guessed = []
        for word in rp.tokens(self.reply):
            for verb in {rp.lemma(word), word[:-1], word[:-2]}:
                if (
                    verb
                    and verb != word
                    and past_tense(verb) == word
                    and guess_kind(verb) == "write"
                ):
                    guessed.append(verb)
        return list(dict.fromkeys(guessed))

    @cached_property
    def tool_verbs(self) -> list[str]:
        return list(dict.fromkeys(rp.tool_verb(t) for t in self.tools))

    @cached_property
    def objects(self) -> frozenset[str]:
        return rp.tool_objects(self.tools)

    # -- what was said ----------------------------------------------------------------------

    @cached_property
    def user_turns(self) -> list[str]:
        return [e.text for e in self.events if e.kind == "user"]

    @cached_property
    def user_text(self) -> str:
        return "\n".join(self.user_turns)

    @cached_property
    def agent_texts(self) -> list[str]:
        texts = [e.text for e in self.events if e.kind == "assistant"]
        if self.reply and (not texts or texts[-1] != self.reply):
            texts.append(self.reply)
        return texts

    @cached_property
    def world_text(self) -> str:
        """The conversation and every call and result, as text: what a reply may rest on."""
        parts = [self.user_text]
        for call in self.calls:
            parts.append(orjson.dumps(call.arguments).decode())
            if call.result is not None:
                parts.append(orjson.dumps(call.result).decode())
        return "\n".join(parts)

    @cached_property
    def known_ids(self) -> set[str]:
        return identifiers(self.world_text)

    @cached_property
    def known_numbers(self) -> list[float]:
        return numbers(self.world_text)

    @cached_property
    def known_dates(self) -> set[tuple[int | None, int, int | None]]:
        return dates(self.world_text)

    @cached_property
    def statuses(self) -> set[str]:
        """Every record status any result showed, lower-cased."""
        return {s.casefold() for c in self.calls for s in _statuses(_records(c.result))}

    @cached_property
    def current_statuses(self) -> set[str]:
        """The statuses of the last result that showed any: what the record is now."""
        for call in reversed(self.calls):
            found = {s.casefold() for s in _statuses(_records(call.result))}
            if found:
                return found
        return set()

    def about_this(self, sentence: str, extra: frozenset[str] = frozenset()) -> bool:
        """A sentence about this conversation (not a stuffed rubric line): it speaks to or
        for someone, names an id, or names what `extra` lists (a tool's words, a record's
        status)."""
        words = set(rp.tokens(sentence))
        person = {"i", "i'm", "i've", "i'll", "i'd", "we", "we've", "we're", "our", "my", "me",
                  "you", "your", "you're", "you'll", "you've", "us"}  # fmt: skip
        return bool(words & person or identifiers(sentence) or words & extra)


def scaffolding(reply: str) -> str | None:
    """What a reply is when it is a chat template's scaffolding rather than an answer (a
    function-calling recipe, a JSON envelope or a lead-in to one; `models/scaffold.py`),
    else None: a judge reads such a reply as no reply."""
    return not_an_answer(reply)


def said_after(ev: Evidence, event: Event, test: Any) -> bool:
    """Whether agent text after `event` (a later turn or the final reply) passes `test`: a
    fault may be reported in the turn that met it, not only at the end."""
    idx = next(i for i, e in enumerate(ev.events) if e is event)
    return any(e.kind == "assistant" and test(e.text) for e in ev.events[idx + 1 :])


def _sentences_where(text: str, test: Any) -> bool:
    return any(test(s) for s in rp.sentences(text))


def tool_words(tool: str) -> frozenset[str]:
    verb = rp.tool_verb(tool)
    return frozenset({tool, *name_words(tool), *rp.family(verb), *rp.verb_forms(verb)})


def acknowledges_trouble(ev: Evidence, text: str, tool: str, call: Event | None = None) -> bool:
    """The text says, about this conversation, that a step failed or cannot be trusted. For
    a stale result, surfacing its own date (the `as_of` it carries) says so too."""
    if call is not None and call.result_is_stale:
        data = (call.result or {}).get("data")
        stamp = data.get("as_of") if isinstance(data, dict) else None
        if isinstance(stamp, str) and dates(stamp) and dates(stamp) & dates(text):
            return True
    about = tool_words(tool) | frozenset({"system", "service", "server", "backend"})

    def one(sentence: str) -> bool:
        words = rp.tokens(sentence)
        trouble = rp.troubled(sentence) or any(
            w in _PERCEIVE | rp.family(rp.tool_verb(tool)) and rp.negated_at(words, i, 4)
            for i, w in enumerate(words)
        )
        return trouble and ev.about_this(sentence, about)

    return _sentences_where(text, one)


def reports_missing(ev: Evidence, text: str) -> bool:
    """The text says, about this conversation, that the record was not found."""

    def one(sentence: str) -> bool:
        words = rp.tokens(sentence)
        said = bool(_MISSING.search(sentence)) or any(
            (w in _FINDING or rp.lemma(w) in _FINDING or w in ev.objects)
            and rp.negated_at(words, i, 4)
            for i, w in enumerate(words)
        )
        return said and ev.about_this(sentence)

    return _sentences_where(text, one)


def acknowledges_done(ev: Evidence, text: str, acted: frozenset[str] = frozenset()) -> bool:
    """The text says, about this record, that the work was done before: in so many words
    ("already", "previously"), or by stating the record's done state ("status refunded")
    without claiming it as its own action."""
    states = frozenset(w for s in ev.statuses for w in status_words(s))
    done_states = {s for s in ev.statuses if s in acted}

    def one(sentence: str) -> bool:
        if _DONE_WORDS.search(sentence) and ev.about_this(sentence, states):
            return True
        words = rp.tokens(sentence)
        return not rp.first_person(sentence) and any(
            w in done_states and not rp.negated_at(words, i, 4) for i, w in enumerate(words)
        )

    return _sentences_where(text, one)
