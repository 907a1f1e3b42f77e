"""Code-exec: the candidate runs against hidden tests, and what it must not do is stopped,
scored 0 with the reason, while grading goes on."""

from __future__ import annotations

import time
from typing import Any

import pytest

from whileai_core.judges import code_exec, grade_rows, parse_judge

TESTS = "assert add(2, 3) == 5\nassert add(-1, 1) == 0\n"
GOOD = "```python\ndef add(a, b):\n    return a + b\n```"


def _row(code: str, tests: str = TESTS) -> dict[str, Any]:
    return {"final_text": code, "privileged": {"reference": tests}}


def _grade(*codes: str, timeout: float = 3.0) -> list[dict[str, Any]]:
    rows = [_row(c) for c in codes]
    return list(grade_rows(rows, code_exec(timeout=timeout), concurrency=2, timeout=30))


def test_correct_code_passes_and_wrong_code_fails_with_the_assertion() -> None:
    good, bad = _grade(GOOD, "def add(a, b):\n    return a - b\n")
    assert good["reward"] == 1.0 and good["judge_status"] == "ok"
    assert bad["reward"] == 0.0 and "AssertionError" in bad["reason"]


@pytest.mark.parametrize(
    ("attack", "reason"),
    [
        ("print(open('/etc/passwd').read())", "refused open('/etc/passwd')"),
        ("try:\n    open('/etc/hostname').read()\nexcept Exception:\n    pass", "refused open"),
        ("import socket\nsocket.create_connection(('127.0.0.1', 80))", "refused import socket"),
        ("import os\nwhile True:\n    os.fork()", "refused os.fork"),
        (
            "import subprocess\nsubprocess.run(['sh', '-c', ':(){ :|:& };:'])",
            "refused import _posixsubprocess",
        ),
        ("x = bytearray(10 * 1024 ** 3)", "memory limit"),
        ("open('big', 'w').write('x' * (64 << 20))", "file size limit"),
    ],
    ids=[
        "read-outside",
        "read-swallowed",
        "socket",
        "fork-bomb",
        "shell-fork-bomb",
        "10gb",
        "huge-file",
    ],
)
def test_contained_attack_scores_zero_with_the_reason(attack: str, reason: str) -> None:
    code = attack + "\ndef add(a, b):\n    return a + b\n"
    attacked, after = _grade(code, GOOD)
    assert attacked["reward"] == 0.0 and attacked["judge_status"] == "ok"
    assert reason in attacked["reason"]
    assert after["reward"] == 1.0  # grading goes on


def test_a_hang_is_stopped_at_the_wall_limit() -> None:
    start = time.monotonic()
    (hung,) = _grade("while True:\n    pass", timeout=1.0)
    assert time.monotonic() - start < 5
    assert hung["reward"] == 0.0 and "wall limit" in hung["reason"]


def test_writing_inside_the_temp_dir_is_allowed() -> None:
    code = "open('scratch.txt', 'w').write('hi')\ndef add(a, b):\n    return a + b\n"
    (row,) = _grade(code)
    assert row["reward"] == 1.0


def test_hidden_tests_may_sit_on_privileged_tests() -> None:
    row = {"final_text": GOOD, "privileged": {"tests": TESTS, "reference": "ignored"}}
    (out,) = list(grade_rows([row], parse_judge("code-exec")))
    assert out["reward"] == 1.0


def test_no_tests_is_an_error_not_a_zero() -> None:
    (out,) = list(grade_rows([{"final_text": GOOD}], code_exec()))
    assert out["judge_status"] == "error" and out["reward"] is None


def test_the_candidate_cannot_read_the_hidden_tests_file() -> None:
    code = "import os\nassert not os.path.exists('tests.py')\ndef add(a, b):\n    return a + b\n"
    (row,) = _grade(code)
    assert row["reward"] == 1.0, row["reason"]


_DEEP = (
    "import os\nfd = os.open(os.path.dirname(os.__file__), os.O_RDONLY)\n"
    "os.makedirs('a/b/c/d/e/f/g/h/i/j')\nos.chdir('a/b/c/d/e/f/g/h/i/j')\n"
)


@pytest.mark.parametrize(
    ("attack", "reason"),
    [
        ("import sys\nsys.exit(0)", "exit status 0 is not a pass"),
        ("import os\nos._exit(0)", "exit status 0 is not a pass"),
        ("import builtins\nbuiltins.exec = lambda *a, **k: None", "tests failed"),
        (
            _DEEP + "d = os.open('../../../../../../../../../../etc/hostname', 0, dir_fd=fd)\n"
            "raise SystemExit(os.read(d, 99))",
            "relative to a dir_fd",
        ),
        (
            _DEEP + "os.unlink('../../../../../../../../../../etc/x', dir_fd=fd)",
            "refused os.remove",
        ),
        (
            "import os\nos.makedirs('a/b/c')\nos.chdir('a/b/c')\n"
            "os.symlink('../../../etc/hostname', '../../../link')",
            "refused os.symlink",
        ),
        ("import resource\nresource.setrlimit(resource.RLIMIT_AS, (-1, -1))", "setrlimit"),
    ],
    ids=["sys-exit", "os-exit", "empty-exec", "dir-fd-read", "dir-fd-unlink", "symlink", "rlimit"],
)
def test_a_candidate_cannot_pass_without_running_the_tests_or_escape_by_dir_fd(
    attack: str, reason: str
) -> None:
    # The candidate defines a wrong `add` first: only skipping the tests could pass it.
    code = "def add(a, b):\n    return 0\n" + attack + "\n"
    (row,) = _grade(code)
    assert row["reward"] == 0.0, row["reason"]
    assert reason in row["reason"], row["reason"]


def test_files_and_folders_inside_the_temp_dir_work_through_every_call() -> None:
    code = (
        "import os\nos.makedirs('x/y')\nopen('x/y/f', 'w').write('hi')\n"
        "os.rename('x/y/f', 'x/g')\nos.symlink('g', 'x/l')\nassert open('x/l').read() == 'hi'\n"
        "with open('x/g', 'r+') as f:\n    f.truncate(1)\nos.chmod('x/g', 0o600)\n"
        "fd = os.open('x', os.O_RDONLY)\nos.unlink('l', dir_fd=fd)\nos.unlink('g', dir_fd=fd)\n"
        "os.rmdir('y', dir_fd=fd)\n" + GOOD.strip("`").removeprefix("python\n")
    )
    (row,) = _grade(code)
    assert row["reward"] == 1.0, row["reason"]


def test_a_candidate_cannot_signal_another_process_by_a_pidfd() -> None:
    import subprocess

    victim = subprocess.Popen(["sleep", "30"])
    try:
        # pidfd_open and pidfd_send_signal raise no audit event; `_imp` rebuilds the
        # modules even if the bootstrap pruned them. Only the syscall filter stops this.
        code = (
            "import _imp, posix, _signal\n"
            "p = _imp.create_builtin(posix.__spec__)\n_imp.exec_builtin(p)\n"
            "s = _imp.create_builtin(_signal.__spec__)\n_imp.exec_builtin(s)\n"
            f"s.pidfd_send_signal(p.pidfd_open({victim.pid}), 9)\n"
        )
        (row,) = _grade(code + GOOD.strip("`").removeprefix("python\n"))
        time.sleep(0.2)
        assert victim.poll() is None, "the candidate killed another process"
        assert row["reward"] == 0.0
    finally:
        victim.kill()
        victim.wait()
