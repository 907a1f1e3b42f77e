"""Parse a large JSON document a piece at a time, so the thread parsing it lets the others run.

`orjson.loads` holds the interpreter lock for the whole call: 16 MiB of OTLP JSON is
0.3-0.7 s in which no other thread of the server runs (the event loop included, so
`/health` waits that long). `loads_in_pieces` parses the same bytes into the same value,
as many calls of at most `PIECE` bytes each: between two calls the lock can pass to the
event loop.

How: the document's structure (brackets, commas and colons outside strings, with their
nesting depth) is indexed at C speed, a block at a time, with numpy; a container larger
than a piece is taken apart at its own commas and colons, and each member small enough is
handed to orjson whole. Strings are told apart by their quotes: an escaped backslash pair
and then an escaped quote are blanked first (`bytes.replace`, left to right, pairs a run
of backslashes from its start as JSON does), so every quote left opens or closes one.
Anything malformed is refused as `orjson.loads` would refuse it (`json.JSONDecodeError`):
every byte is inside a piece orjson parses or is a bracket, comma or colon this module
checked the place of. The nesting depth comes with the value, so a caller can refuse a
deep document without walking what it parsed.
"""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np
import orjson

from ..row.limits import json_depth

PIECE = 64 * 1024  # bytes orjson parses in one call (~1 ms)
_BLOCK = 1024 * 1024  # bytes indexed in one round of numpy calls
_BLANK = re.compile(rb"[ \t\n\r]*")  # JSON's whitespace, and no other
_STRUCTURAL = np.zeros(256, dtype=bool)
_STRUCTURAL[np.frombuffer(b"{}[],:", dtype=np.uint8)] = True
_STEP = np.zeros(256, dtype=np.int8)
_STEP[np.frombuffer(b"{[", dtype=np.uint8)] = 1
_STEP[np.frombuffer(b"}]", dtype=np.uint8)] = -1
_CLOSES = {ord("{"): ord("}"), ord("["): ord("]")}
_COMMA, _COLON = ord(","), ord(":")


def _bad(message: str, at: int) -> json.JSONDecodeError:
    return json.JSONDecodeError(message, "", at)


def loads_in_pieces(raw: bytes | bytearray, stop_above: int) -> tuple[Any, int]:
    """(the value, how deep its containers nest) of the JSON in `raw`, parsed in pieces. A
    document nested deeper than `stop_above` is not parsed: (None, its depth)."""
    if len(raw) <= PIECE:
        doc = orjson.loads(raw)
        return doc, _depth_of(doc, stop_above)
    return _Index(raw).document(stop_above)


def _depth_of(doc: Any, stop_above: int) -> int:
    return json_depth(doc, stop_above)


class _Index:
    """Where the structural bytes of `raw` are (`at`), which they are (`char`), and the
    nesting depth after each (`depth`: 1 inside the outermost container)."""

    def __init__(self, raw: bytes | bytearray) -> None:
        self.raw = raw
        at: list[np.ndarray] = []
        chars: list[np.ndarray] = []
        inside = 0  # 1 while a string is open at a block's boundary
        start = 0
        while start < len(raw):
            end = min(len(raw), start + _BLOCK)
            while end < len(raw) and raw[end - 1] == 0x5C:  # never split a run of `\`
                end += 1
            block = bytes(raw[start:end]).replace(b"\\\\", b"__").replace(b'\\"', b"__")
            a = np.frombuffer(block, dtype=np.uint8)
            quotes = np.cumsum(a == 0x22, dtype=np.uint8) & 1  # parity: wrapping is harmless
            found = np.flatnonzero(_STRUCTURAL[a] & (quotes == inside))
            at.append(found + start)
            chars.append(a[found])
            inside ^= int(quotes[-1])
            start = end
        if inside:
            raise _bad("unterminated string", len(raw))
        self.at = np.concatenate(at) if at else np.zeros(0, dtype=np.int64)
        self.char = np.concatenate(chars) if chars else np.zeros(0, dtype=np.uint8)
        self.depth = np.cumsum(_STEP[self.char], dtype=np.int32)

    def document(self, stop_above: int) -> tuple[Any, int]:
        depth = self.depth
        if len(depth) and int(depth.min()) < 0:
            raise _bad("unbalanced brackets", int(self.at[int(np.argmin(depth))]))
        deepest = int(depth.max()) if len(depth) else 0
        if deepest > stop_above:
            return None, deepest
        if len(depth) and int(depth[-1]) != 0:
            raise _bad("unbalanced brackets", len(self.raw))
        return self.value(0, len(self.raw), 0, len(self.at)), deepest

    def value(self, start: int, end: int, first: int, last: int) -> Any:
        """The one value in raw[start:end], whose structural bytes are at[first:last]."""
        if end - start <= PIECE or first == last:
            return orjson.loads(memoryview(self.raw)[start:end])
        opens, closes = int(self.at[first]), int(self.at[last - 1])
        if _filled(self.raw, start, opens) or _filled(self.raw, closes + 1, end):
            raise _bad("unexpected content around a value", start)
        kind = int(self.char[first])
        if kind not in _CLOSES or int(self.char[last - 1]) != _CLOSES[kind]:
            raise _bad("mismatched brackets", closes)
        level = int(self.depth[first])
        inner = self.depth[first + 1 : last - 1]
        if len(inner) and int(inner.min()) < level:
            raise _bad("a container closes before its end", opens)
        chars = self.char[first + 1 : last - 1]
        own = inner == level  # this container's own commas and colons, nothing deeper
        commas = (np.flatnonzero(own & (chars == _COMMA)) + first + 1).tolist()
        colons = (np.flatnonzero(own & (chars == _COLON)) + first + 1).tolist()
        bounds = [first, *commas, last - 1]
        where = self.at[bounds].tolist()
        if len(bounds) == 2 and not colons and not _filled(self.raw, opens + 1, closes):
            return [] if kind == ord("[") else {}
        if kind == ord("["):
            if colons:
                raise _bad("a colon in a list", int(self.at[colons[0]]))
            return [
                self.value(where[n] + 1, where[n + 1], bounds[n] + 1, bounds[n + 1])
                for n in range(len(bounds) - 1)
            ]
        if len(colons) != len(bounds) - 1:
            raise _bad("an object member without exactly one colon", opens)
        out: dict[str, Any] = {}
        for n, colon in enumerate(colons):
            if not bounds[n] < colon < bounds[n + 1]:
                raise _bad("an object member without exactly one colon", where[n])
            split = int(self.at[colon])
            key = orjson.loads(memoryview(self.raw)[where[n] + 1 : split])
            if not isinstance(key, str):
                raise _bad("an object key that is not a string", where[n])
            out[key] = self.value(split + 1, where[n + 1], colon + 1, bounds[n + 1])
        return out


def _filled(raw: bytes | bytearray, start: int, end: int) -> bool:
    """Whether raw[start:end] holds anything but JSON whitespace (read in place)."""
    return _BLANK.fullmatch(raw, start, end) is None
