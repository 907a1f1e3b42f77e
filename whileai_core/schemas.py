"""JSON Schema, through the reference implementation (`jsonschema`), in one place.

The json-schema judge checks replies with it and the mock world checks tool arguments
with it, so a schema means the same thing to both (and to whatever else validates or
generates values from a tool's schema). `jsonschema` is imported on first use, so
`whileai --help` and the stages that never validate do not pay for it.

Errors are plain strings that say where: `$.items[2].id: 'x' is not of type 'integer'`.
"""

from __future__ import annotations

import functools
from typing import Any

from .errors import ConfigError


def _where(path: Any) -> str:
    out = "$"
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def validator(schema: dict[str, Any] | bool) -> Any:
    """A validator for `schema` (its `$schema` picks the draft; 2020-12 by default), with
    formats checked. ConfigError when the schema itself is not valid JSON Schema.

    The mock world enforces every keyword on arguments, `pattern`, `format`, `enum`,
    lengths and bounds included: the values it makes up satisfy them (`simulate/values.py`),
    so an argument that breaks one is the agent's, refused as a backend would."""
    from jsonschema import exceptions, validators

    cls = validators.validator_for(schema)
    try:
        cls.check_schema(schema)
    except exceptions.SchemaError as exc:
        where = _where(exc.absolute_path)
        raise ConfigError(f"not a valid JSON Schema: {where}: {exc.message}") from None
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def errors(value: Any, checker: Any, limit: int = 20) -> list[str]:
    """Every way `value` breaks the checker's schema (at most `limit`), each naming where."""
    found = sorted(checker.iter_errors(value), key=lambda e: list(map(str, e.absolute_path)))
    return [f"{_where(e.absolute_path)}: {e.message}" for e in found[:limit]]


def argument_problems(parameters: dict[str, Any], arguments: dict[str, Any]) -> dict[str, str]:
    """`{field: problem}` for a tool call's arguments against the tool's parameter schema:
    `required`, `unknown parameter`, `expected string`, `must be one of [...]`, or the
    validator's own words. Problems not tied to one field land under `$`."""
    problems: dict[str, str] = {}
    for name in parameters.get("required") or []:
        if arguments.get(name) is None:
            problems[name] = "required"
    present = {k: v for k, v in arguments.items() if v is not None or k not in problems}
    checker = _checker_of(parameters)
    for error in checker.iter_errors(present):
        path = list(error.absolute_path)
        if path:
            field = str(path[0])
        elif error.validator == "additionalProperties":
            known = set(parameters.get("properties") or {})
            for extra in (k for k in present if k not in known):
                problems.setdefault(extra, "unknown parameter")
            continue
        elif error.validator == "required":
            continue  # counted above, None-valued fields included
        else:
            field = "$"
        problems.setdefault(field, _plain(error))
    return problems


def _plain(error: Any) -> str:
    if error.validator == "type":
        wanted = error.validator_value
        return f"expected {' or '.join(wanted) if isinstance(wanted, list) else wanted}"
    if error.validator == "enum":
        return f"must be one of {error.validator_value}"
    return str(error.message)


def _freeze(value: Any) -> Any:
    """A hashable copy of a schema, so each tool's validator is built once per process."""
    if isinstance(value, dict):
        return tuple(sorted((k, _freeze(v)) for k, v in value.items()))
    if isinstance(value, list):
        return ("__list__", *(_freeze(v) for v in value))
    return value


def _thaw(value: Any) -> Any:
    if isinstance(value, tuple) and value[:1] == ("__list__",):
        return [_thaw(v) for v in value[1:]]
    if isinstance(value, tuple):
        return {k: _thaw(v) for k, v in value}
    return value


# id(parameters) -> (parameters, checker): a tool's parameter dict is the same object on
# every call of a run, so its validator is found without freezing the schema again (that
# walk cost as much as the validation). The dict itself is kept, so its id is not reused.
_CHECKERS: dict[int, tuple[dict[str, Any], Any]] = {}


def _checker_of(parameters: dict[str, Any]) -> Any:
    hit = _CHECKERS.get(id(parameters))
    if hit is not None and hit[0] is parameters:
        return hit[1]
    checker = _world_checker(_freeze(parameters))
    if len(_CHECKERS) >= 256:
        _CHECKERS.clear()
    _CHECKERS[id(parameters)] = (parameters, checker)
    return checker


@functools.lru_cache(maxsize=256)
def _world_checker(frozen: Any) -> Any:
    schema = _thaw(frozen)
    schema = {"type": "object", **schema} if isinstance(schema, dict) else schema
    return validator(schema)
