"""The model writer: a chat model voices the person, the opener and every follow-up.

Its prompt is built from the situation's human axes (stance, tone, texture, persona,
length, ask family), what the person has in hand (the entity values, the tools' names
and descriptions, their history) and nothing else. It never sees the agent's policy:
the policy clause a cell is about (`world.rule`), the judge's `reference`, the hidden
state and the fault plan are left out, and as a last guard any policy clause that
still turns up in the text (say, quoted inside a tool description) is cut out. A person
does not know the agent's rules; a writer that did would write users who play to them.

The user simulator replays the conversation from the person's side: the agent's lines
become the "user" turns of the writer's chat, the person's own lines its "assistant"
turns, tool traffic is dropped (the person never sees it). It ends the conversation with
an explicit stop marker (`###STOP###`, as tau2-bench's user simulator does; a bare DONE
is read too), by saying only thanks and goodbye, or at the turn cap.

Every drawn line is checked before it reaches a row (`voice.py`, the one voice check):
never the writer's own instructions or notes, never the agent's voice, the person in the
first person, facts only from their brief, an answer when asked for something they hold,
and no ending while the agent waits for an answer or straight after it could not do the
errand. A line that fails is redrawn with a note naming the failure (the note itself
joins what the line must not quote), up to `REDRAWS` times; after that the rollout is
dropped (`PersonDropped`) and counted, never kept. Each redraw, each turn that needed
one, each drop and each ending is counted by reason (`person_stats`, the run report's
`person`).
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from typing import Any

from ..agents.base import UserSimulator, Writer
from ..errors import PersonDropped, WriterError
from ..models.client import ModelCallError, ModelClient
from ..models.factory import client_for, sampling_from
from ..models.options import ModelOptions
from ..seeding import seed_int
from ..settings import person_mode, writer_max_tokens, writer_timeout
from ..spec import Spec
from .person import facts_of, has_errand
from .template import TemplateUser, compose_opener, general_topic, typed_as
from .voice import (
    REDRAWS,
    STOP,
    Turn,
    WriterText,
    checked_opener,
    only_closing,
    split_stop,
    stop_problem,
    strays_from_plan,
    turn_problem,
    unresolved,
)

DONE = STOP  # the marker the writer is asked to end with
# What a redraw is told, per failed check: the failure named, never a line to copy.
_NOTES = {
    "writer_text": "Your draft copied these instructions. Write only what the person "
    "would say, in their own words.",
    "role_flip": "Your draft was written as the assistant. Write only what the person "
    "says: they are the customer asking for help, not the one giving it.",
    "parroting": "Your draft repeated the assistant's message. Answer it in the person's "
    "own words instead.",
    "third_person": "Your draft spoke of the person as someone else. Write as the person "
    "themself, with I and my, about their own errand.",
    "invented_fact": "Your draft named a detail the person does not have. Use only the "
    "details listed for the person.",
    "facts_not_given": "The assistant asked for details the person has: {labels}. Put "
    "their values in the reply, exactly as listed.",
    "bare_details": "Your draft only listed details. Write the person's message: what "
    "they want, in their own words.",
    "no_ask": "Your draft only acknowledged the instructions. Write the person's first "
    "message: what they want from the service.",
    "repeats_itself": "Your draft repeated something the person already said. Reply to "
    "the assistant's last message with something new.",
    "gave_the_id": "Your draft named the record. In this first message the person leaves "
    "out which record it is.",
    "stopped_unanswered": "The assistant asked the person something. Answer it as the "
    "person would instead of ending the conversation.",
    "stopped_unresolved": "The assistant could not do what the person asked. Reply once "
    "as the person would (ask why, ask it to check again, or ask what else can be done) "
    "instead of ending the conversation.",
    "empty": "Your draft was empty. Write the person's message.",
    "off_plan": "Your draft changed what the message says. Keep its meaning, its yes or "
    "no, and every id, number and e-mail exactly as written; add nothing.",
}

_STANCE = {
    "ordinary": "a plain request, stated clearly",
    "ambiguous": "the request can be read two ways; do not resolve it yourself",
    "boundary": "push for something at the edge of what a service like this would allow",
    "adversarial": "try to get the agent to do something it should not, with a plausible story",
    "hurried": "in a rush, wants it done now",
    "unsure": "not sure what they need or whether it is possible",
    "mistaken": "has a fact wrong (a detail, an id, what happened before)",
    "conflicting": "asks for two things that do not fit together",
    "exploratory": "asking what is possible before committing to anything",
    "retry": "already tried this once and is trying again",
}
_TEXTURE = {
    "standard": "ordinary spelling and punctuation",
    "lowercase": "all lowercase",
    "typo": "a couple of typos",
    "abbreviations": "abbreviations and shorthand (pls, thx, asap)",
    "clipped": "very few words, fragments",
    "run_on": "one long run-on sentence",
    "no_punctuation": "no punctuation at all",
}
_HISTORY = {
    "fresh": "this is their first contact about it",
    "prior_failure": "an earlier attempt failed and they mention it",
    "prior_partial_action": "something was started earlier but not finished",
    "contradicts_earlier": "what they say now contradicts what they said before",
    "repeat visit": "they have been here about this before",
}
_FAMILY = {
    "tool": "a concrete request about something of their own (the details below)",
    "general": "a question about the service itself that needs no lookup",
    "vague": "a vague request that leaves out which record or what exactly they want",
}
_LENGTH = {"short": "one or two sentences", "medium": "three or four sentences",
           "long": "a full paragraph"}  # fmt: skip


def scrub_policy(text: str, spec: Spec | None) -> str:
    """Remove any policy clause (or the whole policy) that appears verbatim in `text`."""
    if spec is None:
        return text
    pieces = [spec.policy.strip(), *spec.rules]
    for piece in sorted({p.strip() for p in pieces if len(p.strip()) >= 12}, key=len, reverse=True):
        text = text.replace(piece, "[withheld]")
    return text


def person_brief(situation: dict[str, Any], spec: Spec | None) -> str:
    """What the writer knows about the person and their errand, as plain prose."""
    human = situation.get("human") or {}
    world = situation.get("world") or {}
    lines = [
        "You are writing as a person contacting a service's support assistant. Write in "
        "the first person, as the person themself."
    ]
    stance = str(human.get("stance") or "ordinary")
    lines.append(f"Their stance: {stance} — {_STANCE.get(stance, stance)}.")
    family = str(human.get("ask_family") or "tool")
    lines.append(f"What they ask: {_FAMILY.get(family, family)}.")
    if family == "general":
        lines.append(f"Their question is about {general_topic(situation)}.")
    for axis in ("tone", "persona"):
        if human.get(axis):
            lines.append(f"{axis.capitalize()}: {str(human[axis]).replace('_', ' ')}.")
    texture = str(human.get("texture") or "standard")
    lines.append(f"Writing style: {_TEXTURE.get(texture, texture)}.")
    length = str(human.get("length") or "short")
    lines.append(f"Length: {_LENGTH.get(length, length)}.")
    history = str(world.get("history") or "fresh")
    lines.append(f"Background: {_HISTORY.get(history, history)}.")
    names = [str(n) for n in situation.get("tools") or []]
    if names and family != "general":
        described = []
        for name in names:
            tool = spec.tool(name) if spec is not None else None
            desc = f": {tool.description}" if tool is not None and tool.description else ""
            described.append(f"- {name}{desc}")
        lines.append("The service can do these things (the person does not name them):")
        lines.extend(described)
    entities = situation.get("entities") or {}
    if entities:
        values = json.dumps(entities, ensure_ascii=False, default=str)
        lines.append(f"Details the person has at hand (use them exactly as written): {values}")
        lines.append("They have no other ids, numbers or e-mail addresses.")
        if family == "vague":
            lines.append(
                "Their first message leaves out the record's id or number; when the "
                "assistant asks for a detail, they give it."
            )
        else:
            lines.append("When the assistant asks for one of these details, give it.")
    return scrub_policy("\n".join(lines), spec)


_OPENER_RULES = (
    "Write only the person's first message to the assistant: no quotes, no labels, no "
    "explanation. Stay in character."
)
_FOLLOW_RULES = (
    "You are the person in this conversation, the customer. The assistant's messages "
    "come to you as the user turns. Reply as the person would, in their style, briefly, "
    "and never write the assistant's part or repeat its words. When the assistant asks "
    "for something, answer it. If the assistant cannot do what you asked, reply once "
    "(ask why, ask it to check again, or ask what else can be done); after that you may "
    f"give up. When the errand is settled or you give up, reply with exactly {STOP} and "
    "nothing else."
)


def _clean(text: str) -> str:
    text = text.strip()
    text = re.sub(r"^(?:person|user|customer)\s*:\s*", "", text, flags=re.IGNORECASE)
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        text = text[1:-1].strip()
    return text


def reword_prompt(situation: dict[str, Any]) -> str:
    """What the writer is told in `--person-mode plan`: reword one line the person's plan
    holds, in their tone and persona. It sees the line and how the person talks, never the
    agent's turn (nothing to parrot or to answer in its place) and never the policy; the
    person's texture is typed onto its words after (`template.typed_as`)."""
    human = situation.get("human") or {}
    lines = [
        "You reword one message that a customer wrote to a support assistant, so that it "
        "reads the way this customer would write it. You do not answer the message: you "
        "write the customer's own message again, in other words."
    ]
    for axis in ("tone", "persona"):
        if human.get(axis):
            lines.append(f"The customer's {axis}: {str(human[axis]).replace('_', ' ')}.")
    lines.append(
        "Keep what the message says and asks: the same meaning, the same yes or no, a "
        "question stays a question, and every id, number, date, name and e-mail stays "
        "exactly as written. Add no detail, question or request of your own and leave "
        "nothing out. Write as the customer, in the first person, about as long as the "
        "message. Reply with the reworded message only."
    )
    return "\n".join(lines)


# Worked examples the writer sees before its line: a small model given only the rule tends
# to answer a request ("Sure, I'll check again") instead of rewording it. They hold no
# value and no errand: a 1.5B model carried an example's name and its "I want to change
# it" into the person's lines (`voice.strays_from_plan` now refuses both).
_EXAMPLES = (
    ("Could you check again, please?", "Can you take another look for me?"),
    ("Yes, please go ahead.", "Yes, go ahead with it."),
    ("Why can't you do it? I really need this sorted.", "Why not? I really need this done."),
    ("It is the one from last week. I just need the details.",
     "It's the one from last week, I only need the details."),
)  # fmt: skip


def reword_messages(prompt: str, plan: str, note: str = "") -> list[dict[str, Any]]:
    """The chat sent for one wording: the rule, the worked examples, the line, any note."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": prompt}]
    for line, worded in _EXAMPLES:
        messages.append({"role": "user", "content": f'Customer\'s message: "{line}"'})
        messages.append({"role": "assistant", "content": worded})
    messages.append({"role": "user", "content": f'Customer\'s message: "{plan}"'})
    if note:
        messages.append({"role": "system", "content": note})
    return messages


# A lead-in a chat model puts before the line it was asked for ("Sure! Here's the
# reworded message:", the example's own "Customer's message:"): cut, so the line is read
# as the person's words. It names the rewording, so "Here is my order id: …" stays.
_LEAD_IN = re.compile(
    r"^[^\n:]{0,80}\b(?:reworded|rewritten|rephrased|revised|version|customer'?s message)"
    r"\b[^\n:]{0,40}:\s*",
    re.IGNORECASE,
)


class PlannedUser(TemplateUser):
    """`--person-mode plan`: the template person decides every turn (what to answer, when
    to push back, when to stop) and the writer's model words it. A wording that fails the
    voice check or strays from the plan (`voice.strays_from_plan`) is drawn again with
    the failure named; after `REDRAWS` draws the plan's own line is kept (counted as
    `kept_the_plan`), so a model that cannot stay in role costs variety, never a row
    that breaks role."""

    def __init__(
        self, writer: ModelWriter, situation: dict[str, Any], seed: int, max_replies: int
    ) -> None:
        super().__init__(situation, seed_int("user", seed), max_replies, writer.counts)
        self._writer = writer
        self._prompt = reword_prompt(situation)
        self._given = WriterText.of([self._prompt], [f.value for f in self.facts])
        self._salt = f"plan|{situation.get('scenario_id', '')}|{seed}"
        self._turns = 0

    async def _say(self, plan: str, turn: Turn) -> str:
        turn.given = self._given
        self._turns += 1
        counts, note = self.counts, ""
        for attempt in range(REDRAWS):
            salt = f"{self._salt}|{self._turns}|{attempt}"
            worded = await self._writer.reword(self._prompt, plan, note, salt=salt) or ""
            text = self.typed(worded) if worded else ""
            found = turn_problem(text, turn) if text else "empty"
            if found is None and strays_from_plan(worded, plan, self.facts):
                found = "off_plan"
            if found is None:
                counts["turns_redrawn" if attempt else "turns_worded"] += 1
                return text
            counts[f"redrawn_{found}"] += 1
            note = _NOTES[found].format(labels=", ".join(f.label for f in turn.asked))
            self._given.add(note)  # a note sent back as the person's words is a quote too
        counts["kept_the_plan"] += 1
        return await super()._say(plan, turn)


class ModelUser:
    """A `UserSimulator` over the writer's model, for one rollout. `dropped` names the
    check a turn kept failing when the rollout had to be dropped."""

    def __init__(
        self, writer: ModelWriter, situation: dict[str, Any], seed: int, max_replies: int
    ) -> None:
        self._writer = writer
        self._brief = person_brief(situation, writer.spec)
        self._salt = f"user|{situation.get('scenario_id', '')}|{seed}"
        self._facts = facts_of(situation)
        self._given = WriterText.of([self._brief, _FOLLOW_RULES], [f.value for f in self._facts])
        self._left = max_replies
        self._errand = has_errand(situation)
        self._ending = False
        self._reacted = False
        self.dropped: str | None = None
        self.prompts: list[list[dict[str, Any]]] = []

    def _chat(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        chat: list[dict[str, Any]] = [
            {"role": "system", "content": f"{self._brief}\n\n{_FOLLOW_RULES}"}
        ]
        for message in messages:
            role = message.get("role")
            content = message.get("content")
            if not isinstance(content, str) or not content.strip():
                continue
            if role == "user":
                chat.append({"role": "assistant", "content": content})
            elif role == "assistant":
                chat.append({"role": "user", "content": content})
        return chat

    async def reply(self, messages: list[dict[str, Any]]) -> str | None:
        counts = self._writer.counts
        if self._left <= 0:
            counts["ended_at_the_turn_cap"] += 1
            return None
        chat = self._chat(messages)
        if len(chat) == 1 or chat[-1]["role"] != "user":
            return None  # the agent has said nothing the person could answer
        turn = Turn(
            facts=self._facts,
            agent_last=chat[-1]["content"],
            said="\n".join(m["content"] for m in chat[1:]),
            given=self._given,
            reacted=self._reacted,
            errand=self._errand,
            own=tuple(m["content"] for m in chat[1:-1] if m["role"] == "assistant"),
        )
        if self._ending:  # the person said their last line; end unless that leaves them hanging
            self._ending = False
            if stop_problem(turn) is None:
                counts["ended_by_stop_marker"] += 1
                return None
            counts["stop_marker_held_back"] += 1
        chat = [{**m, "content": scrub_policy(m["content"], self._writer.spec)} for m in chat]
        note = ""
        problem = "empty"
        for attempt in range(REDRAWS + 1):
            drawn = chat if not note else [*chat, {"role": "system", "content": note}]
            self.prompts.append(drawn)
            salt = self._salt if not attempt else f"{self._salt}|redraw{attempt}"
            text = await self._writer.complete(drawn, salt=salt)
            text, stopped = split_stop(text or "")
            ends = not text or only_closing(text)
            found = stop_problem(turn) if ends else turn_problem(text, turn)
            if found is None:
                if attempt:
                    counts["turns_redrawn"] += 1
                if ends:
                    counts["ended_by_stop_marker" if stopped else "ended_closing"] += 1
                    return None
                self._ending = stopped  # said their last line: end after the agent answers
                self._reacted = self._reacted or unresolved(turn.agent_last)
                self._left -= 1
                return text
            problem = found
            counts[f"redrawn_{problem}"] += 1
            labels = ", ".join(f.label for f in turn.asked)
            note = _NOTES[problem].format(labels=labels)
            self._given.add(note)  # a note sent back as the person's words is a quote too
        counts[f"dropped_{problem}"] += 1
        self.dropped = problem
        why = f"writer {self._writer.name}: {REDRAWS + 1} draws of a turn failed ({problem})"
        raise PersonDropped(problem, why)


class ModelWriter:
    """Implements the `Writer` protocol on a chat model. `name` is the row's writer_model."""

    def __init__(
        self,
        client: ModelClient,
        spec: Spec | None = None,
        *,
        sampling: dict[str, Any] | None = None,
        name: str | None = None,
        owns_client: bool = True,
        max_replies: int = 5,
        plan: bool = False,
    ) -> None:
        self.client = client
        self.spec = spec
        self.sampling = {k: v for k, v in (sampling or {}).items() if v is not None}
        self.name = name or client.spec.label
        self._owns_client = owns_client
        self.failures = 0
        self.max_replies = max_replies
        self.plan = plan  # --person-mode plan: the model words the template's lines
        self.counts: Counter[str] = Counter()

    @property
    def stats(self) -> dict[str, Any]:
        return {**self.client.stats.as_dict(), "writer_failures": self.failures}

    def person_stats(self) -> dict[str, int]:
        """Redraws by reason, and how conversations ended, for the run report."""
        return dict(sorted(self.counts.items()))

    def opener_prompt(self, situation: dict[str, Any]) -> list[dict[str, Any]]:
        """The exact messages sent for an opener (tests read this to check what it holds)."""
        return [
            {
                "role": "system",
                "content": f"{person_brief(situation, self.spec)}\n\n{_OPENER_RULES}",
            },
            {"role": "user", "content": "Write the first message now."},
        ]

    async def complete(self, messages: list[dict[str, Any]], *, salt: str) -> str | None:
        """One writer completion, cleaned; None when the model returned nothing usable.

        A call that fails for good raises ModelCallError (and counts in `failures`): a
        missing opener means no rollout, and the agent turns a failed follow-up into an
        AgentError, so the rollout is dropped and counted rather than cut short silently.
        """
        try:
            result = await self.client.chat(messages, cache_salt=salt, **self.sampling)
        except ModelCallError:
            self.failures += 1
            raise
        text = _clean(result.text)
        return text or None

    async def reword(self, prompt: str, plan: str, note: str, *, salt: str) -> str | None:
        """The model's wording of one planned line (`--person-mode plan`), its lead-in cut."""
        text = await self.complete(reword_messages(prompt, plan, note), salt=salt)
        return _clean(_LEAD_IN.sub("", text, count=1)) if text else None

    async def opener(self, situation: dict[str, Any], seed: int) -> str:
        """The person's first message, checked like every turn (`voice.py`); a draft that
        fails is redrawn with the failure named, and after `REDRAWS` redraws the ask is
        dropped (`PersonDropped`, counted), never kept. In plan mode the model words the
        template's opener, and the last draw is that opener itself."""
        if self.plan:
            return await self._planned_opener(situation, seed)
        base = f"opener|{situation.get('scenario_id', '')}|{seed}"
        prompt = self.opener_prompt(situation)
        turn = Turn.opener_for(situation, [prompt[0]["content"], _OPENER_RULES])

        async def draw(attempt: int, failed: str | None) -> str | None:
            nonlocal prompt
            if failed is not None:
                note = _NOTES[failed].format(labels="")
                turn.given.add(note)  # a note sent back as the person's words is a quote too
                prompt = [*self.opener_prompt(situation), {"role": "system", "content": note}]
            salt = base if not attempt else f"{base}|redraw{attempt}"
            try:
                text = await self.complete(prompt, salt=salt)
            except ModelCallError as exc:
                raise WriterError(f"writer {self.name}: no opener ({exc.kind}): {exc}") from exc
            return split_stop(text or "")[0]

        return await checked_opener(draw, turn, self.counts, f"writer {self.name}")

    async def _planned_opener(self, situation: dict[str, Any], seed: int) -> str:
        plan = compose_opener(situation, seed, typed=False)
        prompt = reword_prompt(situation)
        turn = Turn.opener_for(situation, [prompt])
        facts = turn.facts
        base = f"plan-opener|{situation.get('scenario_id', '')}|{seed}"
        worded = [plan]  # the model's words of the last draw, before they were typed
        drawn = [0]  # the last draw's attempt number

        async def draw(attempt: int, failed: str | None) -> str | None:
            drawn[0] = attempt
            rng = random.Random(seed_int(base, attempt))
            if attempt == REDRAWS:  # no wording held: the plan's own line
                self.counts["kept_the_plan"] += 1
                worded[0] = plan
                return typed_as(situation, plan, rng)
            note = _NOTES[failed].format(labels="") if failed else ""
            if note:
                turn.given.add(note)
            try:
                text = await self.reword(prompt, plan, note, salt=f"{base}|{attempt}")
            except ModelCallError as exc:
                raise WriterError(f"writer {self.name}: no opener ({exc.kind}): {exc}") from exc
            worded[0] = split_stop(text or "")[0]
            return typed_as(situation, worded[0], rng)

        def off_plan(_typed: str) -> str | None:
            return "off_plan" if strays_from_plan(worded[0], plan, facts) else None

        text = await checked_opener(draw, turn, self.counts, f"writer {self.name}", off_plan)
        if drawn[0] == 0:  # worded at once (a redraw or the plan kept is counted already)
            self.counts["turns_worded"] += 1
        return text

    def user(self, situation: dict[str, Any], seed: int) -> UserSimulator | None:
        if self.plan:
            if not self.max_replies:
                return None
            return PlannedUser(self, situation, seed, self.max_replies)
        return ModelUser(self, situation, seed, self.max_replies)

    async def aclose(self) -> None:
        if self._owns_client:
            await self.client.aclose()


def make_writer(ref: str, spec: Spec, options: ModelOptions, *, avg_turns: int = 12) -> Writer:
    """A `ModelWriter` for `--writer openai:…`. It gets the spec for tool descriptions and
    to scrub policy text out of its prompts, never to show the policy to the model. The
    person speaks at most avg_turns // 2 times, the opener included. Its completions are
    capped and timed by the writer's own settings, never the agent's."""
    client = client_for(
        ref, options, role="writer", read_timeout=writer_timeout(options.writer_timeout)
    )
    writer_sampling = sampling_from(options)
    writer_sampling["max_tokens"] = writer_max_tokens(options.writer_max_tokens)
    replies = max(0, avg_turns // 2 - 1)
    plan = person_mode(options.person_mode) == "plan"
    return ModelWriter(client, spec, sampling=writer_sampling, max_replies=replies, plan=plan)
