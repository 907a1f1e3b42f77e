"""The bodies of datasets: uploads in flight, parts waiting for finalize, published sets.

    <id>.part      the last complete upload, waiting for finalize
    <id>.checking  the part while finalize validates it
    <id>.fixing    the checked part written again with finalize's fixes (privileged removed)
    <id>.jsonl     a finalized dataset

Each is a blob in the store's `BlobStore` (`blobs.py`: a directory, or an S3 bucket); an
upload in flight is the blob store's partial write, published as the part only once
complete. Bodies are written and read a chunk at a time, and the limits are checked as the
bytes go by: an upload past `max_upload_bytes`, or with a line past `max_line_bytes`,
stops there and leaves nothing behind, and finalize reads at most one capped line at a
time. A finalize holds the dataset's lock (the database's, `sql.py`: across processes,
and released if its holder dies); one killed with SIGKILL leaves its `.checking` blob,
and whoever next holds the lock (a finalize, or the sweep) knows no finalize is running
and takes it back.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import IO

from .base import STALE_UPLOAD_SECONDS, BadRequest, NotFound, StoreError, TooLarge
from .blobs import BlobStore
from .limits import Limits, refuse, row_depth_problem

CHUNK = 1024 * 1024
# Validating a line parses it: at most this many finalizes parse at once, so many
# concurrent finalizes cost what two do (parsing holds the GIL: more would not be faster).
CHECKERS = 2
Lock = Callable[[str, bool], AbstractContextManager[bool]]
# One line in, (the line to keep or None to leave it out, why it changed or None).
LineFix = Callable[[bytes], tuple[bytes | None, str | None]]
# Line numbers kept per reason a `LineFix` gave, to name them in the answer.
NAMED_LINES = 10


@dataclass
class Published:
    """What a finalize published: rows kept, bytes, and per reason a fix gave, how many
    lines it changed and the first few of their numbers."""

    rows: int = 0
    size: int = 0
    fixes: dict[str, int] = field(default_factory=dict)
    lines: dict[str, list[int]] = field(default_factory=dict)

    def note(self, why: str, lineno: int) -> None:
        self.fixes[why] = self.fixes.get(why, 0) + 1
        named = self.lines.setdefault(why, [])
        if len(named) < NAMED_LINES:
            named.append(lineno)


class DatasetFiles:
    def __init__(self, blobs: BlobStore, limits: Limits, lock: Lock) -> None:
        self.blobs = blobs
        self.limits = limits
        self._lock = lock
        self._checkers = threading.BoundedSemaphore(CHECKERS)

    @staticmethod
    def name_of(dataset_id: str, suffix: str = "jsonl") -> str:
        if not dataset_id.replace("_", "").isalnum():
            raise NotFound(f"dataset {dataset_id} not found")
        return f"{dataset_id}.{suffix}"

    # --- upload ----------------------------------------------------------------------

    def write(
        self,
        dataset_id: str,
        chunks: Iterable[bytes],
        declared: int | None = None,
        budget: tuple[int, Callable[[int], StoreError]] | None = None,
    ) -> int:
        """Stream one upload attempt, which becomes the dataset's part only once complete,
        so a cut-off or concurrent retry never leaves a torn body to finalize. `budget` is
        (bytes an account quota still allows, the refusal for a size past it)."""
        cap = self.limits.max_upload_bytes
        if declared is not None and declared > cap:
            raise refuse("max_upload_bytes", "the dataset body is too large", cap)
        allowed, over_budget = budget if budget is not None else (None, None)
        if over_budget is not None and declared is not None and declared > (allowed or 0):
            raise over_budget(declared)
        writer = self.blobs.writer(self.name_of(dataset_id, "part"))
        lines = _LineMeter(self.limits.max_line_bytes)
        size = 0
        try:
            for chunk in chunks:
                size += len(chunk)
                if size > cap:
                    raise refuse("max_upload_bytes", "the dataset body is too large", cap)
                if allowed is not None and over_budget is not None and size > allowed:
                    raise over_budget(size)
                lines.feed(chunk)
                writer.write(chunk)
            writer.commit()
        finally:
            writer.abort()
        return size

    # --- finalize --------------------------------------------------------------------

    def locked(self, dataset_id: str, wait: bool = True) -> AbstractContextManager[bool]:
        """The dataset's finalize lock; without `wait` yields False at once when someone
        else holds it."""
        return self._lock(f"finalize {dataset_id}", wait)

    def take_part(self, dataset_id: str) -> str:
        """Move the part aside for checking, so an upload retry that lands meanwhile is
        neither published unchecked nor lost. Called under the lock: a `.checking` blob
        found here was left by a finalize that died, and is checked again unless a newer
        part replaced it. Returns the blob to check."""
        part, checking = self.name_of(dataset_id, "part"), self.name_of(dataset_id, "checking")
        try:
            self.blobs.move(part, checking)
        except FileNotFoundError:
            if not self.blobs.exists(checking):
                raise BadRequest(f"dataset {dataset_id}: nothing uploaded yet") from None
        return checking

    def check_and_publish(
        self,
        dataset_id: str,
        checking: str,
        problem_of: Callable[[bytes], str | None],
        row_cap: tuple[int, Callable[[int], StoreError]] | None = None,
        fix: LineFix | None = None,
    ) -> Published:
        """Validate every line of the `checking` blob (`take_part`), then publish it as the
        dataset's body. `fix` may change or leave out lines (the store's own rules about
        what it keeps); when it changes any, the body is written again with the fixes, so
        an upload that needs none is published as sent. A bad line refuses the whole body
        and deletes it. `row_cap` is (most rows allowed, the refusal once a row past it is
        kept)."""
        published = Published()
        try:
            with self._checkers:
                with self.blobs.open(checking) as fh:
                    self._check_lines(dataset_id, fh, problem_of, row_cap, fix, published)
                if published.fixes:
                    self._rewrite(dataset_id, checking, fix)
        except StoreError:
            self.blobs.delete(checking)
            raise
        published.size = self.blobs.size(checking)
        self.blobs.move(checking, self.name_of(dataset_id))
        return published

    def _check_lines(
        self,
        dataset_id: str,
        fh: IO[bytes],
        problem_of: Callable[[bytes], str | None],
        row_cap: tuple[int, Callable[[int], StoreError]] | None,
        fix: LineFix | None,
        published: Published,
    ) -> None:
        cap = self.limits.max_line_bytes
        lineno = 0
        while raw := fh.readline(cap + 1):
            lineno += 1
            if len(raw) > cap and not raw.endswith(b"\n"):
                what = f"dataset {dataset_id}: line {lineno} is too long"
                raise refuse("max_line_bytes", what, cap)
            if not raw.strip():
                continue
            deep = row_depth_problem(raw, self.limits)
            if deep is not None:
                raise TooLarge(f"dataset {dataset_id}: line {lineno}: {deep}", deep.limit)
            try:
                problem = problem_of(raw)
                kept, why = fix(raw) if fix is not None else (raw, None)
            except RecursionError:
                problem, kept, why = "nested too deeply to check", None, None
            if problem is not None:
                raise BadRequest(f"dataset {dataset_id}: line {lineno}: {problem}")
            if why is not None:
                published.note(why, lineno)
            if kept is None:
                continue
            published.rows += 1
            if row_cap is not None and published.rows > row_cap[0]:
                raise row_cap[1](published.rows)

    def _rewrite(self, dataset_id: str, checking: str, fix: LineFix | None) -> None:
        """Write the checked body again with `fix` applied, in place of `checking`."""
        assert fix is not None
        fixed = self.name_of(dataset_id, "fixing")
        writer = self.blobs.writer(fixed)
        try:
            with self.blobs.open(checking) as fh:
                while raw := fh.readline(self.limits.max_line_bytes + 1):
                    if not raw.strip():
                        continue
                    kept, _ = fix(raw)
                    if kept is not None:
                        writer.write(kept if kept.endswith(b"\n") else kept + b"\n")
            writer.commit()
        finally:
            writer.abort()
        self.blobs.move(fixed, checking)

    # --- reading and housekeeping ----------------------------------------------------

    def open(self, dataset_id: str) -> IO[bytes]:
        return self.blobs.open(self.name_of(dataset_id))

    def read_chunks(self, dataset_id: str) -> Iterator[bytes]:
        with self.open(dataset_id) as fh:
            while chunk := fh.read(CHUNK):
                yield chunk

    def link(self, dataset_id: str, ttl: float) -> str | None:
        """A link that serves the published body without the server, if the blob store
        signs its own (S3); None for a directory."""
        return self.blobs.link(self.name_of(dataset_id), ttl, f"{dataset_id}.jsonl")

    def remove(self, dataset_id: str) -> None:
        for name, _ in list(self.blobs.names(self.name_of(dataset_id, ""))):
            self.blobs.delete(name)

    def sweep(
        self, known: set[str], max_age: float = STALE_UPLOAD_SECONDS, now: float | None = None
    ) -> int:
        """Remove partial writes untouched for `max_age` (a killed upload never publishes
        its part) and blobs of datasets that no longer exist; give a `.checking` blob whose
        finalize died back as the part. Returns how many went."""
        cutoff = (now if now is not None else time.time()) - max_age
        removed = self.blobs.abandoned(cutoff)
        for name, mtime in list(self.blobs.names()):
            dataset_id, _, suffix = name.partition(".")
            if suffix == "checking" and dataset_id in known:
                self._recover(dataset_id)
            elif mtime < cutoff and dataset_id not in known:
                self.blobs.delete(name)
                removed += 1
        return removed

    def _recover(self, dataset_id: str) -> None:
        with self.locked(dataset_id, wait=False) as held:
            if not held:  # a finalize is running: the blob is its own
                return
            checking, part = self.name_of(dataset_id, "checking"), self.name_of(dataset_id, "part")
            if not self.blobs.exists(checking):  # the finalize that held it finished
                return
            if self.blobs.exists(part):
                self.blobs.delete(checking)  # a newer upload replaced it
            else:
                try:
                    self.blobs.move(checking, part)
                except FileNotFoundError:
                    return


class _LineMeter:
    """Tracks the current line's length across chunks; refuses one past `cap` as soon as
    the bytes that make it too long go by."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.run = 0
        self.line = 1

    def feed(self, chunk: bytes) -> None:
        last = chunk.rfind(b"\n")
        if self.run + len(chunk) <= self.cap:  # no line in here can be too long
            if last >= 0:
                self.line += chunk.count(b"\n")
                self.run = len(chunk) - last - 1
            else:
                self.run += len(chunk)
            return
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            piece = (end if end >= 0 else len(chunk)) - start
            if self.run + piece > self.cap:
                raise refuse(
                    "max_line_bytes", f"line {self.line} of the dataset body is too long", self.cap
                )
            if end < 0:
                self.run += piece
                return
            self.run, start = 0, end + 1
            self.line += 1
