"""The grader's side of code-exec: start the sandboxes, talk to them, decide.

See `codeexec` for why the verdict is decided here (cases, plain asserts) or in the tests'
sandbox (other asserts), never in the candidate's process. Everything here waits at most
until the row's deadline; a candidate that breaks an exchange fails, it is never an error.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import select
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..contract import JudgeFailed
from . import sandbox as sb
from .cases import (
    Case,
    Check,
    Handle,
    check_holds,
    exception_text,
    judge_case,
    plain_asserts,
)
from .wire import MAX_LINE, MAX_REPLY, WireError, decode, over_limit

MAX_SOURCE = 4 << 20  # a program this big is no model's answer, and would not fit the sandbox


class _WallClock(Exception):
    """The row's deadline passed."""


class _Pipe:
    """Line-delimited JSON to and from a sandbox, never waiting past the row's deadline.

    At most `limit` bytes of one message are read, and then refused, before any of it is
    decoded: what the candidate's process writes costs the grader that much memory and no
    more (decoding multiplies it: see `wire.MAX_REPLY`)."""

    def __init__(self, read_fd: int, write_fd: int | None = None, limit: int = MAX_LINE) -> None:
        self.read_fd, self.write_fd, self.buf = read_fd, write_fd, bytearray()
        self.limit = limit
        for fd in (read_fd, write_fd):
            if fd is not None:
                os.set_blocking(fd, False)

    def send(self, message: list[Any], deadline: float) -> bool:
        """False when the other end is gone."""
        assert self.write_fd is not None
        view = memoryview(json.dumps(message, separators=(",", ":")).encode() + b"\n")
        while view:
            _, ready, _ = select.select([], [self.write_fd], [], _left(deadline))
            if ready:
                try:
                    view = view[os.write(self.write_fd, view) :]
                except BlockingIOError:
                    continue
                except OSError:
                    return False
        return True

    def recv(self, deadline: float) -> list[Any] | None:
        """The next message; None at end of stream; WireError for anything malformed."""
        end = self.buf.find(b"\n")
        while end < 0:
            if len(self.buf) > self.limit:
                raise WireError(over_limit(self.limit))
            ready, _, _ = select.select([self.read_fd], [], [], _left(deadline))
            if not ready:
                continue
            try:
                chunk = os.read(self.read_fd, min(1 << 16, self.limit + 1 - len(self.buf)))
            except BlockingIOError:
                continue
            if not chunk:
                return None
            if b"\n" in chunk:
                end = len(self.buf) + chunk.index(b"\n")
            self.buf += chunk
        if end > self.limit:
            raise WireError(over_limit(self.limit))
        line = self.buf[:end]
        del self.buf[: end + 1]
        try:
            message = json.loads(line)
        except (ValueError, RecursionError, MemoryError):
            raise WireError("a message that is not JSON") from None
        if not isinstance(message, list) or not message or not isinstance(message[0], str):
            raise WireError("a message that is not a tagged list")
        return message

    def close(self) -> None:
        for fd in (self.read_fd, self.write_fd):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)


def _left(deadline: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise _WallClock
    return left


@dataclass
class Settings:
    timeout: float = 10.0
    memory_mb: int = 512
    file_mb: int = 16
    max_procs: int = 32
    tolerance: float | None = None
    sandbox: str = "bubblewrap"

    @property
    def limits(self) -> sb.Limits:
        return sb.Limits(max(1, math.ceil(self.timeout)), self.memory_mb, self.file_mb,
                         self.max_procs)  # fmt: skip


@dataclass
class Outcome:
    passed: bool
    reason: str
    extra: dict[str, Any] = field(default_factory=dict)


class _Run:
    """The jails of one row, started and always ended together."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.started = time.monotonic()
        self.deadline = self.started + settings.timeout
        self.jails: list[sb.Jail] = []
        self.bwrap: str | None = None
        self.seccomp = False
        if settings.sandbox == "bubblewrap":
            try:
                self.bwrap, self.seccomp = sb.check_bubblewrap()
            except sb.SandboxUnavailable as exc:
                raise JudgeFailed("error", str(exc)) from None

    def start(self, role: str, fds: list[int], stdin: str) -> sb.Jail:
        try:
            jail = sb.Jail(role, fds, stdin=stdin.encode("utf-8", "replace"),
                           limits=self.settings.limits, bwrap=self.bwrap,
                           seccomp=self.seccomp)  # fmt: skip
        except sb.SandboxUnavailable as exc:
            raise JudgeFailed("error", f"code-exec: {exc}") from None
        self.jails.append(jail)
        return jail

    def note(self, jail: sb.Jail) -> str:
        """Why `jail` ended, once it has (waiting a moment for it), or ''."""
        code = jail.wait(min(1.0, max(0.0, self.deadline - time.monotonic())))
        return jail.exit_note(code) or ""

    def meta(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        fallbacks = {"pids": "RLIMIT_NPROC only, which binds no root process",
                     "memory": "RLIMIT_AS only, per process"}  # fmt: skip
        for controller, fallback in fallbacks.items():
            notes = sorted({j.groups.notes[controller] for j in self.jails
                            if controller in j.groups.notes})  # fmt: skip
            out[f"{controller}_limit"] = f"{fallback} ({'; '.join(notes)})" if notes else "cgroup"
        if self.bwrap is not None:
            out["seccomp"] = self.seccomp
        return out

    def close(self) -> None:
        for jail in self.jails:
            jail.close()
            jail.release()


@contextlib.contextmanager
def _pipes(n: int) -> Iterator[list[tuple[int, int]]]:
    made: list[tuple[int, int]] = []
    try:
        for _ in range(n):
            made.append(os.pipe())
        yield made
    finally:
        for r, w in made:
            for fd in (r, w):
                with contextlib.suppress(OSError):
                    os.close(fd)


def _wall(settings: Settings) -> Outcome:
    limit = settings.timeout
    return Outcome(False, f"stopped at the {limit:g}s wall limit (hung, busy or forking)")


_SANDBOXED = {"asserts": "run in the tests' sandbox"}


def run_asserts(code: str, tests: str, settings: Settings) -> Outcome:
    """The candidate in one sandbox, the asserts in another; the verdict from the second."""
    run = _Run(settings)
    verdict: _Pipe | None = None
    try:
        with _pipes(3) as ((req_r, req_w), (rep_r, rep_w), (ver_r, ver_w)):
            judge = run.start("tests", [req_w, rep_r, ver_w], tests)
            verdict = _Pipe(os.dup(ver_r))
            # The candidate starts once the tests' process has: whatever it then does to
            # the machine, the tests' sandbox not starting is never its doing.
            if _recv(verdict, run.deadline) is None:
                raise JudgeFailed("error", f"code-exec: the tests' sandbox did not start: "
                                  f"{judge.stderr_tail(300)}")  # fmt: skip
            candidate = run.start("candidate", [req_r, rep_w], code)
        # Only the sandboxes hold the pipe ends now: each sees the other's death as EOF.
        said = _recv(verdict, run.deadline)
        if said is None:
            said = ["fail", f"the tests' process ended without a verdict "
                    f"({run.note(judge) or 'no exit status'})"]  # fmt: skip
        kind, reason = said[0], str(said[1]) if len(said) > 1 else ""
        if kind == "pass":
            took = time.monotonic() - run.started
            return Outcome(True, f"tests passed in {took:.2f}s", {**run.meta(), **_SANDBOXED})
        if kind == "error":
            raise JudgeFailed("error", f"code-exec: {reason}")
        if "candidate's process" in reason:
            note = run.note(candidate)
            reason += f" ({note})" if note else ""
        return Outcome(False, f"tests failed: {reason}", {**run.meta(), **_SANDBOXED})
    except _WallClock:
        return _wall(settings)
    finally:
        if verdict is not None:
            verdict.close()
        run.close()


def _recv(verdict: _Pipe, deadline: float) -> list[Any] | None:
    try:
        return verdict.recv(deadline)
    except WireError as exc:  # the tests' process runs no candidate code: a bug of ours
        why = f"code-exec: the tests' verdict is unreadable ({exc})"
        raise JudgeFailed("error", why) from None


class _Session:
    """The candidate's sandbox, asked one call at a time by the grader itself."""

    def __init__(self, run: _Run, code: str) -> None:
        self.run = run
        with _pipes(2) as ((req_r, req_w), (rep_r, rep_w)):
            self.jail = run.start("calls", [req_r, rep_w], code)
            self.pipe = _Pipe(os.dup(rep_r), os.dup(req_w), MAX_REPLY)
        if self.pipe.recv(run.deadline) is None:
            raise JudgeFailed("error", f"code-exec: the candidate's sandbox did not start: "
                              f"{self.jail.stderr_tail(300)}")  # fmt: skip
        hello = self.pipe.recv(run.deadline)
        self.broken: str | None = None
        if hello is None or hello[0] != "ready":
            self.broken = _import_failure(hello) or self.ended(
                "the candidate's process ended while its code was imported"
            )

    def ask(self, message: list[Any]) -> list[Any] | None:
        """The reply, or None when the candidate's process is gone."""
        if not self.pipe.send(message, self.run.deadline):
            return None
        return self.pipe.recv(self.run.deadline)

    def ended(self, what: str) -> str:
        note = self.run.note(self.jail)
        return f"{what} ({note})" if note else what

    def close(self) -> None:
        self.pipe.close()


def _session(code: str, settings: Settings, judge: Callable[[_Session], Outcome]) -> Outcome:
    run = _Run(settings)
    session: _Session | None = None
    try:
        session = _Session(run, code)
        return judge(session)
    except _WallClock:
        return _wall(settings)
    except WireError as exc:
        return Outcome(False, f"the candidate broke the wire ({exc})", run.meta())
    finally:
        if session is not None:
            session.close()
        run.close()


def run_cases(code: str, cases: list[Case], settings: Settings) -> Outcome:
    """Each call evaluated in the candidate's sandbox; each answer compared here."""

    def judge(session: _Session) -> Outcome:
        if session.broken:
            return Outcome(False, session.broken, session.run.meta())
        passed, first = 0, ""
        for i, case in enumerate(cases, 1):
            reply = session.ask(["eval", case.call])
            wrong = judge_case(case, reply, settings.tolerance)
            if wrong is None:
                passed += 1
                continue
            first = first or f"case {i}: {session.ended(wrong) if reply is None else wrong}"
            if reply is None:
                break
        n = len(cases)
        extra = {**session.run.meta(), "cases": n, "cases_passed": passed}
        if passed == n:
            return Outcome(True, f"all {n} case{'s' if n != 1 else ''} passed", extra)
        return Outcome(False, f"{passed} of {n} cases passed; {first}", extra)

    return _session(code, settings, judge)


def run_plain_asserts(code: str, checks: list[Check], settings: Settings) -> Outcome:
    """`assert f(2, 3) == 5` and its kin, judged here as calls (see cases.py)."""

    def judge(session: _Session) -> Outcome:
        meta = {**session.run.meta(), "asserts": "judged as calls"}
        if session.broken:
            return Outcome(False, f"tests failed: {session.broken}", meta)
        try:
            for check in checks:
                why = _failed_check(session, check)
                if why is not None:
                    return Outcome(False, f"tests failed: line {check.line} of the tests: {why}",
                                   meta)  # fmt: skip
        except _Broken as exc:
            return Outcome(False, f"tests failed: {exc}", meta)
        took = time.monotonic() - session.run.started
        return Outcome(True, f"tests passed in {took:.2f}s", meta)

    return _session(code, settings, judge)


class _Broken(Exception):
    """The exchange with the candidate's process broke (it ended, or answered garbage)."""


def _failed_check(session: _Session, check: Check) -> str | None:
    """What failed at the check's line, or None."""
    got = _answer(session, ["eval", check.call])
    if isinstance(got, str):
        return got
    value = got[0]
    if check.op in ("truth", "not") and isinstance(value, Handle):
        # bool() of a candidate's object is its own __bool__, as in the tests' sandbox
        got = _answer(session, ["op", ["ref", value.ref], "bool", ["list", []]])
        if isinstance(got, str):
            return got
        value = got[0]
        if type(value) is not bool:
            return "TypeError: __bool__ should return bool"
    return None if check_holds(check, value) else "AssertionError"


def _answer(session: _Session, request: list[Any]) -> tuple[Any] | str:
    """(the value the candidate answered,) or what it raised; _Broken when it broke."""
    reply = session.ask(request)
    if reply is None:
        raise _Broken(session.ended("the candidate's process ended or stopped answering"))
    if (
        reply[0] == "raise"
        and len(reply) == 2
        and isinstance(reply[1], list)
        and len(reply[1]) == 5
    ):
        return f"the candidate raised {exception_text(reply[1])}"
    if reply[0] != "ok" or len(reply) != 2:
        raise _Broken("the candidate answered out of turn")
    try:
        return (decode(reply[1], Handle),)
    except WireError as exc:
        raise _Broken(f"the candidate's answer is not a value ({exc})") from None


def _import_failure(hello: list[Any] | None) -> str | None:
    if hello is not None and hello[0] == "broken" and len(hello) == 2:
        item = hello[1]
        if isinstance(item, list) and len(item) == 5:
            return f"the candidate's code raised {exception_text(item)} on import"
    return None


def run(code: str, tests: str | list[Case], settings: Settings) -> Outcome:
    """The outcome of `code` against the tests, in the cheapest way that decides it."""
    if len(code) > MAX_SOURCE:
        return Outcome(False, f"the program is over {MAX_SOURCE >> 20} MB; not run")
    if isinstance(tests, list):
        outcome = run_cases(code, tests, settings)
    elif (checks := plain_asserts(tests)) is not None:
        outcome = run_plain_asserts(code, checks, settings)
    else:
        outcome = run_asserts(code, tests, settings)
    # The reason may carry the candidate's own text: never a lone surrogate into a row.
    outcome.reason = outcome.reason.encode("utf-8", "replace").decode("utf-8")
    return outcome
