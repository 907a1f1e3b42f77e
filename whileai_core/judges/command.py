"""An external judge in any language, kept alive as a JSONL co-process.

`cmd:python my_judge.py` starts the command once; each row goes to its stdin as one JSON
line and one verdict line comes back on its stdout, so a million rows cost one process,
not a million. Rows are sent one at a time (the protocol has no ids, so order is the only
way to pair a reply with its row). A reply that is not JSON is an invalid result; no reply
within the timeout is a timeout and the process is restarted; a crash is an error for the
row in flight and the command restarts for the next row, with the restarts counted.
"""

from __future__ import annotations

import contextlib
import os
import select
import shlex
import subprocess
import threading
import time
from typing import Any

import orjson

from ..errors import ConfigError
from ..jsonl import dumps
from .contract import InvalidVerdict, Judge, JudgeTimeout

# How long a built-in judge's worker may take to start (import its libraries).
READY_TIMEOUT = 120.0


class CommandJudge:
    """`argv` runs instead of the split `command` when given (a built-in judge's own
    worker). `ready` makes each start wait (up to READY_TIMEOUT) for the worker's first
    line, so its start-up (imports) is not charged to the first row's timeout."""

    def __init__(
        self,
        command: str,
        *,
        timeout: float = 60.0,
        argv: list[str] | None = None,
        ready: bool = False,
    ) -> None:
        self.command = command
        self.argv = argv or shlex.split(command)
        if not self.argv:
            raise ConfigError("cmd: judge needs a command, e.g. cmd:python judge.py")
        self.timeout = timeout
        self.ready = ready
        self.restarts = 0
        self._proc: subprocess.Popen[bytes] | None = None
        self._buf = b""
        self._lock = threading.Lock()
        self._start()

    def _start(self) -> None:
        try:
            self._proc = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                bufsize=0,
            )
        except OSError as exc:
            raise ConfigError(f"cmd judge {self.command!r}: cannot start ({exc})") from None
        assert self._proc.stdin is not None
        # Non-blocking, so a judge that stops reading cannot hang us past the deadline.
        os.set_blocking(self._proc.stdin.fileno(), False)
        self._buf = b""
        if self.ready:
            try:
                said = self._readline(time.monotonic() + READY_TIMEOUT)
            except JudgeTimeout:
                said = None
            if said is None:
                self._kill()
                raise ConfigError(f"judge {self.command!r}: its worker did not start")

    def _restart(self) -> None:
        self._kill()
        self.restarts += 1
        self._start()

    def _kill(self) -> None:
        proc = self._proc
        if proc is None:
            return
        with contextlib.suppress(OSError):
            proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=5)
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()

    def _write(self, data: bytes, deadline: float) -> None:
        assert self._proc is not None and self._proc.stdin is not None
        fd = self._proc.stdin.fileno()
        view = memoryview(data)
        while view:
            left = deadline - time.monotonic()
            if left <= 0:
                raise JudgeTimeout(f"cmd judge did not read its row within {self.timeout:g}s")
            _, ready, _ = select.select([], [fd], [], left)
            if not ready:
                continue
            try:
                view = view[os.write(fd, view) :]
            except BlockingIOError:
                continue

    def _readline(self, deadline: float) -> bytes | None:
        """One line from the judge, or None at EOF; JudgeTimeout past the deadline."""
        assert self._proc is not None and self._proc.stdout is not None
        fd = self._proc.stdout.fileno()
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise JudgeTimeout(f"cmd judge gave no verdict within {self.timeout:g}s")
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                return None
            self._buf += chunk
        line, _, self._buf = self._buf.partition(b"\n")
        return line

    def __call__(self, row: dict[str, Any]) -> Any:
        with self._lock:
            if self._proc is None or self._proc.poll() is not None:
                self._restart()
            assert self._proc is not None
            deadline = time.monotonic() + self.timeout
            try:
                self._write(dumps(row), deadline)
                line = self._readline(deadline)
            except JudgeTimeout:
                self._restart()
                raise
            except OSError:
                code = self._proc.wait()
                self._restart()
                raise RuntimeError(f"cmd judge exited (code {code}); restarted") from None
            if line is None:
                code = self._proc.wait()
                self._restart()
                raise RuntimeError(f"cmd judge exited (code {code}) mid-row; restarted")
        try:
            return orjson.loads(line)
        except orjson.JSONDecodeError:
            raise InvalidVerdict(f"cmd judge replied with a non-JSON line: {line[:80]!r}") from None

    def close(self) -> None:
        proc = self._proc
        if proc is None:
            return
        if proc.stdin is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()
        try:
            proc.wait(timeout=2)  # a judge should exit at end of input; do not wait long
        except subprocess.TimeoutExpired:
            self._kill()
        if proc.stdout is not None:
            with contextlib.suppress(OSError):
                proc.stdout.close()
        self._proc = None


def command_judge(command: str, *, timeout: float = 60.0) -> Judge:
    runner = CommandJudge(command, timeout=timeout)
    name = f"cmd:{command}"

    def notes() -> list[str]:
        n = runner.restarts
        return [f"cmd judge restarted {n} time{'s' if n != 1 else ''}"] if n else []

    return Judge(
        name=name,
        fn=runner,
        meta={"version": name},
        own_timeout=True,
        close=runner.close,
        notes=notes,
    )
