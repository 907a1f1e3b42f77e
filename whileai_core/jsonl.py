"""JSONL in and out: lazy readers that name file:line on a bad line, writers that never
leave half a line behind.

Rows are generators end to end, so memory does not grow with the file. Every line a stage
reads passes the three checks `whileai validate` runs, so one row is refused or taken the
same by every stage: its size (`MAX_LINE_BYTES`; a longer line is read past in bounded
chunks, never held), its nesting (`row_depth()`, checked before any stage walks the row,
since orjson writes at most 255 levels and Python walkers recurse per level), and the row
rules (`row.rules.row_problem`: JSON types, required fields, a bounded reward, an ask).
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Literal

import orjson

from .errors import BadRowError, ConfigError, WhileaiError
from .procs import pid_alive
from .row.limits import env_name, format_size, json_depth, parse_size
from .row.rules import row_problem
from .settings import read

OnError = Literal["fail", "skip"]
# The rule a reader holds each line to: the row rules (True), none (False: a reader of
# foreign shapes checks them itself), or its own (a function naming the problem or None).
RowCheck = bool | Callable[[Any], str | None]

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
_FILE_BUFFER = 1024 * 1024


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
    `row.rules`), the same for every stage, `whileai validate` and the store."""
    return row_problem(row)


def line_problem(raw: bytes, depth: int, *, check: RowCheck = True) -> tuple[Any, str | None]:
    """(row, None) for a usable line, or (None, what is wrong with it): its length, its
    nesting past `depth`, its JSON, the row rules (with `check=False` not those: for
    readers that normalise foreign shapes, such as traces, before they check; a callable
    is the reader's own rule, e.g. `export --pairs` taking pairs already made)."""
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


def parse_row(raw: bytes, *, check: RowCheck = True) -> tuple[Any, str | None]:
    """A line's JSON and the row rules, but not its length or nesting: for the store,
    which counts those under its own limits before it parses."""
    try:
        row = orjson.loads(raw)  # orjson itself refuses more than 1,024 levels
    except orjson.JSONDecodeError as exc:
        return None, f"not valid JSON ({_short_json_error(exc, raw)})"
    if check is False:  # the caller normalises foreign shapes itself (traces), any JSON value
        return row, None
    problem = check(row) if callable(check) else row_problem(row)
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
    check: RowCheck = True,
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
    check: RowCheck = True,
) -> Iterator[Located]:
    """`iter_lines` with each line's byte span, so a stage can read a row again later by
    seeking instead of holding it (see `row.buffer.FileRows`). `labels` name the inputs in
    errors when they are not what the user gave (stdin spooled to a file)."""
    stats = stats if stats is not None else ReadStats()
    depth = row_depth()
    for index, name in enumerate(inputs):
        source, handle = _open_input(name)
        if labels is not None:
            source = labels[index]
        pos = lineno = held = 0  # held: lines that are not blank, good or bad
        readline = handle.readline
        try:
            while raw := readline(_CHUNK):
                lineno += 1
                start = pos
                row: Any
                problem: str | None
                if len(raw) == _CHUNK and raw[-1:] != b"\n":  # longer than a chunk
                    whole, size = _read_long(handle, raw)
                    pos += size
                    if whole is None:
                        row, problem = None, _too_long(size)
                    elif whole.isspace():
                        continue
                    else:
                        row, problem = line_problem(whole, depth, check=check)
                else:
                    pos += len(raw)
                    if raw.isspace():  # a blank line is no row (stops at the first character)
                        continue
                    row, problem = line_problem(raw, depth, check=check)
                held += 1
                if problem is not None:
                    error = BadRowError(source, lineno, problem)
                    if on_error == "fail":
                        raise error
                    stats.note(error)
                    continue
                stats.rows += 1
                yield Located(index, source, lineno, start, pos, row)
            if _tally is not None:
                _tally.note(source, held)
        finally:
            if handle is not sys.stdin.buffer:
                handle.close()


@dataclass
class InputTally:
    """What a command's row inputs held, read to their end: the CLI's one rule for empty
    input (exit 3, "no rows") is decided from here, the same for every command, instead
    of by each command's own count.

    Only `watch`ed inputs count: a labels file or an eval set a command also reads is not
    the rows it was given. Each `watch` is one set of rows; a command given two sets to
    weigh against each other (`agreement a b`) has nothing to do when either is empty."""

    sets: list[set[str]] = field(default_factory=list)
    lines: dict[int, int] = field(default_factory=dict)  # set index -> lines read to the end
    finished: dict[int, list[str]] = field(default_factory=dict)

    def watch(self, names: Iterable[str]) -> None:
        self.sets.append({"<stdin>" if name == "-" else name for name in names})

    def note(self, source: str, lines: int) -> None:
        for index, names in enumerate(self.sets):
            if source in names:
                self.lines[index] = self.lines.get(index, 0) + lines
                self.finished.setdefault(index, []).append(source)

    def _empty(self) -> list[int]:
        return [index for index in self.finished if self.lines[index] == 0]

    @property
    def held_no_rows(self) -> bool:
        """True when a watched set of inputs was read to its end and held not one line
        that is not blank (empty files, only blank lines, an empty pipe)."""
        return bool(self._empty())

    def names(self) -> str:
        """The inputs of the empty set(s), for the message."""
        empty = [name for index in self._empty() for name in self.finished[index]]
        return ", ".join(dict.fromkeys(empty))


_tally: InputTally | None = None


@contextlib.contextmanager
def tally_inputs() -> Iterator[InputTally]:
    """Count what watched inputs hold while the block runs (the CLI wraps one command)."""
    global _tally
    outer, _tally = _tally, InputTally()
    try:
        yield _tally
    finally:
        _tally = outer


def watch_inputs(names: Sequence[str]) -> Sequence[str]:
    """Mark `names` as a command's row inputs for the running tally (if any); returns them."""
    if _tally is not None:
        _tally.watch(names)
    return names


def inputs_held_no_rows() -> bool:
    """Whether the row inputs read so far held no rows at all (see `InputTally`)."""
    return _tally is not None and _tally.held_no_rows


def _read_long(handle: IO[bytes], first: bytes) -> tuple[bytes | None, int]:
    """The rest of a line longer than one chunk, `first` being its first chunk: (the whole
    line, its size), or (None, its size) past `MAX_LINE_BYTES`.

    A line over the cap is refused while it streams past, one chunk held at a time: the
    line is measured before it is kept. From a file it is then read once at its exact
    size; from a pipe, which cannot be read twice, its chunks go to a temporary file as
    they pass and come back from there, so a line just under the cap is held once, and one
    over it never."""
    seekable = False
    with contextlib.suppress(OSError, ValueError):
        seekable = handle.seekable()
    if seekable:
        return _measure_then_read(handle, first, handle, handle.tell() - len(first))
    with tempfile.TemporaryFile(prefix="whileai-line-") as spill:
        spill.write(first)
        return _measure_then_read(handle, first, spill, 0)


def _measure_then_read(
    handle: IO[bytes], first: bytes, keep: IO[bytes], begin: int
) -> tuple[bytes | None, int]:
    """Pass the rest of the line (copied to `keep` unless `keep` is `handle` itself), then
    read it back from `keep` at `begin` if it fits under the cap."""
    cap = MAX_LINE_BYTES
    into = None if keep is handle else keep
    passed, ended = _skip_rest(handle, cap - len(first), into=into)
    size = len(first) + passed
    if not ended:
        return None, size + _skip_rest(handle)[0]
    if size > cap:
        return None, size
    keep.seek(begin)
    return keep.read(size), size


def _skip_rest(
    handle: IO[bytes], limit: int | None = None, *, into: IO[bytes] | None = None
) -> tuple[int, bool]:
    """Read past the rest of a line in bounded chunks, holding none (copied `into` a file
    when given): (bytes passed, whether the line ended). With `limit`, stop once more than
    that has passed (the caller then knows the line is too long): not ended."""
    skipped = 0
    while chunk := handle.readline(_CHUNK):
        skipped += len(chunk)
        if limit is not None and skipped > limit:
            return skipped, chunk.endswith(b"\n")
        if into is not None:
            into.write(chunk)
        if chunk.endswith(b"\n"):
            return skipped, True
    return skipped, True


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
    check: RowCheck = True,
) -> Iterator[dict[str, Any]]:
    """Yield rows from files and/or stdin ('-'); a bad line raises BadRowError or is counted."""
    for _, _, row in iter_lines(inputs, on_error=on_error, stats=stats, check=check):
        yield row


def dumps(row: Any) -> bytes:
    """One JSONL line, newline included."""
    return orjson.dumps(row, option=orjson.OPT_APPEND_NEWLINE | orjson.OPT_SERIALIZE_NUMPY)


# -- where output goes ---------------------------------------------------------------------
#
# `-o PATH` means what `> PATH` means in a shell. A regular file (or a path that does not
# exist yet) is written to a temporary sibling and renamed over the target only when the
# whole output succeeded, so a reader never sees half of it and a failed run leaves the old
# file. Anything else (a character or block device, a FIFO, a socket, `/dev/stdout`, the
# `/dev/fd/N` that `>(gzip > out.gz)` hands over) is a stream someone else owns: renaming a
# file over it would destroy it (as root, the machine's `/dev/stdout`) and deliver nothing
# to whoever reads it, so it is opened and written in place, row by row. `-` is stdout.

# A temporary sibling is named `.<target>.whileai-partial.<host>.<pid>.<random>`: `ls -a`
# says what it is, and the next run writing the same target removes those whose writer (a
# process on this host) is gone, e.g. after `kill -9`. The name's target part is cut short
# so a long target name still leaves room for the rest within the 255 a name may take.
PARTIAL_TAG = "whileai-partial"
_NAME_ROOM = 120
# `/proc/<pid>/fd/<n>` or `/proc/<pid>/task/<tid>/fd/<n>`: what /dev/stdout, /dev/fd/N
# and /proc/self/fd/N lead to.
_PROC_FD = re.compile(r"/proc/(\d+)(?:/task/\d+)?/fd/(\d+)")

OutputKind = Literal["stdout", "file", "descriptor", "stream", "socket"]


@dataclass(frozen=True, slots=True)
class OutputTarget:
    """What an output path names, decided once before anything is written: `kind` says
    how it is written, `path` is where (a regular file's real path, links followed, so a
    symlink is written through rather than replaced), `fd` the descriptor of ours that a
    `descriptor` names."""

    kind: OutputKind
    path: Path | None = None
    fd: int | None = None

    @property
    def in_place(self) -> bool:
        """Written as it goes (every row flushed), with no rename to make it appear."""
        return self.kind != "file"


def output_target(name: str | None) -> OutputTarget:
    """Classify `-o NAME` (None or '-' is stdout); a folder is refused."""
    if name in (None, "-", ""):
        return OutputTarget("stdout")
    assert name is not None
    fd = _own_descriptor(name)
    if fd is not None:
        return OutputTarget("descriptor", Path(name), fd)
    try:
        info = os.stat(name)  # follows links: what a write would reach
    except FileNotFoundError:
        return OutputTarget("file", Path(os.path.realpath(name)))
    except OSError as exc:
        raise ConfigError(f"{name}: cannot write ({exc.strerror or exc})") from None
    if stat.S_ISDIR(info.st_mode):
        raise ConfigError(f"{name}: is a folder; give a file to write")
    if stat.S_ISREG(info.st_mode):
        return OutputTarget("file", Path(os.path.realpath(name)))
    if stat.S_ISSOCK(info.st_mode):
        return OutputTarget("socket", Path(name))
    return OutputTarget("stream", Path(name))  # FIFO, character or block device


def _own_descriptor(name: str) -> int | None:
    """The descriptor N when `name` leads (through links) to /proc/<our pid>/fd/N, as
    /dev/stdout, /dev/stderr, /dev/fd/N and /proc/self/fd/N do; else None. Such a name is
    written through a copy of our own descriptor: reopening it would fail for a socket,
    and following it to a regular file would replace the file the shell opened for us."""
    current = os.path.abspath(name)
    for _ in range(40):  # the kernel's own limit on links followed
        folder, base = os.path.split(current)
        current = os.path.join(os.path.realpath(folder), base)
        match = _PROC_FD.fullmatch(current)
        if match is not None:
            return int(match[2]) if int(match[1]) == os.getpid() else None
        if not os.path.islink(current):
            return None
        current = os.path.normpath(os.path.join(folder, os.readlink(current)))
    return None


class OutputFile:
    """One output, opened the way its target needs (see `output_target`): bytes go in
    with `write`, and `close(ok)` makes a file appear (ok) or leaves the old one (not ok).

    `mode="append"` (resumable runs) appends to a regular file after cutting any half
    line a killed run left at its end; a stream is simply written. `file_mode` fixes the
    permission bits of a file this writes (credentials: 0600); by default a replaced file
    keeps its mode and a new one gets what `open` would give it.
    """

    def __init__(
        self,
        name: str | None,
        *,
        mode: Literal["replace", "append"] = "replace",
        file_mode: int | None = None,
    ) -> None:
        self.target = output_target(name)
        self.name = name
        self._tmp: Path | None = None
        self._fh: IO[bytes] = self._open(mode, file_mode)

    @property
    def in_place(self) -> bool:
        return self.target.in_place

    @property
    def handle(self) -> IO[bytes]:
        """The open byte stream (a row writer writes to it directly: once per row)."""
        return self._fh

    def _open(self, mode: str, file_mode: int | None) -> IO[bytes]:
        target = self.target
        try:
            if target.kind == "stdout":
                return sys.stdout.buffer
            if target.kind == "descriptor":
                assert target.fd is not None
                return os.fdopen(os.dup(target.fd), "wb")
            assert target.path is not None
            if target.kind == "socket":
                return _connect(target.path)
            if target.kind == "stream":
                # O_WRONLY without O_CREAT or O_TRUNC: what is there is what is written to.
                return os.fdopen(os.open(target.path, os.O_WRONLY | os.O_CLOEXEC), "wb")
            target.path.parent.mkdir(parents=True, exist_ok=True)
            if mode == "append":
                repair_tail(target.path)
                handle = target.path.open("ab")
                if file_mode is not None:
                    os.chmod(handle.fileno(), file_mode)
                return handle
            remove_stale_partials(target.path)
            fd, tmp = tempfile.mkstemp(prefix=_partial_prefix(target.path), dir=target.path.parent)
            self._tmp = Path(tmp)
            os.chmod(fd, file_mode if file_mode is not None else _replacement_mode(target.path))
            # Nobody reads a temporary file before the rename: write it in large blocks.
            return os.fdopen(fd, "wb", buffering=_FILE_BUFFER)
        except OSError as exc:
            raise ConfigError(f"{self.name}: cannot write ({exc.strerror or exc})") from None

    def write(self, data: bytes) -> None:
        self._fh.write(data)

    def flush(self) -> None:
        self._fh.flush()

    def close(self, ok: bool = True) -> None:
        """Finish: a file appears only when `ok`; a stream has had its bytes already."""
        if self.target.kind == "stdout":
            with contextlib.suppress(BrokenPipeError, ValueError):
                self._fh.flush()
            return
        if self._tmp is None:
            self._fh.close()
            return
        try:
            self._fh.close()
            if ok:
                assert self.target.path is not None
                os.replace(self._tmp, self.target.path)
        finally:
            self._tmp.unlink(missing_ok=True)  # gone after the rename; the rest on failure

    def __enter__(self) -> OutputFile:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        self.close(ok=exc_type is None)


def write_output(name: str, data: bytes, *, file_mode: int | None = None) -> None:
    """A whole small output at once (a report, a manifest, a credentials file), under the
    same rules as `-o`: atomic for a file, in place for a stream."""
    with OutputFile(name, file_mode=file_mode) as out:
        out.write(data)


def _connect(path: Path) -> IO[bytes]:
    """A Unix socket at `path`, as a byte stream to write (`open` cannot open one)."""
    import socket

    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(str(path))
        return sock.makefile("wb")
    finally:
        sock.close()  # the file object keeps its own reference to the connection


def _partial_prefix(target: Path, pid: int | None = None) -> str:
    return f"{_partial_root(target)}{pid if pid is not None else os.getpid()}."


def _partial_root(target: Path) -> str:
    return f".{target.name[:_NAME_ROOM]}.{PARTIAL_TAG}.{_host()}."


def _host() -> str:
    """This machine's name as it goes into a file name: a partial file on a shared folder
    is only ever judged by a process on the host that wrote it."""
    import socket

    return re.sub(r"[^A-Za-z0-9-]", "-", socket.gethostname())[:40] or "localhost"


def remove_stale_partials(target: Path) -> list[Path]:
    """Remove the temporary siblings of `target` left by writers on this host that are no
    longer running (a `kill -9`, a power cut); returns what was removed. A partial whose
    writer is alive, or was written on another host, is left alone."""
    root = _partial_root(target)
    removed: list[Path] = []
    try:
        entries = list(os.scandir(target.parent))
    except OSError:
        return removed
    for entry in entries:
        if not entry.name.startswith(root):
            continue
        pid_text = entry.name[len(root) :].split(".", 1)[0]
        if not pid_text.isdigit() or pid_alive(int(pid_text)):
            continue
        with contextlib.suppress(FileNotFoundError):
            os.unlink(entry.path)
            removed.append(Path(entry.path))
    return removed



class RowWriter:
    """Writes rows one line at a time to stdout, a stream or a file (see `OutputFile`).

    A file is written to a temporary sibling and renamed over the target only when the
    whole output succeeded (`mode="replace"`), or appended line by line for resumable
    runs (`mode="append"`), after cutting any half line a killed run left at the end.
    Stdout and streams get every row flushed as it is made.
    """

    def __init__(self, path: str | None = None, *, mode: Literal["replace", "append"] = "replace"):
        self._out = OutputFile(path, mode=mode)
        self.path = self._out.target.path if self._out.target.kind == "file" else None
        self.mode = mode
        self.count = 0
        self._flush_each = self._out.in_place or mode == "append"
        self._put = self._out.handle.write
        self._flush = self._out.handle.flush

    def write(self, row: Any) -> None:
        self._put(dumps(row))
        if self._flush_each:  # a pipe or an appended file: every row out as it is made
            self._flush()
        self.count += 1

    def write_raw(self, chunk: bytes) -> None:
        """Bytes that are already JSONL (a download), under the same atomic guarantee."""
        self._put(chunk)
        self._flush()

    def write_many(self, rows: Iterable[Any]) -> int:
        for row in rows:
            self.write(row)
        return self.count

    def close(self, ok: bool = True) -> None:
        self._out.close(ok)

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
