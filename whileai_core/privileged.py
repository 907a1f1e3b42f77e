"""The teacher-only block: what judges may read and what no export or push may carry.

`privileged` (hidden_state, reference, principle, rubric) puts the answer key one step
from a training file, so it is removed at any depth, including inside tool results
that arrive as JSON-encoded strings. `vector` (a raw embedding kept in memory during a
run) never ships either.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

import orjson

PRIVILEGED_KEY = "privileged"
PRIVILEGED_FIELDS = ("hidden_state", "reference", "principle", "rubric")
NEVER_SHIPPED = frozenset({PRIVILEGED_KEY, "vector"})


def strip_privileged(value: Any) -> Any:
    """A copy of `value` with every `privileged` block (and `vector`) removed at any depth.

    Strings that hold JSON mentioning the block (a tool message's content is one) are
    decoded, stripped and re-encoded, however they spell it: leading whitespace, a
    `\\u0070rivileged` escape, a number orjson will not read, a JSON string inside a JSON
    string. The input is never mutated.
    """
    if isinstance(value, dict):
        return {k: strip_privileged(v) for k, v in value.items() if k not in NEVER_SHIPPED}
    if isinstance(value, list):
        return [strip_privileged(v) for v in value]
    if isinstance(value, str):
        decoded = _embedded_json(value)
        if decoded is _NOT_JSON:
            return value
        clean = strip_privileged(decoded)
        return value if clean == decoded else _encode(clean)
    return value


def has_privileged(value: Any) -> bool:
    """True when a `privileged` key survives anywhere in `value` (the test every export runs)."""
    if isinstance(value, dict):
        return any(k in NEVER_SHIPPED or has_privileged(v) for k, v in value.items())
    if isinstance(value, list):
        return any(has_privileged(v) for v in value)
    if isinstance(value, str):
        decoded = _embedded_json(value)
        return decoded is not _NOT_JSON and has_privileged(decoded)
    return False


_NOT_JSON = object()
# A string is worth decoding only when it could name a never-shipped key: literally, or
# through a JSON escape that hides the letters from a plain substring test.
_TRIGGERS = (*NEVER_SHIPPED, "\\u")


def _embedded_json(text: str) -> Any:
    """The JSON value a string holds (an object, array, or a JSON string literal), or
    `_NOT_JSON` when it holds none or cannot mention a never-shipped key."""
    body = text.strip()
    if body[:1] not in ("{", "[", '"') or not any(t in body for t in _TRIGGERS):
        return _NOT_JSON
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        pass
    try:  # integers past 64 bits, NaN: valid to Python's reader, not to orjson's
        return json.loads(body)
    except ValueError:
        return _NOT_JSON


def _encode(value: Any) -> str:
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def privileged_texts(row: dict[str, Any], min_chars: int = 12) -> list[str]:
    """The privileged strings long enough that seeing one in a reply means it leaked."""
    block = row.get(PRIVILEGED_KEY)
    if not isinstance(block, dict):
        return []
    found: list[str] = []
    for name in PRIVILEGED_FIELDS:
        value = block.get(name)
        _long_strings(value, min_chars, found)
        if isinstance(value, (dict, list)):
            _long_strings(orjson.dumps(value).decode(), min_chars, found)
    return found


def _long_strings(value: Any, min_chars: int, found: list[str]) -> None:
    """Append every string in `value` at least `min_chars` long (stripped), in order. A
    module function, not a closure over `found`: a recursive closure is a reference cycle,
    and one per block left 75,000 objects for the cycle collector in a 100k-row optimize."""
    if isinstance(value, str):
        if len(value.strip()) >= min_chars:
            found.append(value.strip())
    elif isinstance(value, dict):
        for item in value.values():
            _long_strings(item, min_chars, found)
    elif isinstance(value, list):
        for item in value:
            _long_strings(item, min_chars, found)


def answer_key_texts(row: dict[str, Any], min_chars: int = 24) -> list[str]:
    """The row's answer-key strings (`reference`, `principle`, `rubric`), lower-cased, long
    enough that finding one in shipped text means the key went with it (shorter ones are
    enumerations the world and the person say too)."""
    block = row.get(PRIVILEGED_KEY)
    if not isinstance(block, dict):
        return []
    keys = {name: block[name] for name in ("reference", "principle", "rubric") if name in block}
    return [t.lower() for t in privileged_texts({PRIVILEGED_KEY: keys}, min_chars=min_chars)]


def quotes_privileged(row: dict[str, Any], secrets: Sequence[str] | None = None) -> bool:
    """True when the agent's reply repeats its own privileged block: a leaked answer key.
    `secrets` are the block's `privileged_texts`, lower-cased, for a caller that keeps them
    per block (optimize: the rollouts of one ask share a block, and extracting its strings
    costs more than the rest of selecting a row)."""
    if secrets is None:
        secrets = [secret.lower() for secret in privileged_texts(row)]
    if not secrets:
        return False
    reply = row.get("final_text")
    texts = [reply] if isinstance(reply, str) else []
    for message in row.get("messages") or []:
        if isinstance(message, dict) and message.get("role") == "assistant":
            content = message.get("content")
            if isinstance(content, str):
                texts.append(content)
    if not texts:
        return False
    haystack = "\n".join(texts).lower()
    return any(secret in haystack for secret in secrets)


# -- leaked fragments: the block quoted in part, not only whole ---------------------------
_LEAK_WORD = re.compile(r"\w+")
LEAK_WINDOW = 6
_IDENTIFIER = re.compile(r"(?=[\w.-]*\d)(?=[\w.-]*[A-Za-z])[A-Za-z0-9][\w.-]{5,}")


def _leak_words(text: str) -> list[str]:
    return _LEAK_WORD.findall(text.lower())


def leak_candidates(value: Any, key: str = "") -> list[str]:
    """Strings of a privileged field a reply could quote: every string value, and for an
    object's scalar members "key value" too (a reply that says `world_state: duplicate
    entity` quotes the member, whatever the JSON spacing)."""
    out: list[str] = []
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, dict):
        for k, item in value.items():
            if isinstance(item, (str, int, float)) and not isinstance(item, bool):
                out.append(f"{k} {item}")
            out.extend(leak_candidates(item, str(k)))
    elif isinstance(value, list):
        for item in value:
            out.extend(leak_candidates(item, key))
    return out


def _recognisable(candidate: str) -> bool:
    """Long enough that seeing it in a reply means it was copied: 12 characters, or an
    identifier mixing letters and digits (a code, a ticket number)."""
    stripped = candidate.strip()
    return len(stripped) >= 12 or bool(_IDENTIFIER.fullmatch(stripped))


def quotable(row: dict[str, Any]) -> bool:
    """Whether the row's privileged block holds anything a reply could be caught quoting."""
    block = row.get(PRIVILEGED_KEY)
    if not isinstance(block, dict):
        return False
    texts = (text for name in PRIVILEGED_FIELDS for text in leak_candidates(block.get(name)))
    return any(_recognisable(text) for text in texts)


def _grams(tokens: list[str], n: int) -> set[tuple[str, ...]]:
    return {tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)}


def _first_run(tokens: list[str], spoken: set[tuple[str, ...]], told: set[tuple[str, ...]]) -> str:
    """The first stretch of `tokens` whose LEAK_WINDOW-grams were all spoken and not
    all heard, as words ("" when there is none)."""
    n = LEAK_WINDOW
    hit = [
        (g := tuple(tokens[i : i + n])) in spoken and g not in told
        for i in range(len(tokens) - n + 1)
    ]
    if True not in hit:
        return ""
    start = hit.index(True)
    end = start
    while end + 1 < len(hit) and hit[end + 1]:
        end += 1
    return " ".join(tokens[start : end + n])


def _as_written(text: str, run: str) -> str:
    """The stretch of `text` whose words are `run`, as written there (case, punctuation)."""
    pattern = r"\W+".join(map(re.escape, run.split()))
    match = re.search(pattern, text, re.IGNORECASE)
    return match.group(0) if match else run


def leaked_fragments(
    row: dict[str, Any], said: Sequence[str], heard: Sequence[str] = ()
) -> list[tuple[str, str]]:
    """(field, fragment) for each privileged field the agent's texts (`said`) quote, the
    longest quote first.

    A quote is a privileged string of up to LEAK_WINDOW words said whole (at least 12
    characters, or an identifier such as a code with letters and digits), or any run of
    LEAK_WINDOW words of a longer one. A run that is also in what the agent was told
    (`heard`: the prompt, the person, the system prompt, tool results) is not a leak:
    the agent had it from somewhere it may repeat. Words are compared lower-cased without
    punctuation, so spacing and JSON quoting never hide a copy.
    """
    block = row.get(PRIVILEGED_KEY)
    if not isinstance(block, dict):
        return []
    spoken = _leak_words("\n".join(said))
    if not spoken:
        return []
    told = _leak_words("\n".join(heard))
    spoken_text, told_text = f" {' '.join(spoken)} ", f" {' '.join(told)} "
    spoken_grams, told_grams = _grams(spoken, LEAK_WINDOW), _grams(told, LEAK_WINDOW)
    found: list[tuple[str, str]] = []
    for name in PRIVILEGED_FIELDS:
        for candidate in leak_candidates(block.get(name)):
            tokens = _leak_words(candidate)
            if not tokens:
                continue
            if len(tokens) <= LEAK_WINDOW:
                if not _recognisable(candidate):
                    continue
                phrase = f" {' '.join(tokens)} "
                if phrase in spoken_text and phrase not in told_text:
                    found.append((name, candidate.strip()))
                    break
                continue
            run = _first_run(tokens, spoken_grams, told_grams)
            if run:
                found.append((name, _as_written(candidate, run)))
                break
    return sorted(found, key=lambda item: -len(item[1]))
