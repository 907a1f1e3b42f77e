"""JSONL in and out: lazy readers that name file:line on a bad line, writers that never
leave half a line behind.

Rows are generators end to end, so memory does not grow with the file. Reading checks
only the cheap things every stage needs (JSON, an object, the types of the fields the
stages read); `whileai validate` runs the full model over each row.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Literal

import orjson

from .errors import BadRowError, WhileaiError

OnError = Literal["fail", "skip"]

# The fields stages read directly, with the JSON types they must have when present.
_FIELD_TYPES: dict[str, tuple[type, ...]] = {
    "prompt": (str,),
    "messages": (list,),
    "steps": (list,),
    "final_text": (str,),
    "scenario_id": (str,),
    "rollout_index": (int,),
    "scenario_dimensions": (dict,),
    "privileged": (dict,),
    "reward": (int, float),
    "reason": (str,),
    "judge_name": (str,),
    "judge_status": (str,),
    "judge_meta": (dict,),
    "markers": (dict,),
    "marker_sources": (dict,),
    "calibration": (dict,),
    "lineage": (dict,),
    "usage": (dict,),
    "finish_reason": (str,),
    "schema_version": (str,),
    "model_version": (str,),
    "policy_version": (str,),
    "writer_model": (str,),
    "tools_used": (list,),
    "seeded": (list,),
}
_JSON_TYPE = {str: "a string", list: "an array", dict: "an object", int: "a number"}


def check_row(row: Any) -> str | None:
    """The first shape problem of a decoded line, or None. Cheap enough for every row."""
    if not isinstance(row, dict):
        kind = "an array" if isinstance(row, list) else type(row).__name__
        return f"not a JSON object (got {kind})"
    for key, types in _FIELD_TYPES.items():
        value = row.get(key)
        if value is None:
            continue
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            return f"field '{key}' must be {_JSON_TYPE[types[0]]}, got {_describe(value)}"
    for key in ("messages", "steps"):
        items = row.get(key)
        if items:
            for i, item in enumerate(items):
                if not isinstance(item, dict):
                    return f"field '{key}[{i}]' must be an object, got {_describe(item)}"
    return None


def _describe(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


@dataclass
class ReadStats:
    """What a reader saw; `--on-error skip` reports from here."""

    rows: int = 0
    skipped: int = 0
    first_error: str | None = None
    errors: list[str] = field(default_factory=list)

    def note(self, error: BadRowError, keep: int = 20) -> None:
        self.skipped += 1
        if self.first_error is None:
            self.first_error = str(error)
        if len(self.errors) < keep:
            self.errors.append(str(error))


def _open_input(name: str) -> tuple[str, IO[bytes]]:
    if name == "-":
        return "<stdin>", sys.stdin.buffer
    path = Path(name)
    if path.is_dir():
        raise WhileaiError(f"{name}: is a directory, not a JSONL file")
    try:
        return name, path.open("rb")
    except OSError as exc:
        raise WhileaiError(f"{name}: cannot open ({exc.strerror or exc})") from None


def iter_lines(
    inputs: Iterable[str],
    *,
    on_error: OnError = "fail",
    stats: ReadStats | None = None,
    check: bool = True,
) -> Iterator[tuple[str, int, dict[str, Any]]]:
    """Yield (source, line number, row) for every usable line of every input, lazily."""
    for line in iter_located(inputs, on_error=on_error, stats=stats, check=check):
        yield line.source, line.lineno, line.row


@dataclass(slots=True)
class Located:
    """A row and where its line lies: input `index`, bytes [start, end) of that input."""

    index: int
    source: str
    lineno: int
    start: int
    end: int
    row: dict[str, Any]


def iter_located(
    inputs: Iterable[str],
    *,
    on_error: OnError = "fail",
    stats: ReadStats | None = None,
    check: bool = True,
    labels: Sequence[str] | None = None,
) -> Iterator[Located]:
    """`iter_lines` with each line's byte span, so a stage can read a row again later by
    seeking instead of holding it (see `rowbuffer.FileRows`). `labels` name the inputs in
    errors when they are not what the user gave (stdin spooled to a file)."""
    stats = stats if stats is not None else ReadStats()
    for index, name in enumerate(inputs):
        source, handle = _open_input(name)
        if labels is not None:
            source = labels[index]
        pos = 0
        try:
            for lineno, raw in enumerate(handle, start=1):
                start, pos = pos, pos + len(raw)
                if not raw.strip():
                    continue
                problem: str | None
                try:
                    row = orjson.loads(raw)
                    problem = check_row(row) if check else None
                except orjson.JSONDecodeError as exc:
                    problem = f"not valid JSON ({_short_json_error(exc, raw)})"
                if problem is not None:
                    error = BadRowError(source, lineno, problem)
                    if on_error == "fail":
                        raise error
                    stats.note(error)
                    continue
                stats.rows += 1
                yield Located(index, source, lineno, start, pos, row)
        finally:
            if handle is not sys.stdin.buffer:
                handle.close()


@contextlib.contextmanager
def spooled(inputs: Sequence[str]) -> Iterator[tuple[list[str], list[str]]]:
    """(paths, labels): the inputs as files that can be read twice, and the names errors
    should use. Stdin ('-') is copied to a temporary file first (removed after) and keeps
    the label `<stdin>`; named files are used as they are."""
    labels = ["<stdin>" if name == "-" else name for name in inputs]
    if "-" not in inputs:
        yield list(inputs), labels
        return
    with tempfile.TemporaryDirectory(prefix="whileai-stdin-") as tmp:
        spool = Path(tmp) / "stdin.jsonl"
        with spool.open("wb") as fh:
            while chunk := sys.stdin.buffer.read(1 << 20):
                fh.write(chunk)
        yield [str(spool) if name == "-" else name for name in inputs], labels


def _short_json_error(exc: orjson.JSONDecodeError, raw: bytes) -> str:
    if not raw.endswith(b"\n") and raw.lstrip()[:1] in (b"{", b"["):
        return f"truncated line? {exc.msg}"
    return str(exc.msg)


def read_rows(
    inputs: Iterable[str],
    *,
    on_error: OnError = "fail",
    stats: ReadStats | None = None,
) -> Iterator[dict[str, Any]]:
    """Yield rows from files and/or stdin ('-'); a bad line raises BadRowError or is counted."""
    for _, _, row in iter_lines(inputs, on_error=on_error, stats=stats):
        yield row


def dumps(row: Any) -> bytes:
    """One JSONL line, newline included."""
    return orjson.dumps(row, option=orjson.OPT_APPEND_NEWLINE | orjson.OPT_SERIALIZE_NUMPY)


class RowWriter:
    """Writes rows one line at a time, flushed, to stdout or a file.

    A file is written to a temporary sibling and renamed over the target only when the
    whole output succeeded (`mode="replace"`), or appended line by line for resumable
    runs (`mode="append"`), after cutting any half line a killed run left at the end.
    """

    def __init__(self, path: str | None = None, *, mode: Literal["replace", "append"] = "replace"):
        self.path = None if path in (None, "-") else Path(path)
        self.mode = mode
        self.count = 0
        self._tmp: Path | None = None
        self._fh: IO[bytes]
        if self.path is None:
            self._fh = sys.stdout.buffer
        elif mode == "append":
            self.path.parent.mkdir(parents=True, exist_ok=True)
            repair_tail(self.path)
            self._fh = self.path.open("ab")
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", dir=self.path.parent)
            self._tmp = Path(tmp)
            os.chmod(fd, _replacement_mode(self.path))
            self._fh = os.fdopen(fd, "wb")

    def write(self, row: Any) -> None:
        self._fh.write(dumps(row))
        if self._tmp is None:  # a pipe or an appended file: every row out as it is made
            self._fh.flush()
        self.count += 1

    def write_raw(self, chunk: bytes) -> None:
        """Bytes that are already JSONL (a download), under the same atomic guarantee."""
        self._fh.write(chunk)
        self._fh.flush()

    def write_many(self, rows: Iterable[Any]) -> int:
        for row in rows:
            self.write(row)
        return self.count

    def close(self, ok: bool = True) -> None:
        if self.path is None:
            with contextlib.suppress(BrokenPipeError, ValueError):
                self._fh.flush()
            return
        self._fh.close()
        if self._tmp is not None:
            if ok:
                os.replace(self._tmp, self.path)
            else:
                self._tmp.unlink(missing_ok=True)

    def __enter__(self) -> RowWriter:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        self.close(ok=exc_type is None)


def _replacement_mode(path: Path) -> int:
    """The mode the finished file should have: the one it replaces keeps its mode, a new one
    gets what `open` would give it (mkstemp's 0600 would hide a training file from the
    trainer's account)."""
    try:
        return path.stat().st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def repair_tail(path: Path) -> int:
    """Cut a trailing line with no newline (what `kill -9` can leave). Returns bytes cut."""
    if not path.exists():
        return 0
    with path.open("rb+") as fh:
        fh.seek(0, os.SEEK_END)
        size = fh.tell()
        if size == 0:
            return 0
        fh.seek(size - 1)
        if fh.read(1) == b"\n":
            return 0
        # Walk back to the last newline in blocks; a partial line is at most one row long.
        pos = size
        block = 65536
        keep = 0
        while pos > 0:
            start = max(0, pos - block)
            fh.seek(start)
            chunk = fh.read(pos - start)
            idx = chunk.rfind(b"\n")
            if idx >= 0:
                keep = start + idx + 1
                break
            pos = start
        fh.truncate(keep)
        return size - keep
