"""The offline person's side of a conversation: what the agent asked, and the answer.

A follow-up must answer the agent's last turn, or the data does not read as a
conversation (asked for the order id, a person does not reply "that contradicts what
someone told me earlier"). The turn is read by meaning, from the facts the person holds
(the situation's entity values, named by the tools' parameters), not from any agent's
phrasing:

- a **request** is a question, or a sentence built to get something ("please send ...",
  "I'll need ...", "once I have ...", "mind sharing ..."); "without the method I cannot
  go further" asks only for what the person holds;
- what it asks **for** is matched against each fact's vocabulary: the words of its
  parameter name (`order_id` -> order), what kind of value it is (an id is also a
  number, a reference, a code; an email an e-mail or mail address) and the everyday words
  for its object (an order is also a purchase, a package, a parcel);
- a field asked for that the person does not hold ("your phone number") is **missing**,
  and the person says so; a question with "A or B" is a **choice**; "shall I go ahead?"
  asks for a **confirmation**.

`read_turn` is shared with the model writer, which uses it to check that a drawn reply
gives the facts the agent asked for.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ..spec import is_key_param, name_words

# What each kind of value is also called; a kind word in a request asks for that kind.
_KIND_WORDS = {
    "id": {"id", "ids", "identifier", "number", "reference", "ref", "code", "confirmation",
           "locator", "#"},
    "email": {"email", "e-mail", "mail", "emails"},
    "name": {"name"},
    "date": {"date", "day", "when"},
    "amount": {"amount", "much", "sum", "total", "price"},
    "reason": {"reason", "why"},
}  # fmt: skip
# Everyday words for the objects tools are named after.
_OBJECT_WORDS = {
    "order": {"purchase", "package", "parcel", "shipment", "delivery", "item", "items"},
    "booking": {"reservation", "trip", "ticket", "flight", "itinerary"},
    "flight": {"booking", "reservation", "trip", "ticket"},
    "account": {"profile", "login", "user"},
    "customer": {"account", "profile"},
    "issue": {"ticket", "bug", "problem"},
    "ticket": {"issue", "case", "request"},
    "invoice": {"bill", "receipt"},
    "payment": {"charge", "transaction"},
    "pr": {"pull", "merge"},
    "repo": {"repository", "project"},
}
# Fields a request may name that an errand's tools never take: asked for one of these, a
# person does not hand over their order number instead.
_FOREIGN_FIELDS = (
    "phone number", "mobile number", "phone", "mobile", "postcode", "post code", "zip code",
    "zip", "date of birth", "birthday", "password", "card number", "last four digits", "pin",
    "account number", "membership number", "passport number", "address",
)  # fmt: skip
# Other fields a request may name, for saying which one the person does not have.
_FIELD_NOUNS = (
    *_FOREIGN_FIELDS, "full name", "name", "email address", "email", "order number",
    "booking reference", "confirmation code", "file path", "path", "branch", "reference",
    "id", "number",
)  # fmt: skip
_REQUEST = re.compile(
    r"\b(?:please|kindly|could you|can you|would you|will you|mind|may i (?:have|get|ask)|"
    r"i(?:'ll| will| would)? need|we(?:'ll| will)? need|i require|once i have|as soon as i have|"
    r"if you (?:can |could )?(?:give|send|share|tell|provide)|let me know|"
    r"(?:send|give|share|tell|provide|confirm|enter|type|specify|include) (?:me|us|the|your))\b"
)
# "Without the method I cannot go further": a statement of what is missing. It asks for
# what the person holds; a person who said they lack it has nothing more to say to it.
_WITHOUT = re.compile(r"\bwithout (?:the|your|a|an)\b")
_CONFIRM = re.compile(
    r"\b(?:shall i|should i|do you want me to|would you like me to|want me to|ok to|okay to|"
    r"go ahead|proceed|is that (?:right|correct|ok|okay)|can you confirm|please confirm|"
    r"confirm (?:that|you))\b"
)
_WH = re.compile(r"\b(?:which|what|what's|whats)\b")
_CHOICE = re.compile(r"([^,;:?]+?)\s+or\s+([^,;:?]+)\?")
_CHOICE_LEAD = re.compile(
    r"^.*?\b(?:like|want|prefer|mean|is it|shall i|should i|do you need|would that be|"
    r"choose|pick)\s+",
)
_SOURCE = re.compile(
    r"\b(?:from|in) (?:the|your|our|my|an?|that)\b[^,.;?!]*?"
    r"(?=\b(?:before|so|and|then|to|if)\b|[,.;?!]|$)"
)
# A greeting or a sign-off names a day without asking for one: "Good day, please give me
# the exact details" does not ask for the date.
_GREETING = re.compile(
    r"\b(?:good|nice|great|lovely|wonderful) (?:day|morning|afternoon|evening)\b"
)
_TWO = re.compile(r"\bwhich (?:of the|one of the)? ?(?:two|both|records|ones|of them)\b")


@dataclass(frozen=True)
class Fact:
    """A value the person holds, and the words that ask for it."""

    name: str
    value: Any
    kind: str
    objects: frozenset[str]
    words: frozenset[str]  # the parameter's own words: `new_content` -> new, content

    @property
    def label(self) -> str:
        return self.name.replace("_", " ")


@dataclass
class Reading:
    """What an agent's turn asked the person for."""

    facts: list[Fact] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    options: list[str] = field(default_factory=list)
    which_of_two: bool = False
    confirm: bool = False

    @property
    def asked(self) -> bool:
        return bool(self.facts or self.missing or self.options or self.which_of_two or self.confirm)


def _kind(name: str, value: Any) -> str:
    low = name.lower()
    if "email" in low:
        return "email"
    if is_key_param(name):
        return "id"
    for kind in ("name", "date", "amount", "reason"):
        if kind in low:
            return kind
    return "number" if isinstance(value, (int, float)) and not isinstance(value, bool) else "text"


def facts_of(situation: dict[str, Any]) -> list[Fact]:
    """Every value the person has in mind for their errand, once each."""
    seen: dict[str, Fact] = {}
    values: dict[str, Any] = dict(situation.get("entities") or {})
    for args in (situation.get("arguments") or {}).values():
        for name, value in args.items():
            values.setdefault(name, value)
    for name, value in values.items():
        words = set(name_words(name)) - {"id", "number", "code", "ref", "no"}
        objects = set(words)
        for word in words:
            objects |= _OBJECT_WORDS.get(word, set())
        seen[name] = Fact(name, value, _kind(name, value), frozenset(objects), frozenset(words))
    return list(seen.values())


def _sentences(text: str) -> list[str]:
    parts = re.split(r"(?<=[.?!])\s+|\n+", text.strip())
    return [p.strip() for p in parts if p.strip()]


def _words(sentence: str) -> set[str]:
    low = sentence.lower()
    words = set(re.findall(r"[a-z0-9#]+", low))
    return words | {w[:-1] for w in words if w.endswith("s") and len(w) > 3}


# What an agent's request names: "Please give me the flight id and passenger name and
# fare class." -> flight id, passenger name, fare class.
_ASKS_FOR = re.compile(
    r"\b(?:give|provide|send|tell|share)(?: me| us)?(?: with)? (?:the |your )?([^.?!]{3,120})"
)
_LIST_SPLIT = re.compile(r",? and |, | or ")
_ARTICLES = frozenset({"the", "your", "a", "an"})


def asked_labels(text: str) -> list[str]:
    """The names of what an agent's request asks to be given, held or not: `read_turn`
    tells which of the person's facts it asks for, this what it calls them (so a value
    given under one of them can be held to the person's brief). Callers cap `text`, as
    for `read_turn`."""
    labels = []
    for match in _ASKS_FOR.finditer(text.lower()):
        for part in _LIST_SPLIT.split(match.group(1)):
            words = [w for w in re.findall(r"[a-z0-9]+", part) if w not in _ARTICLES]
            if 1 <= len(words) <= 3:
                labels.append(" ".join(words))
    return labels


def may_ask(text: str) -> bool:
    """Whether `text` holds a question, a request or a "without the ..." at all: a line
    with none of them asks for nothing, and `read_turn` need not read it sentence by
    sentence."""
    low = text.lower()
    return "?" in low or bool(_REQUEST.search(low) or _WITHOUT.search(low))


def read_turn(text: str, facts: list[Fact]) -> Reading:
    """What `text` (the agent's turn) asks the person for, given the facts they hold."""
    reading = Reading()
    guesses: list[str] = []
    for sentence in _sentences(text):
        request = _request(sentence, facts)
        if request is None:
            continue
        low, asked_part, question, needs, foreign, asked = request
        for fact in asked:
            if fact not in reading.facts:
                reading.facts.append(fact)
        if needs:
            continue
        noun = foreign or (None if asked else _named_field(asked_part, _FIELD_NOUNS))
        if noun is None and not asked:
            # "Which flights is it?": an id by its object, unless the turn asks for
            # details the person does hold (then those are the answer).
            vague = _id_noun(asked_part)
            if vague:
                guesses.append(vague)
        if noun and noun not in reading.missing:
            reading.missing.append(noun)
        if question and _TWO.search(low):
            reading.which_of_two = True
        elif question and not asked:
            choice = _CHOICE.search(sentence)
            if choice:
                first = _CHOICE_LEAD.sub("", choice.group(1)).strip()
                reading.options = [o for o in (first, choice.group(2).strip()) if o]
        if (question or "confirm" in low) and _CONFIRM.search(low):
            reading.confirm = True
    if not reading.facts and not reading.missing:  # a field named outright wins a guess
        reading.missing += [g for g in dict.fromkeys(guesses) if g not in reading.missing]
    # "the order id" and "the order number" are one field: say it is not held once.
    named = [m for m in reading.missing if m.split()[-1] in ("number", "id", "reference")]
    if len(named) > 1:
        reading.missing = [m for m in reading.missing if m not in named[1:]]
    return reading


def asked_facts(text: str, facts: list[Fact]) -> list[Fact]:
    """`read_turn(text, facts).facts`, without reading what else the turn asks (fields
    the person lacks, options, a confirmation): for a caller that only asks which of the
    person's facts a line requests (the voice check, on every drafted turn)."""
    found: list[Fact] = []
    for sentence in _sentences(text):
        request = _request(sentence, facts)
        if request is not None:
            found.extend(f for f in request[5] if f not in found)
    return found


def _request(
    sentence: str, facts: list[Fact]
) -> tuple[str, str, bool, bool, str | None, list[Fact]] | None:
    """A sentence that asks (a question or a request) or needs ("without the ..."):
    (its lower-cased text, the part naming what is asked, question, needs, a field the
    person cannot hold, the facts it asks for); None for any other sentence."""
    low = re.sub(r"\be-mail\b", "email", sentence.lower())
    question = sentence.endswith("?")
    request = question or _REQUEST.search(low) is not None
    needs = not request and _WITHOUT.search(low) is not None
    if not (request or needs):
        return None
    # "the code from your receipt email": where a value is found is not what is asked.
    asked_part = _GREETING.sub(" ", _SOURCE.sub(" ", low))
    foreign = _named_field(asked_part, _FOREIGN_FIELDS)
    asked = _asked_facts(_words(asked_part), low, facts, question, foreign)
    return low, asked_part, question, needs, foreign, asked


def _asked_facts(
    words: set[str], low: str, facts: list[Fact], question: bool, foreign: str | None
) -> list[Fact]:
    """The facts a request sentence asks for: by kind (number, email, ...), narrowed to
    the facts of the object it names when it names one; a wh-question about an object
    ("which order?") asks for its id."""
    by_kind = [f for f in facts if _KIND_WORDS.get(f.kind, set()) & words]
    if "address" in words and ("email" in words or "mail" in words):
        by_kind += [f for f in facts if f.kind == "email" and f not in by_kind]
    named = [f for f in by_kind if f.objects & words]
    # A field asked for by its own name ("give me the path", "the new content?").
    by_name = [f for f in facts if f.kind not in ("id", "email") and f.words
               and f.words <= words and f not in by_kind]  # fmt: skip
    if named or (by_kind and foreign is None):
        return (named or by_kind) + by_name
    if by_name:
        return by_name
    if question and _WH.search(low):
        return [f for f in facts if f.kind == "id" and f.objects & words]
    return []


def _named_field(low: str, nouns: tuple[str, ...]) -> str | None:
    """The first of `nouns` a request names as a field (`your phone number`); an address
    that is an email address is not a postal one."""
    for noun in nouns:
        if noun not in low or (noun == "address" and "email address" in low):
            continue
        if re.search(rf"\b(?:your|the|a|an|my|any)\s+(?:\w+\s+)?{re.escape(noun)}\b", low):
            return noun
    return None


_ID_WORDS = r"(?:number|id|#|reference|ref|code|identifier|locator)"


def _id_noun(low: str) -> str | None:
    """An id asked for by its kind ("the order #", "the identifier of the package"),
    as the person would name it back."""
    found = re.search(rf"\b([a-z]+) {_ID_WORDS}(?=[^a-z]|$)", low)
    if found and found.group(1) not in ("the", "your", "a", "an", "my", "that", "this", "its"):
        return f"{found.group(1)} number"
    found = re.search(rf"\b{_ID_WORDS} (?:of|for|on) (?:the|your|that|this) ([a-z]+)", low)
    if found:
        return f"{found.group(1)} number"
    if re.search(rf"(?:^|[^a-z]){_ID_WORDS}(?=[^a-z]|$)", low):
        return "number"
    found = re.search(r"\bwhich ([a-z]+) (?:is|are|was|were|do|did|does|should|would)\b", low)
    if found and found.group(1) not in _NOT_THINGS:
        return f"{found.group(1)} number"
    return None


_NOT_THINGS = frozenset({"one", "ones", "of", "option", "options", "way", "day", "time", "it"})


_LEAD = {
    "polite": ("Of course.", "Certainly, thank you.", "Sure.", "Yes, of course."),
    "neutral": ("Sure.", "", "OK.", "Yes."),
    "impatient": ("Fine.", "Here.", "", "Quickly then:"),
    "frustrated": ("Again?", "Fine.", "Ugh, okay.", "I already explained this."),
    "friendly": ("Sure thing!", "No problem!", "Of course!", "Happy to!"),
    "formal": ("Certainly.", "Very well.", "Of course.", "Here it is."),
}
_PERSONA_ASIDE = {
    "elderly": ("Let me find it, one moment.", "I wrote it down somewhere, here it is."),
    "in_a_hurry": ("Quickly:",),
    "detail_oriented": ("To be exact:", "Precisely:"),
    "non_native": ("I give you:",),
}
_NOT_HELD = (
    "I do not have the {noun} with me.",
    "Sorry, I do not have {a_noun} to give you.",
    "I have no {noun} for this, I am afraid.",
    "I do not know the {noun}.",
)


def say_fact(fact: Fact, rng: random.Random, *, again: bool) -> str:
    """One fact in the person's words; the value always appears exactly as held."""
    obj = " ".join(sorted(fact.objects & set(name_words(fact.name)))) or fact.label
    if fact.kind == "id":
        text = rng.choice((f"It is {obj} {fact.value}.", f"The {fact.label} is {fact.value}.",
                           f"My {obj} number is {fact.value}.", f"{fact.value}."))  # fmt: skip
    elif fact.kind == "email":
        text = rng.choice((f"My email is {fact.value}.", f"The email is {fact.value}.",
                           f"It is {fact.value}."))  # fmt: skip
    else:
        text = f"The {fact.label} is {fact.value}."
    if not again:
        return text
    head = text if text.startswith(str(fact.value)) else text[:1].lower() + text[1:]
    return f"As I said, {head}"


def has_errand(situation: dict[str, Any]) -> bool:
    """The person came to have something done or looked up with the tools (not to ask a
    general question): an answer that leaves it undone is one they react to."""
    human = situation.get("human") or {}
    return bool(situation.get("tools")) and human.get("ask_family") != "general"


@dataclass
class PersonState:
    """What one rollout's person has said so far."""

    given: set[str] = field(default_factory=set)
    # Facts already given twice ("As I said, ..."): asked again, the person has no new
    # way to say them and lets the agent's refusal stand.
    repeated: set[str] = field(default_factory=set)
    # Fields they said they do not have, and how often: said once more "as I said", then
    # not again (an agent that keeps asking gets no new answer).
    lacked: dict[str, int] = field(default_factory=dict)
    intent_said: bool = False
    pushed: bool = False
    contradicted: bool = False


def answer_turn(
    situation: dict[str, Any],
    reading: Reading,
    state: PersonState,
    rng: random.Random,
    counts: Counter[str],
) -> str | None:
    """The person's reply to what the agent asked, or None when it asked nothing."""
    human = situation["human"]
    tools: list[str] = situation.get("tools") or []
    parts: list[str] = []
    fresh = [f for f in reading.facts if f.name not in state.repeated]
    missing = [m for m in reading.missing if state.lacked.get(m, 0) < 2]
    if (reading.facts or reading.missing) and not fresh and not missing:
        return None  # asked again for what they gave twice or said they lack: nothing new
    if reading.facts:
        counts["answered_with_a_held_fact"] += 1
        lead = rng.choice(_LEAD.get(human.get("tone"), ("",)))
        aside = _PERSONA_ASIDE.get(human.get("persona"))
        parts.append(lead)
        if aside and rng.random() < 0.4:
            parts.append(rng.choice(aside))
        for fact in reading.facts:
            again = fact.name in state.given
            parts.append(say_fact(fact, rng, again=again))
            if again:
                state.repeated.add(fact.name)
            state.given.add(fact.name)
    if missing:
        counts["said_not_held"] += 1
        for noun in missing[:2]:
            a_noun = f"{'an' if noun[:1] in 'aeiou' else 'a'} {noun}"
            if state.lacked.get(noun):
                parts.append(f"As I said, I do not have the {noun}.")
            else:
                parts.append(rng.choice(_NOT_HELD).format(noun=noun, a_noun=a_noun))
            state.lacked[noun] = state.lacked.get(noun, 0) + 1
        offered = [f for f in facts_of(situation) if f.kind in ("id", "email")
                   and f.name not in state.given and f not in reading.facts]  # fmt: skip
        if offered and not reading.facts:
            parts.append("But I can give you this: " + say_fact(offered[0], rng, again=False))
            state.given.add(offered[0].name)
    if parts and tools and not state.intent_said:
        state.intent_said = True
        verb, _obj = situation["phrases"][tools[-1]]
        write = situation["tool_kinds"][tools[-1]] == "write"
        parts.append(f"I want to {verb} it." if write else "I just need the details.")
    if parts:
        return " ".join(p for p in parts if p)
    if reading.which_of_two:
        counts["chose_an_option"] += 1
        return rng.choice(("The newer one.", "The most recent one, I think."))
    if reading.options:
        counts["chose_an_option"] += 1
        return f"{_pick(situation, reading.options, rng)}, please."
    if reading.confirm:
        counts["answered_a_confirmation"] += 1
        if human.get("stance") in ("conflicting", "exploratory"):
            return rng.choice(("No, do not change anything yet.", "Not yet, I am only asking."))
        return rng.choice(("Yes, please go ahead.", "Yes, do it.", "Yes, that is right."))
    return None


def _pick(situation: dict[str, Any], options: list[str], rng: random.Random) -> str:
    """The option matching what the person came to do, else one of them."""
    tools: list[str] = situation.get("tools") or []
    verb = situation["phrases"][tools[-1]][0] if tools else ""
    chosen = next((o for o in options if verb and verb in o.lower()), None) or rng.choice(options)
    return chosen[:1].upper() + chosen[1:]
