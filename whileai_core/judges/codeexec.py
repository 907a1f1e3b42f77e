"""Run a candidate program against hidden tests, with the verdict out of the candidate's reach.

The candidate (the reply's last ```python block, else the whole reply) is untrusted code a
model wrote, run on millions of rollouts: assume it does its worst. An audit hook inside
its interpreter could not hold it (a subinterpreter has no hook; the pass token was a
local one frame up; a relative `dir_fd` open resolved elsewhere than it was checked). So
containment is the kernel's (see `sandbox`: namespaces, no capabilities, a tmpfs, a pids
cgroup, rlimits, seccomp), and no answer the candidate's process gives can be a pass:

- The candidate's process only exports values. It imports the candidate's module and
  answers "evaluate this call" with the result in a type-tagged wire format. It never
  holds the tests, the expected values or the verdict, so walking its frames, patching
  builtins, printing a token or `os._exit(0)` finds nothing and forges nothing.
- Cases (`privileged.tests` as `[{"call": "add(1, 2)", "expected": 3}, ...]`): the grader
  sends each call and compares the answer in its own process, by type (1, 1.0 and True
  differ; a JSON array matches a list or a tuple; floats within `tolerance` when given).
- Assert strings: a second sandbox runs the tests and no candidate code. Each name the
  candidate defined is a handle there; calling it asks the candidate's process, and the
  answer is rebuilt as a genuine builtin value, so `==` in an assert is never the
  candidate's `__eq__` (an object that is not plain data compares by identity). That
  process alone holds the verdict pipe; it is in other namespaces than the candidate, which
  cannot see, signal or trace it. A candidate that breaks the exchange (dies, hangs,
  answers garbage) fails, even where a test's bare `except` swallowed the error.
- Plain asserts (`assert f(2, 3) == 5`: a candidate's name called on literals, against a
  literal) skip the second sandbox: the grader sends the call and applies the operator
  itself, as the tests' sandbox would, to the same rebuilt builtin values.

What the candidate still decides is the values it returns, which is what is being graded.
Tests should import what they use: a name they take from the candidate's module is the
candidate's to answer for (a builtin's name never is; `import math` by the candidate
gives the tests their own `math`).

A failing test, a crash, an exhausted limit, the wall clock: reward 0 with the reason,
which never quotes the tests or the expected values. The sandbox itself not starting
(bubblewrap missing or unable to make namespaces): reward null, status error, never a
silent fallback; `sandbox="none"` (`--sandbox none`) runs trusted code unisolated and
every row's `judge_meta` says so.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import select
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigError
from ..row import reply_text
from . import sandbox as sb
from .cgroup import pids_base
from .codeexec_tests import (
    Case,
    Check,
    Handle,
    check_holds,
    exception_text,
    hidden_tests,
    judge_case,
    plain_asserts,
)
from .codeexec_wire import MAX_LINE, WireError, decode
from .contract import Judge, JudgeFailed

MAX_SOURCE = 4 << 20  # a program this big is no model's answer, and would not fit the sandbox
_FENCE = re.compile(r"```(?:python|py)?[^\n]*\n(.*?)```", re.DOTALL)


def extract_code(text: str) -> str:
    """The reply's last fenced python block, else the reply itself."""
    blocks = _FENCE.findall(text)
    return blocks[-1] if blocks else text


# -- talking to the sandboxes -------------------------------------------------------------


class _WallClock(Exception):
    """The row's deadline passed."""


class _Pipe:
    """Line-delimited JSON to and from a sandbox, never waiting past the row's deadline."""

    def __init__(self, read_fd: int, write_fd: int | None = None) -> None:
        self.read_fd, self.write_fd, self.buf = read_fd, write_fd, bytearray()
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
            if len(self.buf) > MAX_LINE:
                raise WireError("a message longer than the limit")
            ready, _, _ = select.select([self.read_fd], [], [], _left(deadline))
            if not ready:
                continue
            try:
                chunk = os.read(self.read_fd, 1 << 16)
            except BlockingIOError:
                continue
            if not chunk:
                return None
            if b"\n" in chunk:
                end = len(self.buf) + chunk.index(b"\n")
            self.buf += chunk
        line, self.buf = bytes(self.buf[:end]), self.buf[end + 1 :]
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):
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
        group = all(j.group is not None for j in self.jails)
        notes = [j.group_note for j in self.jails if j.group_note]
        pids = "cgroup" if group and not notes else "; ".join(notes) or pids_base()[1]
        out: dict[str, Any] = {"pids_limit": pids}
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
            self.jail = run.start("candidate", [req_r, rep_w], code)
            self.pipe = _Pipe(os.dup(rep_r), os.dup(req_w))
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
    """`assert f(2, 3) == 5` and its kin, judged here as calls (see codeexec_tests)."""

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


def run_sandboxed(
    code: str,
    tests: str | list[Case],
    *,
    timeout: float = 10.0,
    memory_mb: int = 512,
    file_mb: int = 16,
    max_procs: int = 32,
    tolerance: float | None = None,
    sandbox: str = "bubblewrap",
) -> tuple[bool, str]:
    """(passed, reason) for `code` against assert source or cases."""
    settings = Settings(timeout, memory_mb, file_mb, max_procs, tolerance, _sandbox(sandbox))
    outcome = _run(code, tests, settings)
    return outcome.passed, outcome.reason


def _run(code: str, tests: str | list[Case], settings: Settings) -> Outcome:
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


def _sandbox(value: str | None) -> str:
    value = (value or "bubblewrap").strip().lower()
    if value not in sb.SANDBOXES:
        raise ConfigError(f"code-exec: sandbox must be bubblewrap or none, got {value!r}")
    return value


def code_exec(
    *,
    field: str | None = None,
    timeout: float = 10.0,
    memory_mb: int = 512,
    file_mb: int = 16,
    max_procs: int = 32,
    tolerance: float | None = None,
    sandbox: str | None = None,
) -> Judge:
    """A judge that runs the reply's code against the row's hidden tests."""
    settings = Settings(timeout, memory_mb, file_mb, max_procs, tolerance, _sandbox(sandbox))

    def judge(row: dict[str, Any]) -> dict[str, Any]:
        tests = hidden_tests(row, field)
        outcome = _run(extract_code(reply_text(row)), tests, settings)
        return {"reward": 1.0 if outcome.passed else 0.0, "reason": outcome.reason,
                **outcome.extra}  # fmt: skip

    isolation = (
        "bubblewrap"
        if settings.sandbox == "bubblewrap"
        else "none (trusted code: no isolation, only rlimits and the wall clock)"
    )
    meta = {"version": "code-exec@2", "sandbox": isolation, "timeout": timeout,
            "memory_mb": memory_mb, "file_mb": file_mb, "max_procs": max_procs}  # fmt: skip
    if tolerance is not None:
        meta["tolerance"] = tolerance
    return Judge(
        name="code-exec",
        fn=judge,
        meta=meta,
        own_timeout=True,  # a candidate past its wall limit scores 0; the judge did not hang
    )
