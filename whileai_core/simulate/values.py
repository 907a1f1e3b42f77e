"""Made-up values that satisfy a parameter's JSON Schema: plausible first, valid always.

A guess from the parameter's name (an email for `email`, an airport for `origin`, an id
shaped like `ORD-51326` for `order_id`) is kept only when the schema accepts it. When no
guess does, the value is built from the constraints themselves: a `pattern` through
rstr's xeger, a `format` from its shape, `minLength`/`maxLength`, `enum` and numeric
bounds respected. Every draw comes from the caller's rng, so a seeded run repeats
exactly. The schema's verdict is `jsonschema`'s, with its format checker, never a
hand-rolled approximation: a value the spec's own schema rejects would teach the agent
that ids look like something the backend refuses.
"""

from __future__ import annotations

import random
import re
import string
import threading
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

import orjson
import rstr
from jsonschema.exceptions import UnknownType

from ..errors import ConfigError
from ..places import AIRPORTS, CITIES
from ..schemas import validator
from ..spec import Tool, is_key_param

# How many pattern draws to try before settling for the last one (a lookahead or a
# length bound can reject a draw; a plain pattern never does).
_DRAWS = 24
# Unbounded repeats (`+`, `*`, `{2,}`) stop this many characters past their minimum:
# an id is a few characters, not the hundred xeger would otherwise allow.
_OPEN_REPEAT = 7

_FIRST = ("alex", "sam", "maria", "li", "omar", "jo", "priya", "noah", "ana", "ken")
_LAST = ("rivera", "chen", "okafor", "smith", "novak", "haddad", "kim", "silva")


class _ShortXeger(rstr.Rstr):
    """xeger with short open-ended repeats, and each pattern parsed once per process:
    rstr parses the pattern again on every draw, ~100 us of the ~250 us a made-up id cost."""

    def _handle_repeat(self, start_range: int, end_range: int, value: str) -> str:
        end = min(end_range, max(start_range, 1) + _OPEN_REPEAT)
        return super()._handle_repeat(start_range, end, value)

    def xeger(self, string_or_regex: str | re.Pattern[str]) -> str:
        pattern = getattr(string_or_regex, "pattern", string_or_regex)
        result = str(self._build_string(_parsed_pattern(str(pattern))))
        self._cache.clear()
        return result


_XEGERS = threading.local()


def _xeger(rng: random.Random) -> _ShortXeger:
    """This thread's xeger drawing from `rng`: building one (its alphabets and dispatch
    tables) cost more than a draw, and only `_random` differs between uses."""
    xeger: _ShortXeger | None = getattr(_XEGERS, "xeger", None)
    if xeger is None:
        xeger = _XEGERS.xeger = _ShortXeger(rng)
    xeger._random = rng
    return xeger


@lru_cache(maxsize=256)
def _parsed_pattern(pattern: str) -> Any:
    """The regex parse tree xeger walks (read-only: one tree serves every draw)."""
    try:
        import re._parser as sre_parse  # Python 3.11+
    except ImportError:  # pragma: no cover - Python 3.10
        import sre_parse
    return sre_parse.parse(pattern)


@lru_cache(maxsize=512)
def _validator(schema_json: bytes) -> Any | None:
    """The one validator `schemas` builds (the mock world checks arguments with the same),
    so a made-up value and the world's check read a schema alike; built once per schema."""
    try:
        return validator(orjson.loads(schema_json))
    except ConfigError:
        return None


def satisfies(value: Any, schema: dict[str, Any]) -> bool:
    """Whether the schema accepts `value` (a schema that is not valid JSON Schema accepts
    anything: there is nothing to satisfy)."""
    checker = _validator(orjson.dumps(schema, option=orjson.OPT_SORT_KEYS))
    if checker is None:
        return True
    try:
        return bool(checker.is_valid(value))
    except UnknownType:
        return True


def fake_value(name: str, schema: dict[str, Any], rng: random.Random) -> Any:
    """A plausible value for parameter `name` that its schema accepts; ids look like ids."""
    if "const" in schema:
        return schema["const"]
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        return rng.choice(enum)
    kind = _kind(schema)
    if kind == "integer":
        return _integer(name, schema, rng)
    if kind == "number":
        return _number(schema, rng)
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "array":
        items = schema.get("items")
        count = int(schema.get("minItems") or 0)
        item = items if isinstance(items, dict) else {}
        return [fake_value(name, item, rng) for _ in range(count)]
    if kind == "object":
        return {}
    return _string(name, schema, rng)


def _kind(schema: dict[str, Any]) -> str:
    kind = schema.get("type", "string")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    return kind if isinstance(kind, str) else "string"


def _integer(name: str, schema: dict[str, Any], rng: random.Random) -> int:
    lo, hi = _bounds(schema, 1, 999 if is_key_param(name) else 9, step=1)
    value = rng.randint(int(lo), int(hi))
    step = schema.get("multipleOf")
    if isinstance(step, int) and step > 0:
        value = max(int(lo) + (-int(lo)) % step, value - value % step)
    return value


def _number(schema: dict[str, Any], rng: random.Random) -> float:
    lo, hi = _bounds(schema, 5, 500, step=0.01)
    value = round(rng.uniform(lo, hi), 2)
    return min(max(value, lo), hi)


def _bounds(schema: dict[str, Any], lo: float, hi: float, *, step: float) -> tuple[float, float]:
    """[lo, hi] from the schema's bounds, the defaults filling what it leaves open."""
    has_lo = has_hi = False
    if isinstance(schema.get("minimum"), (int, float)):
        lo, has_lo = schema["minimum"], True
    if isinstance(schema.get("exclusiveMinimum"), (int, float)):
        lo, has_lo = schema["exclusiveMinimum"] + step, True
    if isinstance(schema.get("maximum"), (int, float)):
        hi, has_hi = schema["maximum"], True
    if isinstance(schema.get("exclusiveMaximum"), (int, float)):
        hi, has_hi = schema["exclusiveMaximum"] - step, True
    if lo > hi:
        if has_lo and not has_hi:
            hi = lo + (hi if hi > 0 else 100)
        elif has_hi and not has_lo:
            lo = hi - 100 if step < 1 else min(hi, 0)
        else:
            hi = lo
    return lo, hi


def _string(name: str, schema: dict[str, Any], rng: random.Random) -> str:
    guesses = _guesses(name, rng)
    for guess in guesses:
        if satisfies(guess, schema):
            return guess
    made = _from_format(schema.get("format"), rng)
    if made is not None and satisfies(made, schema):
        return made
    pattern = schema.get("pattern")
    if isinstance(pattern, str):
        xeger = _xeger(rng)
        drawn = ""
        for _ in range(_DRAWS):
            try:
                drawn = xeger.xeger(pattern)
            except (re.error, KeyError, IndexError, ValueError):
                break
            if satisfies(drawn, schema):
                return drawn
        return drawn
    return _sized(made or guesses[0], schema, rng)


def _sized(text: str, schema: dict[str, Any], rng: random.Random) -> str:
    """`text` padded or cut to the schema's length bounds."""
    low = schema.get("minLength")
    high = schema.get("maxLength")
    if isinstance(high, int) and len(text) > high:
        text = text[:high]
    if isinstance(low, int) and len(text) < low:
        text += "".join(rng.choice(string.ascii_lowercase) for _ in range(low - len(text)))
    return text


def _from_format(fmt: Any, rng: random.Random) -> str | None:
    if fmt == "email":
        return f"{rng.choice(_FIRST)}.{rng.choice(_LAST)}@example.com"
    if fmt == "date":
        return date_text(rng)
    if fmt == "date-time":
        return f"{date_text(rng)}T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:00Z"
    if fmt == "time":
        return f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:00Z"
    if fmt == "uuid":
        digits = "".join(rng.choice("0123456789abcdef") for _ in range(32))
        return f"{digits[:8]}-{digits[8:12]}-4{digits[13:16]}-a{digits[17:20]}-{digits[20:]}"
    if fmt in ("uri", "url", "iri"):
        return f"https://example.com/{rng.choice(('orders', 'help', 'docs'))}/{rng.randint(1, 999)}"
    if fmt in ("hostname", "idn-hostname"):
        return f"{rng.choice(('api', 'www', 'mail'))}.example.com"
    if fmt == "ipv4":
        return f"10.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}"
    return None


def date_text(rng: random.Random) -> str:
    """A calendar date in 2025 as YYYY-MM-DD."""
    return f"2025-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"


def _guesses(name: str, rng: random.Random) -> list[str]:
    """What a parameter called `name` usually holds, most likely first; never empty."""
    low = name.lower()
    if "email" in low:
        return [f"{rng.choice(_FIRST)}.{rng.choice(_LAST)}@example.com"]
    if is_key_param(name):
        stem = re.sub(r"_?(id|number|code|ref)$", "", low) or "id"
        last = stem.split("_")[-1] or stem
        prefix = (re.sub(r"[^a-z]", "", last)[:3] or "ID").upper()
        return [f"{prefix}-{rng.randint(1000, 99999)}"]
    if low in ("path", "file", "filename") or low.endswith("_path"):
        folder = rng.choice(("auth", "billing", "cli", "api"))
        return [f"src/{folder}/{rng.choice(('main', 'util', 'models'))}.py"]
    if "branch" in low or low == "base":
        return [rng.choice(("main", "fix/login-timeout", "feature/export", "release/2.3"))]
    if "query" in low or "search" in low or "glob" in low:
        return [rng.choice(("timeout handling", "parse_config", "retry logic", "*.yaml"))]
    if "title" in low or "subject" in low:
        return [rng.choice(("Fix login timeout", "Update the export docs", "Bump the parser"))]
    if "content" in low or "body" in low or "comment" in low or "text" in low:
        return [rng.choice(("updated wording for the help page", "closing as resolved"))]
    if "date" in low or low.endswith("_on"):
        return [date_text(rng)]
    if "name" in low:
        first, last = rng.choice(_FIRST).title(), rng.choice(_LAST).title()
        if "last" in low or "surname" in low or "family" in low:
            return [last]  # a last name is one name: "Silva", never "Alex Silva"
        if "first" in low or "given" in low:
            return [first]
        return [f"{first} {last}"]
    if "city" in low or "origin" in low or "destination" in low or "airport" in low:
        return [rng.choice(CITIES), rng.choice(tuple(AIRPORTS))]
    if "reason" in low or "note" in low or "message" in low:
        return [rng.choice(("it arrived damaged", "it is the wrong size", "I no longer need it"))]
    return [rng.choice(("blue", "regular", "large", "express", "basic"))]


def shared_schema(tools: Iterable[Tool], name: str, schema: dict[str, Any]) -> dict[str, Any]:
    """Every constraint `tools` put on parameter `name`, `schema`'s first.

    One name is one entity: `order_id` is the same order whether `get_order` (which asks
    for `^ORD-[0-9]{4}$`) or `refund_order` (which asks for any string) takes it, so a
    value made for either must satisfy both, or the agent's look-up before a refund is
    rejected by the spec's own schema (and the mock world's search results carry ids
    that the look-up tools accept).
    """
    merged = dict(schema)
    kind = schema.get("type", "string")
    for tool in tools:
        other = tool.properties.get(name)
        if isinstance(other, dict) and other.get("type", "string") == kind:
            for key, value in other.items():
                merged.setdefault(key, value)
    return merged
