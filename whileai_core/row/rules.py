"""The row's rules, compiled once from its typed views: the one validation of a row.

`whileai validate`, every stage's reader (`jsonl.check_row`) and the store's finalize all
ask `row_problem`, so a row one of them takes, all of them take, and a row one of them
refuses is refused by all of them with the same words. The rules are read off the models
in `model.py` (each field's JSON types, the required fields, the allowed literals, the
score bound), so this check cannot drift from the models; it compares exact JSON types
instead of building models, so it costs a few microseconds a row, which every stage can
afford on every row.

What the models cannot say is added here: the row-level keys `from_row` reads by hand
(markers, marker_sources, calibration, schema_version) and "a row has an ask".
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable
from typing import Any

from annotated_types import MaxLen
from pydantic import BaseModel

from .model import (
    Calibration,
    Judgment,
    Rollout,
    Score,
    ScoreBound,
    Task,
)

# (where, what): where is the path below the value checked (".steps[0].arguments").
Problem = tuple[str, str]
_Deep = Callable[[Any], "Problem | None"]

_NAMES: dict[type, str] = {
    str: "a string",
    int: "a whole number",
    float: "a number",
    bool: "true or false",
    list: "an array",
    dict: "an object",
    type(None): "null",
}
_NONE = type(None)


def describe(value: Any) -> str:
    """What a JSON value is, in the words the rules use ("an array", "a boolean", ...)."""
    kind = _json_type(value)
    if kind is bool:
        return "a boolean"
    if kind is int:
        return "a number"
    return _NAMES.get(kind, type(value).__name__)


def _json_type(value: Any) -> type:
    """The JSON type a Python value stands for (a subclass counts as its base; bool is not
    a number)."""
    for kind in (bool, str, int, float, list, dict):
        if isinstance(value, kind):
            return kind
    return _NONE if value is None else type(value)


class _Rule:
    """One field's rule: the JSON types it takes, and a deeper check for some of them.
    `plain` are the types that need nothing more, so a caller skips the call for them."""

    __slots__ = ("check", "deep", "expected", "plain", "types", "wrong")

    def __init__(self, kinds: set[type], deep: dict[type, _Deep], expected: str) -> None:
        self.types = frozenset(kinds)
        self.deep = deep
        self.plain = frozenset(kinds - set(deep))
        self.expected = expected
        self.wrong: _Deep = self._wrong()
        self.check: _Deep = self._checker()

    def _wrong(self) -> _Deep:
        """The check of a value whose exact type is not one the rule names (a subclass
        from a Python caller counts as its base)."""
        types, deep, expected = self.types, self.deep, self.expected

        def wrong(value: Any) -> Problem | None:
            kind = _json_type(value)
            if kind not in types:
                return "", f"must be {expected}, got {describe(value)}"
            nested = deep.get(kind)
            return nested(value) if nested is not None else None

        return wrong

    def _checker(self) -> _Deep:
        types, deep, wrong = self.types, self.deep, self.wrong

        if len(set(deep.values())) == 1:  # one deeper check (a container's, a number's)
            deep_types, nested = frozenset(deep), next(iter(deep.values()))

            def check(value: Any) -> Problem | None:
                kind = type(value)
                if kind in deep_types:
                    return nested(value)
                return None if kind in types else wrong(value)

            return check

        def check_any(value: Any) -> Problem | None:
            kind = type(value)
            if kind not in types:
                return wrong(value)
            nested = deep.get(kind)
            return nested(value) if nested is not None else None

        return check_any


def _expected(kinds: set[type], literals: tuple[Any, ...] | None) -> str:
    if literals is not None:
        return "one of " + ", ".join(repr(v) for v in literals)
    if {int, float} <= kinds:
        kinds = kinds - {int}
    names = [_NAMES[k] for k in _NAMES if k in kinds and k is not _NONE]
    return " or ".join(names) if names else "null"


def _compile(annotation: Any) -> _Rule | None:
    """The rule for one annotation, or None when it takes any JSON value."""
    kinds: set[type] = set()
    deep: dict[type, _Deep] = {}
    literals: tuple[Any, ...] | None = None
    for member in _members(annotation):
        origin, args = typing.get_origin(member), typing.get_args(member)
        bound: _Deep | None = None
        if origin is typing.Annotated:
            bound = _constraint(member.__metadata__)
            member, origin, args = args[0], typing.get_origin(args[0]), typing.get_args(args[0])
        if member is Any:
            return None
        if origin is typing.Literal:
            literals = args
            kinds.add(str)
            deep[str] = _one_of(frozenset(args), _expected({str}, args))
        elif origin in (types.UnionType, typing.Union):
            sub = _compile(member)  # an Annotated union, such as Score
            if sub is None:
                return None
            kinds |= sub.types
            deep.update(sub.deep)
            if bound is not None:
                for kind in sub.types - {_NONE}:
                    deep[kind] = bound
        elif origin is list:
            kinds.add(list)
            item = _compile(args[0]) if args else None
            if item is not None:
                deep[list] = _items(item)
        elif origin is dict:
            kinds.add(dict)
            value = _compile(args[1]) if args else None
            if value is not None:
                deep[dict] = _values(value)
        elif isinstance(member, type) and issubclass(member, BaseModel):
            kinds.add(dict)
            fields = _model_fields(member)
            required = tuple(n for n, f in member.model_fields.items() if f.is_required())
            if fields or required:
                deep[dict] = _fields(fields, required)
        elif member in _NAMES:
            # A JSON number with no fraction is still a number where a float is asked for.
            added = {int, float} if member is float else {member}
            kinds |= added
            if bound is not None:
                deep.update(dict.fromkeys(added, bound))
        else:
            raise TypeError(f"no row rule for the annotation {member!r}")
    return _Rule(kinds, deep, _expected(kinds, literals))


def _members(annotation: Any) -> tuple[Any, ...]:
    if typing.get_origin(annotation) in (types.UnionType, typing.Union):
        return typing.get_args(annotation)
    return (annotation,)


def _model_fields(model: type[BaseModel]) -> dict[str, _Rule]:
    rules = {}
    for name, info in model.model_fields.items():
        rule = _compile(info.annotation)
        if rule is not None:
            rules[info.alias or name] = rule
    return rules


def _one_of(allowed: frozenset[Any], expected: str) -> _Deep:
    def check(value: Any) -> Problem | None:
        return None if value in allowed else ("", f"must be {expected}, got {value!r:.40}")

    return check


def _constraint(metadata: tuple[Any, ...]) -> _Deep | None:
    """The check an annotation's metadata asks for: the score bound, or a length limit."""
    for meta in metadata:
        if isinstance(meta, ScoreBound):
            return _bounded(meta)
        if isinstance(meta, MaxLen):
            return _at_most(meta.max_length)
    return None


def _bounded(bound: ScoreBound) -> _Deep:
    low, high = -bound.limit, bound.limit

    def check(value: Any) -> Problem | None:
        if low <= value <= high:  # NaN never is
            return None
        return "", str(bound.problem(value))

    return check


def _at_most(most: int) -> _Deep:
    def check(value: Any) -> Problem | None:
        if len(value) <= most:
            return None
        return "", f"must be at most {most:,} characters, got {len(value):,}"

    return check


def _items(rule: _Rule) -> _Deep:
    plain, check_item = rule.plain, rule.check
    objects = rule.deep.get(dict)  # items that are objects with fields: check those directly

    def check(value: list[Any]) -> Problem | None:
        for i, item in enumerate(value):
            if type(item) is dict and objects is not None:
                problem = objects(item)
            elif type(item) in plain:
                continue
            else:
                problem = check_item(item)
            if problem is not None:
                return f"[{i}]{problem[0]}", problem[1]
        return None

    return check


def _values(rule: _Rule) -> _Deep:
    plain, check_value = rule.plain, rule.check

    def check(value: dict[str, Any]) -> Problem | None:
        for key, item in value.items():
            if type(item) not in plain and (problem := check_value(item)) is not None:
                return f".{key}{problem[0]}", problem[1]
        return None

    return check


def _fields(rules: dict[str, _Rule], required: tuple[str, ...]) -> _Deep:
    plain, deep, wrong = _split(rules)

    def check(value: dict[str, Any]) -> Problem | None:
        for key, item in value.items():
            skip = plain.get(key)
            if skip is not None and (kind := type(item)) not in skip:
                nested = deep[key].get(kind)
                problem = nested(item) if nested is not None else wrong[key](item)
                if problem is not None:
                    return f".{key}{problem[0]}", problem[1]
        for key in required:
            if key not in value:
                return f".{key}", "is missing"
        return None

    return check


_Split = tuple[dict[str, frozenset[type]], dict[str, dict[type, _Deep]], dict[str, _Deep]]


def _split(rules: dict[str, _Rule]) -> _Split:
    """Per key, the types that need no call, the deeper check of each type that has one,
    and the check of any other value: two flat lookups per field are the whole cost of a
    field with a plain value (most fields of most rows), and one more call that of a
    field with a deeper check (what `_Rule.check` does, without its own call)."""
    return (
        {k: r.plain for k, r in rules.items()},
        {k: r.deep for k, r in rules.items()},
        {k: r.wrong for k, r in rules.items()},
    )


# Every key a row names: the typed views' fields, and the ones `from_row` reads by hand.
_ROW_ANNOTATIONS: dict[str, Any] = {
    **{n: f.annotation for m in (Task, Rollout, Judgment) for n, f in m.model_fields.items()},
    "markers": dict[str, Score] | None,
    "marker_sources": dict[str, str] | None,
    "calibration": Calibration | None,
    "schema_version": str | None,
}
_ROW: dict[str, _Rule] = {
    key: rule for key, ann in _ROW_ANNOTATIONS.items() if (rule := _compile(ann)) is not None
}
_ROW_PLAIN, _ROW_DEEP, _ROW_WRONG = _split(_ROW)


def row_problem(row: Any) -> str | None:
    """The first rule `row` (a decoded line) breaks, in words for `file:line: ...`; None
    when it is a usable row."""
    if type(row) is not dict and not isinstance(row, dict):
        return f"not a JSON object (got {describe(row)})"
    plain, deep = _ROW_PLAIN, _ROW_DEEP
    for key, value in row.items():
        skip = plain.get(key)
        if skip is not None and (kind := type(value)) not in skip:
            nested = deep[key].get(kind)
            problem = nested(value) if nested is not None else _ROW_WRONG[key](value)
            if problem is not None:
                return _say(key, problem)
    for key in _CONTENT:  # a loop, not all(genexpr): no generator made for every row read
        if row.get(key) is not None:
            return None
    return (
        "row has none of 'prompt', 'messages', 'steps', 'final_text' or 'scenario_id' "
        "(nothing says what it is)"
    )


# A row needs one of these: an ask, a conversation, what the agent did or said (a verifier
# grades a bare `final_text`), or the task it is a result of (compare reads bare results).
_CONTENT = ("prompt", "messages", "steps", "final_text", "scenario_id")


def field_problem(key: str, value: Any) -> str | None:
    """The rule one row field's value breaks, or None: for code about to set a field
    (a judge's verdict), so it never writes a row the next reader refuses."""
    rule = _ROW.get(key)
    problem = rule.check(value) if rule is not None else None
    return None if problem is None else _say(key, problem)


def _say(key: str, problem: Problem) -> str:
    return f"field '{key}{problem[0]}' {problem[1]}"
