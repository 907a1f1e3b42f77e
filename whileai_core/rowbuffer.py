"""Rows held as JSON in one growing buffer, for stages that must see every row first.

Selection and pairing need whole groups, so they hold the input. As dicts, a 1 KB row
costs ~5 KB; kept as separate `bytes` objects, the heap fragments around the freed dicts
(a 100,000-row run measured ~8 KB resident per row). One `bytearray` holding every row's
JSON back to back costs the JSON and nothing more; a row is decoded again when needed.
"""

from __future__ import annotations

from typing import Any

import orjson

Span = tuple[int, int]


class RowBuffer:
    """Append rows, get back a (start, end) span; load or copy a row's JSON by its span."""

    def __init__(self) -> None:
        self._buf = bytearray()

    def add(self, row: dict[str, Any]) -> Span:
        start = len(self._buf)
        self._buf += orjson.dumps(row)
        return start, len(self._buf)

    def load(self, span: Span) -> dict[str, Any]:
        row: dict[str, Any] = orjson.loads(memoryview(self._buf)[span[0] : span[1]])
        return row

    def raw(self, span: Span) -> bytes:
        return bytes(memoryview(self._buf)[span[0] : span[1]])

    @property
    def nbytes(self) -> int:
        return len(self._buf)
