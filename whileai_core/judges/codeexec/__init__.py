"""Run a candidate program against hidden tests, with the verdict out of the candidate's reach.

The candidate (the reply's last ```python block, else the whole reply) is untrusted code a
model wrote, run on millions of rollouts: assume it does its worst. An audit hook inside
its interpreter could not hold it (a subinterpreter has no hook; the pass token was a
local one frame up; a relative `dir_fd` open resolved elsewhere than it was checked). So
containment is the kernel's (see `sandbox`: namespaces, no capabilities, a tmpfs, pids
and memory cgroups, rlimits, seccomp), and no answer the candidate's process gives can be
a pass:

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
  candidate's `__eq__` (an object that is not plain data compares by identity, takes
  no operator with a value of the tests': `obj - expected`, `'w' in obj` never ask the
  candidate, and, returned, answers no method of a builtin type: `obj.startswith(p)`
  raises; see `docs/sandbox.md`). One answer is at most `wire.MAX_REPLY`, read before
  it is decoded: a flood is a 0, not the grader's memory. That
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

import re
from typing import TYPE_CHECKING, Any

from ...errors import ConfigError
from ...row import reply_text
from ..contract import Judge

if TYPE_CHECKING:
    from .cases import Case

SANDBOXES = ("bubblewrap", "none")
_FENCE = re.compile(r"```(?:python|py)?[^\n]*\n(.*?)```", re.DOTALL)


def extract_code(text: str) -> str:
    """The reply's last fenced python block, else the reply itself."""
    blocks = _FENCE.findall(text)
    return blocks[-1] if blocks else text


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
    from .grader import Settings, run

    settings = Settings(timeout, memory_mb, file_mb, max_procs, tolerance, _sandbox(sandbox))
    outcome = run(code, tests, settings)
    return outcome.passed, outcome.reason


def _sandbox(value: str | None) -> str:
    value = (value or "bubblewrap").strip().lower()
    if value not in SANDBOXES:
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
    # The sandbox machinery loads when a code-exec judge is made, not with the registry.
    from .cases import hidden_tests
    from .grader import Settings, run

    settings = Settings(timeout, memory_mb, file_mb, max_procs, tolerance, _sandbox(sandbox))

    def judge(row: dict[str, Any]) -> dict[str, Any]:
        tests = hidden_tests(row, field)
        outcome = run(extract_code(reply_text(row)), tests, settings)
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
