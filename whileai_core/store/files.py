"""The row files of datasets: uploads in flight, parts waiting for finalize, published sets.

    datasets/<id>.<rand>.upload  an upload in flight (renamed when complete)
    datasets/<id>.part           the last complete upload, waiting for finalize
    datasets/<id>.checking       the part while finalize validates it
    datasets/<id>.lock           held (flock) while a finalize runs
    datasets/<id>.jsonl          a finalized dataset

Bodies are written and read a chunk at a time, and the limits are checked as the bytes
go by: an upload past `max_upload_bytes`, or with a line past `max_line_bytes`, stops
there and leaves nothing behind, and finalize reads at most one capped line at a time.
A finalize killed with SIGKILL leaves its `.checking` file; whoever next holds the
dataset's lock (a finalize, or the sweep) knows no finalize is running and takes it back.
"""

from __future__ import annotations

import fcntl
import os
import secrets
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from .base import STALE_UPLOAD_SECONDS, BadRequest, NotFound, StoreError, TooLarge
from .limits import Limits, refuse, row_depth_problem

CHUNK = 1024 * 1024
# Validating a line parses it: at most this many finalizes parse at once, so many
# concurrent finalizes cost what two do (parsing holds the GIL: more would not be faster).
CHECKERS = 2


class DatasetFiles:
    def __init__(self, directory: Path, limits: Limits) -> None:
        self.dir = directory
        self.limits = limits
        self.dir.mkdir(mode=0o700, exist_ok=True)
        self._checkers = threading.BoundedSemaphore(CHECKERS)

    def path_of(self, dataset_id: str, suffix: str = "jsonl") -> Path:
        if not dataset_id.replace("_", "").isalnum():
            raise NotFound(f"dataset {dataset_id} not found")
        return self.dir / f"{dataset_id}.{suffix}"

    # --- upload ----------------------------------------------------------------------

    def write(
        self,
        dataset_id: str,
        chunks: Iterable[bytes],
        declared: int | None = None,
        budget: tuple[int, Callable[[int], StoreError]] | None = None,
    ) -> int:
        """Stream one upload attempt to a fresh file, which becomes the dataset's part only
        once complete, so a cut-off or concurrent retry never leaves a torn file to finalize.
        `budget` is (bytes an account quota still allows, the refusal for a size past it)."""
        cap = self.limits.max_upload_bytes
        if declared is not None and declared > cap:
            raise refuse("max_upload_bytes", "the dataset body is too large", cap)
        allowed, over_budget = budget if budget is not None else (None, None)
        if over_budget is not None and declared is not None and declared > (allowed or 0):
            raise over_budget(declared)
        tmp = self.path_of(dataset_id, f"{secrets.token_hex(4)}.upload")
        lines = _LineMeter(self.limits.max_line_bytes)
        size = 0
        try:
            with tmp.open("wb") as fh:
                for chunk in chunks:
                    size += len(chunk)
                    if size > cap:
                        raise refuse("max_upload_bytes", "the dataset body is too large", cap)
                    if allowed is not None and over_budget is not None and size > allowed:
                        raise over_budget(size)
                    lines.feed(chunk)
                    fh.write(chunk)
            os.replace(tmp, self.path_of(dataset_id, "part"))
        finally:
            tmp.unlink(missing_ok=True)
        return size

    # --- finalize --------------------------------------------------------------------

    @contextmanager
    def locked(self, dataset_id: str, wait: bool = True) -> Iterator[bool]:
        """The dataset's finalize lock (flock, across threads and processes); without `wait`
        yields False at once when someone else holds it."""
        with self.path_of(dataset_id, "lock").open("a") as fh:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                yield False
                return
            try:
                yield True
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def _take_part(self, dataset_id: str) -> Path:
        """Move the part aside for checking, so an upload retry that lands meanwhile is
        neither published unchecked nor lost. Called under the lock: a `.checking` file
        found here was left by a finalize that died, and is checked again unless a newer
        part replaced it."""
        part, checking = self.path_of(dataset_id, "part"), self.path_of(dataset_id, "checking")
        try:
            os.replace(part, checking)
        except FileNotFoundError:
            if not checking.exists():
                raise BadRequest(f"dataset {dataset_id}: nothing uploaded yet") from None
        os.utime(checking)
        return checking

    def check_and_publish(
        self,
        dataset_id: str,
        problem_of: Callable[[bytes], str | None],
        row_cap: tuple[int, Callable[[int], StoreError]] | None = None,
    ) -> tuple[int, int]:
        """Validate every line of the part, then publish it as the dataset's file; returns
        (rows, bytes). A bad line leaves the part in place (a newer upload wins). `row_cap`
        is (most rows allowed, the refusal once a row past it is read)."""
        checking = self._take_part(dataset_id)
        part = self.path_of(dataset_id, "part")
        try:
            with self._checkers, checking.open("rb") as fh:
                rows = self._check_lines(dataset_id, fh, problem_of, row_cap)
        except StoreError:
            if not part.exists():
                os.replace(checking, part)
            checking.unlink(missing_ok=True)
            raise
        size = checking.stat().st_size
        os.replace(checking, self.path_of(dataset_id))
        return rows, size

    def _check_lines(
        self,
        dataset_id: str,
        fh: IO[bytes],
        problem_of: Callable[[bytes], str | None],
        row_cap: tuple[int, Callable[[int], StoreError]] | None = None,
    ) -> int:
        cap = self.limits.max_line_bytes
        rows = 0
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
            except RecursionError:
                problem = "nested too deeply to check"
            if problem is not None:
                raise BadRequest(f"dataset {dataset_id}: line {lineno}: {problem}")
            rows += 1
            if row_cap is not None and rows > row_cap[0]:
                raise row_cap[1](rows)
        return rows

    # --- reading and housekeeping ----------------------------------------------------

    def read_chunks(self, dataset_id: str) -> Iterator[bytes]:
        with self.path_of(dataset_id).open("rb") as fh:
            while chunk := fh.read(CHUNK):
                yield chunk

    def remove(self, dataset_id: str) -> None:
        for path in self.dir.glob(f"{dataset_id}.*"):
            path.unlink(missing_ok=True)

    def sweep(
        self, known: set[str], max_age: float = STALE_UPLOAD_SECONDS, now: float | None = None
    ) -> int:
        """Remove upload files untouched for `max_age` (a killed upload never renames its
        file) and files of datasets that no longer exist; give a `.checking` file whose
        finalize died back as the part. Returns how many files went."""
        cutoff = (now if now is not None else time.time()) - max_age
        removed = 0
        for path in self.dir.iterdir():
            dataset_id, _, suffix = path.name.partition(".")
            if suffix == "checking" and dataset_id in known:
                self._recover(dataset_id)
                continue
            try:
                old = path.stat().st_mtime < cutoff
            except FileNotFoundError:
                continue
            if old and (suffix.endswith("upload") or dataset_id not in known):
                path.unlink(missing_ok=True)
                removed += 1
        return removed

    def _recover(self, dataset_id: str) -> None:
        with self.locked(dataset_id, wait=False) as held:
            if not held:  # a finalize is running: the file is its own
                return
            checking, part = self.path_of(dataset_id, "checking"), self.path_of(dataset_id, "part")
            if not checking.exists():  # the finalize that held it finished
                return
            if part.exists():
                checking.unlink(missing_ok=True)  # a newer upload replaced it
            else:
                os.replace(checking, part)


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
