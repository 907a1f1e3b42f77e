"""Rows held where they cost least, for stages that must see every row before writing any.

Selection and pairing need whole groups, so they cannot stream. As dicts, a 1 KB row
costs ~5 KB; kept as separate `bytes` objects, the heap fragments around the freed dicts
(a 100,000-row run measured ~8 KB resident per row). Two homes cost less:

- `RowBuffer`: one `bytearray` holding every row's JSON back to back costs the JSON and
  nothing more; for rows that came from a generator.
- `FileRows`: nothing at all in memory: a row that came from a file is read again from
  its byte span there (the input is read twice; stdin is spooled to a file first).

Both answer `raw(span)` (the JSON bytes) and `load(span)` (the row).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import IO, Any

import orjson

Span = tuple[int, ...]
_PREAD = getattr(os, "pread", None)  # POSIX; elsewhere a seek and a read


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


class FileRows:
    """Rows read back from JSONL files by (input index, start, end) spans."""

    def __init__(self, paths: Sequence[str]) -> None:
        self._paths = list(paths)
        self._handles: dict[int, IO[bytes]] = {}

    def raw(self, span: Span) -> bytes:
        index, start, end = span
        handle = self._handles.get(index)
        if handle is None:
            handle = self._handles[index] = open(self._paths[index], "rb")  # noqa: SIM115
        if _PREAD is None:
            handle.seek(start)
            return handle.read(end - start).strip()
        # One positioned read: kept rows are read in output order, not file order, and a
        # seek on a buffered file throws its buffer away each time (half the cost).
        data = _PREAD(handle.fileno(), end - start, start)
        while len(data) < end - start:  # a regular file reads short only at its end
            more = _PREAD(handle.fileno(), end - start - len(data), start + len(data))
            if not more:
                break
            data += more
        return data.strip()

    def load(self, span: Span) -> dict[str, Any]:
        row: dict[str, Any] = orjson.loads(self.raw(span))
        return row

    def close(self) -> None:
        for handle in self._handles.values():
            handle.close()
        self._handles.clear()
