"""The literals every match of a regex holds: a cheap gate before the search.

A reader that tries dozens of patterns on every line (the person's voice check runs one
per model call) spends most of its time in searches that cannot match: a pattern
anchored on a word boundary and an alternation cannot use the regex engine's literal
prefix scan, so it walks the whole line. Read once from the pattern's parse tree, the
set of strings one of which any match must contain answers most lines with a few
substring tests (`str.__contains__`, a fast C scan) and leaves the search to the lines
that hold a candidate.

The gate is sound by construction: it only reads required literal runs (literals,
alternations and optional parts of them, repeats that must occur at least once) and
gives up (`None`, always search) where it cannot say. Lines are case-folded before the
test, so a pattern compiled with `re.IGNORECASE` is gated as well as one without; a
line with any character outside ASCII is searched ungated.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

try:  # Python 3.11+
    import re._constants as _c
    import re._parser as _parser
except ImportError:  # pragma: no cover - Python 3.10
    import sre_constants as _c
    import sre_parse as _parser

# A gate whose shortest string is shorter than this passes nearly every line: no gate.
MIN_LITERAL = 3
# Alternatives multiplied out past this many strings stop growing (the run closes).
_MAX_STRINGS = 64
# Strings this long are rare enough in a line that a longer one gates little better.
_RARE = 8
# A gate of more strings than this costs about what the search it saves does.
_FEW = 8
_Gate = frozenset[str]
_REPEATS = tuple(
    getattr(_c, name)
    for name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT")
    if hasattr(_c, name)
)


def required_literals(pattern: re.Pattern[str] | str) -> _Gate | None:
    """Case-folded strings one of which every match of `pattern` contains, or None when
    no such set with strings of `MIN_LITERAL` characters or more can be read off it."""
    source = pattern.pattern if isinstance(pattern, re.Pattern) else pattern
    flags = pattern.flags if isinstance(pattern, re.Pattern) else 0
    if flags & re.VERBOSE:
        return None  # whitespace in the source is not literal: not read here
    return _best_of_sequence(list(_parser.parse(source, flags)))


def _quality(gate: _Gate) -> tuple[bool, int, int, int]:
    """A few strings first (each is one scan of the line), then longer ones, up to
    `_RARE` characters (a short one, " you ", is in most lines and gates nothing), then
    fewer."""
    shortest = min(len(s) for s in gate)
    return (len(gate) <= _FEW, min(shortest, _RARE), -len(gate), shortest)


def _usable(s: str) -> bool:
    """Long enough to be rare in a line, or made of punctuation only ("{", "```")."""
    return len(s) >= MIN_LITERAL or (bool(s) and not any(c.isalnum() or c.isspace() for c in s))


def _better(a: _Gate | None, b: _Gate | None) -> _Gate | None:
    if not b or not all(_usable(s) for s in b):
        return a
    if a is None or _quality(b) > _quality(a):
        return b
    return a


def _exact(op: Any, av: Any) -> set[str] | None:
    """Every string this one node can match, when it is a small finite set."""
    if op is _c.LITERAL:
        return {chr(av).casefold()}
    if op is _c.AT:
        return {""}  # zero width: the run goes on across a word boundary
    if op is _c.SUBPATTERN:
        return _exact_sequence(list(av[-1]))
    if op is _c.BRANCH:
        out: set[str] = set()
        for alternative in av[1]:
            one = _exact_sequence(list(alternative))
            if one is None:
                return None
            out |= one
        return out if len(out) <= _MAX_STRINGS else None
    if op is _c.IN:
        chars = set()
        for item_op, item_av in av:
            if item_op is not _c.LITERAL:
                return None
            chars.add(chr(item_av).casefold())
        return chars if len(chars) <= 8 else None
    if op in (_c.MAX_REPEAT, _c.MIN_REPEAT) and av[0] == 0 and av[1] == 1:
        inner = _exact_sequence(list(av[2]))
        return None if inner is None else inner | {""}
    return None


def _exact_sequence(items: list[tuple[Any, Any]]) -> set[str] | None:
    strings = {""}
    for op, av in items:
        one = _exact(op, av)
        if one is None:
            return None
        strings = {a + b for a in strings for b in one}
        if len(strings) > _MAX_STRINGS:
            return None
    return strings


def _best_of_sequence(items: list[tuple[Any, Any]]) -> _Gate | None:
    """The cheapest gate a sequence of nodes offers: any contiguous run of exact nodes
    multiplied out, or the gate of one node that must match (a group, an alternation
    each of whose branches has a gate, a repeat of at least once)."""
    best: _Gate | None = None
    exact = [_exact(op, av) for op, av in items]
    for i, (op, av) in enumerate(items):
        best = _better(best, _gate_of(op, av))
        run = {""}
        for one in exact[i:]:
            if one is None:
                break
            run = {a + b for a in run for b in one}
            if len(run) > _MAX_STRINGS:
                break
            best = _better(best, frozenset(run))
    return best


def _gate_of(op: Any, av: Any) -> _Gate | None:
    if op is _c.SUBPATTERN:
        return _best_of_sequence(list(av[-1]))
    if op is _c.BRANCH:
        gates = [_best_of_sequence(list(alternative)) for alternative in av[1]]
        if any(g is None for g in gates):
            return None
        union = frozenset().union(*(g for g in gates if g is not None))
        return union if len(union) <= _MAX_STRINGS else None
    if op in _REPEATS and av[0] >= 1:
        return _best_of_sequence(list(av[2]))
    return None


class GatedPatterns:
    """Compiled patterns, each searched only on lines that hold one of its required
    literals: `search_any(text)` answers as `any(p.search(text) for p in patterns)`."""

    def __init__(self, patterns: Iterable[re.Pattern[str]]) -> None:
        self.patterns = tuple(patterns)
        self._gates = tuple((p, required_literals(p)) for p in self.patterns)

    def search_any(self, text: str) -> bool:
        # Gated on ASCII lines only: there case folding is the regex engine's own, while
        # a character such as "\u0130" folds to two ("i" and a combining dot) that a
        # literal "i" would no longer meet. Plain loops: a generator per pattern cost
        # as much as the scans it gates.
        folded = text.lower() if text.isascii() else None
        for pattern, gate in self._gates:
            if gate is not None and folded is not None:
                for literal in gate:
                    if literal in folded:
                        break
                else:
                    continue
            if pattern.search(text):
                return True
        return False
