"""What the conversation and the world's results hold, and whether a reply and the tool
arguments agree with it.

The rule-based judges judge a claim against the world, not against a phrase list: a
success is false when no result confirms it, an id is wrong when the conversation never
held it, an amount or a date when no result carries it, a status when the record says
otherwise. `Evidence` is one rollout read once: the person's turns, the calls with their
results, the reply, which tools read and which write.

It reads bounded text: each turn up to `TEXT_CAP` characters and each result's JSON up
to `RESULT_CAP`, so no row, however long, makes a judge's cost grow past a fixed bound. A
reply longer than the cap is not guessed at: `readable()` raises Undecided.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import orjson

from ..errors import Undecided
from ..models.scaffold import not_an_answer
from ..row import reply_text
from ..spec import Spec, guess_kind, is_key_param, name_words, past_tense
from . import replies as rp
from .contract import check_deadline
from .trajectory import Event, events_of, is_write, position, tool_kinds

_ID = re.compile(
    r"(?<![\w@.-])(?=[A-Za-z0-9-]*[A-Za-z])(?=[A-Za-z0-9-]*\d)[A-Za-z0-9]+(?:-[A-Za-z0-9]+)+"
    r"(?![\w-])|(?<![\w@.-])(?=[A-Z0-9]*[A-Z])(?=[A-Z0-9]*\d)[A-Z0-9]{5,12}(?![\w-])|#\d{3,}"
)
# Starts only where a run of address characters starts: from inside a run the scan would
# re-read the rest of it at every position (quadratic on a long one-word reply).
EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_NUMBER = re.compile(r"(?<![\w.])-?\d[\d,]*(?:\.\d+)?")
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_MONTH = r"(jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
_DIGIT = re.compile(r"\d")
_STATUS_SAID = re.compile(
    r"\bstatus(?:\s+(?:is|was|shows|reads|says|of|to|as)|\s*[:=]|(?= ))(?:\s+(?:now|currently"
    r"|still|already))?\s*[\"'`]?([a-z][a-z_-]{2,24})",
    re.IGNORECASE,
)
# Words after "status" that are not a status: function words ("status has been
# updated", "the status may have changed") and words about the status itself.
_NOT_A_STATUS = rp.FUNCTION_WORDS | frozenset(
    {"currently", "unknown", "unclear", "marked", "showing", "listed", "page", "update",
     "check", "shows", "reads", "report", "updates", "says", "said", "changed", "field",
     "code", "line", "bar", "quo"}
)  # fmt: skip
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
# The words of those that say a thing is not there at all, not only unseen.
_EXISTING = frozenset({"find", "found", "locate", "located", "exist", "exists", "match", "matches"})
_PERCEIVE = frozenset(
    {"confirm", "see", "tell", "get", "read", "reach", "access", "load", "complete", "verify",
     "rely", "process", "do", "go", "work", "respond", "answer", "connect", "finish", "say",
     "trust", "sure", "able", "permitted", "allowed", "changed", "change", "touched", "acted"}
)  # fmt: skip
NAMED = re.compile(
    r"(?i:\b(?:last name|surname|family name|name|passenger|traveller|traveler))(?:'s| is|:)?"
    r"\s+([A-Z][a-z]{1,})|\(([A-Z][a-z]{1,})\)"
    r"|\b(?:for|under)\s+(?:(?i:mr|ms|mrs|dr)\.?\s+)?([A-Z][a-z]{2,})\b"
)


# What one turn of text a judge reads: far past any reply a person reads (2,500 words).
TEXT_CAP = 16_000
# What of one tool result's JSON a judge compares against (ids, amounts, dates in it).
RESULT_CAP = 256_000


def _capped(event: Event) -> Event:
    if len(event.text) <= TEXT_CAP:
        return event
    return dataclasses.replace(event, text=event.text[:TEXT_CAP])


def result_json(call: Event) -> str:
    """A call's result as JSON, at most RESULT_CAP characters: what a claim is checked
    against."""
    return orjson.dumps(call.result).decode()[:RESULT_CAP] if call.result is not None else ""


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
    if not _DIGIT.search(text):
        return found  # every date form below holds a digit: four scans saved on most lines
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


# A phone number: 7 to 15 digits in groups (+1 (415) 555-0199, 020 7946 0018, 555-0123).
_PHONE = re.compile(
    r"(?<![\w+.-])(?:\+\d{1,3}[ .-]?)?(?:\(\d{1,5}\)[ .-]?)?\d{1,6}(?:[ .-]\d{2,6}){1,5}"
    r"(?![\w-]|\.\d)|(?<![\w+.-])\+?\d{7,15}(?![\w.-])"
)
# A web address: a scheme or `www.`, or a host under a common top-level domain.
_TLDS = "com|org|net|io|co|uk|us|eu|de|fr|es|it|nl|ca|au|info|biz|app|dev|ai|gov|edu|me|ly"
_URL = re.compile(
    r"(?<![\w@./-])(?:https?://[^\s<>\"'()]{1,200}|www\.[^\s<>\"'()]{1,200}"
    rf"|(?:[a-z0-9-]{{1,63}}\.){{1,4}}(?:{_TLDS})\b(?!@)(?:/[^\s<>\"'()]{{0,200}})?)",
    re.IGNORECASE,
)
_NUMBER_WORDS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5,
                 "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10, "twelve": 12,
                 "fourteen": 14, "thirty": 30, "few": 3, "couple": 2}  # fmt: skip
_UNIT = r"(?:business |working |calendar )?(?:minute|min|hour|hr|day|week|month)s?"
# A span of time ("5-7 business days", "within 24 hours", "about a week").
_SPAN = re.compile(
    rf"\b(?:(\d+(?:\.\d+)?)(?:\s*(?:-|–|to|or)\s*(\d+(?:\.\d+)?))?|(an?|one|two|three|four"
    rf"|five|six|seven|eight|nine|ten|twelve|fourteen|thirty|a few|a couple of))\s+({_UNIT})\b"
    r"(?!\s+ago\b)",
    re.IGNORECASE,
)
# A deadline ("by tomorrow evening", "within the hour", "by Friday", "end of day").
_DEADLINE = re.compile(
    r"\b(?:(?:by|before|until|on) (?:tomorrow|tonight|monday|tuesday|wednesday|thursday|friday"
    r"|saturday|sunday|the weekend)|(?:by |before )?(?:the )?end of (?:the )?(?:day|week|month)"
    r"|within the (?:hour|day|week|month)|(?:later )?(?:today|tomorrow|tonight)(?: (?:morning"
    r"|afternoon|evening|night))?|(?:next|this) (?:week|month|monday|tuesday|wednesday"
    r"|thursday|friday))\b",
    re.IGNORECASE,
)


def phone_numbers(text: str) -> set[str]:
    """The digits of every phone number in the text (dates and ids are not phones)."""
    out = set()
    for match in _PHONE.finditer(text):
        raw = match.group(0)
        digits = "".join(ch for ch in raw if ch.isdigit())
        if 7 <= len(digits) <= 15 and not _DATE_ISO.fullmatch(raw.strip()):
            out.add(digits)
    return out


def web_addresses(text: str) -> set[str]:
    """Every web address in the text, lower-cased, without a scheme or a final dot."""
    out = set()
    for match in _URL.finditer(text):
        value = match.group(0).casefold().rstrip(".,;:!?")
        for scheme in ("https://", "http://"):
            value = value.removeprefix(scheme)
        out.add(value.removeprefix("www."))
    return out


# When a service is open: "24/7", "around the clock", a clock time ("9am", "17:30"), a
# day of the week or "weekends". Bounded pieces, no nested repeats.
_SCHEDULE = re.compile(
    r"\b24\s?/\s?7\b|\baround the clock\b"
    r"|\b(?:1[0-2]|0?[1-9])(?::[0-5]\d)?\s?(?:am|pm|a\.m\.|p\.m\.)"
    r"|\b(?:[01]\d|2[0-3]):[0-5]\d\b|\b(?:mon|tues|wednes|thurs|fri|satur|sun)days?\b"
    r"|\bweek(?:day|end)s?\b",
    re.IGNORECASE,
)


def _schedule_key(term: str) -> str:
    low = re.sub(r"[\s.]", "", term.casefold())
    if low in ("24/7", "aroundtheclock"):
        return "24/7"
    if low.endswith("s") and low[:-1].endswith(("day", "end")):
        low = low[:-1]
    clock = re.fullmatch(r"(\d{1,2})(?::(\d\d))?(am|pm)?", low)
    if clock is None:
        return low
    hour, minutes, half = int(clock.group(1)), clock.group(2) or "00", clock.group(3)
    if half == "pm" and hour < 12:
        hour += 12
    elif half == "am" and hour == 12:
        hour = 0
    return f"{hour}:{minutes}"  # "5pm", "17:00" and "5 p.m." are one time


def schedule_terms(text: str) -> set[str]:
    """When the text says something is open or answered: "24/7", "9am", "monday",
    "weekend", each normalised ("around the clock" is "24/7", "09:00am" is "9am")."""
    return {_schedule_key(m.group(0)) for m in _SCHEDULE.finditer(text[:RESULT_CAP])}


_WEEK = {"weekday": {"monday", "tuesday", "wednesday", "thursday", "friday"},
         "weekend": {"saturday", "sunday"}}  # fmt: skip
_DAYS = frozenset(_WEEK["weekday"] | _WEEK["weekend"])
# Names of days and months, which English capitalises without their naming a thing.
CALENDAR_NAMES = (
    _DAYS
    | {d + "s" for d in _DAYS}
    | frozenset(
        {"january", "february", "march", "april", "may", "june", "july", "august",
         "september", "october", "november", "december"}
    )
)  # fmt: skip


def unheld_hours(reply: str, known: str) -> set[str]:
    """The hours the reply states that nothing known states: "weekdays" is held by
    "Monday to Friday" and the other way round."""
    held = schedule_terms(known)
    for group, days in _WEEK.items():
        if group in held:
            held |= days
        if held & days:
            held.add(group)
    return schedule_terms(reply) - held


def _span_key(match: re.Match[str]) -> tuple[tuple[float, ...], str]:
    low, high, word, unit = match.groups()
    if low is not None:
        values: tuple[float, ...] = (float(low), float(high)) if high else (float(low),)
    else:
        said = word.casefold().split()
        key = next((w for w in said if w not in ("a", "an", "of")), said[0])
        values = (float(_NUMBER_WORDS.get(key, 0)),)
    stem = unit.casefold().split()[-1].rstrip("s")
    return values, {"min": "minute", "hr": "hour"}.get(stem, stem)


def time_frames(text: str) -> set[tuple[tuple[float, ...], str]]:
    """Every span of time the text states, as (numbers, unit): "5-7 business days" is
    ((5, 7), 'day'), "about a week" ((1,), 'week'). Past spans ("3 days ago") are not."""
    return {_span_key(m) for m in _SPAN.finditer(text)}


def deadlines(text: str) -> set[str]:
    """Every named deadline in the text ("by tomorrow", "end of day"), lower-cased."""
    return {" ".join(m.group(0).casefold().split()) for m in _DEADLINE.finditer(text)}


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


def record_statuses(call: Event) -> set[str]:
    """The record statuses one call's result shows, lower-cased (not its envelope's)."""
    return {s.casefold() for s in _statuses(_records(call.result))}


def status_words(status: str) -> list[str]:
    return rp.tokens(status.replace("_", " "))


def stated_statuses(text: str) -> list[str]:
    """The statuses `text` says a record has ("the status is refunded", "status:
    in_progress", "its status is already cancelled", a report's "status refunded, amount
    ..."), casefolded, '-' as '_'; words after "status" that are not one ("status has
    been updated") are left out."""
    found = []
    for match in _STATUS_SAID.finditer(text[:TEXT_CAP]):
        said = match.group(1).casefold().replace("-", "_")
        if said.split("_")[0] not in _NOT_A_STATUS:
            found.append(said)
    return found


# "You are the reservations agent for an airline": the business the agent is.
_SPEAKS_FOR = re.compile(
    r"\byou are (?:the |an? )?(?:[\w-]+ ){0,3}?(?:agent|assistant|representative)"
    r" (?:for|of|at) (?:the |an? )?(?:[\w-]+ ){0,2}?(airline|store|shop|bank|hotel|company)\b",
    re.IGNORECASE,
)


@dataclass
class Evidence:
    """One rollout, read once: what was said, what was called, what the world answered."""

    row: dict[str, Any]
    spec: Spec | None = None
    events: list[Event] = field(init=False)
    kinds: dict[str, str] = field(init=False)
    reply: str = field(init=False)

    def __post_init__(self) -> None:
        self.events = [_capped(e) for e in events_of(self.row)]
        self.kinds = tool_kinds(self.spec, self.row)
        reply = reply_text(self.row)
        self.reply_chars = len(reply)
        self.reply = reply[:TEXT_CAP]

    def readable(self) -> None:
        """Raise Undecided when the reply is longer than what a judge reads: what it says
        past the cap is unknown, so neither a pass nor a fail would be a reading of it."""
        if self.reply_chars > TEXT_CAP:
            raise Undecided(
                f"the reply is {self.reply_chars:,} characters; the judge reads at most "
                f"{TEXT_CAP:,} of one turn"
            )

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
    def last_user_index(self) -> int:
        """Where the person last spoke in `events` (-1 when they never did): what the agent
        did after it answers their last turn."""
        return max((i for i, e in enumerate(self.events) if e.kind == "user"), default=-1)

    @cached_property
    def status_words(self) -> set[str]:
        """The words of every record status any result showed ("in progress")."""
        return {w for s in self.statuses for w in status_words(s)}

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
            parts.append(orjson.dumps(call.arguments).decode()[:RESULT_CAP])
            parts.append(result_json(call))
        return "\n".join(parts)

    @cached_property
    def speaks_for(self) -> str:
        """The business the agent is, from its instructions ("the reservations agent for
        an airline" -> airline); empty when they do not say."""
        found = _SPEAKS_FOR.search(self.system_text[:TEXT_CAP])
        return found.group(1).casefold() if found else ""

    @cached_property
    def system_text(self) -> str:
        """The system prompt (the row's system turns, else the spec's policy): facts the
        agent was given, which a reply may repeat."""
        messages = self.row.get("messages")
        said = [
            m["content"][:RESULT_CAP]
            for m in (messages if isinstance(messages, list) else [])
            if isinstance(m, dict)
            and m.get("role") == "system"
            and isinstance(m.get("content"), str)
        ]
        if not said and self.spec is not None:
            said = [self.spec.policy[:RESULT_CAP]]
        return "\n".join(said)

    @cached_property
    def told_text(self) -> str:
        """What the agent was told before it answered: the system prompt, the person's
        turns, and its tools by name and description (the judges of answers made with no
        call read names and places against this)."""
        known = [self.system_text, self.user_text]
        if self.spec is not None:
            known += [f"{t.name} {t.description}" for t in self.spec.tools]
        known += [" ".join(name_words(t)) for t in self.tools]
        return "\n".join(known)

    @cached_property
    def known_text(self) -> str:
        """Everything a stated fact may come from: the conversation, the calls and their
        results, and the system prompt."""
        return f"{self.world_text}\n{self.system_text}"

    @cached_property
    def known_ids(self) -> set[str]:
        return identifiers(self.known_text)

    @cached_property
    def known_numbers(self) -> list[float]:
        return numbers(self.world_text)

    @cached_property
    def known_dates(self) -> set[tuple[int | None, int, int | None]]:
        return dates(self.world_text)

    @cached_property
    def statuses(self) -> set[str]:
        """Every record status any result showed, lower-cased."""
        return {s for c in self.calls for s in record_statuses(c)}

    @cached_property
    def current_statuses(self) -> set[str]:
        """The statuses of the last result that showed any: what the record is now."""
        for call in reversed(self.calls):
            found = record_statuses(call)
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


# The agent's own side, named as one thing ("the tool", "our booking system", "the
# lookup"): a sentence that does speaks of this conversation's machinery, where a rubric
# line stuffed into a reply speaks of tools in general ("the tools did not confirm").
_OWN_SIDE = re.compile(
    r"\b(?:the|our|my|this|that|its)\s+(?:[a-z]+\s+)?(?:tool|system|service|server|backend"
    r"|database|lookup|connection|api|app|website|site|platform|network|request|call"
    r"|search|response|record|data)\b",
    re.IGNORECASE,
)


def own_side(sentence: str) -> bool:
    """The sentence names one piece of the agent's own machinery ("the tool", "our order
    system", "the response")."""
    return bool(_OWN_SIDE.search(sentence))


# -- what the tools take, and what the person gave ---------------------------------------------

# General English for the kinds of thing a tool's parameter names: a sentence that asks
# for one names it with one of these words, or with the parameter's own words.
ID_WORDS = frozenset(
    {"id", "ids", "identifier", "number", "no", "num", "reference", "ref", "code", "locator",
     "confirmation", "pnr"}
)  # fmt: skip
_KIND_WORDS = {
    "email": frozenset({"email", "e-mail", "mail", "inbox"}),
    "name": frozenset({"name", "names", "surname", "lastname", "firstname", "forename"}),
    "date": frozenset({"date", "dates", "day", "when", "weekday"}),
    "place": frozenset({"where", "city", "airport", "airports", "route", "origin",
                        "destination", "departure", "arrival", "station", "place"}),
    "amount": frozenset({"amount", "much", "price", "cost", "total", "sum", "fee"}),
    "reason": frozenset({"reason", "why", "cause"}),
    "choice": frozenset({"fare", "class", "cabin", "method", "option", "options", "plan",
                         "tier"}),
}  # fmt: skip
_FROM = frozenset({"from", "origin", "departure", "departing", "leaving", "depart", "out"})
_TO = frozenset({"to", "destination", "arrival", "arriving", "going", "heading", "into"})
_RELATIVE_DAYS = _DAYS | {"today", "tonight", "tomorrow", "yesterday", "weekend"}
_GIVEN_FROM = re.compile(
    r"\b(?i:from|out of|leaving|departing)\s+[A-Z]|\b[A-Z]{3}\s*(?:to|-|–|→)\s*[A-Z]{3}\b"
)
_GIVEN_TO = re.compile(r"\b(?i:to|into)\s+[A-Z]")
_VALUE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,40}")


@dataclass(frozen=True)
class Field:
    """One thing the tools take (a parameter), as a sentence would name it: its `kind`
    (id, email, name, date, place, amount, reason, choice, other), its own words
    (`booking`, `flight`), a place's role (`from`/`to`), an id's pattern, a choice's
    values."""

    key: str
    kind: str
    words: frozenset[str]
    role: str = ""
    pattern: str | None = None
    values: tuple[str, ...] = ()

    @property
    def objects(self) -> frozenset[str]:
        """What an id field is the id of: `order` for order_id, `flight` for new_flight_id."""
        return self.words - ID_WORDS - {"new", "old", "current", "the", "id"}


def _field(key: str, schema: dict[str, Any]) -> Field:
    words = frozenset(name_words(key))
    enum = schema.get("enum")
    fmt = schema.get("format")
    pattern = schema.get("pattern") if isinstance(schema.get("pattern"), str) else None
    if "email" in words or fmt == "email":
        return Field(key, "email", words)
    if isinstance(enum, list) and enum:
        return Field(key, "choice", words, values=tuple(str(v) for v in enum))
    if words & {"origin", "from", "departure"}:
        return Field(key, "place", words, role="from")
    if words & {"destination", "to", "arrival"}:
        return Field(key, "place", words, role="to")
    if words & {"date", "day"} or fmt in ("date", "date-time"):
        return Field(key, "date", words)
    if "name" in words:
        return Field(key, "name", words)
    if is_key_param(key) or (pattern and schema.get("type") in (None, "string")):
        return Field(key, "id", words, pattern=pattern)
    if schema.get("type") in ("number", "integer") and words & _KIND_WORDS["amount"]:
        return Field(key, "amount", words)
    if words & (_KIND_WORDS["reason"] | {"comment", "note", "message", "description"}):
        return Field(key, "reason", words)
    return Field(key, "other", words)


def _generic_fields(objects: frozenset[str]) -> list[Field]:
    """What any agent's tools may take, when neither a spec nor a call names parameters."""
    return [
        Field("id", "id", objects | {"id"}),
        Field("email", "email", frozenset({"email"})),
        Field("name", "name", frozenset({"name"})),
        Field("date", "date", frozenset({"date"})),
        Field("origin", "place", frozenset({"origin"}), role="from"),
        Field("destination", "place", frozenset({"destination"}), role="to"),
        Field("amount", "amount", frozenset({"amount"})),
        Field("reason", "reason", frozenset({"reason"})),
    ]


def fields_of(ev: Evidence) -> list[Field]:
    """Every parameter the agent's tools take: from the spec's schemas, else from the
    arguments the row's calls carry, else the generic ones (an id of what the tools are
    about, an email, a name, a date, a place, an amount, a reason)."""
    found: dict[str, Field] = {}
    if ev.spec is not None:
        for tool in ev.spec.tools:
            for key, schema in tool.properties.items():
                found.setdefault(key, _field(key, schema if isinstance(schema, dict) else {}))
    for call in ev.calls:
        for key in call.arguments:
            found.setdefault(key, _field(key, {}))
    if not found:
        return _generic_fields(ev.objects)
    return list(found.values())


def _asks_field(field: Field, words: set[str], others: list[Field]) -> bool:
    """Whether a sentence holding `words` names `field`."""
    if field.kind == "id":
        mine = bool(words & field.objects)
        theirs = any(words & o.objects for o in others if o is not field and o.kind == "id")
        if words & ID_WORDS:
            return mine or not theirs
        return mine and bool(words & {"which", "what"})
    if field.kind == "place":
        if not words & (_KIND_WORDS["place"] | field.words):
            return False
        roles = {"from"} if words & _FROM else set()
        roles |= {"to"} if words & _TO - {"to"} else set()
        return not roles or field.role in roles
    if field.kind == "choice":
        values = {w for v in field.values for w in name_words(v)}
        own = field.words | (_KIND_WORDS["reason"] if "reason" in field.words else frozenset())
        return bool(words & own) or len(words & values) >= 2
    lexicon = _KIND_WORDS.get(field.kind, frozenset())
    own = field.words - {"new", "old", "the"}
    return bool(words & lexicon) or (field.kind in ("amount", "reason", "other") and own <= words)


# The words a request turns on (`replies.REQUEST_VERBS`, and a need or a wh-question):
# what follows the last of them in a clause is what it asks for.
_ASKING = rp.REQUEST_VERBS | {"need", "want", "which", "what", "what's"}


def _still_asked(field: Field, clause: str, fields: list[Field]) -> bool:
    """A field the clause names is asked for unless the clause gives its value and names
    it only outside what it requests: "To refund booking 85ZDYU with the last name Silva,
    please provide the refund method" asks for the method, not for the name or reference
    it quotes; "To cancel ORD-3186, please provide the order id again" asks for the id."""
    if field.kind == "name":
        stated = NAMED.search(clause) is not None
    elif field.kind == "email":
        stated = EMAIL.search(clause) is not None
    elif field.kind == "id":
        stated = bool(identifiers(clause))
    else:
        return True
    if not stated:
        return True
    words = rp.tokens(clause)
    at = max((i for i, w in enumerate(words) if w in _ASKING), default=None)
    if at is None:
        return False  # it states the value and requests nothing by name
    return _asks_field(field, set(words[at + 1 :]), fields)


def asked_fields(ev: Evidence, text: str, which: bool = True) -> set[str]:
    """What the text asks the person for: the keys of the fields its asking sentences name
    (`order_id`, `last_name`), `more` for more of the story, `other` for anything else.
    Empty: it asks for nothing. A sentence asks when it is put to the person (a question,
    a request, a statement of what is needed: `replies.addressed`)."""
    fields = fields_of(ev)
    wanted: set[str] = set()
    for clause in rp.clauses(text):
        if not rp.addressed(clause):
            continue
        words = set(rp.tokens(clause))
        hits = {
            f.key
            for f in fields
            if _asks_field(f, words, fields) and _still_asked(f, clause, fields)
        }
        if not hits and which and "which" in words:
            # "Which reservation is it?": naming no field, it asks which record is meant.
            hits = {f.key for f in fields if f.kind == "id"}
        if not hits:
            hits = {"more"} if rp.MORE.search(clause) else {"other"}
        wanted |= hits
    return wanted


def given_fields(ev: Evidence) -> dict[str, bool]:
    """For every field, whether the person's turns already hold a value for it."""
    held = _Held(ev.user_text)
    given: dict[str, bool] = {"more": bool(held.ids), "other": False}
    for f in fields_of(ev):
        given[f.key] = held.holds(f)
    return given


class _Held:
    """The values a text holds, read once, asked field by field."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.words = set(rp.tokens(text))
        self.ids = identifiers(text)
        self.values = set(_VALUE.findall(text))

    def holds(self, f: Field) -> bool:
        text = self.text
        if f.kind == "id":
            shape = _shape(f.pattern) if f.pattern else None
            if shape is None:
                return bool(self.ids)
            return any(_fits(shape, v) for v in self.values if len(v) <= 40)
        if f.kind == "email":
            return bool(EMAIL.search(text))
        if f.kind == "name":
            return bool(NAMED.search(text))
        if f.kind == "date":
            return bool(dates(text)) or bool(self.words & _RELATIVE_DAYS)
        if f.kind == "place":
            found = _GIVEN_FROM if f.role == "from" else _GIVEN_TO
            return bool(found.search(text))
        if f.kind == "amount":
            return bool(numbers(re.sub(r"[A-Za-z]+-\d+", " ", text)))
        if f.kind == "choice":  # "travel credit", or the value as the tool spells it
            low = text.casefold()
            if any(
                (set(name_words(v)) <= self.words or v.casefold() in low)
                for v in f.values
                if name_words(v)
            ):
                return True
        return self._labelled(f)

    def _labelled(self, f: Field) -> bool:
        """The field named and given a value ("The method is travel_credit", "reason:
        moving house"), whatever its kind: a value the schema does not describe."""
        names = sorted(f.words - {"the", "new", "old", "current"})
        if not names or len(names) > 3:
            return False
        label = r"[\s_-]".join(re.escape(n) for n in names)
        found = re.search(
            rf"\b{label}\s{{0,3}}(?:is|was|=|:)\s{{0,3}}[\w@.$-]{{2,}}",
            self.text[:TEXT_CAP],
            re.IGNORECASE,
        )
        return found is not None


# The person thanked for details, or said to have given them: "Thank you for confirming
# the booking reference and last name", "you've provided your e-mail".
_CREDITED = re.compile(
    r"\b(?:thanks?(?: you)?(?: so much| very much)? for (?:confirming|providing|giving"
    r"|sharing|sending|verifying|supplying)|you(?:'ve| have) (?:confirmed|provided|given"
    r"|shared|sent|verified|supplied))\b([^.!?\n]{0,80})",
    re.IGNORECASE,
)


def credited_not_given(ev: Evidence) -> list[str]:
    """The kinds of detail the reply thanks the person for, or says they gave, when no
    turn of theirs holds one ("Thank you for confirming the booking reference and last
    name" to a person who gave a route and a date): a claim about the conversation the
    conversation refutes. Named by the tools' parameters or, failing those, by the
    generic ones; a kind counts as given when any of its fields is held."""
    found = _CREDITED.findall(ev.reply[:TEXT_CAP])
    if not found:
        return []
    fields = fields_of(ev) + _generic_fields(ev.objects)
    held = _Held(ev.user_text)
    kinds: dict[str, bool] = {}
    for said in found:
        words = set(rp.tokens(said))
        for f in fields:
            if f.kind in ("id", "email", "name") and _asks_field(f, words, fields):
                kinds[f.kind] = kinds.get(f.kind, False) or held.holds(f)
    return sorted(k for k, given in kinds.items() if not given)


@functools.lru_cache(maxsize=256)
def _shape(pattern: str) -> Any:
    """A spec's parameter pattern, compiled by the `regex` engine (it can time out: the
    pattern is the spec author's, the text anyone's); None when it does not compile."""
    import regex

    try:
        return regex.compile(pattern)
    except regex.error:
        return None


def _fits(shape: Any, value: str) -> bool:
    try:
        return bool(shape.fullmatch(value, timeout=0.05))
    except TimeoutError:
        return False


def ask_needs(ev: Evidence) -> str | None:
    """What the person's ask calls for, read from the ask and the tools: `action` when it
    names what the tools act on (an id, a tool's object such as `order`, a write tool's
    verb such as `cancel`), `answer` when it names none of that. With no tools known, an
    ask naming no record is a question to answer, and one naming a record (an id) cannot
    be read either way: None. The ask is the person's opening turn: a later one may only
    answer the agent ("I don't know the order number")."""
    text = ev.user_turns[0] if ev.user_turns else ""
    if not ev.tools:
        return None if identifiers(text) else "answer"
    words = set(rp.tokens(text))
    writes = frozenset().union(
        *(rp.verb_forms(v) for v in ev.write_verbs),
        *(rp.family(v) for v in ev.write_verbs),
    )
    named = words & (ev.objects | writes | {o + "s" for o in ev.objects})
    return "action" if named or identifiers(text) else "answer"


# Auxiliaries a yes/no question opens on, and the words a yes or a no opens with.
_POLAR_OPENERS = frozenset(
    {"is", "are", "was", "were", "do", "does", "did", "can", "could", "will", "would", "have",
     "has", "should", "may", "am", "isn't", "aren't", "don't", "doesn't", "can't", "won't"}
)  # fmt: skip
# Who or what a turned-round question is about, and the words that make it a wh-question.
_SUBJECTS = frozenset({"you", "i", "we", "this", "it", "there", "they", "that", "u", "ya"})
_WH = frozenset({"what", "which", "who", "where", "when", "why", "how", "whom", "whose"})
_VERDICTS = frozenset({"yes", "no", "yeah", "yep", "nope", "nah", "true", "false", "correct",
                       "incorrect", "absolutely", "definitely", "certainly", "of",
                       "sure"})  # fmt: skip


_SIGN_OFF = re.compile(r"(?i)have an? (?:good|nice|great|lovely|wonderful) \w+\W*$")


def polar_question(text: str) -> list[str]:
    """The content words of the first yes/no question in `text` ("Random question, is
    this chat recorded anywhere?" -> chat, recorded, anywhere): an auxiliary turned in
    front of its subject, opening the clause ("Are your stores open?") or before a
    pronoun with no wh-word ahead of it ("is this", "do you"), in a clause that ends
    with a question mark, or anywhere in a message that has none ("Just
    wondering do you have an office"). Empty: no such question."""
    text = text[:TEXT_CAP]
    marked = "?" in text
    for clause in rp.clauses(text):
        if marked and not clause.rstrip().endswith("?"):
            continue
        if _SIGN_OFF.match(clause.strip()):
            continue  # "Have a good one!" closes a message, it asks nothing
        words = rp.tokens(clause)
        # After a lead-in ("Random question, are your stores ..."): the auxiliary opens it.
        head = len(words) - len(rp.tokens(re.split(r"[,:;]", clause)[-1]))
        for i, word in enumerate(words[:-1]):
            turned = i == head or (words[i + 1] in _SUBJECTS and not _WH & set(words[:i]))
            if word in _POLAR_OPENERS and turned:
                # "do u offer gift cards?": a subject spelt as typed is no content either.
                return [
                    w
                    for w in words[i + 1 :]
                    if w not in rp.FUNCTION_WORDS and w not in _SUBJECTS and w.isalpha()
                ]
    return []


# A yes or a no said as a statement: "There is no privacy policy for this service.", "We
# don't have an office there.", "We offer gift cards in euros." Not "I don't have that
# information" (what the agent knows), which names no thing of the service's.
_STATED_VERDICT = re.compile(
    r"^(?:(?:but|however|unfortunately|sadly|sorry|actually),? )?"
    r"(?:there (?:is|are|isn't|aren't)(?: no| not| not any)?|we (?:do not |don't |do )?have"
    r"|(?:we|i) (?:do not |don't |do )?(?:offer|provide|accept|sell)|i (?:do not|don't) have"
    r"|our \w{2,20} (?:is|are|isn't|aren't))\b"
)


def gives_verdict(reply: str) -> bool:
    """The reply opens with a yes or a no ("No, this chat is not stored.", "true",
    "Of course, we ..."), or states one ("There is no privacy policy for this
    service."): it settles the question as a fact rather than saying what it knows or
    cannot say."""
    words = rp.tokens(reply[:TEXT_CAP])
    if not words:
        return False
    if words[0] in _VERDICTS and (words[0] != "of" or words[1:2] == ["course"]):
        return True
    # Stated in any clause, after an apology or a lead-in ("Sorry, but as an AI language
    # model, I do not offer gift cards for businesses.").
    for clause in rp.clauses(reply[:TEXT_CAP]):
        for part in clause.split(","):
            said = part.strip().lower()
            if _STATED_VERDICT.match(said) and not rp.speaks_of_knowing(clause):
                return True
    return False


def covers(known: str, topic: list[str]) -> bool:
    """Whether `known` (what the agent was told) speaks of any of the topic's words, by
    word or by a crude stem, the first five letters (recorded ~ record, deliver ~
    deliveries): erring towards "covered" only ever lets an answer stand."""

    def stem(word: str) -> str:
        return word[:5] if len(word) >= 5 else word

    stems = {stem(w) for w in rp.tokens(known[:RESULT_CAP]) if w.isalpha()}
    return any(stem(w) in stems for w in topic)


_NAME = re.compile(r"(?<![\w-])[A-Z][A-Za-z+#]{1,30}(?![\w-])")  # a word, not part of an id
_BULLET = re.compile(r"^[ \t]*(?:[-*\u2022]|\d{1,2}[.)])[ \t]+", re.MULTILINE)
_ITEM = re.compile(r"^[ \t]*(?:[-*\u2022]|\d{1,2}[.)])[ \t]+\**([A-Za-z][\w+#-]{0,30})")


def named_things(text: str) -> set[str]:
    """The names a reply states (casefolded): capitalised words inside a sentence
    ("including Spanish, French") and the heads of list items ("- Python"). A sentence's
    first word and "I" are capitalised by rule, not because they name anything."""
    text = text[:TEXT_CAP]
    names: set[str] = set()
    for line in text.splitlines():
        item = _ITEM.match(line)
        if item:
            names.add(item.group(1).casefold())
    for sentence in rp.sentences(
        re.sub(r"^\s*(?:[-*\u2022]|\d{1,2}[.)])\s+", "", text, flags=re.M)
    ):
        for match in _NAME.finditer(sentence):
            if match.start() == len(sentence) - len(sentence.lstrip(" *\"'(")):
                continue  # the sentence's own first word
            word = match.group().casefold()
            if word not in rp.FUNCTION_WORDS and not word.startswith("i'"):
                names.add(word)
    return names


# Directions to a place in the service's own product: "go to the settings page",
# "navigating to the "Help" section", "under the Billing tab". The place's name is the
# (at most three) words before its kind; bounded runs, no backtracking to speak of.
_DIRECTION = re.compile(
    r"\b(?:go(?:ing)? to|navigat(?:e|ing) to|head(?:ing)?(?: over)? to|visit(?:ing)?|open(?:ing)?"
    r"|click(?:ing)?(?: on)?|tap(?:ping)?(?: on)?|select(?:ing)?|under|in|from|on)"
    r"\s+(?:the\s+|your\s+|our\s+)?((?:[\w'\u2019\"-]{1,30}\s+){0,3}?)"
    r"(page|section|tab|menu|screen|settings|dashboard|portal)\b",
    re.IGNORECASE,
)
# Words that say where without naming a place of the service's own: the web, an account.
_PLACE_FILLER = rp.FUNCTION_WORDS | frozenset(
    {"website", "site", "web", "online", "app", "account", "main", "home", "official",
     "relevant", "appropriate", "correct", "next", "previous"}
)  # fmt: skip


def directions(text: str) -> list[str]:
    """The places a text sends the reader to in the service's product, each as its name
    and kind ("settings", "help section", "terms of service page"). A place named by
    nothing but its kind ("go to the page", "your account page") names nothing and is
    left out; "settings" is a name of its own."""
    found = []
    for match in _DIRECTION.finditer(text[:TEXT_CAP]):
        kind = match.group(2).casefold()
        words = [w.strip("'\u2019\"").casefold() for w in match.group(1).split()]
        while words and words[0].removesuffix("'s") in _PLACE_FILLER:
            words.pop(0)  # "the website's", "your account": where, not which place
        names = [w for w in words if w.removesuffix("'s") not in _PLACE_FILLER]
        if names or kind == "settings":
            found.append(" ".join([*words, kind]))
    return found


def written_in(text: str) -> frozenset[str]:
    """The language a text is written in, as far as this reader can tell: English when
    nearly all its letters are ASCII (a chat held in English shows that it answers in
    English), else nothing."""
    letters = [c for c in text[:TEXT_CAP] if c.isalpha()]
    ascii_share = sum(c.isascii() for c in letters) / len(letters) if letters else 0.0
    return frozenset({"english"}) if ascii_share >= 0.95 else frozenset()


def asks_person(ev: Evidence, text: str) -> bool:
    """The text puts a question or a request to the person (beyond pleasantries)."""
    return any(rp.addressed(c) for c in rp.clauses(text))


def scaffolding(reply: str, ev: Evidence | None = None) -> str | None:
    """What a reply is when it is a chat template's scaffolding rather than an answer (a
    function-calling recipe, a JSON envelope or a lead-in to one; `models/scaffold.py`),
    or, given the row's evidence, a tool result written out as the reply; else None: a
    judge reads such a reply as no reply."""
    found = not_an_answer(reply)
    if found is None and ev is not None and _echoes_an_envelope(reply, ev):
        return "a tool result written out, not an answer"
    return found


def _echoes_an_envelope(reply: str, ev: Evidence) -> bool:
    """The reply is a JSON object shaped like the world's answers rather than a record:
    its `status` is one a result envelope of this row carried ("ok", "timeout") and it
    names no record by a key of its own (`{"status": "ok", "result": {...}}` is an
    envelope, `{"order_id": ..., "status": "delivered"}` the record asked for)."""
    text = reply.strip()
    if not text.startswith("{") or len(text) > 20_000:
        return False
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return False
    if not isinstance(value, dict) or not isinstance(value.get("status"), str):
        return False
    envelopes = {c.status for c in ev.calls if c.status}
    return value["status"] in envelopes and not any(is_key_param(k) for k in value)


def said_after(ev: Evidence, event: Event, test: Any) -> bool:
    """Whether agent text after `event` (a later turn or the final reply) passes `test`: a
    fault may be reported in the turn that met it, not only at the end."""
    idx = position(ev.events, event)
    return any(e.kind == "assistant" and test(e.text) for e in ev.events[idx + 1 :])


def _sentences_where(text: str, test: Any) -> bool:
    for sentence in rp.sentences(text):
        check_deadline()
        if test(sentence):
            return True
    return False


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
    about = tool_words(tool) | ev.objects

    def one(sentence: str) -> bool:
        words = rp.tokens(sentence)
        trouble = rp.troubled(sentence) or any(
            w in _PERCEIVE | rp.family(rp.tool_verb(tool)) and rp.negated_at(words, i, 4)
            for i, w in enumerate(words)
        )
        return trouble and (ev.about_this(sentence, about) or own_side(sentence))

    return _sentences_where(text, one)


def reports_missing(ev: Evidence, text: str, strict: bool = False) -> bool:
    """The text says, about this conversation, that the record was not found. `strict`
    reads only a claim that nothing is there ("I couldn't find any flights", "no such
    order"), not a failure to see ("I could not see the record", "no result came back"),
    which a fault explains as well as an empty world."""
    finding = _EXISTING if strict else _FINDING
    # "no such flight": the things the tools work on, singular too (strict reading only).
    things = ev.objects | {o[:-1] for o in ev.objects if o.endswith("s")} if strict else ev.objects

    def one(sentence: str) -> bool:
        words = rp.tokens(sentence)
        said = (
            bool(_MISSING.search(sentence))
            or any(
                (w in finding or rp.lemma(w) in finding or (not strict and w in ev.objects))
                and rp.negated_at(words, i, 4)
                for i, w in enumerate(words)
            )
            or (
                strict
                and any(  # "there are no flights", "zero orders"
                    w in things and words[i - 1] in ("no", "zero") for i, w in enumerate(words) if i
                )
            )
        )
        return said and ev.about_this(sentence, things if strict else frozenset())

    return _sentences_where(text, one)


def acknowledges_done(ev: Evidence, text: str, acted: frozenset[str] = frozenset()) -> bool:
    """The text says, about this record, that the work was done before: in so many words
    ("already", "previously"), or by stating the record's done state ("status refunded")
    without claiming it as its own action."""
    states = frozenset(ev.status_words)
    done_states = {s for s in ev.statuses if s in acted}

    def one(sentence: str) -> bool:
        if _DONE_WORDS.search(sentence) and ev.about_this(sentence, states):
            return True
        words = rp.tokens(sentence)
        return not rp.own_act(sentence) and any(
            w in done_states and not rp.negated_at(words, i, 4) for i, w in enumerate(words)
        )

    return _sentences_where(text, one)


# A rule sentence restricts an action when it says never / not / only about it.
_RESTRICTS = frozenset({"never", "not", "cannot", "only", "no"})


def declined_by_rule(ev: Evidence, target: str) -> bool:
    """The agent read the record, found it in a state the system prompt's rules forbid the
    asked action for, did not attempt it, and the reply says it will not or cannot be done.

    Read off the world and the rules, never a phrase list: a rule sentence names the
    action's verb with `never`/`not`/`only` (in the system prompt, or the cell's own
    rule); "never cancel an order that has shipped" is met by a record whose status is
    `shipped`, "refund only orders whose status is delivered" by a record whose status is
    anything else. The reply must state the action negated ("it can't be cancelled",
    "I'm unable to refund it", "not changeable")."""
    verb = rp.tool_verb(target)
    forms = frozenset().union(*(rp.verb_forms(v) for v in rp.family(verb)))
    if any(rp.tool_verb(c.tool) in rp.family(verb) for c in ev.writes()):
        return False
    # The record's state: every one-word value the last successful read showed (its
    # status, its fare class), not its ids.
    read = next((c for c in reversed(ev.calls) if c.ok and not is_write(c.tool, ev.kinds)), None)
    if read is None:
        return False
    state_words = {
        rp.stem(w)
        for leaf in leaves(_records(read.result))
        if isinstance(leaf, str) and len(leaf) <= 40 and not identifiers(leaf)
        for w in status_words(leaf)
        if w not in rp.FUNCTION_WORDS
    }
    state_words -= {rp.stem(w) for w in ev.objects}  # "order" names the thing, not its state
    if not state_words:
        return False
    forbidden = False
    dims = ev.row.get("scenario_dimensions")
    rule = dims.get("rule") if isinstance(dims, dict) else None
    rules = f"{ev.system_text}\n{rule[:RESULT_CAP]}" if isinstance(rule, str) else ev.system_text
    for sentence in rp.sentences(rules):
        words = rp.tokens(sentence)
        if not (set(words) & forms) or not (set(words) & _RESTRICTS):
            continue
        stems = {rp.stem(w) for w in words}
        if "only" in words and ("status" in words or "statuses" in words):
            forbidden = not (stems & state_words)
        elif set(words) & (_RESTRICTS - {"only"}):
            forbidden = bool(stems & state_words)
        if forbidden:
            break
    if not forbidden:
        return False

    # "not changeable", "non-refundable": the action's adjective, negated, declines too.
    able = {f"{v}able" for v in rp.family(verb)} | {f"{v[:-1]}able" for v in rp.family(verb)}
    able |= {f"{v}lable" for v in rp.family(verb) if v.endswith("l")}

    def declines(sentence: str) -> bool:
        words = rp.tokens(sentence)
        return any(
            ((w in forms or w in able) and rp.negated_at(words, i, 4))
            or (w.startswith("non-") and w[4:] in able)
            for i, w in enumerate(words)
        )

    return _sentences_where(ev.reply, declines)
