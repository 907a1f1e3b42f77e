"""The teacher-only block: what judges may read and what no export or push may carry.

`privileged` (hidden_state, reference, principle, rubric) puts the answer key one step
from a training file. Two questions about it have their one answer here, and every way
out (export, env export, push, the server's finalize) asks them:

- Does a value *carry* the block? `strip_privileged` removes it at any depth, under any
  casing, inside tool results that arrive as JSON-encoded strings; `carries_privileged`
  then says whether anything of it survived (a key, or the word itself in text no decoder
  could take apart: after a prefix, as a Python repr, past Python's integer-digit limit).
  `prepare_to_ship` is the two in order, plus the leak check below.
- Does a row *leak* its answer key? `answer_key_leaks` at a named `Strictness`: the
  conduct judge's `no_leak`, the audit marker, selection, export and push all ask it at
  `Strictness.TURNS`, so the row the judge fails for a leak is the row export and push
  refuse. `vector` (a raw embedding kept in memory during a run) never ships either.

Every walk is iterative or depth-bounded and every pattern bounded: a row nested past
Python's recursion limit inside a string is refused as text, never a crash.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

import orjson

from .model import call_function

PRIVILEGED_KEY = "privileged"
PRIVILEGED_FIELDS = ("hidden_state", "reference", "principle", "rubric")
ANSWER_FIELDS = ("reference", "principle", "rubric")
NEVER_SHIPPED = frozenset({PRIVILEGED_KEY, "vector"})

# -- carrying the block ---------------------------------------------------------------------

# Strings nested inside strings are decoded this deep at most (each level is a JSON text in
# a JSON string); past it a string stays text, and the word check below refuses it.
_STRIP_DEPTH = 200
# An embedded JSON text nesting deeper than this is not decoded (rows themselves nest at
# most `jsonl.row_depth()`, 64 by default).
_EMBED_DEPTH = 64


def _shipped_key(key: Any) -> bool:
    """Whether a dict key names a never-shipped block, however it is cased or spelled
    (`Privileged`, `PRIVILEGED`, a full-width letter)."""
    if not isinstance(key, str):
        return False
    if key.isascii():
        return len(key) in _KEY_LENGTHS and key.lower() in NEVER_SHIPPED
    return _normal(key) in NEVER_SHIPPED


_KEY_LENGTHS = frozenset(len(key) for key in NEVER_SHIPPED)


def _dumped(value: Any) -> bytes | None:
    """`value` as JSON bytes, for a one-pass look at whether it could hold the block; None
    when orjson cannot write it (an integer past 64 bits, nesting past 255)."""
    try:
        return orjson.dumps(value)
    except TypeError:
        return None


def _clear(value: Any) -> bool:
    """True when nothing in `value` could name a never-shipped key in any spelling: the
    cheap answer for the many rows that never carried a block."""
    if isinstance(value, str):
        return value.isascii() and _RAW_TRIGGER.search(value.lower().encode()) is None
    dumped = _dumped(value)
    return dumped is not None and not might_carry(dumped)


def strip_privileged(value: Any) -> Any:
    """A copy of `value` with every `privileged` block (and `vector`) removed at any depth.

    Keys match under any casing. Strings that hold JSON mentioning the block (a tool
    message's content is one) are decoded, stripped and re-encoded, however they spell
    it: leading whitespace or a byte-order mark, a `\\u0070rivileged` escape, a number
    orjson will not read, a JSON string inside a JSON string. What cannot be decoded and
    re-encoded faithfully (a prefix before the JSON, a Python repr, an integer past
    Python's digit limit, nesting past `_EMBED_DEPTH`) is left as it is, for
    `carries_privileged` to refuse. The input is never mutated; what needed no change is
    shared with it, not copied (all of it when nothing in it could name the block).
    """
    if _clear(value):
        return value
    return _strip(value, 0)


def _strip(value: Any, depth: int) -> Any:
    if depth > _STRIP_DEPTH:
        return value
    if isinstance(value, dict):
        return {k: _strip_child(v, depth) for k, v in value.items() if not _shipped_key(k)}
    if isinstance(value, list):
        return [_strip_child(v, depth) for v in value]
    if isinstance(value, str):
        decoded = _embedded_json(value, faithful=True)
        if decoded is _NOT_JSON:
            return value
        clean = _strip(decoded, depth + 1)
        if clean == decoded:
            return value
        encoded = _encode(clean)
        return value if encoded is None else encoded
    return value


def _strip_child(value: Any, depth: int) -> Any:
    """A member as stripped: a container nothing in which could name the block is kept
    as it is (shared, not copied), which is most of any row that carries one."""
    if isinstance(value, (dict, list)):
        return value if _clear(value) else _strip(value, depth + 1)
    if isinstance(value, str):
        return _strip(value, depth + 1)
    return value


def has_privileged(value: Any) -> bool:
    """True when a never-shipped key survives anywhere in `value`: as a key at any depth
    and casing, or inside a string holding JSON. Prose that only mentions the word is not
    a key (`carries_privileged` is the stricter test every way out runs)."""
    return not _clear(value) and any(_shipped_key(key) for key, _ in _walk(value))


def carries_privileged(value: Any) -> bool:
    """The one test every way out runs on what it is about to write: a never-shipped key
    survives, or the word `privileged` appears in any key or text, after undoing escapes
    (`\\u0070`, `\\x70`, `&#112;`, `%70`), Unicode compatibility forms, invisible
    characters and case. Text that still names the block is text the strip could not
    take apart, so it is refused rather than trusted."""
    if _clear(value):
        return False
    for key, text in _walk(value):
        if _shipped_key(key):
            return True
        if isinstance(key, str) and _names_block(key):
            return True
        if text is not None and _names_block(text):
            return True
    return False


def _walk(value: Any) -> Iterator[tuple[Any, str | None]]:
    """(dict key, None) for every key and (None, text) for every string, at any depth,
    JSON inside strings decoded (losing only what a detector does not need). Iterative:
    no depth of nesting raises."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            for key, child in item.items():
                yield key, None
                stack.append((child, level))
        elif isinstance(item, list):
            stack.extend((child, level) for child in item)
        elif isinstance(item, str):
            yield None, item
            if level < _STRIP_DEPTH:
                decoded = _embedded_json(item, faithful=False)
                if decoded is not _NOT_JSON:
                    stack.append((decoded, level + 1))


_NOT_JSON = object()
# A string is worth decoding only when it could name a never-shipped key: literally (in
# any case), or through a JSON escape that hides the letters from a plain substring test.
_TRIGGERS = (*NEVER_SHIPPED, "\\u")
_JSON_HEADS = ("{", "[", '"', "\ufeff")
_DIGIT_LIMIT = 4000  # below Python's default 4300-digit int limit


def _lossy_int(text: str) -> int:
    """An integer a detector can hold: past Python's digit limit the value is not needed."""
    return int(text) if len(text) <= _DIGIT_LIMIT else 0


def _embedded_json(text: str, *, faithful: bool) -> Any:
    """The JSON value a string holds (an object, array, or a JSON string literal), or
    `_NOT_JSON` when it holds none or cannot mention a never-shipped key. `faithful`: only
    a value that re-encodes to the same data (what a strip writes back); otherwise an
    integer past Python's digit limit reads as 0 (what a detector walks)."""
    head = text[:1]
    if head not in _JSON_HEADS and not head.isspace():
        return _NOT_JSON
    body = text.strip().lstrip("\ufeff").strip()
    if body[:1] not in _JSON_HEADS:
        return _NOT_JSON
    if body.isascii() and not any(t in body.lower() for t in _TRIGGERS):
        return _NOT_JSON
    try:
        decoded = orjson.loads(body)
    except orjson.JSONDecodeError:
        # Integers past 64 bits, NaN: valid to Python's reader, not to orjson's.
        try:
            decoded = json.loads(body) if faithful else json.loads(body, parse_int=_lossy_int)
        except (ValueError, RecursionError):
            return _NOT_JSON
    if isinstance(decoded, (dict, list)) and _deeper_than(decoded, _EMBED_DEPTH):
        return _NOT_JSON
    return decoded


def _deeper_than(doc: Any, limit: int) -> bool:
    stack: list[tuple[Any, int]] = [(doc, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > limit:
            return True
        if isinstance(value, dict):
            stack.extend((child, depth + 1) for child in value.values())
        elif isinstance(value, list):
            stack.extend((child, depth + 1) for child in value)
    return False


def _encode(value: Any) -> str | None:
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        try:
            return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        except (ValueError, RecursionError):
            return None


# Escapes that can spell a letter: JSON, Python and JavaScript (`\u0070`, `\u{70}`,
# `\x70`, `\160`, any number of backslashes before them), HTML (`&#112;`, `&#x70;`) and
# URL (`%70`). Every quantifier is bounded, so no input backtracks.
_ESCAPE = re.compile(
    r"\\{1,8}(?:u([0-9a-fA-F]{4})|u\{([0-9a-fA-F]{1,6})\}|x([0-9a-fA-F]{2})|([0-7]{3}))"
    r"|&#(?:[xX]([0-9a-fA-F]{1,6})|([0-9]{1,7}));?"
    r"|%([0-9a-fA-F]{2})"
)
_BLOCK_WORD = "privileged"


def _unescape_one(match: re.Match[str]) -> str:
    hex_u, hex_brace, hex_x, octal, hex_html, dec_html, hex_url = match.groups()
    if dec_html:
        code = int(dec_html)
    elif octal:
        code = int(octal, 8)
    else:
        code = int(hex_u or hex_brace or hex_x or hex_html or hex_url or "0", 16)
    return chr(code) if code <= 0x10FFFF else ""


def _normal(text: str) -> str:
    """`text` as a detector compares it: escapes undone (three rounds, for escapes of
    escapes), compatibility forms folded to ASCII (full-width letters) and every other
    non-ASCII character dropped (zero-width spaces, combining marks: a word spelled
    through them reads whole), case folded. All of it at C speed, whatever the length."""
    for _ in range(3):
        if _MAY_ESCAPE_RE.search(text) is None:
            break
        undone = _ESCAPE.sub(_unescape_one, text)
        if undone == text:
            break
        text = undone
    if not text.isascii():
        text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return text.casefold()


def _names_block(text: str) -> bool:
    if text.isascii() and _MAY_ESCAPE_RE.search(text) is None:
        return _BLOCK_WORD in text.lower()
    return _BLOCK_WORD in _normal(text)


_MAY_ESCAPE_RE = re.compile(r"\\|&#|%")
# Either key's letters, or anything that could spell them: an escape (JSON, Python,
# HTML, URL). Searched in lower-cased JSON bytes, where a backslash in text is doubled.
_RAW_TRIGGER = re.compile(rb"rivileg|vector|\\[ux0-7]|&#|%[0-9a-f]{2}")


def might_carry(raw: bytes) -> bool:
    """Whether one JSON line could hold any of the block, read without parsing it: false
    lets the store's finalize keep the line as sent, and every check above skip a row at
    C speed. True for anything it cannot rule out (an escape, a non-ASCII byte, either
    key's letters in any case)."""
    return not raw.isascii() or _RAW_TRIGGER.search(raw.lower()) is not None


@dataclass(frozen=True, slots=True)
class Shipped:
    """What may leave of one row: `row` (the block removed), or None and `refused` saying
    why (`quotes_privileged`: it repeats its own answer key; `privileged_residue`: some
    of the block could not be removed). `stripped`: the row carried a block."""

    row: dict[str, Any] | None
    stripped: bool = False
    refused: str | None = None


def prepare_to_ship(row: dict[str, Any]) -> Shipped:
    """The one decision push and the server's finalize make about a row (export makes the
    same two checks on the samples it builds): a row that leaks its answer key stays home,
    because once the block is stripped no later reader can tell the copy is one; then the
    block goes, and a row that still names it stays home too."""
    if answer_key_leaks(row):
        return Shipped(None, refused="quotes_privileged")
    clean = strip_privileged(row)
    if carries_privileged(clean):
        return Shipped(None, refused="privileged_residue")
    return Shipped(clean, stripped=clean != row)


# -- answer-key leaks -------------------------------------------------------------------------


@dataclass(frozen=True)
class Level:
    """What one strictness level counts as a leaked answer key."""

    fields: tuple[str, ...]  # the privileged fields whose text is the key
    window: int | None  # a run of this many words of a longer key is a quote
    min_chars: int  # a key shorter than the window counts whole, if at least this long
    hidden_names: bool  # hidden_state's snake_case field names and short values count
    excuse_heard: bool  # a phrase the agent was told (person, tools, policy) is no leak


class Strictness(Enum):
    """The named levels of the one answer-key leak check.

    TURNS: what the agent wrote (its turns, its final reply, the values of its tool-call
    arguments) quotes any privileged field: a run of 6 words of a longer text, a whole
    shorter text of 12 characters or an identifier (`J4O5IE`), a hidden-state value or
    snake_case field name (`duplicate entity`, `world_state`); never a phrase the agent
    was told (the person's turns, tool results, the system prompt and policy rule, tool
    and argument names). The judge's `no_leak`, the audit marker, selection, export, env
    export, push and the server's finalize all ask this level.

    VERBATIM: a text built from the row that no agent wrote (an env task's question and
    info, the person brief it carries) holds a whole answer-key text (`reference`,
    `principle`, `rubric`) of 24 characters or more. Shorter ones are enumerations the
    world and the person say too.
    """

    TURNS = Level(PRIVILEGED_FIELDS, window=6, min_chars=12, hidden_names=True, excuse_heard=True)
    VERBATIM = Level(
        ANSWER_FIELDS, window=None, min_chars=24, hidden_names=False, excuse_heard=False
    )


LEAK_WINDOW = Strictness.TURNS.value.window


@dataclass(frozen=True)
class Leak:
    """One quote of the block: the field, what kind of quote (`run` of words, `whole`
    text, hidden-state `value`, field `name`), the privileged text it came from (the
    sentence, for a run) and the fragment as the field writes it."""

    field: str
    kind: str
    source: str
    fragment: str

    def describe(self) -> str:
        """How a judge's reason names it."""
        if self.kind == "name":
            return f"field name {self.fragment!r}"
        if self.kind == "value":
            return f"hidden_state value {self.fragment!r}"
        return f"{self.field}: {self.source[:60]!r}"


_WORD = re.compile(r"\w+")
_IDENTIFIER = re.compile(r"(?=[\w.-]{0,64}\d)(?=[\w.-]{0,64}[A-Za-z])[A-Za-z0-9][\w.-]{5,64}")
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]{0,4}\s+|\n+")
# An e-mail address, or a token holding a digit (an id, an amount, a date): a value.
_VALUE_TOKEN = re.compile(r"[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63}){1,8}|\w{0,40}\d[\w-]{0,40}")
_MAX_KEY_CHARS = 20_000  # a privileged text past this is compared by its first part only


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


@dataclass(frozen=True)
class _Candidate:
    field: str
    text: str
    words: tuple[str, ...]
    kind: str  # "run" (long enough for windows), "whole", "value", "pair"


@dataclass(frozen=True)
class _Keys:
    """A block compiled once for one level: its candidates, every word run of the long
    ones (with the runs' first words, for a cheap scan) and the hidden-state names."""

    candidates: tuple[_Candidate, ...]
    runs: frozenset[tuple[str, ...]]
    firsts: frozenset[str]
    names: frozenset[str]
    # Words one of which any leak must say: a run's first word, a whole quote's or
    # value's first word (a phrase is matched between spaces, so its first word is a
    # word said), a hidden-state name. A reply saying none of them quotes nothing.
    needs: frozenset[str]

    @property
    def empty(self) -> bool:
        return not self.candidates and not self.names


def _leaves(value: Any) -> Iterator[tuple[str, Any]]:
    """(member key, leaf) for every string and number in `value`, in document order."""
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        key, item = stack.pop()
        if isinstance(item, dict):
            stack.extend(reversed([(str(k), v) for k, v in item.items()]))
        elif isinstance(item, list):
            stack.extend(reversed([(key, v) for v in item]))
        else:
            yield key, item


def _keys_of(value: Any) -> Iterator[str]:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, child in item.items():
                yield str(key)
                stack.append(child)
        elif isinstance(item, list):
            stack.extend(item)


def _recognisable(text: str, level: Level, hidden: bool) -> bool:
    """Long enough that seeing it means it was copied: `min_chars`, an identifier mixing
    letters and digits (a code, a ticket number), or, in the hidden state, a value of 8
    characters with a space or underscore (`repeat visit`, `prior_failure`)."""
    stripped = text.strip()
    if len(stripped) >= level.min_chars:
        return True
    if not level.hidden_names:
        return False
    if _IDENTIFIER.fullmatch(stripped):
        return True
    return hidden and len(stripped) >= 8 and ("_" in stripped or " " in stripped)


def _compile(block: dict[str, Any], level: Level) -> _Keys:
    # The tools the block names (simulate keeps their kinds there) are the agent's own
    # tools, never a secret: no candidate, no field name.
    tools = {t.lower() for t in _block_tools(block)}
    candidates: list[_Candidate] = []
    pairs: list[_Candidate] = []
    for name in level.fields:
        value = block.get(name)
        if value is None:  # most blocks fill one or two fields: no walk of the others
            continue
        hidden = name == "hidden_state"
        for member, leaf in _leaves(value):
            if isinstance(leaf, str):
                text = leaf[:_MAX_KEY_CHARS]
                words = tuple(_words(text))
                if not words:
                    continue
                if level.window is not None and len(words) >= level.window:
                    candidates.append(_Candidate(name, text, words, "run"))
                elif _recognisable(text, level, hidden) and text.strip().lower() not in tools:
                    kind = "value" if hidden else "whole"
                    candidates.append(_Candidate(name, text.strip(), words, kind))
            elif level.hidden_names and member and isinstance(leaf, (int, float)):
                # "balance 1234.5": a member quoted with its key, whatever the spacing.
                if isinstance(leaf, bool):
                    continue
                text = f"{member} {leaf}"
                if _recognisable(text, level, hidden=False):
                    pairs.append(_Candidate(name, text, tuple(_words(text)), "whole"))
    candidates.extend(pairs)
    runs: set[tuple[str, ...]] = set()
    window = level.window
    if window is not None:
        for cand in candidates:
            if cand.kind == "run":
                runs.update(_grams(cand.words, window))
    names: set[str] = set()
    if level.hidden_names:
        hidden_state = block.get("hidden_state")
        names = {k.lower() for k in _keys_of(hidden_state) if "_" in k} - tools
        if hidden_state is not None:
            names.add("hidden_state")
    firsts = frozenset(r[0] for r in runs)
    needs = firsts.union([c.words[0] for c in candidates if c.kind != "run"], names)
    return _Keys(tuple(candidates), frozenset(runs), firsts, frozenset(names), needs)


def _grams(words: Sequence[str], n: int) -> list[tuple[str, ...]]:
    return [tuple(words[i : i + n]) for i in range(len(words) - n + 1)]


_COMPILED: dict[tuple[bytes, Strictness], _Keys] = {}
_COMPILED_MAX = 4096
_LAST: tuple[bytes, Strictness | None, _Keys | None] = (b"", None, None)


def _keys(block: dict[str, Any], strictness: Strictness) -> _Keys:
    """The block compiled, kept by a digest of its content as written: the rollouts of
    one ask share a block, and compiling it costs more than checking a row against it.
    Keys are not sorted: the compiled order of candidates follows the block's own, so
    two blocks holding the same fields in another order are compiled apart. (The digest,
    not the dump, is kept: orjson's bytes hold a 4 KB buffer whatever their length.)"""
    try:
        dumped = orjson.dumps(block)
    except TypeError:
        dumped = json.dumps(block, default=str).encode()
    last_dumped, last_strictness, last_keys = _LAST
    if last_keys is not None and last_strictness is strictness and dumped == last_dumped:
        return last_keys  # the rollouts of one ask come one after another
    key = (hashlib.blake2b(dumped, digest_size=16).digest(), strictness)
    found = _COMPILED.get(key)
    if found is None:
        if len(_COMPILED) >= _COMPILED_MAX:
            _COMPILED.clear()
        found = _COMPILED[key] = _compile(block, strictness.value)
    _remember((dumped, strictness, found))
    return found


def _remember(last: tuple[bytes, Strictness, _Keys]) -> None:
    """The last block compiled, as one tuple (one assignment: a thread reading it sees a
    block with its own keys, never another's)."""
    global _LAST
    _LAST = last


def _block(row: dict[str, Any]) -> dict[str, Any] | None:
    block = row.get(PRIVILEGED_KEY)
    return block if isinstance(block, dict) else None


def quotable(row: dict[str, Any], strictness: Strictness = Strictness.TURNS) -> bool:
    """Whether the row's privileged block holds anything a reply could be caught quoting
    (a run where none does was not checked, which is not a pass)."""
    block = _block(row)
    return block is not None and not _keys(block, strictness).empty


# What the agent wrote and what it was told, read off the row as every stage stores it:
# `messages` (OpenAI or the SDK's flat tool calls), `steps`, `final_text`.
_TOLD_ROLES = ("user", "system", "developer", "tool", "function")


def _content(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, dict)]
        return " ".join(p for p in parts if isinstance(p, str))
    if content is None:
        return ""
    return orjson.dumps(content, default=str).decode()


def _argument_values(arguments: Any, said: list[str]) -> None:
    """A call's argument values are the agent's words (strings and numbers, in document
    order; a string that is not JSON is one value)."""
    if isinstance(arguments, str):
        try:
            arguments = orjson.loads(arguments)
        except orjson.JSONDecodeError:
            said.append(arguments)
            return
    if not isinstance(arguments, dict):
        _leaf_values(arguments, said)
        return
    for value in arguments.values():  # the usual flat object: no walk
        if isinstance(value, str):
            said.append(value)
        elif isinstance(value, (dict, list)):
            _leaf_values(value, said)
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            said.append(str(value))


def _leaf_values(value: Any, said: list[str]) -> None:
    for _, leaf in _leaves(value):
        if isinstance(leaf, str):
            said.append(leaf)
        elif isinstance(leaf, (int, float)) and not isinstance(leaf, bool):
            said.append(str(leaf))


def _argument_names(arguments: Any, told: list[str]) -> None:
    """A call's argument names are the tool's words, told to the agent with the tool."""
    if isinstance(arguments, str):
        try:
            arguments = orjson.loads(arguments)
        except orjson.JSONDecodeError:
            return
    for member, _ in _leaves(arguments):
        if member:
            told.append(member)


def _said(row: dict[str, Any]) -> list[str]:
    """Everything the agent wrote, in the order the row holds it: its turns, its tool
    calls' argument values, its own steps' text, its final reply."""
    said: list[str] = []
    for message in row.get("messages") or ():
        if not isinstance(message, dict) or message.get("role") != "assistant":
            continue
        content = message.get("content")
        said.append(content if type(content) is str else _content(message))
        for call in message.get("tool_calls") or ():
            if isinstance(call, dict):
                _argument_values(call_function(call).get("arguments"), said)
    for step in row.get("steps") or ():
        if not isinstance(step, dict):
            continue
        text = step.get("text")
        if isinstance(text, str) and step.get("role") != "user":
            said.append(text)
        if step.get("tool"):
            _argument_values(step.get("arguments"), said)
    final = row.get("final_text")
    if isinstance(final, str):
        said.append(final)
    return said


def _told(row: dict[str, Any]) -> list[str]:
    """Everything the agent was told, as it ships: a privileged block inside a tool
    result is no excuse for repeating it, since no file will show where it came from.
    The tools it had are told whichever way the row records them (simulate keeps their
    kinds in the hidden state)."""
    return [*_heard(row), *_tool_names(row)]


def _heard(row: dict[str, Any]) -> list[str]:
    """What the agent was told as it ships (every privileged block inside removed): the
    other turns, the tools it called and their argument names, its steps' results, the
    prompt, the system prompt and the policy rule."""
    heard = _Told()
    for message in row.get("messages") or []:
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        if role == "assistant":
            for call in message.get("tool_calls") or []:
                if isinstance(call, dict):
                    fn = call_function(call)
                    heard.append(str(fn.get("name") or ""))
                    _argument_names(fn.get("arguments"), heard)
        elif role in _TOLD_ROLES:
            heard.append(_content(message))
            if isinstance(message.get("name"), str):
                heard.append(message["name"])
    for step in row.get("steps") or []:
        if not isinstance(step, dict):
            continue
        text = step.get("text")
        if isinstance(text, str) and step.get("role") == "user":
            heard.append(text)
        if step.get("tool"):
            heard.append(str(step["tool"]))
            _argument_names(step.get("arguments"), heard)
            result = step.get("result")
            if result is not None:
                heard.append(result if isinstance(result, str) else _dump(heard.shipped(result)))
    for key in ("prompt", "system_prompt", "system"):
        if isinstance(row.get(key), str):
            heard.append(row[key])
    dims = row.get("scenario_dimensions")
    if isinstance(dims, dict) and isinstance(dims.get("rule"), str):
        heard.append(dims["rule"])
    return heard


class _Told(list[str]):
    """What the agent was told, each text as it ships."""

    @staticmethod
    def shipped(value: Any) -> Any:
        return strip_privileged(value)

    def append(self, text: str) -> None:
        super().append(self.shipped(text))


def _block_tools(block: dict[str, Any]) -> Iterator[str]:
    hidden = block.get("hidden_state")
    kinds = hidden.get("tool_kinds") if isinstance(hidden, dict) else None
    if isinstance(kinds, dict):
        yield from (str(k) for k in kinds)


def _tool_names(row: dict[str, Any]) -> Iterator[str]:
    """Every tool (and parameter) name the agent was given: a tool's name in the block is
    no secret."""
    for tool in row.get("tools") or []:
        if isinstance(tool, dict):
            fn = call_function(tool)  # a tool schema nests the same way a call does
            yield str(fn.get("name") or "")
            params = fn.get("parameters")
            props = params.get("properties") if isinstance(params, dict) else None
            if isinstance(props, dict):
                yield " ".join(str(k) for k in props)
    used = row.get("tools_used")
    if isinstance(used, list):
        yield " ".join(str(t) for t in used)
    block = _block(row)
    if block is not None:
        yield " ".join(_block_tools(block))


def _dump(value: Any) -> str:
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return json.dumps(value, default=str)


def _has_phrase(haystack: str, words: Sequence[str]) -> bool:
    return f" {' '.join(words)} " in haystack


def answer_key_leaks(
    row: dict[str, Any],
    strictness: Strictness = Strictness.TURNS,
    texts: Sequence[str] | None = None,
) -> list[Leak]:
    """What of the row's privileged block is quoted: at TURNS in what the agent wrote
    (less what it was told), at VERBATIM in `texts` (what the caller is about to ship).

    Words are compared lower-cased without punctuation, so spacing, casing and JSON
    quoting never hide a copy. Order: at most one run or whole quote per field (in
    `PRIVILEGED_FIELDS` order), then every hidden-state value, then every field name;
    empty when nothing leaked or the row has no block.
    """
    block = _block(row)
    if block is None:
        return []
    keys = _keys(block, strictness)
    if keys.empty:
        return []
    said = "\n".join(_said(row) if texts is None else texts).lower()
    # Most rows quote nothing, and for them this test is the whole check.
    if not _says_any(said, keys.needs):
        return []
    return _quotes(row, keys, strictness.value, _WORD.findall(said))


# Past this many words a block's `needs` are looked up among the said words, and past
# this many times one word is found inside longer ones, the said words decide.
_NEEDS_SEARCHED = 24


def _says_any(said: str, needs: frozenset[str]) -> bool:
    """Whether one of `needs` is a word of `said` (lower-cased): a word `_WORD` would
    split out of it. A need is all word characters, so it is one of those words exactly
    where it occurs with no word character on either side; searching for the few words
    most blocks need costs less than splitting the text."""
    if len(needs) > _NEEDS_SEARCHED:
        return not needs.isdisjoint(_WORD.findall(said))
    end = len(said)
    for word in needs:
        at = said.find(word)
        tries = 0
        while at >= 0:
            after = at + len(word)
            if (at == 0 or not _word_char(said[at - 1])) and (
                after == end or not _word_char(said[after])
            ):
                return True
            tries += 1
            if tries > _NEEDS_SEARCHED:
                return not needs.isdisjoint(_WORD.findall(said))
            at = said.find(word, at + 1)
    return False


def _word_char(char: str) -> bool:
    """What `\\w` matches in a str pattern: an alphanumeric character or `_`."""
    return char.isalnum() or char == "_"


def _quotes(row: dict[str, Any], keys: _Keys, level: Level, spoken: list[str]) -> list[Leak]:
    """The leaks of `keys` in the words `spoken`, less what the agent was told."""
    if not spoken:
        return []
    heard = _Heard(lambda: _told(row) if level.excuse_heard else [])
    quotes: dict[str, Leak] = {}
    values: dict[str, Leak] = {}
    matched = _spoken_runs(spoken, keys, level.window)
    spoken_text = f" {' '.join(spoken)} "
    for cand in keys.candidates:
        if cand.kind == "run":
            if cand.field in quotes or not matched:
                continue
            leak = _run_leak(cand, matched, heard, level.window or 0)
        elif cand.field in quotes and cand.kind != "value":
            continue
        elif _has_phrase(spoken_text, cand.words) and not heard.has_phrase(cand.words):
            leak = Leak(cand.field, cand.kind, cand.text, cand.text)
        else:
            leak = None
        if leak is None:
            continue
        if leak.kind == "value":
            values.setdefault(leak.fragment, leak)
        else:
            quotes.setdefault(leak.field, leak)
    found = [quotes[name] for name in PRIVILEGED_FIELDS if name in quotes]
    found.extend(values.values())
    for name in sorted(keys.names.intersection(spoken)):
        if not heard.has_word(name):
            found.append(Leak("hidden_state", "name", name, name))
    return found


def leaks_answer_key(row: dict[str, Any]) -> bool:
    """`answer_key_leaks` at TURNS, as a yes or no: what export, push and selection ask."""
    return bool(answer_key_leaks(row))


def _spoken_runs(spoken: list[str], keys: _Keys, window: int | None) -> frozenset[tuple[str, ...]]:
    """The block's word runs that occur in what was said (scanned from each word that
    starts one, so a long reply costs one pass)."""
    if window is None or not keys.runs:
        return frozenset()
    firsts, runs = keys.firsts, keys.runs
    found = set()
    for i in range(len(spoken) - window + 1):
        if spoken[i] in firsts:
            run = tuple(spoken[i : i + window])
            if run in runs:
                found.add(run)
    return frozenset(found)


# Words of a quoted run that the agent was not told (see `_run_leak`).
_OWN_WORDS = 3


def _run_leak(
    cand: _Candidate, matched: frozenset[tuple[str, ...]], heard: _Heard, window: int
) -> Leak | None:
    """The candidate's first stretch whose runs were all said and not all heard. A run
    counts only when `_OWN_WORDS` of its words are not pieces of a value the agent was told
    (an e-mail, an id, a number): "2 records match noah.kim@example.com" is the agent
    reporting the e-mail it was given (four of its six words), not quoting a reference
    that says the same."""
    hit = [
        g in matched
        and not heard.has_run(g, window)
        and sum(not heard.is_value_word(w) for w in g) >= _OWN_WORDS
        for g in _grams(cand.words, window)
    ]
    if True not in hit:
        return None
    start = end = hit.index(True)
    while end + 1 < len(hit) and hit[end + 1]:
        end += 1
    return Leak(
        cand.field, "run", _sentence_at(cand, start), _as_written(cand, start, end + window)
    )


class _Heard:
    """What the agent was told, tokenized only if a candidate quote needs checking."""

    def __init__(self, texts: Callable[[], list[str]]) -> None:
        self._texts = texts
        self._words: list[str] | None = None
        self._vocab: frozenset[str] | None = None
        self._text: str | None = None
        self._values: frozenset[str] | None = None
        self._grams: dict[int, frozenset[tuple[str, ...]]] = {}

    @property
    def words(self) -> list[str]:
        if self._words is None:
            self._words = _words("\n".join(self._texts()))
        return self._words

    def has_run(self, run: tuple[str, ...], window: int) -> bool:
        grams = self._grams.get(window)
        if grams is None:
            grams = self._grams[window] = frozenset(_grams(self.words, window))
        return run in grams

    def has_phrase(self, words: Sequence[str]) -> bool:
        if self._text is None:  # "  " when nothing was told: no phrase is in it
            self._text = f" {' '.join(self.words)} "
        return _has_phrase(self._text, words)

    def is_value_word(self, word: str) -> bool:
        """The word is a piece of an e-mail address or of a token with a digit in what the
        agent was told (`noah`, `kim` of noah.kim@example.com; `ord`, `6589`)."""
        if self._values is None:
            told = "\n".join(self._texts())
            self._values = frozenset(
                w for m in _VALUE_TOKEN.finditer(told) for w in _words(m.group(0))
            )
        return word in self._values

    def has_word(self, word: str) -> bool:
        if self._vocab is None:
            self._vocab = frozenset(self.words)
        return word in self._vocab


def _sentence_at(cand: _Candidate, position: int) -> str:
    """The sentence of the candidate holding its `position`-th word (how a judge names a
    quote: by the privileged sentence it came from)."""
    seen = 0
    for sentence in _SENTENCE_END.split(cand.text):
        if not sentence or not sentence.strip():
            continue
        seen += len(_words(sentence))
        if position < seen:
            return sentence.strip()
    return cand.text.strip()


def _as_written(cand: _Candidate, start: int, end: int) -> str:
    """Words `start`..`end` of the candidate as written there (case, punctuation): what
    an audit shows of the quote, its first `_SHOWN_WORDS` words at most (so the pattern,
    and the search, stay short)."""
    words = cand.words[start : min(end, start + _SHOWN_WORDS)]
    pattern = r"\W+".join(re.escape(w) for w in words)
    match = re.search(pattern, cand.text, re.IGNORECASE)
    return match.group(0) if match else " ".join(words)


_SHOWN_WORDS = 64
