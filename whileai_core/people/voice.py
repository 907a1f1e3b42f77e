"""The voice check: does a line drafted for the person read as the person?

Every turn of the simulated person (the opener and each follow-up, drawn by a model
writer or assembled by the template writer) is checked here before it is kept. Small
chat models asked to play the customer slip in ways that teach a policy the wrong thing,
and each check names one of them, so the writer can redraw the line with the failure
named (and count why) instead of putting it in a row:

- `writer_text`: a sentence the writer was given (its brief, its rules, a redraw note)
  comes back as the person's words ("The assistant asked for details the person has.
  Give them exactly as written: ...", "look up an order by its id and return its
  status"), or the move its rules name is announced instead of made ("I'll ask why
  not.");
- `role_flip`: the agent's voice: offers of help, apologies for what it cannot access,
  requests for context, "as an AI", tool or JSON syntax (`{"order_id": ...}`,
  `date=2025-04-01`); and, read by who holds what in
  the sentence rather than by wording, a line that serves the listener (the listener's
  needs or questions are what the line attends to: "What would you like to know?", "If
  you have any other questions, don't hesitate to ask") or one where the speaker works
  the record the service keeps ("I will check the status of the order again", "I can't
  confirm the order's status"): a person brings needs and asks for the work, the
  service attends to needs and does the work;
- `parroting`: the agent's last turn said back, or its request restated as the
  person's own need instead of answered;
- `third_person`: the person speaks of themself as someone else ("the customer wants",
  "I have his email", their own name where another's goes: "an order from Ken Smith");
- `invented_fact`: an id, e-mail or reference that is not in their brief and that nobody
  in the conversation said;
- `facts_not_given`: the agent asked for something the person holds and the turn does
  not give it;
- `bare_details` (openers): only labels and values ("Order ID: ORD-1010"), no ask;
- `no_ask` (openers): only an acknowledgement ("Sure, I understand."), or a message
  that opens by complying ("Sure, I'll give you the first message"): nothing was said
  to the person yet, so it is the writer answering its own instruction, not a person
  starting an errand;
- `repeats_itself`: a follow-up the person already said, word for word;
- `gave_the_id` (openers): a vague ask that names the record it is meant to leave out;
- `stopped_unanswered`: ending while the agent waits for an answer;
- `stopped_unresolved`: ending straight after the agent could not do it (refused, failed,
  found nothing) without reacting once: a person's brief says they react once (ask
  again, ask why, ask what else they can do), and only then give up.

The checks read how a line is built, not a model's favourite phrasing. Every pattern
here runs on text capped at `MAX_CHARS` and is linear (no nested repeats).
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from ..errors import PersonDropped
from ..judges import replies as rp
from ..judges.evidence import CALENDAR_NAMES, dates, identifiers, numbers, stated_statuses
from ..places import place_names
from ..text.literals import GatedPatterns
from ..text.similarity import WordNgramEmbedder, cosine
from .person import Fact, Reading, asked_facts, asked_labels, facts_of, may_ask, read_turn

STOP = "###STOP###"
MAX_CHARS = 4000  # a person's turn is short; anything past this is not read
# Markers a writer may use to end the conversation: the one we ask for, tau2-bench's own
# (the same), and the bare DONE older prompts asked for.
_STOP_MARKERS = re.compile(r"#{2,}\s*[Ss][Tt][Oo][Pp]\s*#{2,}|\bDONE\b\.?\s*$")
_BARE_DONE = re.compile(r"^\W*done\W*$", re.IGNORECASE)

_AGENT_SIDE = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        r"\bhow (?:else )?(?:can|may|could|might) i (?:help|assist|be of (?:help|assistance"
        r"|service))\b",
        r"\bwhat can i (?:do|help you with)\b",
        r"\bwhat (?:do|can|would) you (?:need|want|like) (?:help|assistance|me to help) with\b",
        r"\b(?:help|assist) you (?:with|today)\b",
        r"\banything else (?:i can|i could|that i can|you need)\b",
        r"\b(?:let me know|tell me) if (?:you|there) (?:need|is|are|have)\b"
        r"|\bif you need anything else\b",
        r"\bi(?:'m| am) (?:not able|unable) to (?:provide|share|give|disclose|access) "
        r"(?:that|this|the|any|your)\b",
        # "I'm not able to provide a confirmation for KIX yet": the service's answer owed.
        r"\bi(?:'m| am) (?:not able|unable) to (?:provide|give|send) (?:you (?:with )?)?"
        r"(?:a|an) (?:confirmation|update|status update|answer|result)\b",
        # The record's state withheld: "I cannot provide you with its status or items".
        # "I can't give you the tracking number" is a handle the person lacks.
        r"\bi (?:can't|cannot|can not) (?:provide|share|give|disclose|show) (?:you (?:with )?)?"
        r"(?:its|the|this|that|any|your) (?:[a-z]{1,20}'s )?(?:status|items|record|records"
        r"|history)\b(?! (?:number|id|reference|code)\b)",
        r"\bis there anything (?:else )?(?:i can|you would like|you'd like)\b",
        r"\bfeel free to (?:ask|reach|contact|let me know)\b",
        r"\bas an? (?:ai|assistant|language model|support agent|chatbot)\b|\blanguage model\b"
        r"|\bvirtual assistant\b|\bi(?:'m| am) (?:an? )?(?:ai|bot|chatbot|assistant)\b",
        r"\bi(?:'m| am) (?:sorry|afraid),? but i (?:don't|do not|can't|cannot|am unable|"
        r"'m not|am not)\b",
        r"\b(?:i'm|i am) not sure what you(?:'re| are) (?:asking|referring|looking)\b",
        r"\bi (?:can't|cannot|can not|am unable to|won't be able to) (?:help|assist)"
        r"(?: you)? (?:with (?:that|this|your)|here)\b",
        # "Sorry, but I cannot assist you.": the service turning the listener away.
        r"\bi (?:can't|cannot|can not|am unable to) (?:help|assist) you\s{0,3}(?:[.!]|$)",
        # The listener spoken of as the one being served: "I will ask the customer to
        # provide the order id." ("the customer service" is the service's own.)
        r"\b(?:ask|tell|remind|inform|contact|notify) the (?:customer|client|caller|person|user)\b"
        r"(?! (?:service|support|care|team|desk|line)\b)",
        r"\bi (?:don't|do not) have (?:enough |any )?(?:reliable |further |more |current "
        r"|accurate |specific |up-to-date )?(?:information|access|details|records)\b",
        r"\b(?:the|any) records? you (?:are|were|have been) referring to\b",
        r"\b(?:i have|i've) (?:checked|looked up|located|refunded|cancell?ed|processed|updated|"
        r"issued|reviewed|escalated)\b[^.?!]{0,80}\byour\b",
        r"\byour (?:order|booking|request|refund|account|ticket|reservation|issue|case)\b"
        r"[^.?!]{0,40}\b(?:has been|have been|is now|was successfully)\b",
        r"\bthanks? (?:you )?for (?:contacting|reaching out|your patience|choosing|your order"
        r"|your understanding|your cooperation)\b",
        # The service's voice: "as a service, I am bound by laws", "does not exist in our
        # records", the person's own details ruled invalid.
        r"\bas a (?:service|company|business|support (?:agent|team))\b"
        r"|\b(?:in|on|from) our (?:records|system|database)\b"
        r"|\bthe (?:order|booking|flight) (?:id|number|reference|ref)(?: and (?:the )?\w+)?"
        r" (?:is|are) (?:not valid|invalid)\b",
        # The person asking the listener which record is their own: "Please let me know
        # which order it is."
        r"\blet me know which (?:order|booking|record|flight|reservation) (?:it is|is mine)\b",
        r"\b(?:could|can|would) you (?:please )?(?:provide|share|confirm|give) (?:me )?"
        r"(?:with )?(?:your|the|some|a bit of|more|additional|a|an|any)\b",
        r"\bwhat (?:else )?can i (?:do|help you with)\b|\bcan i do for you\b",
        r"\bi (?:have )?found (?:a|an|the|your|two|no) (?:booking|order|record|flight|"
        r"reservation|results?|matches|match|file|issue|ticket)\b",
        r"\bthe system (?:could not|couldn't|cannot|did not|didn't|returned|shows|found|"
        r"says)\b",
        r"\b(?:you(?:'ll| will)? need to|you have to) provide\b|\bwe can proceed\b"
        r"|\blet me clarify\b|\bto proceed with (?:the|your) request\b",
        r"\b(?:the|that) \w{2,20} you(?:'re| are) looking for\b",
        r"\bi apologi[sz]e,? but\b|\bi (?:can't|cannot|can not) proceed\b"
        r"|\bi (?:need|require) (?:to know |to have )?(?:the|your) [^.?!]{0,60}\bto proceed\b",
        r"\bplease (?:provide|share) (?:me with )?(?:your|the|some|more)\b",
        r"\b(?:more|additional) (?:information|context|details) (?:so|in order) (?:that )?i\b",
        r"\b(?:let me|i'll|i will) (?:check|look into|look up|pull up|process)\b[^.?!]{0,80}"
        r"\bfor you\b",
        r"\bi(?:'d| would) be (?:happy|glad) to (?:help|assist)\b",
        # The speaker as the service: "as a service's support assistant, I don't have the
        # ability to search for your flight".
        r"\bas an? (?:\w{1,20}'s )?(?:\w{1,20} )?(?:assistant|agent|representative|chatbot"
        r"|bot),? (?:i|we)\b|\bi (?:do not|don't) have the ability to\b",
        # The writer's own constraint said back: "I don't have any other IDs or numbers."
        r"\b(?:do not|don't) have any other (?:ids?|numbers?|e-?mails?|details)\b",
        # The speaker checking who the other is: "to verify it's the right person".
        r"\bverify (?:your identity|(?:that )?(?:it's|it is|you're|you are) (?:the )?(?:right"
        r"|correct) (?:person|customer|account holder))\b",
        # The service's apology, sympathy and promises: "I'm sorry for the inconvenience",
        # "I'm sorry to hear that", "I'll look into it", "I will send you a confirmation
        # email".
        r"\b(?:sorry|apologi[sz]e) for (?:the|any|this) inconvenience\b"
        r"|\bi(?:'m| am) (?:so |very |really )?sorry to hear (?:that|about)\b"
        r"|\b(?:steps|actions) you (?:need|have|will need) to take\b"
        r"|\bi(?:'ll| will) look into (?:it|this|that)\b"
        r"|\b(?:i|we)(?:'ll| will) (?:send|email|e-mail) you (?:a |the )?confirmation\b",
        # The service sending the listener on: "If the issue persists, try contacting us";
        # "If there's anything else, please let me know".
        r"\b(?:contact|contacting|reach out to|reaching out to|call|calling) us\b"
        r"|\bif there(?:'s| is) anything else,? (?:please )?(?:let me know|feel free|don't "
        r"hesitate|do not hesitate)\b",
        # The speaker keeping the listener informed: "I've already informed you about the
        # current stale record".
        r"\bi(?:'ve| have) (?:already )?(?:informed|notified|advised) you\b",
        # The speaker as the one questions come to: "I just received a general question".
        # "I've received a request to cancel an order." ("I received a request from your
        # team", "a request form", "a refund request confirmation" are the person's.)
        r"\bi(?:'ve| have)? (?:just |already )?(?:received|got|was given) (?:a|an|this|the) "
        r"(?:\w{1,20} )?(?:question|query|inquiry|enquiry|request|ticket|complaint)s?"
        r"(?=\s{0,3}(?:[.,;:!?]|$|(?:to|about|for|regarding|asking|that"
        r"|and|but|so|which|today|earlier|here)\b))",
        # The agent's request for clarification: "Can you please clarify the issue?". "Can
        # you explain the problem with my order?" asks about what the service found.
        r"\b(?:can|could|would) you (?:please )?(?:clarify|explain|describe|elaborate on"
        r"|specify) (?:the|your) (?:issue|problem|question|concern|request|query)\b"
        r"(?! (?:with|of|on|about|in|for|that|you)\b)",
        # The service's sign-off with no "you" in it: "If there are any other issues or
        # concerns, please don't hesitate to reach out" ("... to reach out to me" would
        # be the person's).
        r"\b(?:don't|do not) hesitate to (?:reach out|ask|contact|get in touch)\b"
        r"(?![^.?!]{0,20}\b(?:me|my)\b)",
        # The service asking which record: "Please specify the record in question."
        r"\bplease (?:specify|identify|indicate) (?:the|which) (?:\w{1,20} )?(?:record|order"
        r"|booking|reservation|flight|account)s?\b(?! (?:number|id|reference|ref|status|for)\b)",
        # A choice offered to the listener: "Would you like the second one?". The person
        # offers only their own ("Would you like my reference again?").
        r"\bwould you like (?:the|a|an|this|that|one|to (?:choose|pick|select|go with))\b"
        r"(?![^.?!]{0,40}\b(?:my|me|mine|number|id|reference|ref|code|e-?mail|name)\b)"
        r"[^.?!]{0,60}\?",
        # The line signed as the service: "... Respectfully. Your support team,".
        r"(?:(?:^|[.!?]\s+|\n)\s*(?:your|our)|\b(?:regards|sincerely|respectfully|wishes),?"
        r"\s+(?:your|our|the)) (?:support|service|customer (?:service|care|support)|help ?desk)"
        r" team[,.!]?\s*$",
        # Tool or JSON syntax, a chat template's tokens, a function-call recipe.
        r"[{\[]\s*\"[A-Za-z_]{1,40}\"\s*:|(?<![\w=])[a-z][a-z_]{1,30}=[\"'\w]",
        r"<\|[a-z_]{1,30}\|>|</?tool_call>|```",
        r"\b(?:to call a function|function call|tool_call|here is the json)\b",
    )
)
_THIRD_PERSON = (
    re.compile(
        r"\b(?:the|this) (?:person|customer|user|caller|client)(?:'s)? (?:wants?|needs?|"
        r"would like|is|has|had|asks?|says?|gives?|provides?|holds?|writes?|mentions?|"
        r"requests?|tried)\b",
        re.IGNORECASE,
    ),
    # "list the orders for the customer with the email address ana@...": the person's own
    # e-mail, and themself as the one the listener serves ("I'm the customer with the
    # broken parcel" is first person).
    re.compile(
        r"(?<!i'm )(?<!i am )(?<!\u2019m )(?<!as )\b(?:the|a) (?:person|customer|user|caller"
        r"|client|account holder) (?:with|whose|named|called)\b",
        re.IGNORECASE,
    ),
    re.compile(
        r"\b(?:his|her) (?:own )?(?:e-?mail|order|booking|account|reference|ref|number|id|"
        r"last name|name|details|reservation|ticket|flight|refund|purchase)\b",
        re.IGNORECASE,
    ),
)
_CLOSING = frozenset(
    {
        "thanks", "thank", "you", "bye", "goodbye", "ok", "okay", "great", "perfect",
        "welcome", "youre", "you're", "that", "thats", "that's", "all", "done", "cheers",
        "have", "a", "nice", "good", "day", "so", "much", "is", "it", "for", "now", "sounds",
        "awesome", "appreciate", "appreciated", "i", "im", "i'm", "lovely", "wonderful",
        "alright", "right", "sorted", "cool", "fine", "again", "help", "your", "the", "was",
        "very", "too", "are", "we",
    }
)  # fmt: skip
# Words an opener may use to label a value it gives ("Order ID: ORD-1"): what is left of
# an opener once these and the values are gone is the ask.
_LABELS = frozenset(
    {"id", "ids", "number", "no", "ref", "reference", "code", "email", "e", "mail", "name",
     "date", "is", "my", "the", "and", "a", "an", "of", "for", "it", "hi", "hello", "here",
     "i", "have", "got"}
)  # fmt: skip
# What a line made only of acknowledgements is made of ("Sure, I understand.").
_ACK = _CLOSING | frozenset(
    {"sure", "understand", "understood", "got", "yes", "yeah", "of", "course", "certainly",
     "no", "problem", "noted", "will", "do", "absolutely", "gladly", "here", "go", "ill",
     "get", "to", "on", "away", "start", "let", "me", "can", "happy"}
)  # fmt: skip
# Words that comply with an instruction (an opener cannot answer anyone else).
_COMPLY = frozenset({"sure", "certainly", "understood", "absolutely", "course", "got", "noted",
                     "gladly", "will"})  # fmt: skip
_MISSING = re.compile(
    r"\b(?:not found|could ?n[o']t find|can ?n[o']t find|cannot find|unable to find|no record|"
    r"no such|does ?n[o']t exist|found nothing|nothing (?:was )?found|no (?:match|results?))\b",
    re.IGNORECASE,
)
_WORD = re.compile(r"[a-z0-9]+")
_EMBED = WordNgramEmbedder(ngrams=(1, 2))
# A run of this many words shared with what the writer was given is a quote of it.
_QUOTE_RUN = 6
# A whole clause the writer was given, this long or longer, is a quote when it comes back.
_QUOTE_CLAUSE = 4


def split_stop(text: str) -> tuple[str, bool]:
    """(the line without any stop marker, whether it carried one)."""
    text = text[:MAX_CHARS]
    if _BARE_DONE.match(text):
        return "", True
    cleaned, n = _STOP_MARKERS.subn(" ", text)
    return " ".join(cleaned.split()).strip(" .") if n else text, bool(n)


# Contractions spelled out, so "I'm unable to assist" meets a pattern written for "I am
# unable to assist" (and the other way round: both spellings are read).
_CONTRACTIONS = (
    (re.compile(r"\b(i|you|we|they|he|she|it|that|there)['\u2019]m\b", re.IGNORECASE), r"\1 am"),
    (re.compile(r"\b(\w+)['\u2019]re\b", re.IGNORECASE), r"\1 are"),
    (re.compile(r"\b(\w+)['\u2019]ve\b", re.IGNORECASE), r"\1 have"),
    (re.compile(r"\b(\w+)['\u2019]ll\b", re.IGNORECASE), r"\1 will"),
    (re.compile(r"\bcan['\u2019]t\b", re.IGNORECASE), "cannot"),
    (re.compile(r"\bwon['\u2019]t\b", re.IGNORECASE), "will not"),
    (re.compile(r"\b(\w+)n['\u2019]t\b", re.IGNORECASE), r"\1 not"),
)


# Only the patterns a spelled-out line can newly meet: those written with a long form.
_SPELLED_SIDE = tuple(
    p for p in _AGENT_SIDE if re.search(r" am\b|\bnot\b| have\b| will\b|cannot| are\b", p.pattern)
)


def _spelled_out(text: str) -> str:
    for pattern, repl in _CONTRACTIONS:
        text = pattern.sub(repl, text)
    return text


# Each searched only on lines holding one of its required literals: most person lines
# hold none, and this check runs on every turn of every model-backed rollout.
_AGENT_GATED = GatedPatterns(_AGENT_SIDE)
_SPELLED_GATED = GatedPatterns(_SPELLED_SIDE)


def reads_as_agent(text: str) -> bool:
    """A line only the service's side would write (or a tool call, or a template's token),
    read as written and with its contractions spelled out."""
    text = text[:MAX_CHARS]
    if _AGENT_GATED.search_any(text):
        return True
    if "'" not in text and "\u2019" not in text:
        return False
    return _SPELLED_GATED.search_any(_spelled_out(text))


# Whose need a sentence is about. A need, a want or a question held by the listener
# ("you") is the agent's business; the person's lines hold their own.
_WANT_VERBS = frozenset({"need", "needs", "want", "wants", "like", "wish", "require", "prefer"})
_QUESTION_NOUNS = frozenset({"question", "questions", "concern", "concerns", "issue", "issues",
                             "problem", "problems", "query", "queries"})  # fmt: skip
# What a listener may hold that a line invites them to pass on: "if you have any other
# details, let me know" closes a service's turn; "do you have any news?" is a question.
_NEWS = frozenset({"details", "information", "info", "updates", "news", "feedback"})
# The speaker as the helper: "something I can help with", "I could assist", "I may be
# able to help". The person is the one being helped.
_HELPER = re.compile(
    r"\b(?:something|anything|what|whatever|ways?)(?: else)?(?: that)? i (?:can|could|may|might)"
    r"(?: be able to)? (?:help|assist)\b|\bi (?:can|could|may|might|will|'ll)"
    r"(?: be able to)? assist\b|\bi (?:can|could|may|might)(?: be able to)? help (?:you\b"
    r"|with (?:something|anything|whatever|any|your)\b)"
)
_NAMED_BEFORE = frozenset({"it", "them", "that", "those", "these", "this"})
_AUXILIARIES = frozenset({"do", "does", "would", "might", "may", "could", "will", "still",
                          "also", "really", "else", "'d", "d"})  # fmt: skip
_QUANTIFIERS = frozenset({"any", "other", "more", "further", "additional", "some", "a", "another"})
_SPEAKER = frozenset({"me", "my", "mine", "i", "myself", "i'm", "i've"})
# The work a service does on a record, and what the record is called: a person asks for
# it, never says they will do it, have done it, or cannot.
_WORK_VERBS = frozenset(
    {"check", "confirm", "verify", "find", "locate", "access", "retrieve", "look", "pull",
     "process", "handle", "review", "update", "cancel", "refund", "book", "rebook", "change",
     "modify", "issue", "escalate", "take", "search", "investigate", "reschedule", "proceed",
     "run", "execute", "refresh", "reload",
     "checked", "confirmed", "verified", "found", "located", "accessed", "retrieved",
     "looked", "pulled", "processed", "handled", "reviewed", "updated", "cancelled",
     "canceled", "refunded", "booked", "rebooked", "changed", "modified", "issued",
     "escalated", "taken", "searched", "investigated", "rescheduled", "refreshed",
     "reloaded"}
)  # fmt: skip
_RECORD_WORDS = frozenset({"status", "record", "records", "request", "details", "action",
                           "system", "database",
                           "account", "case", "file", "matter"})  # fmt: skip
_THEIRS = frozenset({"the", "that", "this", "your", "those", "these", "its"})
# Speaker + will / can't / have: the speaker commits to, reports or cannot do the work.
_DOES_WORK = re.compile(
    r"\b(?:i(?:'ll| will| shall| am going to|'m going to| can't| cannot| can not| am unable to"
    r"|'m unable to| am not able to|'m not able to)|let me|(?:give|allow) me a (?:moment"
    r"|minute|second|sec) to)\s+(?:now\s+|also\s+|just\s+|again\s+|first\s+"
    r"|go ahead and\s+|need to\s+|have to\s+)?([a-z]+)\b"
)


def serves_listener(text: str) -> bool:
    """A sentence about the listener's needs or questions, not the speaker's: "What would
    you like to know?", "If you have any other questions, don't hesitate to ask", "Is
    there anything else you need?", "If you have any other details, please let me know".
    What the listener needs *from the speaker* ("Do you need my order number?", "What do
    you need from me?", "Do you need the booking reference again?") is the person's to
    give, not this."""
    for sentence in rp.sentences(text[:MAX_CHARS]):
        words = rp.tokens(sentence)
        for i, word in enumerate(words):
            if word != "you":
                continue
            j = i + 1
            while j < len(words) and words[j] in _AUXILIARIES:
                j += 1
            if j >= len(words):
                continue
            after = words[j + 1 : j + 5]
            if words[j] in _WANT_VERBS:
                if after[:1] == ["to"] and words[j] != "like":
                    continue  # "you need to refund me": the person's demand
                # "if you need them": something already named, most often the person's;
                # "do you need the order id again?": a handle only the speaker holds.
                if (
                    not (_SPEAKER | _NAMED_BEFORE) & set(after[:2])
                    and not _SPEAKER & set(after)
                    and not _ID_HANDLE & set(after)
                ):
                    return True
            elif words[j] == "have":
                k = j + 1
                while k < len(words) and words[k] in _QUANTIFIERS:
                    k += 1
                held = _QUESTION_NOUNS | (_NEWS if words[i - 1 : i] == ["if"] else frozenset())
                # "any questions", or with one word between: "a specific question".
                if held & set(words[k : k + 2]) and not _SPEAKER & set(after):
                    return True
    return False


# Whether the listener wants the service's change made: "Can I confirm if you want to
# refund this order in full?", "Would you like to proceed with the cancellation?". The
# person is the one who wants it; "do you want me to send the photos?" is their offer.
# "Yes, if you want to go ahead, do it." grants a permission the agent asked for: only
# a question, or "confirm / let me know whether you want to ...", asks the listener's wish.
_CHANGES = (
    r" to (?:refund|cancel|change|book|rebook|modify|update|issue|process|proceed|go ahead"
    r"|continue|reschedule|exchange)\b"
)
_YOUR_WISH_ASKED = re.compile(
    r"\b(?:do|would|did) you (?:still |really )?(?:want|wish|like)" + _CHANGES
)
_YOUR_WISH_CHECKED = re.compile(
    r"\b(?:confirm|know|check|ask|understand)(?: with you)? (?:if|whether) you"
    r" (?:still |really )?(?:want|wish|'d like|would like)" + _CHANGES
)


# What the listener is after, asked as a service asks it: "Can you please tell me what
# invoice number you're looking for?". "Is ORD-1010 what you're looking for?" offers the
# person's own: only a request to tell or say it asks.
_WHAT_YOU_SEEK = re.compile(
    r"\b(?:tell me|let me know|say|explain|share|specify|describe)\b[^.?!\n]{0,30}"
    r"\b(?:what|which)\b[^.?!\n]{0,60}\byou(?:'re| are)? (?:looking|searching) for\b"
)
# The listener's own record handle asked for: "I need to know your order number.", "Your
# booking reference?". A service's own handles ("your phone number", "your case number")
# are a person's to ask for.
_YOUR_HANDLE = re.compile(
    r"\byour (?:order|booking|reservation|flight|purchase|account|customer|membership)"
    r" (?:number|id|reference|ref|code)\b"
)


def asks_listeners_record(text: str) -> bool:
    """The line asks what the listener is looking for, or for the listener's own record
    handle: the agent's questions, sent by the person."""
    low = _lowered(text)
    if "you" not in low:  # every turn is read: most never name the listener's record
        return False
    for sentence in rp.sentences(low):
        asking = sentence.rstrip().endswith("?") or may_ask(sentence)
        if asking and (_WHAT_YOU_SEEK.search(sentence) or _YOUR_HANDLE.search(sentence)):
            return True
    return False


# "Do you need to change anything or just look at it?": the service's offer, asked by
# the person. "Do you need me to change anything?" offers the person's own edit.
_YOUR_NEED_ANY = re.compile(
    r"\bdo you (?:still |also )?need to (?:change|cancel|book|update|modify|refund|check"
    r"|look at) (?:anything|something)\b"
)


def asks_listeners_wish(text: str) -> bool:
    """The line asks whether the listener wants a change made to the record: the agent's
    confirmation question, sent by the person."""
    whole = _lowered(text)
    if "you" not in whole:  # every turn is read: most never address the listener's wish
        return False
    for low in rp.sentences(whole):
        if _YOUR_WISH_CHECKED.search(low):
            return True
        if low.rstrip().endswith("?") and (
            _YOUR_WISH_ASKED.search(low) or _YOUR_NEED_ANY.search(low)
        ):
            return True
    return False


# "I can help with that": the person's only as an answer to something asked of them.
_HELP_WITH_THAT = re.compile(
    r"\bi (?:can|could|will|'ll)(?: be able to)? help(?: you)? with (?:that|this)\b"
)


def offers_help(text: str, asked: bool = True) -> bool:
    """The speaker as the one who helps ("if there's something I can help with", "I can
    assist with the rest"): whatever the agent asked, the person is the one helped. When
    the agent asked the person nothing (`asked` False), "Sure, I can help with that" is
    the agent's line too."""
    low = _lowered(text)
    return bool(_HELPER.search(low) or (not asked and _HELP_WITH_THAT.search(low)))


def works_the_record(text: str, objects: Iterable[str] = ()) -> bool:
    """The speaker says they will do, or cannot do, the service's work on the
    record the service keeps ("I will check the status of the order again", "I can't
    confirm the order's status", "Let me look up your booking"). The person's own things
    ("I can't find my receipt") are theirs to look for; the record is the service's."""
    records = _RECORD_WORDS | frozenset(objects)
    low = text[:MAX_CHARS].casefold().replace("’", "'")
    for match in _DOES_WORK.finditer(low):
        if match.group(1) not in _WORK_VERBS:
            continue
        clause = re.split(r"[.;:!?,\n]", low[match.end() : match.end() + 80], maxsplit=1)[0]
        rest = rp.tokens(clause)[:6]  # what the work is done on, in the same clause
        # "I'll search for flights between NBO and LYS": the search the service runs.
        if rest[:1] in (["for"], ["up"]) and not _SPEAKER & set(rest):
            plural = records | {r + "s" for r in records}
            if plural & set(rest[1:4]):
                return True
        for k, word in enumerate(rest):
            if rest[k + 1 : k + 2] and rest[k + 1] in _ID_HANDLE:
                break  # "I can't find the order number": the person's handle on it
            # "the order", "your booking", "the latest records": one word may sit between.
            before = rest[max(0, k - 2) : k]
            if word in records and k and any(w in _THEIRS or w.endswith("'s") for w in before):
                return True
            if word in _SPEAKER:
                break  # "I'll check my e-mail": the person's own
            if word in ("it", "them"):
                break  # "let me find it, one moment": the object is already said
    return False


# A template's slot left unfilled: "[List of items]", "{order_id}", "<customer name>".
# Two words at least ("[sic]" is a person's), each run bounded: no backtracking to speak of.
_SLOT = re.compile(r"[\[{<][A-Za-z]{1,20}(?:[ _][A-Za-z]{1,20}){1,5}[\]}>]")


# A label with nothing after it ("Order id:"), or the writer's own name for the kind of
# ask it was given ("I have a general question about my account").
_EMPTY_LABEL = re.compile(r"^\W{0,3}[A-Za-z][\w ]{0,30}:\W{0,3}$")
_ASK_KIND = re.compile(r"\b(?:a|my|one) (?:general|concrete|vague) (?:question|request|ask)\b")


# The writer announcing the part it plays: "I am the elderly woman." as the whole line.
# "I'm the passenger." (no description) may answer "who is travelling?".
_PLAYS_THE_PART = re.compile(
    r"^\W{0,3}i(?:'m| am) the (?:[a-z-]{3,20} ){1,2}(?:woman|man|person|customer|user|caller"
    r"|client|traveller|traveler|passenger|lady|gentleman)(?: here| in this \w+| today)?\W{0,3}$"
)
# "The order id is" and nothing after it: a sentence cut where its value should be.
_EMPTY_IS = re.compile(r"^\W{0,3}(?:the|my) [a-z][a-z ]{0,30} (?:is|are)\W{0,3}$")


def unfilled_slot(text: str) -> bool:
    """A slot of a template the writer was shown, left in place of a value: no person
    writes "[List of items]", nor "Order id:" or "The order id is" with nothing after it,
    nor calls their own question "a general question"."""
    head = text[:MAX_CHARS]
    stripped = head.strip()
    return bool(
        _SLOT.search(head)
        or _EMPTY_LABEL.match(stripped)
        or _EMPTY_IS.match(stripped.lower())
        # As a sentence of its own too: "Hey there! I'm the elderly customer here."
        or any(
            _PLAYS_THE_PART.match(sentence.strip().casefold().replace("\u2019", "'"))
            for sentence in rp.sentences(stripped)
        )
        or _ASK_KIND.search(head.lower())
    )


# What the person came with: "your request" is the agent speaking of the person's ask.
_THE_ASK = frozenset({"request", "inquiry", "enquiry", "query"})


def owns_listener_record(text: str, objects: Iterable[str]) -> bool:
    """The speaker calls the record the listener's ("the record for your order"): the
    order or booking is the person's own, so only the agent says "your order". The
    service's own things ("your records", "your system") are the listener's and stay
    the person's to name."""
    things = frozenset(objects) | _THE_ASK
    words = rp.tokens(text[:MAX_CHARS])
    return any(
        word == "your" and things & set(words[i + 1 : i + 3]) for i, word in enumerate(words)
    )


# The speaker reports on a search of the service's records, empty ("I couldn't find the
# order.") or not ("I found two records with order id ORD-9022"): the agent's report.
_SEARCH_REPORT = re.compile(
    r"\bi (?:(?:couldn't|could not|was unable to|wasn't able to|was not able to) "
    r"(?:find|locate|retrieve|access|pull up)|(?:have |'ve )?(?:[a-z-]{2,20}(?: it| again){0,2}"
    r" and (?:then )?)?(?:found|located|retrieved|pulled up|looked up))\b"
)
# Where a person looks for themself, and their own handles on a record: "I couldn't find
# the order on the website", "I found the order id" stay the person's.
_CHANNELS = frozenset({"website", "site", "online", "app", "portal", "page", "email", "e-mail",
                       "inbox", "account", "phone", "receipt"})  # fmt: skip
_OWN_HANDLE = frozenset({"id", "ids", "number", "reference", "ref", "confirmation", "receipt",
                         "email", "e-mail", "code", "details", "status", "tracking"})  # fmt: skip
# The handles alone, not what the record says: "I can't find the order number" is the
# person's; "I will check the order status" is the service's work.
_ID_HANDLE = _OWN_HANDLE - {"status", "details", "tracking"}
# The speaker offers to act for the listener ("what you would like me to do"), or tells
# the listener what they may do next ("You can try those options."): the agent's part.
_OFFERS_TO_ACT = re.compile(
    r"\byou(?: would| might| may)? (?:like|want|need) me to (?:do|help|assist|check|look|book"
    r"|cancel|refund|change|find|search|process|handle|update)\b"
    # "Would you like me to confirm that the order has been updated?": checking the
    # service's state. "Do you need me to confirm my e-mail?" offers the person's own.
    r"|\byou(?: would| might| may)? (?:like|want|need) me to (?:confirm|verify|review|investigate"
    r"|escalate|retrieve|rebook|reschedule|issue)\b(?! (?:my|me|mine|it|them|i)\b| that i\b)"
)
_ADVISES = re.compile(
    r"(?:^|[.!?]\s+)you (?:can|could|may|might|should) (?:try|visit|contact|call|reach|use"
    r"|go|consult|refer)\b([^.!?]{0,60})"
)
# "Why not try checking the airline's website or contacting their customer service?":
# the listener sent elsewhere. "Why not try searching for the flight again?" nudges the
# service to do its own work, and is the person's.
_WHY_NOT = re.compile(
    r"\bwhy (?:not|don't you) (?:try|visit|contact|call|reach|use|go|consult|refer)\b"
    r"([^.!?]{0,80})"
)


# The speaker saying what the service's system holds or shows ("I found that it's in the
# system now", "the system has not provided any changes"): only the agent sees that. "Your
# system shows a duplicate" is a person telling what they saw in the service's app (the
# original SDK's persons say it), so only "the" or "our" system counts.
_SYSTEM_SAYS = re.compile(
    r"\b(?:the|our) (?:system|database)(?: now| still| also)? (?:shows?|says?|lists?"
    r"|returned|reports?|(?:has|had|hasn't|has not|hadn't|did not|didn't|does not|doesn't)"
    r"(?: now| yet| still)? (?:provided|returned|shown|show|listed|updated|changed))\b"
    r"|\b(?:it|this|that|they|the \w{1,20})(?:'s| is| was|'re| are)(?: now| actually| still"
    r"| already| not){0,2} (?:in|on) (?:the|our) (?:system|database)\b"
)


def reports_a_search(text: str, objects: Iterable[str] = ()) -> bool:
    """The speaker reports searching the service's records, found or not: the agent's
    report, never the person's. What the person searched themself ("on the website"),
    their own things ("my receipt") and their handles on a record ("the order id") are
    not this."""
    records = _RECORD_WORDS | frozenset(objects) | {o + "s" for o in objects}
    low = _lowered(text)
    # A question ("is it in the system?") asks; a statement reports what the system holds.
    if any(_SYSTEM_SAYS.search(s) and not s.rstrip().endswith("?") for s in rp.sentences(low)):
        return True
    for match in _SEARCH_REPORT.finditer(low):
        clause = re.split(r"[.;:!?\n]", low[match.end() : match.end() + 120], maxsplit=1)[0]
        words = rp.tokens(clause)
        at = next((k for k, w in enumerate(words[:4]) if w in records), None)
        if at is None or _SPEAKER & set(words[:at]) or _CHANNELS & set(words):
            continue
        if words[at + 1 : at + 2] and words[at + 1] in _OWN_HANDLE:
            continue
        return True
    return False


# The listener said to have given a detail ("the order id you provided"): the person's
# details are theirs to give, so only the agent speaks of them as given to it.
_YOU_GAVE = re.compile(
    r"\byou(?:'ve| have)? (?:just |already )?(?:provided|gave|given|shared|supplied)\b"
)
# ... to someone: "you gave me", "you've given to the courier" (not the person's detail).
_GIVEN_TO = re.compile(r" (?:me|us|to)\b")


def credits_listener(text: str, facts: Iterable[Fact]) -> bool:
    """The person's own detail spoken of as the listener's to have given ("Sure, I can get
    the order status with the order id you provided, ORD-1010"): the agent's view of the
    conversation. What the listener gave the person ("the tracking number you gave me",
    "the email you sent") is not one of the person's details, and stays theirs to
    mention."""
    low = _lowered(text)
    if "you" not in low:
        return False
    facts = list(facts)
    mine = {w for f in facts for w in f.words | f.objects}
    values = [str(f.value).casefold() for f in facts]
    for match in _YOU_GAVE.finditer(low):
        before = rp.tokens(low[max(0, match.start() - 60) : match.start()])[-4:]
        after = low[match.end() : match.end() + 40]
        if _GIVEN_TO.match(after):
            continue
        if mine & set(before) or any(v and v in after for v in values):
            return True
    return False


# The service's people, named by the agent ("a colleague will need to tell them apart").
_STAFF = ("colleague", "team", "supervisor", "manager", "specialist", "department")
_MY_STAFF = re.compile(rf"\bmy (?:[a-z]{{1,20}} )?({'|'.join(_STAFF)})s?\b")


def owns_listener_staff(text: str, agent_last: str) -> bool:
    """The person calls the service's people their own: told "a colleague will need to
    tell them apart", they answer "once my colleague confirms it". Their own manager,
    named when the agent named none, is theirs."""
    said = agent_last[:MAX_CHARS].lower()
    return any(m.group(1) in said for m in _MY_STAFF.finditer(text[:MAX_CHARS].lower()))


def says_not_found(text: str, objects: Iterable[str] = ()) -> bool:
    """A statement that the service's record is missing ("The booking was not found."):
    the result of a search only the agent ran. The person's own things ("I can't find my
    receipt"), their handles ("I can't find the order number") and where they looked
    themself ("not found on the website") are theirs to report."""
    records = _RECORD_WORDS | frozenset(objects) | {o + "s" for o in objects}
    for sentence in rp.sentences(text[:MAX_CHARS].casefold()):
        if sentence.rstrip().endswith("?") or not _MISSING.search(sentence):
            continue
        words = rp.tokens(sentence)
        if _SPEAKER & set(words) or _CHANNELS & set(words):
            continue
        if any(
            w in records and not (words[k + 1 : k + 2] and words[k + 1] in _OWN_HANDLE)
            for k, w in enumerate(words)
        ):
            return True
    return False


# The agent's refusal ("I am not permitted to run change_booking") taken on as the
# person's own: "I should try to change the booking reference, but I am not allowed to."
_DENIED = re.compile(r"\bnot (?:permitted|allowed|authori[sz]ed)\b|\bpermission\b")
_I_MAY_NOT = re.compile(
    r"\bi(?:'m| am)(?: just| still)? not (?:permitted|allowed|authori[sz]ed) to\b"
)


def owns_the_denial(text: str, agent_last: str) -> bool:
    """Right after the agent said it may not act, the line says the speaker may not: the
    agent's position in the person's mouth. Said with nothing refused before it ("I'm not
    allowed to share my password"), it stays the person's."""
    if not _DENIED.search(agent_last[:MAX_CHARS].lower()):
        return False
    return _I_MAY_NOT.search(text[:MAX_CHARS].lower().replace("\u2019", "'")) is not None


def acts_for_listener(text: str) -> bool:
    """The speaker offers to do what the listener wants, or advises the listener what to
    try next ("You can try those options."); a person's own demand names their things
    ("You can refund it to my card") and is left alone."""
    low = text[:MAX_CHARS].casefold().replace("’", "'").strip()
    if _OFFERS_TO_ACT.search(low):
        return True
    if any(
        not _SPEAKER & set(rp.tokens(m.group(1))) and not m.group(1).startswith(" again")
        for m in _ADVISES.finditer(low)
    ):
        return True
    for m in _WHY_NOT.finditer(low):
        rest = set(rp.tokens(m.group(1)))
        if (_CHANNELS | _ELSEWHERE) & rest and not _SPEAKER & rest:
            return True
    return False


# Who else a listener may be sent to: "Why not try contacting the airline for further
# assistance?" sends the service to the service.
_ELSEWHERE = frozenset(
    {"contacting", "calling", "emailing", "airline", "company", "store", "shop", "support",
     "department", "representative", "assistance"}
)  # fmt: skip


# An apology for a mix-up at the head of a first message: nothing has happened yet, so
# it answers the writer's redraw note ("Sorry for the confusion, I'll do my best ...").
_SORRY_FIRST = re.compile(
    r"^\W{0,3}(?:(?:i'm |i am )?(?:so |very )?sorry|(?:my )?apologies|i apologi[sz]e) (?:for|about)"
    r" (?:the|my|any|that) (?:confusion|misunderstanding|mistake|error|oversight|mix-up)\b"
)


def complies_first(text: str) -> bool:
    """An opener that starts by complying ("Sure, I'll give you the first message"), or
    apologises for a mix-up and asks nothing: the first message of a conversation answers
    nothing, so an acknowledgement at its head answers the writer's instruction."""
    low = _lowered(text).strip()
    if _SORRY_FIRST.search(low) and not may_ask(low):  # a mix-up before, then the ask
        return True
    head = re.split(r"[.,;:!?\n]", text[:MAX_CHARS].strip(), maxsplit=1)[0]
    words = re.findall(r"[a-z']+", head.lower().replace("'", ""))
    return (
        bool(words)
        and len(words) <= 4
        and bool(set(words) & _COMPLY)
        and all(w in _ACK for w in words)
    )


def third_person(text: str) -> bool:
    """The person speaks of themself, or of their own records, as someone else's."""
    text = text[:MAX_CHARS]
    return any(p.search(text) for p in _THIRD_PERSON)


def _own_names(facts: Iterable[Fact]) -> set[str]:
    """The person's own full name, as their brief holds it: their own name field (not a
    passenger's, who may be someone else), or the first.last part of their e-mail
    (ken.smith@... -> "ken smith")."""
    names = set()
    for fact in facts:
        value = str(fact.value).strip().casefold()
        if fact.kind == "email" and "@" in value:
            local = re.split(r"[._-]", value.split("@", 1)[0])
            if len(local) == 2 and all(p.isalpha() and len(p) >= 2 for p in local):
                names.add(" ".join(local))
        elif fact.name in ("name", "full_name", "customer_name") and " " in value:
            names.add(value)
    return names


_ACTED = frozenset(
    {"s", "ordered", "placed", "bought", "booked", "paid", "made", "has", "had", "wants",
     "needs", "asked"}
)  # fmt: skip
_BEFORE_OTHER = frozenset({"from", "by", "of"})


def names_self_as_other(text: str, facts: Iterable[Fact]) -> bool:
    """The person puts their own full name where someone else's goes ("I have an order
    from Ken Smith", "the booking made by Jo Okafor"): speaking of themself as another.
    Giving it as theirs ("I'm Ken Smith", "it is under Ken Smith") is not this."""
    words = _words(text)
    low = " ".join(words)
    # "orders for the customer ana.okafor@example.com": their own e-mail or name as the
    # customer's, someone else's.
    lowered = text[:MAX_CHARS].lower()
    for fact in facts:
        value = str(fact.value).lower()
        if fact.kind in ("email", "name") and f"the customer {value}" in lowered:
            return True
    for name in _own_names(facts):
        if name not in low:  # most lines never name the person
            continue
        parts = tuple(name.split(" "))
        n = len(parts)
        for i in range(len(words) - n + 1):
            if words[i : i + n] != parts:
                continue
            # "an order from Ken Smith", "the booking made by Jo Okafor", "belonging to",
            # or as the one who acted: "if Maria Kim ordered anything", "Maria Kim's order".
            if (i and words[i - 1] in _BEFORE_OTHER) or words[i - 2 : i] == ("belonging", "to"):
                return True
            if i + n < len(words) and words[i + n] in _ACTED:
                return True
    return False


@functools.lru_cache(maxsize=256)
def _lowered(text: str) -> str:
    """A turn as the predicates read it: cut at MAX_CHARS, case-folded, a curly apostrophe
    made straight. Cached: every predicate of the check reads the same drafted turn."""
    return text[:MAX_CHARS].casefold().replace("\u2019", "'")


def _norm(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9@.-]+", text[:MAX_CHARS].lower()))


def _tokens(text: str) -> list[str]:
    return _WORD.findall(text[:MAX_CHARS].lower())


@functools.lru_cache(maxsize=1024)
def _words(text: str) -> tuple[str, ...]:
    """`_tokens`, kept: the check reads the same few strings (the draft, the agent's last
    turn, the person's lines, their facts' values) twenty times a turn."""
    return tuple(_tokens(text))


def restates_the_record(text: str, agent_last: str, facts: Iterable[Fact] = ()) -> bool:
    """A statement that says back two or more of the values the agent just reported
    (amounts, dates, ids the person does not hold, the status): "The order is completed
    with an amount of 289.96 USD. It was created on 2025-02-17." is the agent's finding
    in the person's mouth. Picking one of two records by its date, or asking about the
    values ("is 289.96 the full amount?"), is the person's."""
    if not agent_last:
        return False
    if "?" in text:  # the questions ask about the values; the statements may restate them
        text = " ".join(s for s in rp.sentences(text[:MAX_CHARS]) if not s.rstrip().endswith("?"))
    own = set().union(*(_values_in(str(f.value)) for f in facts))
    shown = _values_in(agent_last[:MAX_CHARS]) - own
    if len(shown) < 2:
        return False
    # Every value but a status holds a digit or an "@": a line with neither can say back
    # only statuses.
    if not any(c.isdigit() or c == "@" for c in text[:MAX_CHARS]):
        shown = frozenset(v for v in shown if v[0] == "status")
        if len(shown) < 2:
            return False
    said = _values_in(text[:MAX_CHARS])
    said |= {v for v in shown if v[0] == "status" and _states_status(text[:MAX_CHARS], v[1])}
    # The report's own field names, said with one of its values: "The order was created on
    # December 7, 2025, and the most recent update was ..." after "created_at 2025-12-07,
    # updated_at ...".
    words = set(rp.tokens(text[:MAX_CHARS]))
    fields = {f for f, key in _REPORT_FIELDS.items() if key in agent_last and words & f}
    return len(shown & said) + (len(fields) if shown & said else 0) >= 2


# A record report's date fields, and the words a line says them with.
_REPORT_FIELDS = {
    frozenset({"created"}): "created_at",
    frozenset({"updated", "update"}): "updated_at",
}


@functools.lru_cache(maxsize=512)
def _values_in(text: str) -> frozenset[Any]:
    """The values a record report carries, read by the judges' own readers: ids and
    e-mails, calendar dates, amounts with a fraction; and the status it states. Kept: the
    agent's last turn is read again for every draft of the person's reply."""
    amounts = {("amount", n) for n in numbers(text) if n != int(n)}
    status = {("status", said) for said in stated_statuses(text)}
    return frozenset(identifiers(text) | {("date", d) for d in dates(text)} | amounts | status)


def _states_status(text: str, status: str) -> bool:
    """The line says the record is in `status` ("the order is completed", "its status is
    already refunded")."""
    return re.search(rf"\b(?:is|was|are|status|has been|have been) (?:already |still |now )?"
                     rf"{re.escape(status)}\b", text.lower()) is not None  # fmt: skip


def parrots(text: str, agent_last: str) -> bool:
    """The line repeats the agent's last turn: the same words, most of them, or a long
    stretch of them copied whole."""
    mine, theirs = _norm(text), _norm(agent_last)
    if not mine or not theirs:
        return False
    if mine == theirs or (len(mine) >= 20 and mine in theirs):
        return True
    # A cosine of 0.8 needs most words shared: skip the embedding when they are not.
    words, other = set(mine.split()), set(theirs.split())
    if len(words & other) < 0.5 * min(len(words), len(other)):
        return False
    return cosine(_EMBED.embed(mine), _EMBED.embed(theirs)) >= 0.8


@functools.lru_cache(maxsize=512)
def _clauses(text: str) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(_tokens(c)) for c in re.split(r"[.;:!?,\n]+", text[:MAX_CHARS]))


def copies_a_clause(text: str, turn: Turn) -> bool:
    """A clause of the agent's last turn (four words or more) said again as the person's
    own: "Please try again shortly." The person's own values do not count as words."""
    theirs = [c for c in _clauses(turn.agent_last) if len(c) >= 4]
    if not theirs:
        return False
    mine = f" {' '.join(_words(text))} "
    if any(f" {' '.join(c)} " in mine for c in theirs):
        return True
    # Or six words in a row of it, the person's own values aside ("asked them to check
    # again later before relying on it").
    held = {w for f in turn.facts for w in _words(str(f.value))}
    runs = {
        tuple(c[i : i + _QUOTE_RUN])
        for c in theirs
        for i in range(len(c) - _QUOTE_RUN + 1)
        if not held & set(c[i : i + _QUOTE_RUN])
    }
    words = _words(text)
    return any(tuple(words[i : i + _QUOTE_RUN]) in runs for i in range(len(words) - _QUOTE_RUN + 1))


_OWN_NEED = re.compile(
    r"\bi (?:need|want|require|would need|'d need)\b"
    r"|\b(?:(?:could|can|would) you|you (?:could|can|would))(?: please)? (?:provide|give|send"
    r"|tell) me\b"
)


def echoes_the_ask(text: str, turn: Turn) -> bool:
    """Asked for something, the line says the request back as the person's own ("Which
    flight? Please give me the flight id and fare class." -> "Sure, I need the flight id
    and fare class."): most words of one of its sentences are the agent's, the line
    gives none of the asked values and that sentence does not say it lacks them. An
    answer gives, declines or asks back."""
    if not turn.agent_last:
        return False
    low = text[:MAX_CHARS].lower()
    if any(str(f.value).lower() in low for f in turn.asked):
        return False  # it gives what was asked for
    theirs = set(rp.tokens(turn.agent_last[:MAX_CHARS]))
    for sentence in rp.sentences(text[:MAX_CHARS]):
        said = rp.tokens(sentence)
        words = [w for w in said if w not in rp.FUNCTION_WORDS]
        if not words or any(rp.is_negator(w) for w in said):
            continue
        if not turn.reading.asked and not _OWN_NEED.search(sentence.lower()):
            continue  # the agent asked nothing: "I need <its words>" or "could you give me
            # <its words>" restates what it lacks
        shared = [w for w in words if w in theirs]
        if len(set(shared)) >= 3 and len(shared) >= 0.6 * len(words):
            return True
    return False


# "Which one of the two records ... are you referring to?": asked which one they mean,
# the speaker asks the listener the same. Bounded gap, no backtracking to speak of.
_WHICH_YOU_MEAN = re.compile(
    r"\bwhich\b[^.?!\n]{0,80}\byou(?:'re| are| were)? (?:mean|meant|referring|refer|talking"
    r" about|asking about|have in mind|had in mind|thinking of|want|wanted|prefer|intend"
    r"|would like|'d like|choose|pick|select)\b(?! me\b)"
)


def turns_the_question_back(text: str, agent_last: str) -> bool:
    """Asked which of several they mean, the line asks the listener which one *they*
    mean: the agent's question sent back. Naming one ("the one from March") or asking
    what the two differ in ("which one was shipped?") is the person's answer."""
    if "which" not in agent_last[:MAX_CHARS].lower():
        return False
    low = _lowered(text)
    return _WHICH_YOU_MEAN.search(low) is not None


# The words of a bare "I'm ready (too / now / to start)": the writer telling its caller
# it is set to play the part, not a person saying anything to the service.
_READY_ONLY = _ACK | frozenset(
    {"i", "im", "i'm", "am", "ready", "as", "well", "too", "also", "now", "so", "and", "all",
     "set", "when", "whenever", "you", "are", "youre", "begin", "proceed", "waiting"}
)  # fmt: skip
# The agent asked whether the person is ready, or offered to go on: "ready" answers it.
_ASKED_READY = re.compile(
    r"\bready\b|\bproceed\b|\bgo ahead\b|\b(?:shall|should|may|can) i\b|\bwould you like me\b"
)


def says_ready(text: str, agent_last: str) -> bool:
    """The whole line says the speaker is ready ("I'm ready, as well."), when nobody asked
    whether they were: a writer answering its instructions. After "Shall I go ahead?",
    "I'm ready" is an answer."""
    words = re.findall(r"[a-z']+", text[:MAX_CHARS].lower().replace("\u2019", "'"))
    if "ready" not in words or not all(w in _READY_ONLY for w in words):
        return False
    return not _ASKED_READY.search(agent_last[:MAX_CHARS].lower())


def restates_the_agent(text: str, agent_last: str) -> bool:
    """A statement whose words are all the agent's, said as the person's own: "The help
    pages are the best route for that." after "For that question, the help pages or the
    phone line are the best route." A person's line about the same things says what they
    will do or think ("I'll try the help pages"), asks, or disagrees ("the help pages
    don't help"): it holds words of its own, a question, a negation, or the speaker or
    listener by name."""
    if not agent_last:
        return False
    theirs = [set(rp.tokens(s)) for s in rp.sentences(agent_last[:MAX_CHARS])]
    # A whole sentence of three words or more, or a clause of four ("The record is marked
    # stale and shows pending, but I haven't acted on it yet." after the agent's report:
    # the person's "I" comes in a clause of its own).
    pieces = [(s, 3) for s in rp.sentences(text[:MAX_CHARS])]
    pieces += [(c, 4) for c in rp.clauses(text[:MAX_CHARS])]
    for piece, least in pieces:
        if piece.rstrip().endswith("?"):
            continue
        said = rp.tokens(piece)
        if _SPEAKER & set(said) or {"you", "your", "yours"} & set(said):
            continue
        if any(rp.is_negator(w) for w in said):
            continue
        content = {w for w in said if w not in rp.FUNCTION_WORDS}
        if len(content) >= least and any(content <= other for other in theirs):
            return True
    return False


def repeats(text: str, own: Iterable[str], values: Iterable[Any] = ()) -> bool:
    """The turn is one the person already said, or holds a sentence of six words or more
    they already said: a person moves on, a stuck writer says it again. Saying a held
    value again ("as I said, the passenger name is Sam Smith") is an answer, not that."""
    mine = " ".join(_words(text))
    if not mine:
        return False
    before = [" ".join(_words(said)) for said in own]
    if mine in before:
        return True
    held = [" ".join(_words(str(v))) for v in values]
    said = {" ".join(c) for said in own for c in _clauses(said) if len(c) >= 6}
    return any(
        " ".join(c) in said and not any(h and h in " ".join(c) for h in held)
        for c in _clauses(text)
        if len(c) >= 6
    )


# A request for something to be handed to the speaker ("please give me the fare class",
# "could you provide my booking reference?"); not an offer ("do you need the order
# number?"), which is the person's.
_GIVE_ME = re.compile(
    r"\b(?:give|send|tell|provide|share|get)(?: me| us|(?: me| us)? (?:my|our))\b"
    r"|\b(?:could|can|may) i(?: please)? (?:have|get)\b"
)
_PROVIDE_THEM = re.compile(
    r"\b(?:provide|give|send|tell|share)(?: me| us)? (?:them|it|those|these)\b(?! to you)"
    r"|\btell me what (?:they|these|those) (?:are|were)\b"
)


# "What is the order ID?": a question for a detail as the listener's to give. A vague
# opener may name the detail it lacks ("what's my order number? I lost the e-mail"); it
# does not ask the listener for "the" or "your" one.
_WHAT_IS_THE = re.compile(r"^\W{0,3}(?:so,? |and |ok,? )?what(?:'s| is| are) (?:the|your)\b")


def quizzes_listener(text: str, facts: list[Fact]) -> bool:
    """A question that asks the listener for one of the person's own details, as the
    agent asks for it: "What is the order ID?" when the person holds the order id."""
    if "?" not in text[:MAX_CHARS]:
        return False
    return _a_sentence_asks_own(
        text, facts, lambda low: low.rstrip().endswith("?") and bool(_WHAT_IS_THE.search(low))
    )


def _a_sentence_asks_own(text: str, facts: list[Fact], asks: Callable[[str], bool]) -> bool:
    """Some sentence that `asks` (read lower-cased) names one of the person's details
    without its value, or names it "for" its own value ("can you get me the booking
    reference for P4Q4IK?"). "What's your case number for ORD-1010?" names the id it
    holds and no other detail of theirs, so it asks for another thing."""
    for sentence in rp.sentences(text[:MAX_CHARS]):
        low = sentence.casefold().replace("\u2019", "'")
        if not asks(low):
            continue
        words = set(rp.tokens(low))
        for fact in asked_facts(sentence, facts):
            value = str(fact.value).casefold()
            if value not in low or (
                fact.words
                and fact.words <= words
                and re.search(rf"\b(?:for|of) (?:\w{{1,20}} )?{re.escape(value)}(?![\w-])", low)
            ):
                return True
    return False


# "I asked for the order ID again.": the agent's move, told as the speaker's own.
_I_ASKED_FOR = re.compile(
    r"\bi(?:'ve| have)? (?:already |just |again |also )?asked(?: you)? (?:again )?for"
    r" (?:the|your)\b"
)


def reports_asking_for_own(text: str, facts: list[Fact]) -> bool:
    """The speaker says they asked for one of their own details: asking for it is the
    agent's part. "I asked the shop for the order number" names someone else asked."""
    low = _lowered(text)
    # Ids only: "I asked for the reason twice" and "I asked for the email you promised"
    # may be about the listener's reason or message.
    handles = [f.label for f in facts if f.kind == "id"]
    for match in _I_ASKED_FOR.finditer(low):
        rest = low[match.end() : match.end() + 40]
        if any(label in rest for label in handles):
            return True
    return False


def asks_for_own(text: str, facts: list[Fact]) -> bool:
    """The person asks for one of their own details ("I need the passenger's name to
    proceed"): that is the agent's part. Naming a detail while giving it ("the order
    number is ORD-1") is not asking for it."""
    low = text[:MAX_CHARS].lower()
    if not may_ask(low):
        return False
    asked = asked_facts(text[:MAX_CHARS], facts)
    if any(str(f.value).lower() not in low for f in asked):
        return True
    # "I would like to double-check the booking ref and flight id. please provide them
    # again.": the details named, then asked for by a pronoun.
    named = [f for f in facts if f.label in low and str(f.value).lower() not in low]
    if named and _PROVIDE_THEM.search(low):
        return True
    # A request in a line that gives the value elsewhere ("... on the flexible fare class.
    # please give me the fare class."), or names a detail "for" its own value ("can you
    # get me the booking reference for P4Q4IK?"): it asks for what is the person's.
    return bool(_GIVE_ME.search(low)) and _a_sentence_asks_own(
        text, facts, lambda low: bool(_GIVE_ME.search(low))
    )


# The speaker announcing a question instead of asking it: "I'll ask why not."
_NARRATES = re.compile(
    r"\bi(?:'ll| will| am going to|'m going to) (?:ask|reply|answer|respond|say)"
    r"(?: (?:you|them|it|the assistant))? (?:why|what|how|whether|if)\b"
)


# The speaker promising a detail instead of giving it ("I'll give you the order id, and
# you'll tell me ..."): the brief's plan narrated. Said with the value, it is an answer.
_PROMISES = re.compile(
    r"\bi(?:'ll| will| am going to|'m going to) (?:then )?(?:give|provide|send|share|tell) you "
    r"(?:the|my|all|any)\b"
)
# The writer's instruction itself as the line: "ask why.", "Reply that it is urgent.".
# The whole line is one short imperative, no question; "Ask them why? I want it
# refunded." is a person's.
_INSTRUCTION = re.compile(
    r"^\W{0,3}(?:ask|reply|respond|say (?:that|why|what|so))\b(?!,)[^.?!]{0,40}[.!]?\s{0,3}$"
)
# The brief's own words for the person's business, which people do not use for theirs,
# and the writer promising to follow its instructions ("I'll do my best to provide the
# information accurately").
_WRITER_WORDS = re.compile(
    r"\berrands?\b|\bin character\b|\bthe brief\b|\bi(?:'ll| will) do my best to (?:provide"
    r"|give|answer|respond|follow|stay)\b[^.?!\n]{0,40}\b(?:accurate(?:ly)?|as (?:asked"
    r"|instructed)|the instructions?)\b"
    # The writer's part and its material named: "as the customer, I need to provide you
    # with the information I have available", "The information is available to me.",
    # "which record or information I need?".
    r"|\bas the (?:customer|person|user|client|caller)\b(?! (?:service|support|care))"
    r"|\b(?:the )?information (?:i have(?: available)?|(?:is )?available to me)\b"
    r"|\bwhich (?:record|records|details|information) (?:or \w+ )?i need\b"
)


# The writer's name for the one the person is talking to, used as if about someone
# else ("Why can't the assistant get the booking details?"): the brief's narration.
_NAMES_ASSISTANT = re.compile(r"\bthe assistant(?:'s)?\b")
# A tool's own name or a snake_case field in the person's words ("a search_flights
# query"): the writer's tool list, not how a person speaks. Values the person holds
# ("not_received" as a refund reason) are theirs to repeat.
_SNAKE = re.compile(rf"\b{rp.SNAKE_NAME}\b")


# The brief's name for the listener, said to be unable: "The service cannot cancel the
# booking because it is not one of their own." A question ("Why couldn't the service
# confirm the booking?") asks it, as a person may.
_SERVICE_CANNOT = re.compile(
    r"\bthe service (?:cannot|can't|can not|couldn't|could not|is unable to|is not able to"
    r"|won't|will not)\b"
)


# The listener, spoken to, spoken of by the brief's name: "I will let the service know
# the change in my mind". ("the customer service" may be another desk.)
_TELLS_THE_SERVICE = re.compile(
    r"\b(?:let|tell|inform|notify|ask|contact|remind|update) the service\b"
)


def narrates(text: str, own: Iterable[Any] = ()) -> bool:
    """The line says which move the person will make ("I'll ask why not.", "I will ask
    what else can be done", "I'll give you the order id" with no id, or the bare
    instruction "ask why.") rather than making it, speaks of the listener as "the
    assistant" or of the person's business as the brief does ("errand"), or names a tool
    or field as the writer's list does: the writer's instructions name the moves and the
    tools, the person makes the moves. So does a statement of what "the service" cannot
    do, the brief's name for the listener."""
    low = _lowered(text)
    if _NARRATES.search(low) or _NAMES_ASSISTANT.search(low) or _WRITER_WORDS.search(low):
        return True
    if _INSTRUCTION.search(low):
        return True
    if "the service" in low and (
        any(_SERVICE_CANNOT.search(s) and not s.rstrip().endswith("?") for s in rp.sentences(low))
        or _TELLS_THE_SERVICE.search(low)
    ):
        return True
    held = {str(v).casefold() for v in own}
    if _PROMISES.search(low) and not any(v and v in low for v in held):
        return True
    return any(m.group(0) not in held for m in _SNAKE.finditer(low))


def names_a_field(text: str, facts: Iterable[Fact]) -> bool:
    """The brief's own field names (`order_id`, `last_name`) in the person's words: the
    details were copied as the writer was given them, not said."""
    low = text[:MAX_CHARS].lower()
    return any("_" in f.name and f.name.lower() in low for f in facts)


def only_closing(text: str) -> bool:
    """Nothing but thanks and goodbyes: the person is done."""
    if "?" in text:
        return False
    words = re.findall(r"[a-z']+", text[:MAX_CHARS].lower())
    return bool(words) and len(words) <= 12 and all(w in _CLOSING for w in words)


# Words an opener may be made of and still ask nothing: greetings, politeness and the
# bare wish for help or information ("Hello, support. I need to know about this,
# please.", "can you help me with some information?").
_NO_SUBJECT = _ACK | rp.FUNCTION_WORDS | frozenset(
    {"hello", "hi", "hey", "there", "morning", "afternoon", "evening", "greetings", "dear",
     "sir", "madam", "folks", "please", "pls", "support", "assistant", "team", "need", "ready",
     "needs", "want", "know", "ask", "asking", "question", "questions", "assistance", "assist",
     "something", "anything", "thing", "things", "information", "info", "details", "wondering",
     "wonder", "like", "quick", "hoping", "hope", "someone", "somebody", "looking", "with",
     "hurry", "rush", "rushed", "urgent", "urgently", "asap", "quickly", "fast", "today",
     "problem", "issue", "trouble", "frustrated", "confused", "stuck", "sort", "out", "fix",
     "bit", "little", "explain", "happened", "happen", "tell", "more", "trying", "waiting",
     "long", "answer", "find", "getting", "started", "new", "service", "general", "unsure",
     "certain", "uncertain", "exactly"}
)  # fmt: skip


def names_nothing(text: str) -> bool:
    """An opener with no subject: greetings and a wish for help or information about
    "this" or "something", never saying what. Whoever reads it cannot act on it."""
    words = re.findall(r"[a-z']+", text[:MAX_CHARS].lower())
    return bool(words) and all(w.replace("'", "") in _NO_SUBJECT or w in _NO_SUBJECT for w in words)


def acknowledges_only(text: str) -> bool:
    """Nothing but an acknowledgement ("Sure, I understand.", "Okay, got it!")."""
    words = re.findall(r"[a-z']+", text[:MAX_CHARS].lower().replace("'", ""))
    return bool(words) and len(words) <= 12 and all(w in _ACK for w in words)


def unresolved(agent_turn: str) -> bool:
    """The agent's turn leaves the person's ask undone: it refuses, reports a failure or a
    stale or unreadable result, or finds nothing."""
    text = agent_turn[:MAX_CHARS]
    return rp.refuses(text) or rp.troubled(text) or bool(_MISSING.search(text))


@dataclass
class WriterText:
    """What a writer was given (its brief, its rules, its redraw notes), as the clauses
    and word runs a quote of it would share. The person's own values are taken out
    first: saying one's order id is the point, not a quote."""

    values: tuple[str, ...] = ()
    clauses: set[str] = field(default_factory=set)
    runs: set[tuple[str, ...]] = field(default_factory=set)

    @classmethod
    def of(cls, texts: Iterable[str], values: Iterable[Any] = ()) -> WriterText:
        given = cls(tuple(sorted({str(v).lower() for v in values if str(v).strip()},
                                 key=len, reverse=True)))  # fmt: skip
        for text in texts:
            given.add(text)
        return given

    def add(self, text: str) -> None:
        low = text[: MAX_CHARS * 4].lower()
        for value in self.values:
            low = low.replace(value, " \x00 ")
        for clause in re.split(r"[.,;:!?()\n\x00\u2014\u2013\"{}\[\]]+|\s-\s", low):
            words = _tokens(clause)
            if len(words) >= _QUOTE_CLAUSE:
                self.clauses.add(" ".join(words))
            for i in range(len(words) - _QUOTE_RUN + 1):
                self.runs.add(tuple(words[i : i + _QUOTE_RUN]))

    def quoted_in(self, text: str) -> bool:
        words = _words(text)
        if any(tuple(words[i : i + _QUOTE_RUN]) in self.runs
               for i in range(len(words) - _QUOTE_RUN + 1)):  # fmt: skip
            return True
        joined = f" {' '.join(words)} "
        return any(f" {clause} " in joined for clause in self.clauses)


@dataclass
class Turn:
    """What one drafted turn is checked against.

    `facts` are the person's (their brief's values); `asked` the facts the agent's last
    turn asked for; `said` everything said in the conversation so far (an id the agent
    or the person already named may be named again); `given` what the writer was told.
    `reacted`: the person already answered an unresolved turn once, so may give up now.
    `errand`: the person came to have something done or looked up (a general question
    that the agent says it cannot answer leaves them nothing to press for).
    """

    facts: list[Fact]
    agent_last: str = ""
    said: str = ""
    given: WriterText = field(default_factory=WriterText)
    opener: bool = False
    ask_family: str = "tool"
    targets: tuple[str, ...] = ()
    reacted: bool = False
    errand: bool = True
    own: tuple[str, ...] = ()  # the person's earlier turns

    @classmethod
    def opener_for(cls, situation: dict[str, Any], told: Iterable[str] = ()) -> Turn:
        """The first message's turn for `situation`: the person's facts, what the writer
        was `told` (none for the template), the ask family and the records it targets."""
        facts = facts_of(situation)
        texts = list(told)
        return cls(
            facts=facts,
            given=WriterText.of(texts, [f.value for f in facts]) if texts else WriterText(),
            opener=True,
            ask_family=str((situation.get("human") or {}).get("ask_family") or "tool"),
            targets=tuple(str(v) for v in (situation.get("targets") or {}).values()),
        )

    @cached_property
    def reading(self) -> Reading:
        """What the agent's last turn asked the person for (read once per turn)."""
        return read_turn(self.agent_last[:MAX_CHARS], self.facts)

    @property
    def asked(self) -> list[Fact]:
        return self.reading.facts if self.agent_last else []

    @cached_property
    def asked_names(self) -> list[str]:
        """What the agent's last turn calls the details it asks for (read once per turn,
        however many drafts are checked against it)."""
        return asked_labels(self.agent_last[:MAX_CHARS])


def turn_problem(text: str, turn: Turn) -> str | None:
    """Why a drafted turn (not an ending) cannot stand as the person's, or None."""
    if reads_as_agent(text):
        return "role_flip"
    objects = {o for f in turn.facts for o in f.objects}
    if works_the_record(text, objects) or offers_help(text, bool(turn.reading.asked)):
        return "role_flip"
    if owns_listener_record(text, objects) or reports_a_search(text, objects):
        return "role_flip"
    if says_not_found(text, objects) and not _MISSING.search(turn.agent_last):
        return "role_flip"  # a search's result nobody reported to the person
    if asks_listeners_wish(text) or asks_listeners_record(text):
        return "role_flip"
    if acts_for_listener(text) or owns_listener_staff(text, turn.agent_last):
        return "role_flip"
    if owns_the_denial(text, turn.agent_last):
        return "role_flip"
    if credits_listener(text, turn.facts):
        return "role_flip"
    if unfilled_slot(text):
        return "writer_text"
    if serves_listener(text) and (turn.opener or not turn.reading.asked):
        return "role_flip"  # asked nothing, the person has nothing to offer the listener
    if (
        turn.given.quoted_in(text)
        or names_a_field(text, turn.facts)
        or narrates(text, (f.value for f in turn.facts))
    ):
        return "writer_text"
    if turn.agent_last and (
        parrots(text, turn.agent_last)
        or copies_a_clause(text, turn)
        or echoes_the_ask(text, turn)
        or restates_the_record(text, turn.agent_last, turn.facts)
        or turns_the_question_back(text, turn.agent_last)
        or restates_the_agent(text, turn.agent_last)
    ):
        return "parroting"
    if not turn.opener and says_ready(text, turn.agent_last):
        return "writer_text"
    if repeats(text, turn.own, (f.value for f in turn.facts)):
        return "repeats_itself"
    if third_person(text) or names_self_as_other(text, turn.facts):
        return "third_person"
    if invented_facts(text, turn):
        return "invented_fact"
    if claims_given(text, turn):
        return "writer_text"
    # Asking for the person's own details is the agent's part, in an opener too ("I need
    # the order ID."), except where a vague opener names the record it leaves out; even
    # there, their own name is never one they have to be told.
    vague_opener = turn.opener and turn.ask_family == "vague"
    own = [f for f in turn.facts if f.kind == "name"] if vague_opener else turn.facts
    if own and asks_for_own(text, own):
        return "role_flip"
    if quizzes_listener(text, turn.facts) or reports_asking_for_own(text, turn.facts):
        return "role_flip"
    low = text.lower()
    if any(str(f.value).lower() not in low for f in _pending(turn)):
        return "facts_not_given"
    if turn.opener and bare_details(text, turn.facts):
        return "bare_details"
    if turn.opener and (acknowledges_only(text) or complies_first(text) or names_nothing(text)):
        return "no_ask"
    if turn.opener and turn.ask_family == "vague" and any(t.lower() in low for t in turn.targets):
        return "gave_the_id"
    return None


def stop_problem(turn: Turn) -> str | None:
    """Why the person may not end the conversation here, or None."""
    if turn.opener:
        return "empty"
    if turn.agent_last and _waits_for_answer(turn):
        return "stopped_unanswered"
    if turn.errand and not turn.reacted and unresolved(turn.agent_last):
        return "stopped_unresolved"
    return None


def _pending(turn: Turn) -> list[Fact]:
    """The facts the agent asked for that the person owes it: asked again for one they
    gave once, a person says it again; asked for one they gave twice already, they have
    no new way to say it and may let it be."""
    given = " ".join(turn.own).lower()
    return [f for f in turn.asked if given.count(str(f.value).lower()) < 2]


def _waits_for_answer(turn: Turn) -> bool:
    """The agent's last turn waits on the person: it asks for a fact they hold and have
    not given yet, offers a choice, asks to confirm, or asks for something they lack
    before they have said anything at all after their opener."""
    reading = turn.reading
    return bool(
        _pending(turn)
        or reading.options
        or reading.which_of_two
        or reading.confirm
        or (reading.missing and len(turn.own) <= 1)
    )


# A value given as an id: "the order id is 123456", "ref: 99812", "number #4410".
_GIVEN_AS_ID = re.compile(
    r"\b(?:id|number|no\.?|ref|reference|code)(?: is|:|#| #)\s{0,2}#?(\d[\w-]{2,30})\b",
    re.IGNORECASE,
)


# A bare number long enough to be an id, an account or an amount ("the order is 12345");
# a year ("since 2024") is not one. Bounded runs, no backtracking.
_LONG_NUMBER = re.compile(r"(?<![\w.,])\d{4,12}(?![\w]|[.,]\d)")
_YEAR = re.compile(r"(?:19|20)\d\d")


def labelled_values(text: str, labels: Iterable[str]) -> list[str]:
    """The first word of each value the line gives under one of `labels`, what the agent
    asked for ("The passenger name is John Smith and the fare class is economy." -> john,
    economy)."""
    low = " ".join(_words(text))
    found = []
    for label in labels:
        for match in re.finditer(rf"\b{re.escape(label)} (?:is|was|would be) (\w+)", low):
            word = match.group(1)
            if word not in rp.FUNCTION_WORDS and not rp.is_negator(word):
                found.append(word)
    return found


# The speaker says they already gave a detail: "I have provided you with the order ID and
# the reason", "I told you my booking reference". Bounded clause, no backtracking.
_CLAIMS_GIVEN = re.compile(
    r"\bi(?: have|'ve)?(?: already| just)? (?:gave|given|provided|sent|shared|told)"
    r"(?: you| it to you)?(?: with)?\b([^.;!?,\n]{0,80})"
)


_ALL_DETAILS = frozenset({"details", "information", "info", "everything"})


def claims_given(text: str, turn: Turn) -> bool:
    """The line says the person already gave one of their details, and the conversation
    holds no such thing: the writer's idea of the conversation, not what was said. Saying
    it while giving it ("I gave you the order id ORD-1010") stands, and so does anything
    said of what is not a detail ("I sent you the photos of the order")."""
    low = _lowered(text)
    if not _CLAIMS_GIVEN.search(low):
        return False
    said = " ".join((*turn.own, low)).casefold()
    for match in _CLAIMS_GIVEN.finditer(low):
        named = set(_words(match.group(1)))
        # "I've provided you with the details of my flight." with none of them said yet:
        # the details as a whole, claimed given.
        if named & _ALL_DETAILS and not any(str(f.value).casefold() in said for f in turn.facts):
            return bool(turn.facts)
        for fact in turn.facts:
            if not fact.words or not fact.words <= named:
                continue
            if fact.kind == "id" and not _ID_HANDLE & named:
                continue  # "the order photos": the order, not its id
            if str(fact.value).casefold() not in said:
                return True
    return False


# A place said as a route's end: "from Denver to Oslo", "between KIX and NBO", and a code
# given a name, "NBO (Newark International Airport)". Case-sensitive: a place is a proper
# name or a code. Bounded words, no backtracking.
_PLACE = r"(?:[A-Z][a-z]{2,20}(?: [A-Z][a-z]{2,20})?|[A-Z]{3})"
_ROUTE_PLACES = re.compile(rf"\b(?:from|to|between) ({_PLACE})(?: (?:to|and) ({_PLACE}))?(?![\w-])")
_CODE_NAMED = re.compile(r"\b([A-Z]{3}) ?\(([A-Z][A-Za-z]{2,20})")


def invented_places(text: str, turn: Turn) -> list[str]:
    """Places a person who holds a route names and does not hold: "from Denver to Oslo"
    for a trip from DEN to LYS, "NBO (Newark ...)". A held place may be called by its code
    or its city; a place the conversation named is heard. A person who holds no place
    is not read: where they are from is their own."""
    head = text[:MAX_CHARS]
    if not (_ROUTE_PLACES.search(head) or _CODE_NAMED.search(head)):
        return []
    held_places = [place_names(str(f.value)) for f in turn.facts]
    if not any(held_places):
        return []
    held = frozenset().union(*held_places)
    heard = turn.said
    for line in turn.own:  # a place the person made up before is made up again
        heard = heard.replace(line, " ")
    heard = heard.casefold()
    others = {w for f in turn.facts if not place_names(str(f.value)) for w in _words(str(f.value))}
    found: list[str] = []
    for match in _ROUTE_PLACES.finditer(head):
        for place in filter(None, match.groups()):
            low = place.lower()
            first = low.split()[0]
            if low in held or first in held or first in CALENDAR_NAMES or first in others:
                continue
            if re.search(rf"(?<![\w-]){re.escape(low)}(?![\w-])", heard):
                continue
            found.append(low)
    for code, name in _CODE_NAMED.findall(head):
        names = place_names(code)
        if names and code.lower() in held and name.lower() not in names:
            found.append(f"{code.lower()} ({name.lower()})")
    return found


def invented_facts(text: str, turn: Turn) -> list[str]:
    """Ids, e-mails and references in `text` that the person does not hold and that the
    conversation never named, or that garble one the person holds: their own reference
    with something added ("UH61IN-92977" for UH61IN, copied from an error the agent
    showed) is not theirs, whoever said it first. A value put in an id's place ("the
    order id is 123456") counts as an id, whatever its shape, and so does a bare number
    of four digits or more that is not a year ("the order is 12345")."""
    named = identifiers(text[:MAX_CHARS]) | {
        m.group(1).casefold() for m in _GIVEN_AS_ID.finditer(text[:MAX_CHARS])
    }
    named |= {n for n in _LONG_NUMBER.findall(text[:MAX_CHARS]) if not _YEAR.fullmatch(n)}
    said_dates = dates(text[:MAX_CHARS])
    labelled = labelled_values(text, turn.asked_names) if turn.agent_last else []
    places = invented_places(text, turn)
    if not named and not said_dates and not labelled:
        return places
    values = [str(f.value).casefold() for f in turn.facts]
    own = [v for v in values if len(v) >= 4]  # long enough to be garbled, not just short
    # What the agent said names things; what the person said before does not make a
    # made-up value theirs ("the order is 12345", said twice, is made up twice).
    heard = turn.said
    for line in turn.own:
        heard = heard.replace(line, " ")
    held = " ".join(values) + " " + heard.casefold()
    found = sorted(i for i in named if i not in held or any(v in i and v != i for v in own))
    found += places
    # A value given for what the agent asked that nothing holds: "the passenger name is
    # John Smith" from a person whose brief has no passenger.
    if labelled:
        heard_words = set(_words(held))
        found += sorted({w for w in labelled if w not in heard_words})
    if not said_dates:
        return found
    # A calendar date the brief does not hold ("I ordered it on the 1st of July") is a
    # detail made up as much as an id is; "last week" names no date and is the person's.
    held_dates = dates(held)

    def holds(d: tuple[int | None, int, int | None]) -> bool:
        # "March 17" is held by 2025-03-17: a part left out is not a different date.
        return any(
            all(a is None or b is None or a == b for a, b in zip(d, h, strict=True))
            for h in held_dates
        )

    made_up = [d for d in said_dates if not holds(d)]
    found += sorted("-".join(str(p) for p in d if p is not None) for d in made_up)
    return found


def bare_details(text: str, facts: list[Fact]) -> bool:
    """An opener that is only values and their labels: nothing is asked."""
    low = text[:MAX_CHARS].lower()
    labels = set(_LABELS)
    for fact in facts:
        low = low.replace(str(fact.value).lower(), " ")
        labels |= set(fact.words) | set(fact.objects)
    return not [w for w in _words(low) if w not in labels]


# Drafts of a turn tried before the rollout is dropped: the first and this many redraws.
REDRAWS = 3


# How a planned yes or no reads once reworded: a confirmation must stay one. A no is a
# negator (`replies.is_negator`) or a hold.
_YES = re.compile(r"\b(?:yes|yeah|yep|sure|ok(?:ay)?|go ahead|please do|do it|right|correct)\b")
_HOLD = re.compile(r"\b(?:hold off|wait)\b")
# The helper's part in the first person ("Sure, I'll check again", "I'd be glad to look",
# "I'll take care of it"): a model asked to reword a request often answers it instead.
# The verbs are the service's work (`_WORK_VERBS`) and the helper's own.
_HELPER_VERBS = _WORK_VERBS | {"help", "assist", "do", "get", "try", "see", "care"}
_HELPER_ACT = re.compile(r"\b(?:i'?ll|i will|i'?d be (?:glad|happy)(?: to)?|let me|i can)\s")
_GLAD_TO_HELP = re.compile(r"\b(?:happy|glad) to (?:help|assist)\b")
# The person claiming the service's work on the record as done ("I changed the passenger
# name to Maria Chen" for "the passenger name is Maria Chen"): a past form of the work.
_DID_ACT = re.compile(r"\bi(?:'ve| have)? (?:just |already )?([a-z]+ed)\b")
# An errand of the service's tools: a wording that gains one asks for what the person
# never came for ("I really need to change the name" on a flight search).
_ERRAND = re.compile(
    r"\b(?:chang|cancel|refund|rebook|return|upgrad|book (?:it|the|a|my|this|that))",
    re.IGNORECASE,
)
# A person's name: two capitalised words together, not at a sentence's start.
_NAME = re.compile(r"(?<=[a-z,] )([A-Z][a-z]+ [A-Z][a-z]+)\b")
# A request kept as one: a question, or the words a request is made with.
_REQUEST = re.compile(r"\?|\b(?:please|pls|can you|could you|would you|need|want|help)\b")
# The writer talking about its own rewording ("This rephrasing uses shorter language").
_REWORDING_TALK = re.compile(
    r"\b(?:rephras\w*|reword\w*|rewrit\w*|this version|original message|emphasi[sz]es"
    r"|(?:the|your|my|this) draft)\b"
)
_MY = re.compile(r"\bmy (\w+)(?: (\w+))?")
_YOUR = re.compile(r"\b(?:your|ur) (\w+)(?: (\w+))?")


def _says_no(low: str) -> bool:
    return any(rp.is_negator(w) for w in rp.tokens(low)) or bool(_HOLD.search(low))


def _helper_acts(low: str) -> bool:
    """A lead ("I'll", "let me") with one of the helper's verbs among its next three words."""
    if _GLAD_TO_HELP.search(low):
        return True
    return any(
        _HELPER_VERBS & set(rp.tokens(low[m.end() : m.end() + 40])[:3])
        for m in _HELPER_ACT.finditer(low)
    )


def _did_act(low: str) -> bool:
    return any(m.group(1) in _WORK_VERBS for m in _DID_ACT.finditer(low))


def _content_stems(text: str) -> set[str]:
    """The words of substance, by the judges' one stemmer."""
    return {rp.stem(w) for w in rp.tokens(text) if len(w) >= 4 and w not in rp.FUNCTION_WORDS}


def _owned(text: str, owner: re.Pattern[str]) -> set[str]:
    """The things `owner` ("my", "your") stands before, by their stem."""
    return {
        rp.stem(w)
        for m in owner.finditer(text)
        for w in m.groups()
        if w and len(w) >= 3 and w not in rp.FUNCTION_WORDS
    }


def strays_from_plan(text: str, plan: str, facts: Iterable[Fact]) -> bool:
    """A reworded line (`--person-mode plan`) that no longer says what its plan said: a
    value of the person's gained or lost (the vague opener that now names its id, the
    answer that dropped the order id), an id, e-mail or number the plan never had, a yes
    turned into a no, a request turned into the helper's answer to it ("Sure, I'll check
    again") or into a bare "Yes.", the person's "my" turned "your", talk about the
    rewording itself, little left of the plan's words, or a line grown to several times
    the plan's length (a model that went on to write the agent's part too). The plan is
    the person's in-role line, so a wording that keeps all of these keeps its role.
    Read on the model's words before the person's texture is typed onto them."""
    low, said = _lowered(text), _lowered(plan)
    for fact in facts:
        value = str(fact.value).lower()
        if (value in said) != (value in low):
            return True
    if identifiers(text[:MAX_CHARS]) - identifiers(plan[:MAX_CHARS]):
        return True
    if set(numbers(text[:MAX_CHARS])) - set(numbers(plan[:MAX_CHARS])):
        return True
    head = said.split(".", 1)[0]
    if head.startswith("yes") and (not _YES.search(low) or _says_no(low)):
        return True
    if head.startswith(("no", "not yet")) and not _says_no(low):
        return True
    if _REWORDING_TALK.search(low):
        return True
    # The service's side gained: its acts, its offers, its sign-off, the listener's needs
    # asked after (the shared readers, where one serves).
    for reads in (_helper_acts, _did_act, reads_as_agent, serves_listener):
        if reads(low) and not reads(said):
            return True
    if {e.split()[0] for e in _ERRAND.findall(low)} - {e.split()[0] for e in _ERRAND.findall(said)}:
        return True
    if any(n.casefold() not in said for n in _NAME.findall(text[:MAX_CHARS])):
        return True
    if _REQUEST.search(said) and not _REQUEST.search(low) and not head.startswith("yes"):
        return True
    # "one of my orders" said as "your order": the thing, one or two words on, compared
    # without its plural.
    if _owned(said, _MY) & _owned(low, _YOUR):
        return True
    stems = _content_stems(said)
    if len(stems) >= 3 and len(stems & _content_stems(low)) < len(stems) / 4:
        return True
    return len(_tokens(text)) > 2 * len(_tokens(plan)) + 12


async def checked_opener(
    draw: Callable[[int, str | None], Awaitable[str | None]],
    turn: Turn,
    counts: Counter[str],
    who: str,
    also: Callable[[str], str | None] | None = None,
) -> str:
    """The person's first message from `draw(attempt, failed_check)`, checked like every
    turn. A draft that fails is drawn again, told which check failed (a model writer names
    it in a note; the template draws from a new seed), and after `REDRAWS` redraws the ask
    is dropped (`PersonDropped`, counted), never kept. One loop for every writer, so the
    counts a run reports mean the same whoever voiced the person. `also` is a further
    check of the writer's own (a planned person's rewording keeps its plan)."""
    problem: str | None = None
    for attempt in range(REDRAWS + 1):
        text = await draw(attempt, problem)
        found = turn_problem(text, turn) if text else "empty"
        if found is None and also is not None:
            found = also(str(text))
        if found is None:
            if attempt:
                counts["turns_redrawn"] += 1
            return str(text)
        problem = found
        counts[f"redrawn_opener_{problem}"] += 1
    counts[f"dropped_opener_{problem}"] += 1
    raise PersonDropped(str(problem), f"{who}: {REDRAWS + 1} openers in a row failed ({problem})")
