"""A chat template's scaffolding in a model's reply: what the model client strips, and
what is left when a reply was scaffolding rather than an answer.

Small models served through a chat template leak the template into their content: its
special tokens (`<|im_end|>`, `<|eot_id|>`, `[/INST]`), the role header it opens a turn
with (`<|im_start|>assistant`, `message:` in llama-cpp-python's function-calling
format), and its function-calling recipe echoed back ("To call a function, reply with
only a JSON object ...", "You have access to the following functions"). None of that is
the agent speaking, and a row that keeps it teaches a policy to say it, so the model
client strips it from every reply and counts the replies it cleaned
(`ClientStats.scaffolding_stripped`).

What the client cannot strip without guessing is a reply that is nothing but a JSON
envelope (`{"name": ..., "arguments": ...}`, `{"response": ...}`) or a lead-in to one
("Here is the JSON response to your message:"): that is the agent's text, kept as
written, and `not_an_answer` names it so the judges can flag the reply
(`judges/evidence.py`). A JSON answer that is the data asked for is left alone. Every
pattern runs on text capped at `MAX_CHARS` and is linear.
"""

from __future__ import annotations

import json
import re

MAX_CHARS = 20_000

_TOKENS = re.compile(
    r"<\|[A-Za-z0-9_.:-]{1,40}\|>|<\uff5c[^\uff5c<>\n]{1,40}\uff5c>|</?s>|\[/?INST\]"
    r"|<(?:start|end)_of_turn>|</?tool_call>"
)
# The turn header a template opens the reply with, left at its start once its token is gone.
_HEAD = re.compile(
    r"^(?:\s*(?:(?:assistant|model)[ \t]*(?:\n|:\s)|message:[ \t]*\n?)){1,4}", re.IGNORECASE
)
# A template's function-calling recipe, sentence by sentence.
_RECIPE = re.compile(
    r"(?:you have access to the following (?:functions|tools)|to call a function\b"
    r"|to respond with (?:a message|one or more function calls)|you can respond to users? "
    r"messages? with|(?:reply|respond) with (?:only )?(?:a |the )?json (?:object|for a function"
    r" call)|use the following format)[^\n.]{0,300}[.:]?",
    re.IGNORECASE,
)
# The recipe's first words left alone as the whole content beside a call ("To call this
# function, " with the call in tool_calls): a stub of the recipe, never an answer. Only
# the whole content: "To call the airline, dial 0800 ..." says something and is kept.
_RECIPE_STUB = re.compile(
    r"^\W{0,3}to call (?:a|an|the|this|that) (?:`?[\w.-]{1,60}`? )?(?:function|tool)"
    r"(?:,? (?:reply|respond) with)?\W{0,3}$",
    re.IGNORECASE,
)
_LEAD_IN = re.compile(
    r"\bhere (?:is|are) the (?:json|function call|tool call)s?\b[^\n:]{0,80}:?", re.IGNORECASE
)
_JSON_START = re.compile(r"^\s*(?:```(?:json)?\s*)?[{\[]")
_FENCE = re.compile(r"^\s*```(?:json)?\s*|\s*```\s*$")
# Keys of a JSON object that wraps a call or a reply instead of being the answer itself.
_WRAPPER_KEYS = frozenset(
    {"name", "function", "tool", "tool_name", "arguments", "parameters", "response",
     "content", "message", "answer", "reply", "role"}
)  # fmt: skip


def strip_scaffolding(text: str) -> tuple[str, bool]:
    """(the reply without its template's tokens, turn header and recipe, whether any was
    there). An answer without scaffolding comes back unchanged."""
    if not text:
        return text, False
    cleaned = _TOKENS.sub("", text[:MAX_CHARS])
    cleaned = _HEAD.sub("", cleaned, count=1)
    cleaned = _RECIPE.sub("", cleaned)
    cleaned = re.sub(r"[ \t]{2,}", " ", cleaned).strip()
    cleaned = _RECIPE_STUB.sub("", cleaned)
    if len(text) > MAX_CHARS:
        cleaned += text[MAX_CHARS:]
    changed = cleaned != text.strip()
    return (cleaned if changed else text), changed


def not_an_answer(text: str) -> str | None:
    """What a reply is instead of an answer, when it is template scaffolding: a
    function-calling recipe, a token, a lead-in to JSON, or bare JSON (a reply made to
    be parsed, sent as words). None for a reply that says something."""
    text = text[:MAX_CHARS].strip()
    if not text:
        return None
    if _TOKENS.search(text) or _RECIPE.search(text) or _RECIPE_STUB.match(text):
        return "chat-template scaffolding"
    rest = _LEAD_IN.sub("", text).strip()
    if rest != text and (not rest or _JSON_START.match(rest)):
        return "a lead-in to JSON, not an answer"
    if _JSON_START.match(text) and _wrapper(text):
        return "a call or a reply wrapped in JSON, not an answer"
    return None


def _wrapper(text: str) -> bool:
    """A JSON object (fenced or not) keyed like a function call or a reply envelope."""
    try:
        value = json.loads(_FENCE.sub("", text))
    except ValueError:
        return False
    items = value if isinstance(value, list) else [value]
    return any(isinstance(v, dict) and _WRAPPER_KEYS & set(v) for v in items)
