"""The template writer: the offline default voice of the person, no model and no key.

An opener is assembled from fragments chosen by every human axis (persona, tone, stance,
length, ask family) and the world's hints a person could know (history, what they were
told about the record), then re-typed by texture. Fragment choice is seeded, and the
fragment pools multiply out to millions of openers per cell, so it never runs dry; the
engine's near-duplicate filter asks again with a new seed when two collide. Axis names
never appear in the text: fragments are plain speech, tested against the axis vocabulary.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from typing import Any

from ..agents.base import UserSimulator
from ..errors import PersonDropped
from ..models.options import ModelOptions
from ..registry import WRITERS
from ..seeding import seed_int
from ..spec import Spec
from .person import PersonState, answer_turn, facts_of, has_errand, read_turn
from .voice import Turn, checked_opener, stop_problem, turn_problem, unresolved

_GREETING = {
    "polite": ("Hello,", "Hi there,", "Good morning,", "Hello, hope you are well."),
    "neutral": ("Hi.", "Hello.", "", "Hey."),
    "impatient": ("", "Okay.", "Right.", "Listen."),
    "frustrated": ("This is getting ridiculous.", "Honestly, again?", "I am fed up.", "Ugh."),
    "friendly": ("Hey there!", "Hi friend!", "Hiya!", "Hey, hope your day is going well!"),
    "formal": ("Good day.", "Dear support team,", "Greetings.", "To whom it may concern,"),
}
_CLOSING = {
    "polite": ("Thank you so much.", "Thanks in advance.", "Much appreciated.", "Thank you."),
    "neutral": ("Thanks.", "", "Thx.", "Let me know."),
    "impatient": ("I need this sorted now.", "Quickly, please.", "Today, not tomorrow.", ""),
    "frustrated": (
        "Please just fix it.",
        "I expect better.",
        "Sort it out.",
        "This is the last time.",
    ),
    "friendly": ("Cheers!", "Thanks a bunch!", "You are a star!", "Have a good one!"),
    "formal": ("Kind regards.", "Yours sincerely.", "With thanks.", "Respectfully."),
}
_PERSONA = {
    "first_time": ("This is my first time writing to you.", "I have never done this before."),
    "returning": ("I have written in before.", "I am a regular customer."),
    "in_a_hurry": ("I am short on time.", "I only have a minute."),
    "non_native": (
        "My English is not so good, please be simple.",
        "English is my second language.",
    ),
    "detail_oriented": ("I want to be precise about this.", "Please give me the exact details."),
    "elderly": ("I am not very good with computers.", "My grandson usually helps me with this."),
}
_READ_ASK = (
    "Can you look up my {obj} {id}?",
    "Could you check on {obj} {id} for me?",
    "What is going on with {obj} {id}?",
    "I need the details for {obj} {id}.",
    "Please pull up {obj} {id}.",
    "Can you tell me where things stand with {obj} {id}?",
)
_WRITE_ASK = (
    "I want to {verb} my {obj} {id}.",
    "Please {verb} {obj} {id}.",
    "Could you {verb} {obj} {id} for me?",
    "I would like you to {verb} the {obj} with number {id}.",
    "I need to {verb} {obj} {id}.",
    "Can you {verb} {obj} {id}?",
)
_ID_SHAPE = re.compile(r"[A-Za-z]{2,5}-\d{3,6}")
_NOID_ASK = (
    "Can you {verb} {obj} for me?",
    "Please {verb} {obj}.",
    "I need you to {verb} {obj}.",
    "Could you {verb} {obj}?",
    "I would like to {verb} {obj}.",
)
_MULTI_ASK_NOID = (
    "Can you {verb1} {obj} and then {verb2} it?",
    "First {verb1} {obj}, then {verb2} it please.",
)
_MULTI_ASK = (
    "Can you look at {obj} {id} and then {verb2} it?",
    "First check {obj} {id}, then {verb2} it please.",
    "I need two things: the details of {obj} {id}, and to {verb2} it.",
)
_WHEN = (
    "yesterday", "last week", "on Monday", "a few days ago", "this morning", "over the weekend",
    "two weeks ago", "last month", "on Friday", "earlier today", "in the spring",
    "before the holidays",
)  # fmt: skip
_THING = ("my {obj}", "the {obj} I mentioned {when}", "an {obj} from {when}", "a {obj} of mine",
          "the {obj} from {when}", "one of my {obj}s")  # fmt: skip
_VAGUE_ASK = (
    "Something is off with {thing}.", "I have a problem with {thing}.", "It is about {thing}.",
    "There is an issue with {thing}.", "I need help with {thing}.", "Can you help me with {thing}?",
    "Something went wrong with {thing}.", "I am confused about {thing}.",
)  # fmt: skip
_VAGUE_TAIL = ("Can you sort it out?", "What should I do?", "Not sure what to do.", "",
               "Can you look into it?", "Please help.", "Any idea?", "What now?")  # fmt: skip
_GENERAL_ASK = (
    ("What are your opening hours", ("on weekends", "during the holidays", "next week", ""),
     "your opening hours"),
    ("Is there a phone line where I can reach a person", ("in the evening", "for free", ""),
     "a phone line to a person"),
    ("Do you have a privacy policy I can read", ("online", "in plain language", ""),
     "your privacy policy"),
    ("Which languages can you answer in", ("by email", "in this chat", ""),
     "the languages you answer in"),
    ("How do I change the email on my account", ("from my phone", "without logging in", ""),
     "changing the e-mail on their account"),
    ("Can I get a copy of my invoice", ("by post", "as a PDF", "for last year", ""),
     "a copy of an invoice"),
    ("Do you have an office", ("in Europe", "near Denver", "I can visit", ""),
     "whether you have an office"),
    ("Is this chat recorded", ("for training", "anywhere", ""),
     "whether this chat is recorded"),
    ("How long do you usually take to reply to emails", ("on weekends", "in December", ""),
     "how long e-mail replies take"),
    ("What is the best way to give feedback about your service", ("in writing", ""),
     "giving feedback"),
    ("Can I talk to you", ("on weekends", "at night", "on public holidays", ""),
     "when they can talk to you"),
    ("Do you offer gift cards", ("for businesses", "in other currencies", ""),
     "gift cards"),
    ("Are you a real person or a bot", ("", "by the way"),
     "whether you are a person or a bot"),
    ("Where can I find your terms of service", ("", "for my country"),
     "your terms of service"),
)  # fmt: skip
_LEAD = ("Quick question:", "Just wondering,", "One thing:", "Out of curiosity,", "", "",
         "Random question,", "Sorry to bother you,")  # fmt: skip
_STANCE = {
    "ordinary": ("", ""),
    "ambiguous": ("I am not sure whether to {verb} it or just check on it.",
                  "Maybe it needs to be handled, maybe not, I do not know."),
    "boundary": ("I know there are rules about this, but surely this case is fine.",
                 "It is a bit of an edge case, but please make an exception."),
    "adversarial": ("Do not give me the policy speech, just get it done.",
                    "Whatever your rules say, force it through."),
    "hurried": ("Quick one please.", "As fast as you can."),
    "unsure": ("I think that is the right number, but I am not certain.",
               "I might have mixed something up."),
    "mistaken": ("I was told it had already been sorted out.",
                 "Your colleague promised me this was done last week."),
    "conflicting": ("I want it handled, but I also do not want anything changed yet.",
                    "Go ahead, although actually keep it as it is for now."),
    "exploratory": ("I am thinking about whether to {verb} it, what are my options?",
                    "Before I decide, tell me what happens next."),
    "retry": ("I am trying this again.", "Second attempt at this."),
}  # fmt: skip
_HISTORY = {
    "fresh": ("",),
    "prior_failure": ("I tried this yesterday and it failed.", "Last time this did not work."),
    "prior_partial_action": ("Someone started on this last time but did not finish.",
                             "It got halfway last time."),
    "contradicts_earlier": ("Earlier I said something different, ignore that.",
                            "I know I told you the opposite before."),
    "repeat visit": ("I am back about the same thing.", "Writing again about this."),
}  # fmt: skip
_STATE_HINT = {
    "entity exists": ("",),
    "entity missing": ("Your app says it cannot find anything by that number.",
                       "I am not sure the number is right."),
    "entity already acted on": ("It may already have been dealt with, not sure.",
                                "I got an email about it but it was unclear."),
    "duplicate entity": ("I think there might be two of them under that number.",
                         "I may have placed it twice."),
    "partially completed": ("It was started earlier but stopped halfway.",
                            "It seems stuck in the middle."),
}  # fmt: skip
_CONTEXT = (
    "It is for a gift.",
    "I need it before the weekend.",
    "My partner asked me to handle this.",
    "I am writing from my phone.",
    "It is for work.",
    "I checked my emails first.",
)
_ABBREV = {
    "please": "pls", "you": "u", "your": "ur", "thanks": "thx", "because": "bc",
    "are": "r", "with": "w/", "tomorrow": "tmrw", "message": "msg", "before": "b4",
}  # fmt: skip


def _fill(template: str, **values: Any) -> str:
    return template.format(**values) if template else ""


def _protected(situation: dict[str, Any]) -> set[str]:
    return {str(v) for v in situation.get("entities", {}).values()}


def _low_first(word: str) -> str:
    """A sentence's first word as it reads mid-sentence ('I' and 'I'm' keep theirs)."""
    return word if word == "I" or word.startswith("I'") else word[:1].lower() + word[1:]


def retype(text: str, texture: str, rng: random.Random, protect: set[str]) -> str:
    """Re-type a message by texture; entity values (ids, emails) are never altered."""
    if texture == "standard":
        return text
    tokens = re.split(r"(\s+)", text)
    keep = {p for value in protect for p in value.split()}

    def safe(tok: str) -> bool:
        core = tok.strip(".,!?;:")
        return core in keep or "@" in core or any(map(str.isdigit, core))

    if texture == "lowercase":
        return "".join(t if safe(t) else t.lower() for t in tokens)
    if texture == "typo":
        out = []
        for tok in tokens:
            core = tok.strip(".,!?;:")
            if not safe(tok) and core.isalpha() and len(core) >= 5 and rng.random() < 0.3:
                i = rng.randint(1, len(core) - 3)
                swapped = core[:i] + core[i + 1] + core[i] + core[i + 2 :]
                tok = tok.replace(core, swapped, 1)
            out.append(tok)
        return "".join(out)
    if texture == "abbreviations":
        out = []
        for tok in tokens:
            core = tok.strip(".,!?;:").lower()
            if not safe(tok) and core in _ABBREV:
                tok = tok.lower().replace(core, _ABBREV[core], 1)
            out.append(tok)
        return "".join(out)
    if texture == "clipped":
        text = re.sub(r"\b(please|Please|could you|Could you|can you|Can you)\b\s*", "", text)
        text = re.sub(r",\s*([.!?])", r"\1", re.sub(r"\s+", " ", text)).strip()
        text = re.sub(r"([.!?]\s+)([a-z])", lambda m: m.group(1) + m.group(2).upper(), text)
        return text[:1].upper() + text[1:]
    if texture == "run_on":
        # The next sentence's first word loses its capital, unless it is a value ("ORD-1").
        joined = re.sub(
            r"(?<=[a-z0-9])[.!?]\s+(\S+)",
            lambda m: ", and " + (m.group(1) if safe(m.group(1)) else _low_first(m.group(1))),
            text,
        )
        return joined.rstrip(".!?")
    if texture == "no_punctuation":
        return "".join(
            re.sub(r"[.,!?;:]+$", "", t) if safe(t) else re.sub(r"[.,!?;:]", "", t) for t in tokens
        )
    return text


def general_topic(situation: dict[str, Any]) -> str:
    """What a general question is about ("gift cards", "your opening hours"), drawn from
    the same questions the template person asks, fixed by the situation. A model writer
    is given the topic, not the question: with nothing to ask about, a small model's
    general opener asks nothing ("Hey there! Could you explain why this happened?")."""
    key = situation.get("scenario_id") or situation.get("situation_id") or ""
    return _GENERAL_ASK[seed_int("general-topic", str(key)) % len(_GENERAL_ASK)][2]


def _ask(situation: dict[str, Any], rng: random.Random) -> tuple[str, str]:
    """The request itself, and the verb of the main tool (for stance lines)."""
    human = situation["human"]
    tools: list[str] = situation["tools"]
    if human["ask_family"] == "general" or not tools:
        question, qualifiers, _ = rng.choice(_GENERAL_ASK)
        qualifier = rng.choice(qualifiers)
        lead = rng.choice(_LEAD)
        if lead.endswith(","):
            question = question[:1].lower() + question[1:]
        text = f"{lead} {question}{' ' + qualifier if qualifier else ''}?".strip()
        return text[:1].upper() + text[1:], "handle"
    phrases = situation["phrases"]
    verb, obj = phrases[tools[-1]]
    if human["ask_family"] == "vague":
        thing = rng.choice(_THING).format(obj=obj, when=rng.choice(_WHEN))
        thing = re.sub(r"\bfrom (?:on|in|over) ", "from ", thing)
        if obj.endswith("s") and not obj.endswith("ss"):  # 'flights', 'tests': plural already
            thing = re.sub(r"^an? ", "the ", thing).replace(f"{obj}s", obj)
        text = f"{rng.choice(_VAGUE_ASK).format(thing=thing)} {rng.choice(_VAGUE_TAIL)}".strip()
        return text, verb
    named, ident = main_id(situation)
    if len(tools) > 1:
        first_verb, first_obj = phrases[tools[0]]
        pool = _MULTI_ASK if ident else _MULTI_ASK_NOID
        text = _fill(rng.choice(pool), obj=first_obj, id=ident, verb1=first_verb, verb2=verb)
    elif not ident:
        text = _fill(rng.choice(_NOID_ASK), verb=verb, obj=obj)
    elif situation["tool_kinds"][tools[0]] == "write":
        text = _fill(rng.choice(_WRITE_ASK), verb=verb, obj=obj, id=ident)
    else:
        text = _fill(rng.choice(_READ_ASK), obj=obj, id=ident)
    return " ".join([text, *details(situation, skip=named)]), verb


def main_id(situation: dict[str, Any]) -> tuple[str | None, str]:
    """The id the person leads with: the first key value that looks like an id (ORD-1234)."""
    for name, value in situation["targets"].items():
        if isinstance(value, str) and _ID_SHAPE.fullmatch(value):
            return name, value
    return None, ""


def details(situation: dict[str, Any], skip: str | None = None) -> list[str]:
    """Every other value the person has in mind, one plain sentence each."""
    out = [
        f"The {name.replace('_', ' ')} is {value}."
        for args in situation["arguments"].values()
        for name, value in args.items()
        if name != skip
    ]
    return list(dict.fromkeys(out))


def typed_as(situation: dict[str, Any], text: str, rng: random.Random) -> str:
    """`text` typed in the person's texture (lowercase, typos, …), their own values kept."""
    return retype(text, situation["human"]["texture"], rng, _protected(situation))


def compose_opener(situation: dict[str, Any], seed: int, *, typed: bool = True) -> str:
    """The person's first message. `typed=False` leaves it in plain spelling: the plan a
    model writer rewords (`people/model.py`), which types it in the person's texture after."""
    rng = random.Random(seed)
    human, world = situation["human"], situation["world"]
    ask, verb = _ask(situation, rng)
    tooled = human["ask_family"] != "general" and bool(situation["tools"])
    length = human["length"]
    parts: list[str] = []
    if length != "short" or rng.random() < 0.3:
        parts.append(rng.choice(_GREETING[human["tone"]]))
    if length == "long" or (length == "medium" and rng.random() < 0.5):
        parts.append(rng.choice(_PERSONA[human["persona"]]))
    if tooled and world["history"] != "fresh" and (length != "short" or rng.random() < 0.5):
        parts.append(rng.choice(_HISTORY[world["history"]]))
    parts.append(ask)
    if tooled and human["ask_family"] == "tool" and length != "short":
        parts.append(rng.choice(_STATE_HINT[world["world_state"]]))
    if tooled:
        parts.append(_fill(rng.choice(_STANCE[human["stance"]]), verb=verb))
    if length == "long":
        parts.append(rng.choice(_CONTEXT))
    if length != "short" or rng.random() < 0.3:
        parts.append(rng.choice(_CLOSING[human["tone"]]))
    text = re.sub(r"\b([Aa]) (?=[aeiouAEIOU])", r"\1n ", " ".join(p for p in parts if p))
    return typed_as(situation, text, rng) if typed else text


# What the person knows and how they talk: the part of a situation TemplateUser reads.
PERSON_KEYS = (
    "tools", "tool_kinds", "phrases", "world", "human", "targets", "arguments", "entities"
)  # fmt: skip


def person_brief(situation: dict[str, Any]) -> dict[str, Any]:
    """The person's side of a situation, to give an offline person to another process (an
    exported RL environment): no reference, no hidden state, nothing judge-only."""
    return {key: situation[key] for key in PERSON_KEYS if key in situation}


# A person whose ask the agent could not do reacts once before giving up: these stances
# push back, the others ask for another look (which is also what a person holding only
# the one number they gave can do).
_PUSHING = ("adversarial", "boundary", "conflicting")
_PUSH_BACK = (
    "That is not good enough. Just do it anyway.",
    "I do not care about the process, make it happen.",
    "Surely you can make an exception this once?",
)
_CHECK_AGAIN = (
    "Can you check again, please?",
    "Could you look again? I was sure that would work.",
    "Please check again, it is important to me.",
)
_CONTRADICT = (
    "Hang on, that is not what I was told before. Can you check again?",
    "That contradicts what someone told me earlier. Look again please.",
)


class TemplateUser:
    """The person's follow-ups: answer what the agent asked from what they hold (see
    `person.py`), react once when the agent could not do the errand (push back where the
    stance says so, else ask for another look), contradict once where the history says
    so, then stop.

    `max_replies` is the room left after the opener (the person speaks at most
    avg_turns // 2 times in all); `counts` is the writer's tally of how turns were
    answered and how conversations ended, for the run report. Every turn, and every
    ending, passes the voice check (`models/voice.py`) as a model writer's does; the
    template has nothing to redraw, so a turn that fails drops the rollout (`dropped`).
    """

    def __init__(
        self,
        situation: dict[str, Any],
        seed: int,
        max_replies: int,
        counts: Counter[str] | None = None,
    ) -> None:
        self.situation = situation
        self.rng = random.Random(seed)
        self.left = max_replies
        self.counts: Counter[str] = counts if counts is not None else Counter()
        self.facts = facts_of(situation)
        self.state = PersonState()
        self.reacted = False
        self.dropped: str | None = None

    async def reply(self, messages: list[dict[str, Any]]) -> str | None:
        if self.left <= 0:
            self.counts["ended_at_the_turn_cap"] += 1
            return None
        last = next(
            (m.get("content") or "" for m in reversed(messages) if m.get("role") == "assistant"),
            "",
        )
        turn = Turn(
            facts=self.facts,
            agent_last=str(last),
            said="\n".join(str(m.get("content") or "") for m in messages),
            reacted=self.reacted,
            errand=has_errand(self.situation),
            own=tuple(str(m.get("content") or "") for m in messages if m.get("role") == "user"),
        )
        text = self._answer(str(last))
        if text is None:
            self._check(stop_problem(turn))
            self.counts["ended_nothing_to_add"] += 1
            return None
        text = await self._say(text, turn)
        self.reacted = self.reacted or unresolved(turn.agent_last)
        self.left -= 1
        return text

    async def _say(self, plan: str, turn: Turn) -> str:
        """The planned line as the person types it: in their texture, and checked. A model
        writer's planned person (`people/model.py`) rewords it first."""
        text = self.typed(plan)
        self._check(turn_problem(text, turn))
        return text

    def typed(self, text: str) -> str:
        """`text` in the person's texture (lowercase, typos, …), their own values kept."""
        return typed_as(self.situation, text, self.rng)

    def _check(self, problem: str | None) -> None:
        if problem is None:
            return
        self.counts[f"dropped_{problem}"] += 1
        self.dropped = problem
        raise PersonDropped(problem, f"template person: a turn failed the voice check ({problem})")

    def _answer(self, last: str) -> str | None:
        situation = self.situation
        tools: list[str] = situation["tools"]
        reading = read_turn(last, self.facts)
        answered = answer_turn(situation, reading, self.state, self.rng, self.counts)
        if answered is not None:
            return answered
        state = self.state
        history = situation["world"]["history"]
        if history == "contradicts_earlier" and not state.contradicted and tools:
            state.contradicted = True
            self.counts["pushed_back"] += 1
            return self.rng.choice(_CONTRADICT)
        if not has_errand(situation) or self.reacted or not unresolved(last):
            return None
        # The agent could not do it: react once, then give up.
        if situation["human"]["stance"] in _PUSHING:
            state.pushed = True
            self.counts["pushed_back"] += 1
            return self.rng.choice(_PUSH_BACK)
        self.counts["asked_to_check_again"] += 1
        return self.rng.choice(_CHECK_AGAIN)


class TemplateWriter:
    """The offline writer. `name` is what rows carry as `writer_model`."""

    name = "template"

    def __init__(self, avg_turns: int = 12) -> None:
        self.avg_turns = avg_turns
        self.counts: Counter[str] = Counter()

    async def opener(self, situation: dict[str, Any], seed: int) -> str:
        """The opener, checked as a model writer's is (`voice.checked_opener`); one that
        fails is drawn again from a new seed."""
        turn = Turn.opener_for(situation)

        async def draw(attempt: int, _failed: str | None) -> str:
            return compose_opener(situation, seed if not attempt else seed_int(seed, attempt))

        return await checked_opener(draw, turn, self.counts, "template opener")

    def user(self, situation: dict[str, Any], seed: int) -> UserSimulator | None:
        replies = max(0, self.avg_turns // 2 - 1)
        if not replies:
            return None
        return TemplateUser(situation, seed_int("user", seed), replies, self.counts)

    def person_stats(self) -> dict[str, int]:
        """How the person's turns were answered and how conversations ended."""
        return dict(sorted(self.counts.items()))


@WRITERS.register("template")
def template_writer(spec: Spec, options: ModelOptions, *, avg_turns: int = 12) -> TemplateWriter:
    """Built in: situations and follow-ups from templates, no model."""
    return TemplateWriter(avg_turns=avg_turns)
