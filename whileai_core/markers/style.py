"""Style markers: the tics a preference-trained policy drifts into, read off what it wrote.

`no_boilerplate`, `no_hedging`, `no_apology`, `no_sycophancy` are 1.0 when the agent's text
has none of the family's phrases, and `answered` is 1.0 when it replied and did not decline
(rlhf-book ch. 14: these are the over-optimization drifts a paired before/after catches).
The four families are built on published lexicons, not on any agent's sentences
(`lexicons.py` says which, and the rules that keep honest uses out): Hyland's hedges and
boosters for hedging, compliment formulas for sycophancy, the apology devices of the
cross-cultural speech-act studies, the formulaic moves of service talk for boilerplate.
Honest uncertainty about the world ("the record is old, so it may have changed", "the call
timed out, so I can't confirm") is not hedging, and agreeing with a correct person is not
flattery, so neither family lists a bare "may" or "you're right". Words inside quotation
marks are someone else's (an error message read back) and are not matched; text is capped
at `MAX_STYLE_CHARS` before any pattern runs.

Every family is overridable from a JSON or YAML file (`--phrases FILE`): a key `hedging`
replaces that family's list, `hedging+` adds to it. An entry is a phrase matched on word
boundaries, or `re:PATTERN` for a regular expression (`re[w1 w2]:PATTERN` tries it only
on texts holding w1 or w2, which is what keeps a long list fast); all are matched against
the lower-cased text, so write patterns in lower case.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..judges.trajectory import REFUSES
from .actions import call_failed
from .lexicons import FAMILY_PHRASES
from .view import RowView, view

FAMILIES = ("boilerplate", "hedging", "apology", "sycophancy", "refusal")
STYLE_MARKERS = ("no_boilerplate", "no_hedging", "no_apology", "no_sycophancy", "answered")
MARKER_FAMILY = {
    "no_boilerplate": "boilerplate",
    "no_hedging": "hedging",
    "no_apology": "apology",
    "no_sycophancy": "sycophancy",
    "answered": "refusal",
}

DEFAULT_PHRASES: dict[str, tuple[str, ...]] = {
    **FAMILY_PHRASES,
    "refusal": (
        "re[can cannot won will able unable allowed against decline]:" + REFUSES.pattern,
        "re[outside beyond within part]:"
        r"(?:that(?:'s| is)|this is|it(?:'s| is)) (?:outside|beyond|not within|not part of)"
        r" (?:what i|my|the scope|the things)",
        r"re[outside]:outside (?:of )?(?:my|the|our) (?:scope|remit|area)",
        r"re[something]:not something i (?:can|am able to|'m able to) (?:help|assist|do)",
        "re[afraid sorry]:"
        r"i(?:'m| am) (?:afraid|sorry),? (?:but )?i (?:can't|cannot|can not|won't|am unable)",
        r"re[decline refuse]:i (?:must|have to|need to) (?:decline|refuse)",
        "re[able allowed permitted]:"
        r"i(?:'m| am) not (?:able|allowed|permitted) to (?:help|assist|do|share|provide|"
        r"discuss)",
    ),
}


# Longer agent text is read up to here: tics show early, and no pattern sees more.
MAX_STYLE_CHARS = 20_000
# Quoted spans: straight or curly double quotes, and single quotes that open after a
# non-letter and close before one (so "don't ... it's" is not a quote).
_QUOTED = re.compile(
    r"\"[^\"\n]{1,400}\"|\u201c[^\u201d\n]{1,400}\u201d|(?<![A-Za-z])'[^'\n]{1,400}'(?![A-Za-z])"
)


def unquoted(text: str) -> str:
    """`text` (capped) with quoted spans blanked, so a tic someone else wrote is not the
    agent's."""
    return _QUOTED.sub(" ", text[:MAX_STYLE_CHARS])


_ENTRY = re.compile(r"re(?:\[([^\]]*)\])?:")
_TOKEN = re.compile(r"[a-z0-9]+")
Entry = tuple[frozenset[str], re.Pattern[str]]


def _compile(phrases: Iterable[str], where: str) -> list[Entry]:
    """Each entry as (trigger words, pattern). A pattern is tried only on a text holding
    one of its trigger words: a plain phrase triggers on its longest word, `re[a b]:...`
    on a or b, and a bare `re:...` (no triggers given) on every text."""
    entries: list[Entry] = []
    for phrase in phrases:
        if not isinstance(phrase, str) or not phrase.strip():
            raise ConfigError(f"{where}: every phrase must be a non-empty string")
        head = _ENTRY.match(phrase)
        if head is None:
            words = phrase.lower().split()
            body = r"\b" + r"\s+".join(map(re.escape, words)) + r"\b"
            triggers = frozenset(_TOKEN.findall(max(words, key=len)))
        else:
            body = phrase[head.end() :]
            # A pattern that opens on a letter matches whole words only ("i think" is not
            # inside "hi thinking").
            if body[:1].isalnum():
                body = r"\b" + body
            triggers = frozenset((head.group(1) or "").split())
        try:
            entries.append((triggers, re.compile(body, re.MULTILINE)))
        except re.error as exc:
            raise ConfigError(f"{where}: bad pattern {body!r}: {exc}") from None
    return entries


@dataclass
class Phrases:
    """The compiled phrase families; `families` keeps the source lists for the report."""

    families: dict[str, tuple[str, ...]] = field(default_factory=lambda: dict(DEFAULT_PHRASES))
    source: str = "built-in"

    def __post_init__(self) -> None:
        self._compiled = {
            name: _compile(items, f"phrases[{name}]") for name, items in self.families.items()
        }

    def find(self, family: str, text: str) -> str | None:
        """The first phrase of `family` in `text`, as written there; None when clean.

        Matching runs on the lower-cased text, and a pattern only on texts holding one of
        its trigger words: most replies are clean, and one big case-blind alternation
        costs ~0.5 ms a row."""
        entries = self._compiled.get(family)
        if not entries or not text:
            return None
        text = unquoted(text)
        low = text.lower()
        present = set(_TOKEN.findall(low))
        best: re.Match[str] | None = None
        for triggers, pattern in entries:
            if triggers and triggers.isdisjoint(present):
                continue
            match = pattern.search(low)
            if match is not None and (best is None or match.start() < best.start()):
                best = match
        if best is None:
            return None
        source = text if len(low) == len(text) else low
        return source[best.start() : best.end()].strip()


def read_structured(path: str) -> Any:
    """A JSON or YAML file (YAML reads both); any problem is one line naming the file."""
    import yaml

    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        why = getattr(exc, "strerror", None) or exc
        raise ConfigError(f"{path}: cannot read ({why})") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else path
        raise ConfigError(f"{where}: unreadable ({getattr(exc, 'problem', None) or exc})") from None


def load_phrases(path: str | None) -> Phrases:
    """The built-in families, with a file's overrides applied (see the module docstring)."""
    if not path:
        return Phrases()
    data = read_structured(path)
    if not isinstance(data, Mapping):
        raise ConfigError(f"{path}: a phrases file maps family names to lists of phrases")
    families = dict(DEFAULT_PHRASES)
    for key, items in data.items():
        name, extend = (key[:-1], True) if key.endswith("+") else (key, False)
        if name not in FAMILIES:
            raise ConfigError(f"{path}: unknown family {key!r}; families: {', '.join(FAMILIES)}")
        if not isinstance(items, list):
            raise ConfigError(f"{path}: {key} must be a list of phrases")
        families[name] = (*families[name], *items) if extend else tuple(items)
    return Phrases(families, source=str(path))


def refused(v: RowView, phrases: Phrases) -> str | None:
    """The declining phrase in the reply, when the agent declined instead of helping.

    A failed call explains a "can't" (the world said no: denied, rejected, down; the
    agent only reported it), and a decline beside work done (a lookup reported, a change
    made) is a partial answer, not a refusal: both return None."""
    hit = phrases.find("refusal", v.reply)
    if hit is None:
        return None
    if any(call_failed(c.result) or c.ok for c in v.calls):
        return None
    return hit


def style_hits(v: RowView, phrases: Phrases) -> dict[str, str | None]:
    """marker -> the phrase that cost it (None: clean)."""
    text = v.agent_text
    hits: dict[str, str | None] = {
        marker: phrases.find(family, text)
        for marker, family in MARKER_FAMILY.items()
        if family != "refusal"
    }
    if not v.reply.strip():
        hits["answered"] = "(no reply)"
    else:
        hits["answered"] = refused(v, phrases)
    return hits


def style_markers(v: RowView, phrases: Phrases) -> dict[str, float]:
    """The five style markers, 1.0 = clean."""
    return {name: 0.0 if hit else 1.0 for name, hit in style_hits(v, phrases).items()}


def describe(phrases: Phrases) -> dict[str, Any]:
    return {"source": phrases.source, "counts": {k: len(v) for k, v in phrases.families.items()}}


TIC_MARKERS = ("no_hedging", "no_sycophancy", "no_apology", "no_boilerplate")


def row_tics(row: dict[str, Any], phrases: Phrases) -> tuple[str, ...]:
    """The tic families a row carries (hedging, sycophancy, apology, boilerplate), for a
    selection that keeps them out of training. A row `whileai mark` already stamped is
    read from its markers (so a `--phrases` file given there holds); any other row is read
    off its text."""
    markers = row.get("markers")
    stamped = markers if isinstance(markers, dict) else {}
    if all(isinstance(stamped.get(m), (int, float)) for m in TIC_MARKERS):
        return tuple(MARKER_FAMILY[m] for m in TIC_MARKERS if stamped[m] < 1.0)
    text = view(row).agent_text
    return tuple(MARKER_FAMILY[m] for m in TIC_MARKERS if phrases.find(MARKER_FAMILY[m], text))
