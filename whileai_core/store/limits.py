"""What one request may cost a store: the named limits, and the cheap checks that enforce
them before anything is parsed.

A request over a limit is refused whole with `TooLarge` (413), naming the limit the way
`whileai serve` spells its flag, and nothing of it is stored. The limits exist because
the costly part of a request is not its size on the wire: 1.1 MB of gzip can inflate to
60 MB of tiny spans, and 16 MB of `[],[],...` parses into 400 MB of Python objects. So
each limit is checked on the raw bytes first, at C speed, and only a request inside all
of them is handed to a parser.

| limit             | counts                                                      |
|-------------------|-------------------------------------------------------------|
| `max_spans`       | spans in one OTLP export request                            |
| `max_attributes`  | attributes of one span (or resource, or scope), counting    |
|                   | those of its events and links and each entry of a list or   |
|                   | map value                                                   |
| `max_depth`       | how deep containers nest in one document (an export request |
|                   | or a dataset row)                                           |
| `max_otlp_bytes`  | one export request, on the wire and decompressed            |
| `max_upload_bytes`| one dataset body                                            |
| `max_line_bytes`  | one line (row) of a dataset body                            |
| `max_run_points`  | points in one `POST /runs/{id}/log` batch                   |
| `max_trace_spans` | spans one trace may gather, over every request that adds to |
|                   | it                                                          |
| `max_trace_bytes` | one trace's stored spans (their JSON), over every request   |

The two trace caps bound what one trace costs across requests (each export is bounded by
the limits above, but an exporter can add to one trace forever): a request's spans for a
trace that would pass either cap are dropped and counted (`TraceTable.ingest_spans`),
and merging into a trace never costs more than a full trace does.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, fields

from ..errors import ConfigError
from ..row.limits import DEPTH_CEILING, MIB, env_name, flag, format_size, parse_size
from ..settings import read
from .base import TooLarge

SPAN_FIELDS = 16  # a span's own JSON values: ids, name, times, kind, status, lists


@dataclass(frozen=True)
class Limits:
    max_spans: int = 10_000
    max_attributes: int = 128
    max_depth: int = 64
    max_otlp_bytes: int = 16 * MIB
    max_upload_bytes: int = 512 * MIB
    max_line_bytes: int = 4 * MIB
    max_run_points: int = 500
    max_trace_spans: int = 10_000
    max_trace_bytes: int = 16 * MIB

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"{flag(f.name)} must be a positive whole number, got {value!r}")
        if self.max_depth > DEPTH_CEILING:
            raise ConfigError(f"--max-depth must be at most {DEPTH_CEILING}, got {self.max_depth}")

    @property
    def max_json_values(self) -> int:
        """The JSON values an export request may hold in all (every object, list, string and
        number): `max_spans` spans, each with room for `max_attributes` values and its
        own fields. It bounds what parsing the request can allocate, whatever shape the
        JSON has (about 100 bytes a value at worst: 150 MB at the defaults)."""
        return self.max_spans * (self.max_attributes + SPAN_FIELDS)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Limits:
        """The defaults, overridden by WHILEAI_MAX_* variables (the embedded store reads them
        as `whileai serve` does, so one row is refused or taken the same by both)."""
        values: dict[str, int] = {}
        for f in fields(cls):
            raw = read(env_name(f.name), env)
            if raw is not None:
                values[f.name] = parse_size(raw, env_name(f.name))
        return cls(**values)


def refuse(name: str, what: str, limit: int) -> TooLarge:
    """The 413 for one limit: what was over it, the limit, and how to raise it."""
    shown = f"{limit:,}" if not name.endswith("_bytes") else format_size(limit)
    return TooLarge(
        f"{what} (limit {name} = {shown}; the server's {flag(name)} / {env_name(name)})", name
    )


class AttributeBudget:
    """One owner's attributes (a span's, a resource's, a scope's) counted against
    `max_attributes`, by both OTLP decoders."""

    def __init__(self, limits: Limits) -> None:
        self.limit = limits.max_attributes
        self.owner = ""
        self.used = 0

    def start(self, owner: str) -> None:
        self.owner, self.used = owner, 0

    def spend(self, n: int = 1) -> None:
        self.used += n
        if self.used > self.limit:
            raise refuse(
                "max_attributes",
                f"{self.owner} has more than {self.limit:,} attributes",
                self.limit,
            )


# --- checks on raw JSON ----------------------------------------------------------------

# A JSON string, escapes included (unrolled, so a long string is one linear scan). An
# unterminated string runs to the end of the input (`\\?\Z`): were it to fail instead, the
# scan would start again at the next quote inside it, and `"\"\"\"...` would cost the
# square of its length (40,000 escaped quotes: 54 s). Every part is deterministic (no
# two ways to match one character), so no match ever backtracks.
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\\?\Z)', re.DOTALL)
# The same, with group 1 set when the string holds a `{`, `[` or `,` (so the scan below
# does Python work only for those).
_STRUCTURED_STRING = re.compile(
    rb'"[^"\\{\[,]*(?:\\.[^"\\{\[,]*)*(?:([{\[,])[^"\\]*(?:\\.[^"\\]*)*)?(?:"|\\?\Z)',
    re.DOTALL,
)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_EMPTY_PAIR = re.compile(rb"\[\]|\{\}")


def json_skeleton(raw: bytes | bytearray | memoryview) -> bytes:
    """The JSON with every string shrunk to `0`: what is left is structure, so brackets and
    commas inside strings (a tool call's arguments, a prompt quoting code) count for nothing."""
    return _STRING.sub(b"0", raw)


def json_value_count(raw: bytes | bytearray, stop_above: int) -> int:
    """An upper bound on the values the JSON parses to (every value but the first in its
    container follows a comma, and each container has at most one first value), or some
    number above `stop_above` as soon as that is certain. The first count includes commas
    and brackets inside strings; only when that is over does a scan tell them apart, one
    string at a time, so it never holds more than the input."""

    def structure(lo: int = 0, hi: int | None = None) -> int:
        end = len(raw) if hi is None else hi
        return raw.count(b"{", lo, end) + raw.count(b"[", lo, end) + raw.count(b",", lo, end)

    naive = 1 + structure()
    if naive <= stop_above:
        return naive
    inside = 0
    for strings, match in enumerate(_STRUCTURED_STRING.finditer(raw), start=1):
        if strings > 2 * stop_above:  # each member has one value: over for certain
            return strings // 2 + 1
        if match.lastindex:
            inside += structure(*match.span())
    return naive - inside


def json_deeper_than(skeleton: bytes, depth: int) -> bool:
    """Whether containers nest more than `depth` deep, without parsing: each pass deletes
    the innermost empty pairs, so nesting of depth d is gone after d passes."""
    brackets = skeleton.translate(None, _NOT_BRACKETS)
    if len(brackets) <= 2 * depth:
        return False
    for _ in range(depth):
        shorter = _EMPTY_PAIR.sub(b"", brackets)  # one scan: `{[]}` loses one level
        if not shorter or shorter == brackets:  # done, or unbalanced: the parser says so
            return False
        brackets = shorter
    return True


def check_json_depth(raw: bytes | bytearray, limits: Limits, what: str) -> None:
    """Refuse JSON nested deeper than `max_depth` (for bodies small enough to scan whole)."""
    if raw.count(b"{") + raw.count(b"[") <= limits.max_depth:
        return
    if json_deeper_than(json_skeleton(raw), limits.max_depth):
        raise refuse(
            "max_depth", f"{what} nests deeper than {limits.max_depth} levels", limits.max_depth
        )


def row_depth_problem(raw: bytes, limits: Limits) -> TooLarge | None:
    """A dataset line nested deeper than `max_depth`, or None. Counting brackets first keeps
    the common row (a few dozen brackets) off the slower path."""
    if raw.count(b"{") + raw.count(b"[") <= limits.max_depth:
        return None
    if json_deeper_than(json_skeleton(raw), limits.max_depth):
        return refuse(
            "max_depth", f"a row nests deeper than {limits.max_depth} levels", limits.max_depth
        )
    return None
