"""Does a line a model drafted for the person read as the person?

Small chat models asked to play the customer slip: an opener comes back as the
assistant's reply ("I'm sorry, but I don't have enough information about the records you
are referring to"), a follow-up repeats the agent's last turn word for word, and a
conversation that is over goes on with "you're welcome. done." for five more turns. Each
check here names one of those slips, so the writer can redraw the line (and count why)
instead of putting it in a row.

The checks read how a line is built, not a model's favourite phrasing: the service's
side offers help, apologises for what it cannot access, reports actions it took on
"your" records and asks the customer to provide details; the person's side does none of
that. A parrot is measured by word overlap with the agent's last turn; an ending is a
line made only of thanks and goodbyes, or the stop marker.
"""

from __future__ import annotations

import re

from ..text.similarity import WordNgramEmbedder, cosine

STOP = "###STOP###"
# Markers a writer may use to end the conversation: the one we ask for, tau2-bench's own
# (the same), and the bare DONE older prompts asked for.
_STOP_MARKERS = re.compile(r"#{2,}\s*[Ss][Tt][Oo][Pp]\s*#{2,}|\bDONE\b\.?\s*$")
_BARE_DONE = re.compile(r"^\W*done\W*$", re.IGNORECASE)

_AGENT_SIDE = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        r"\bhow (?:can|may|could|might) i (?:help|assist)\b",
        r"\bwhat can i (?:do|help you with)\b",
        r"\banything else (?:i can|i could|that i can|you need)\b",
        r"\bas an ai\b|\blanguage model\b|\bvirtual assistant\b",
        r"\bi(?:'m| am) (?:sorry|afraid),? but i (?:don't|do not|can't|cannot|am unable)\b",
        r"\bi (?:don't|do not) have (?:enough |any )?(?:information|access|details|records)\b",
        r"\b(?:the|any) records? you (?:are|were|have been) referring to\b",
        r"\b(?:i have|i've) (?:checked|looked up|located|refunded|cancell?ed|processed|updated|"
        r"issued|reviewed|escalated)\b[^.?!]*\byour\b",
        r"\byour (?:order|booking|request|refund|account|ticket|reservation|issue|case)\b"
        r"[^.?!]{0,40}\b(?:has been|have been|is now|was successfully)\b",
        r"\bthank you for (?:contacting|reaching out|your patience|choosing|your order)\b",
        r"\b(?:could|can|would) you (?:please )?(?:provide|share|confirm) (?:me with )?"
        r"(?:your|the)\b",
        r"\bplease (?:provide|share) (?:me with )?(?:your|the)\b",
        r"\b(?:let me|i'll|i will) (?:check|look into|look up|pull up|process)\b[^.?!]*"
        r"\bfor you\b",
        r"\bi(?:'d| would) be (?:happy|glad) to help\b",
    )
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
_EMBED = WordNgramEmbedder(ngrams=(1, 2))


def split_stop(text: str) -> tuple[str, bool]:
    """(the line without any stop marker, whether it carried one)."""
    if _BARE_DONE.match(text):
        return "", True
    cleaned, n = _STOP_MARKERS.subn(" ", text)
    return " ".join(cleaned.split()).strip(" .") if n else text, bool(n)


def reads_as_agent(text: str) -> bool:
    """A line only the service's side would write."""
    return any(p.search(text) for p in _AGENT_SIDE)


def _norm(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9@.-]+", text.lower()))


def parrots(text: str, agent_last: str) -> bool:
    """The line repeats the agent's last turn: the same words, most of them, or a long
    stretch of them copied whole."""
    mine, theirs = _norm(text), _norm(agent_last)
    if not mine or not theirs:
        return False
    if mine == theirs or (len(mine) >= 20 and mine in theirs):
        return True
    return cosine(_EMBED.embed(mine), _EMBED.embed(theirs)) >= 0.8


def only_closing(text: str) -> bool:
    """Nothing but thanks and goodbyes: the person is done."""
    if "?" in text:
        return False
    words = re.findall(r"[a-z']+", text.lower())
    return bool(words) and len(words) <= 12 and all(w in _CLOSING for w in words)
