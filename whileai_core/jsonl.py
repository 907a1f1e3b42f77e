"""JSONL in and out: lazy readers that name file:line on a bad line, writers that never
leave half a line behind.

Rows are generators end to end, so memory does not grow with the file. Every line a stage
reads passes the three checks `whileai validate` runs, so one row is refused or taken the
same by every stage: its size (`MAX_LINE_BYTES`; a longer line is read past in bounded
chunks, never held), its nesting (`row_depth()`, checked before any stage walks the row,
since orjson writes at most 255 levels and Python walkers recurse per level), and the row
rules (`rowrules.row_problem`: JSON types, required fields, a bounded reward, an ask).
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Literal

import orjson

from .errors import BadRowError, ConfigError, WhileaiError
from .rowrules import row_problem
from .settings import read
from .store.limits import env_name, format_size, json_depth, parse_size

OnError = Literal["fail", "skip"]

# A line longer than this is refused without being held: rows run to a few MB at most (a
# long episode with big tool outputs), while a file with no newlines would otherwise be
# read whole into memory as one "line".
MAX_LINE_BYTES = 256 * 1024 * 1024
# How deep a row may nest, the row object itself being level 1. The default is the
# store's (`whileai serve --max-depth`, the same WHILEAI_MAX_DEPTH), so a row every stage
# takes is one the store takes. The ceiling is what the stages can carry: orjson writes
# at most 255 levels and the exporters wrap a row's parts a few levels deeper, while
# Python walkers (privileged stripping, the trajectory view) recurse once per level.
DEFAULT_ROW_DEPTH = 64
ROW_DEPTH_CEILING = 200
_CHUNK = 1024 * 1024


def row_depth(env: Mapping[str, str] | None = None) -> int:
    """The nesting limit rows are read under: WHILEAI_MAX_DEPTH, else the default."""
    name = env_name("max_depth")
    raw = read(name, env)
    if raw is None:
        return DEFAULT_ROW_DEPTH
    depth = parse_size(raw, name)
    if depth > ROW_DEPTH_CEILING:
        raise ConfigError(
            f"{name}={raw}: rows can be read at most {ROW_DEPTH_CEILING} levels deep "
            "(orjson writes at most 255, and exports nest a row's parts deeper)"
        )
    return depth


def check_row(row: Any) -> str | None:
    """The first rule a decoded line breaks, or None: the one set of row rules (see
    `rowrules`), the same for every stage, `whileai validate` and the store."""
    return row_problem(row)


def line_problem(raw: bytes, depth: int, *, check: bool = True) -> tuple[Any, str | None]:
    """(row, None) for a usable line, or (None, what is wrong with it): its length, its
    nesting past `depth`, its JSON, the row rules (with `check=False` not those: for
    readers that normalise foreign shapes, such as traces, before they check)."""
    if len(raw) > MAX_LINE_BYTES:
        return None, _too_long(len(raw))
    row, problem = parse_row(raw, check=check)
    # A line with no more brackets than the limit cannot nest past it: the common row
    # costs two byte counts; only a bracket-heavy one has its containers walked.
    deep = row is not None and raw.count(b"{") + raw.count(b"[") > depth
    if deep and json_depth(row, depth) > depth:
        return None, (
            f"nests deeper than {depth} levels ({env_name('max_depth')} raises the limit, "
            f"up to {ROW_DEPTH_CEILING})"
        )
    return row, problem


def parse_row(raw: bytes, *, check: bool = True) -> tuple[Any, str | None]:
    """A line's JSON and the row rules, but not its length or nesting: for the store,
    which counts those under its own limits before it parses."""
    try:
        row = orjson.loads(raw)  # orjson itself refuses more than 1,024 levels
    except orjson.JSONDecodeError as exc:
        return None, f"not valid JSON ({_short_json_error(exc, raw)})"
    if not check:  # the caller normalises foreign shapes itself (traces), any JSON value
        return row, None
    problem = row_problem(row)
    return (None, problem) if problem is not None else (row, None)


def _too_long(size: int) -> str:
    return f"line is {size:,} bytes, over the {format_size(MAX_LINE_BYTES)} a row may take"


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

    def skipped_warning(self) -> str:
        """The one wording every command warns with after `--on-error skip` dropped lines."""
        return f"skipped {self.skipped} bad line(s); first: {self.first_error}"


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
    """Yield (source, line number, row) for every usable line of every input, lazily;
    `check=False` leaves the row rules to a caller reading other JSON (labels, traces)."""
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
    labels: Sequence[str] | None = None,
    check: bool = True,
) -> Iterator[Located]:
    """`iter_lines` with each line's byte span, so a stage can read a row again later by
    seeking instead of holding it (see `rowbuffer.FileRows`). `labels` name the inputs in
    errors when they are not what the user gave (stdin spooled to a file)."""
    stats = stats if stats is not None else ReadStats()
    depth = row_depth()
    cap = MAX_LINE_BYTES + 1
    for index, name in enumerate(inputs):
        source, handle = _open_input(name)
        if labels is not None:
            source = labels[index]
        pos = lineno = 0
        readline = handle.readline
        try:
            while raw := readline(cap):
                lineno += 1
                start, pos = pos, pos + len(raw)
                row: Any
                problem: str | None
                if len(raw) == cap and not raw.endswith(b"\n"):
                    pos += _skip_rest(handle)
                    row, problem = None, _too_long(pos - start)
                elif raw.isspace():  # a blank line is no row (stops at the first character)
                    continue
                else:
                    row, problem = line_problem(raw, depth, check=check)
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


def _skip_rest(handle: IO[bytes]) -> int:
    """Read past the rest of an overlong line in bounded chunks; the bytes skipped."""
    skipped = 0
    while chunk := handle.readline(_CHUNK):
        skipped += len(chunk)
        if chunk.endswith(b"\n"):
            break
    return skipped


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
