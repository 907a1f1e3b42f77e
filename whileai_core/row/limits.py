"""How big and how deep a row may be: the size and depth spellings every limit shares.

A row is capped twice, by the same numbers: every stage's reader (`jsonl`: a line's
length, its nesting under WHILEAI_MAX_DEPTH) and the store, whose named request limits
(`store.limits`, `whileai serve --max-depth`, `--max-line-bytes`) build on the units,
the size parser and the depth walk here. They live beside the row code so the reader
every stage uses never reaches up into the store for them: a limit is spelled one way
(`--max-depth` / `WHILEAI_MAX_DEPTH`, `16MB`) wherever it is read or reported.
"""

from __future__ import annotations

import re

from ..errors import ConfigError

KIB = 1024
MIB = 1024 * KIB
GIB = 1024 * MIB
# Python's parsers recurse once per level; a ceiling well under the interpreter's keeps any
# configured depth from turning into a RecursionError.
DEPTH_CEILING = 512


def flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def env_name(name: str) -> str:
    return "WHILEAI_" + name.upper()


_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?i?b?)?\s*$", re.IGNORECASE)
_SCALE = {"": 1, "k": KIB, "m": MIB, "g": GIB, "t": 1024 * GIB}


def parse_size(text: str, what: str = "size") -> int:
    """`5000`, `64k`, `16MB`, `1.5GiB`: a count or a byte size (the suffixes are binary)."""
    match = _SIZE.match(text)
    if not match:
        raise ConfigError(f"{what}: not a number or a size like 16MB: {text!r}")
    number, suffix = match.groups()
    value = float(number) * _SCALE[(suffix or "")[:1].lower()]
    if value != int(value) or value < 1:
        raise ConfigError(f"{what}: must be a positive whole number, got {text!r}")
    return int(value)


def format_size(n: int) -> str:
    for unit, scale in (("GiB", GIB), ("MiB", MIB), ("KiB", KIB)):
        if n >= scale and n % (scale // 16) == 0:
            return f"{n / scale:g} {unit}"
    return f"{n:,} bytes"


def json_depth(doc: object, stop_above: int) -> int:
    """How deep containers nest in a parsed document, walked without recursion; stops at
    `stop_above + 1`."""
    deepest = 0
    stack: list[tuple[object, int]] = [(doc, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            children: object = value.values()
        elif isinstance(value, list):
            children = value
        else:
            continue
        if depth > deepest:
            deepest = depth
            if deepest > stop_above:
                return deepest
        stack.extend((child, depth + 1) for child in children)  # type: ignore[attr-defined]
    return deepest
