"""Code-exec: the candidate runs under bubblewrap against hidden tests it cannot reach.

Every attack that got out of the old in-process sandbox is here, and must fail closed: no
escape, no pass, no secret in the graded row. Grading goes on after each.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import orjson
import pytest

from whileai_core.judges import JudgeOptions, code_exec, grade_rows, parse_judge
from whileai_core.judges.codeexec.cgroup import controller_base
from whileai_core.testing import free_port

from ..helpers import run_cli

pytestmark = pytest.mark.skipif(
    shutil.which("bwrap") is None, reason="bubblewrap missing: .ci/run installs it"
)

TESTS = "assert add(2, 3) == 5\nassert add(-1, 1) == 0\n"
ADD = "def add(a, b):\n    return a + b\n"
GOOD = f"```python\n{ADD}```"
WRONG_ADD = "def add(a, b):\n    return a * b\n"  # add(2, 3) == 6: only cheating passes it
SECRET = "whileai-secret-" + uuid.uuid4().hex
# Plain asserts (`assert f(2, 3) == 5`) are judged in the grader as calls; any other
# statement sends the whole file to the tests' sandbox. Attacks are tried on both.
FORMS = {"plain": "", "sandboxed": "\n_ = 0\n"}


def _grade(*codes: str, tests: Any = TESTS, timeout: float = 5.0, **opts: Any) -> list[dict]:
    rows = [{"final_text": c, "privileged": {"tests": tests}} for c in codes]
    judge = code_exec(timeout=timeout, **opts)
    return list(grade_rows(rows, judge, concurrency=2, timeout=60))


def _passes(code: str, **kwargs: Any) -> dict:
    (row,) = _grade(code, **kwargs)
    assert row["reward"] == 1.0 and row["judge_status"] == "ok", row["reason"]
    return row


def _closed(row: dict, *, secret: str = SECRET) -> None:
    """Failed closed: a real 0 (not an error), and nothing of the host in the row."""
    assert row["judge_status"] == "ok", row["reason"]
    assert row["reward"] == 0.0, row["reason"]
    text = orjson.dumps(row).decode()
    assert secret not in text
    assert "root:x:0:0" not in text


@pytest.fixture
def secret_env(monkeypatch: pytest.MonkeyPatch) -> str:
    """A secret in the grader's environment, as an API key would be."""
    monkeypatch.setenv("WHILEAI_TEST_SECRET", SECRET)
    return SECRET


# -- grading ------------------------------------------------------------------------------


def test_correct_code_passes_and_wrong_code_fails_at_the_line() -> None:
    good, bad = _grade(GOOD, "def add(a, b):\n    return a - b\n")
    assert good["reward"] == 1.0 and good["judge_status"] == "ok"
    assert bad["reward"] == 0.0
    assert bad["reason"] == "tests failed: line 1 of the tests: AssertionError"
    meta = good["judge_meta"]
    assert meta["sandbox"] == "bubblewrap" and meta["version"] == "code-exec@2"
    for controller in ("pids", "memory"):
        if controller_base(controller)[0] is not None:
            assert meta[f"{controller}_limit"] == "cgroup"


@pytest.mark.parametrize(
    "code",
    [
        ADD,
        "def add(a, b):\n    return a - b\n",
        "def add(a, b):\n    return a / 0\n",
        "def add(a, b):\n    return float(a + b)\n",  # 5.0 == 5 in an assert, as in Python
        "def add(a, b):\n    return [a + b]\n",
        "class N:\n    def __bool__(self):\n        return False\n"
        "def add(a, b):\n    return N() if a == -1 else a + b\n",
        "raise ValueError('no')\n",
    ],
    ids=["right", "wrong", "raises", "float", "list", "falsy-object", "import-error"],
)
def test_plain_asserts_get_the_verdict_the_tests_sandbox_gives(code: str) -> None:
    tests = "assert add(2, 3) == 5\nassert not add(-1, 1)\nassert add(1, 1) != 3\n"
    (plain,) = _grade(code, tests=tests)
    (boxed,) = _grade(code, tests=tests + FORMS["sandboxed"])
    assert plain["judge_meta"]["asserts"] == "judged as calls"
    assert boxed["judge_meta"]["asserts"] == "run in the tests' sandbox"
    assert (plain["reward"], plain["reason"].split(" in ")[0]) == (
        boxed["reward"],
        boxed["reason"].split(" in ")[0],
    )


@pytest.mark.parametrize(
    ("tests", "plain"),
    [
        ("assert f(1, 'a', x=[2]) == {'k': (1, 2)}", True),
        ("assert 3 == f()\nassert f(1) is None\nassert not f(2)\nassert f(3)", True),
        ("assert f(1) != 2, 'message'", True),
        ("assert len(f()) == 3", False),  # a builtin is the tests' own, not the candidate's
        ("assert f(x) == 3", False),
        ("assert f(1) == g(2)", False),
        ("assert f(*[1]) == 1", False),
        ("assert f(1) is 5", False),
        ("x = 1\nassert f(1) == 1", False),
        ("assert obj.f(1) == 1", False),
    ],
)
def test_which_asserts_are_judged_as_calls(tests: str, plain: bool) -> None:
    from whileai_core.judges.codeexec.cases import plain_asserts

    assert (plain_asserts(tests) is not None) is plain


def test_cases_compare_by_type_in_the_grader() -> None:
    cases = [
        {"call": "add(1, 2)", "expected": 3},
        {"call": "add(0.5, 0.25)", "expected": 0.75},
        {"call": "add([1], [2])", "expected": [1, 2]},
        {"call": "add((3,), (1,))", "expected": [3, 1]},  # a JSON array matches a tuple
        {"call": "add(1, None)", "raises": "TypeError"},
        {"call": "{'k': add(1, 1)}", "expected": {"k": 2}},
    ]
    (row,) = _grade(GOOD, tests=cases)
    assert row["reward"] == 1.0, row["reason"]
    assert row["judge_meta"]["cases"] == 6 and row["judge_meta"]["cases_passed"] == 6
    one, as_float, as_bool = _grade(
        "def f():\n    return 1\n",
        "def f():\n    return 1.0\n",
        "def f():\n    return True\n",
        tests=[{"call": "f()", "expected": 1}],
    )
    assert one["reward"] == 1.0
    assert as_float["reward"] == 0.0 and "a float where an int is expected" in as_float["reason"]
    assert as_bool["reward"] == 0.0 and "a bool where an int is expected" in as_bool["reason"]


def test_float_cases_use_the_tolerance_only_when_given() -> None:
    tests = [{"call": "add(0.1, 0.2)", "expected": 0.3}]
    (exact,) = _grade(GOOD, tests=tests)
    (loose,) = _grade(GOOD, tests=tests, tolerance=1e-9)
    assert exact["reward"] == 0.0 and loose["reward"] == 1.0
    assert loose["judge_meta"]["tolerance"] == 1e-9


def test_a_case_reason_never_shows_the_expected_value() -> None:
    tests = [{"call": "add(20, 22)", "expected": 424242}]
    (row,) = _grade(GOOD, tests=tests)
    assert row["reward"] == 0.0
    assert "424242" not in row["reason"] and "add(20" not in row["reason"]
    assert row["reason"] == "0 of 1 cases passed; case 1: returned a wrong value"


def test_objects_classes_generators_and_exceptions_work_through_handles() -> None:
    code = (
        "from dataclasses import dataclass\nfrom math import sqrt\nimport math\n"
        "class Empty(Exception):\n    pass\n"
        "class Stack:\n    def __init__(self):\n        self.items = []\n"
        "    def push(self, x):\n        self.items.append(x)\n"
        "    def pop(self):\n        if not self.items:\n            raise Empty('no items')\n"
        "        return self.items.pop()\n"
        "    def __len__(self):\n        return len(self.items)\n"
        "@dataclass\nclass Point:\n    x: int\n    y: int\n"
        "def squares(n):\n    for i in range(n):\n        yield i * i\n"
        "def origin():\n    return Point(0, 0)\n"
    )
    tests = (
        "s = Stack()\ns.push(1)\ns.push('two')\nassert len(s) == 2\n"
        "assert Stack.pop(s) == 'two'\n"  # `s.pop()`: a list's method, never asked of s
        "assert isinstance(s, Stack)\nassert s.items == [1]\n"
        "assert Stack.pop(s) == 1\ntry:\n    Stack.pop(s)\n    raise AssertionError('no raise')\n"
        "except Empty as e:\n    assert str(e) == 'no items'\n"
        "assert list(squares(4)) == [0, 1, 4, 9]\n"
        "p = origin()\nassert (p.x, p.y) == (0, 0)\np.x = 5\nassert p.x == 5\n"
        "assert sqrt(16) == 4.0 and math.floor(2.5) == 2\n"
        "def check(candidate):\n    assert candidate(0) == 0\n"
        "check(lambda n: list(squares(n + 1))[n])\n"
    )
    _passes(code, tests=tests)


def test_the_standard_library_crosses_by_name() -> None:
    # The tests' `len` or `math` is never sent; the candidate's process uses its own copy.
    # A name the candidate took from the standard library is one too, even passed back.
    code = "from operator import add\ndef apply(f, *args):\n    return f(*args)\n"
    tests = (
        "import math\nassert apply(len, [1, 2]) == 2\nassert apply(str.upper, 'a') == 'A'\n"
        "assert apply(math.floor, 2.5) == 2\nassert apply(add, 2, 3) == 5\n"
        "assert apply(apply, add, 1, 1) == 2\n"
    )
    _passes(code, tests=tests)


def test_hidden_tests_on_privileged_tests_or_reference_and_a_list_of_asserts() -> None:
    rows = [
        {"final_text": GOOD, "privileged": {"tests": TESTS, "reference": "ignored"}},
        {"final_text": GOOD, "privileged": {"reference": TESTS}},
        {
            "final_text": GOOD,
            "privileged": {"tests": ["assert add(1, 1) == 2", "assert add(2, 0) == 2"]},
        },
    ]
    out = list(grade_rows(rows, parse_judge("code-exec"), concurrency=2))
    assert [r["reward"] for r in out] == [1.0, 1.0, 1.0], [r["reason"] for r in out]


@pytest.mark.parametrize(
    ("tests", "why"),
    [
        (None, "no gold"),
        ("   ", "empty"),
        ([{"call": "add(1,"}], "not a Python expression"),
        ([{"call": "add(1, 2)"}], "neither 'expected' nor 'raises'"),
        ("assert (", "do not compile"),
        ("assert add(lambda: 0, 1) == 1", "cannot run these tests"),
    ],
    ids=["none", "blank", "bad-call", "no-expected", "syntax", "function-arg"],
)
def test_tests_that_cannot_run_are_an_error_not_a_zero(tests: Any, why: str) -> None:
    row = {"final_text": GOOD, "privileged": {"tests": tests} if tests is not None else {}}
    (out,) = list(grade_rows([row], code_exec(), concurrency=1))
    assert out["judge_status"] == "error" and out["reward"] is None
    assert why.lower() in out["reason"].lower(), out["reason"]


def test_a_hang_is_stopped_at_the_wall_limit_and_grading_goes_on() -> None:
    start = time.monotonic()
    hung, after = _grade("while True:\n    pass", GOOD, timeout=1.0)
    assert time.monotonic() - start < 8
    assert hung["reward"] == 0.0 and "wall limit" in hung["reason"]
    assert after["reward"] == 1.0


def test_the_tmpfs_is_writable_through_every_file_call() -> None:
    code = (
        "import os\nos.makedirs('x/y')\nopen('x/y/f', 'w').write('hi')\n"
        "os.rename('x/y/f', 'x/g')\nos.symlink('g', 'x/l')\nassert open('x/l').read() == 'hi'\n"
        "with open('x/g', 'r+') as f:\n    f.truncate(1)\nos.chmod('x/g', 0o600)\n"
        "fd = os.open('x', os.O_RDONLY)\nos.unlink('l', dir_fd=fd)\nos.unlink('g', dir_fd=fd)\n"
        "os.rmdir('y', dir_fd=fd)\nopen('/tmp/abs', 'w').write('ok')\n" + ADD
    )
    _passes(code)


@pytest.mark.parametrize(
    ("attack", "reason"),
    [
        ("x = bytearray(10 * 1024 ** 3)", "MemoryError"),
        ("open('big', 'w').write('x' * (64 << 20))", "File too large"),
        ("import resource\nresource.setrlimit(resource.RLIMIT_AS, (-1, -1))", "ValueError"),
        ("import sys\nsys.exit(0)", "SystemExit"),
        ("import os\nos._exit(0)", "ended while its code was imported"),
    ],
    ids=["10gb", "huge-file", "raise-rlimit", "sys-exit", "os-exit"],
)
def test_limits_and_early_exits_score_zero_with_the_reason(attack: str, reason: str) -> None:
    attacked, after = _grade(attack + "\n" + ADD, GOOD)
    _closed(attacked)
    assert reason in attacked["reason"], attacked["reason"]
    assert after["reward"] == 1.0


@pytest.mark.parametrize("form", [*FORMS, "cases"])
def test_text_the_candidate_raises_cannot_break_the_row(form: str) -> None:
    code = "def add(a, b):\n    raise Exception('bad \\udcff text ' + 'x' * 10000)\n"
    tests = [{"call": "add(2, 3)", "expected": 5}] if form == "cases" else TESTS + FORMS[form]
    (row,) = _grade(code, tests=tests)
    _closed(row)  # orjson refuses a lone surrogate: the row must still serialise
    assert len(row["reason"]) < 500


def test_a_huge_program_is_not_run() -> None:
    (row,) = _grade("x = 1\n" * (1 << 20))
    _closed(row)
    assert "not run" in row["reason"]


# -- the attacks on the old sandbox ---------------------------------------------------------


def _subinterpreter_module() -> str:
    for name in ("_xxsubinterpreters", "_interpreters"):
        try:
            __import__(name)
            return name
        except ImportError:
            continue
    pytest.skip("this Python has no subinterpreter module")


def test_a_subinterpreter_is_inside_the_same_sandbox(secret_env: str, tmp_path: Path) -> None:
    mod = _subinterpreter_module()
    escaped = tmp_path / "escaped"
    inner = (
        "import os\nout = []\n"
        "for path in ('/etc/passwd', '/proc/self/environ', '/proc/1/environ'):\n"
        "    try:\n        out.append(open(path).read())\n"
        "    except OSError as e:\n        out.append(repr(e))\n"
        "out.append(repr(dict(os.environ)))\n"
        f"for target in ({str(escaped)!r}, '/escaped'):\n"
        "    try:\n        open(target, 'w').write('x')\n"
        "    except OSError as e:\n        out.append(repr(e))\n"
        f"out.append(str(os.system('id > {escaped}.sh')))\n"
        "open('/tmp/inner.txt', 'w').write(repr(out))\n"
    )
    code = (
        f"import {mod} as si\ninterp = si.create()\nsi.run_string(interp, {inner!r})\n"
        "raise Exception(open('/tmp/inner.txt').read())\n" + ADD
    )
    attacked, after = _grade(code, GOOD)
    _closed(attacked, secret=secret_env)
    assert "No such file" in attacked["reason"]  # it ran, and found nothing of the host
    assert not escaped.exists() and not Path(f"{escaped}.sh").exists()
    assert not Path("/escaped").exists()
    assert after["reward"] == 1.0


@pytest.mark.parametrize("form", FORMS)
def test_reading_frames_printing_a_token_and_exiting_zero_is_no_pass(form: str) -> None:
    forge = (
        "import os, sys\nf, seen = sys._getframe(), []\n"
        "while f is not None:\n    seen.append(dict(f.f_locals))\n    f = f.f_back\n"
        "token = sys._getframe(1).f_locals.get('token', 'none')\n"
        "print('WHILEAI_PASSED', token)\n"
        "for fd in range(3, 40):\n"
        '    for line in (b\'["pass"]\\n\', b\'["started"]\\n["pass"]\\n\','
        ' b\'["ok",["int","5"]]\\n\'):\n'
        "        try:\n            os.write(fd, line)\n"
        "        except OSError:\n            pass\n"
        "os._exit(0)\n"
    )
    tests = TESTS + FORMS[form]
    at_import = _grade(WRONG_ADD + forge, tests=tests)
    in_call = _grade(
        "def add(a, b):\n" + "".join("    " + ln + "\n" for ln in forge.splitlines()),
        tests=tests,
    )
    cases = _grade(WRONG_ADD + forge, tests=[{"call": "add(2, 3)", "expected": 5}])
    for (row,) in (at_import, in_call, cases):
        _closed(row)


@pytest.mark.parametrize("form", FORMS)
def test_the_hidden_tests_are_not_in_the_candidates_process(form: str) -> None:
    # The candidate searches every frame and every object for the tests and, if it finds
    # `== N`, answers N. The control plants the text itself, proving the search works.
    search = (
        "import gc, re, sys\n"
        "def _find():\n"
        "    texts = []\n    f = sys._getframe()\n"
        "    while f is not None:\n"
        "        texts += [v for v in list(f.f_locals.values()) + list(f.f_globals.values())"
        " if isinstance(v, str)]\n        f = f.f_back\n"
        "    for o in gc.get_objects():\n"
        "        if isinstance(o, (dict, list, tuple)):\n"
        "            vals = o.values() if isinstance(o, dict) else o\n"
        "            texts += [v for v in vals if isinstance(v, str)]\n"
        "    for t in texts:\n"
        "        m = re.search(r'add\\(2, 3\\) == (\\d+)|\"expected\": (\\d+)', t)\n"
        "        if m:\n            return int(m.group(1) or m.group(2))\n"
        "def add(a, b):\n    found = _find()\n    return found if found is not None else a * b\n"
    )
    control = "PLANTED = 'assert add(2, 3) == 5'\n" + search
    planted, attacked = _grade(control, search, tests="assert add(2, 3) == 5" + FORMS[form])
    assert planted["reward"] == 1.0, planted["reason"]
    _closed(attacked)
    (cases,) = _grade(search, tests=[{"call": "add(2, 3)", "expected": 5}])
    _closed(cases)


@pytest.mark.parametrize(
    "liar",
    [
        "class L:\n    def __eq__(self, other):\n        return True\n"
        "    def __ne__(self, other):\n        return False\n    __hash__ = object.__hash__\n",
        "class L(int):\n    def __eq__(self, other):\n        return True\n"
        "    __hash__ = int.__hash__\n",
        "class L(str):\n    def __eq__(self, other):\n        return True\n"
        "    __hash__ = str.__hash__\n",
    ],
    ids=["object", "int-subclass", "str-subclass"],
)
def test_an_eq_that_is_always_true_passes_nothing(liar: str) -> None:
    code = liar + "def add(a, b):\n    return L()\n"
    for asserts in ("assert add(2, 3) == 5\n", "assert 5 == add(2, 3)\n",
                    "assert not add(2, 3) != 5\n", "assert add(2, 3) == 5\n_ = 0\n"):  # fmt: skip
        (row,) = _grade(code, tests=asserts)
        _closed(row)
    (cases,) = _grade(code, tests=[{"call": "add(2, 3)", "expected": 5}])
    _closed(cases)


def test_builtins_the_candidate_patches_or_shadows_stay_the_tests_own() -> None:
    code = (
        "import builtins\nbuiltins.abs = lambda x: 0\nbuiltins.callable = lambda x: True\n"
        "builtins.AssertionError = type('Nope', (Exception,), {})\n"
        "def len(x):\n    return 3\ndef all(x):\n    return True\n"
        "def pair():\n    return [1, 2]\n"
    )
    tests = "assert len(pair()) == 3 or all([False]) or abs(-1) == 0 or callable(1)\n"
    (row,) = _grade(code, tests=tests)
    _closed(row)
    assert row["reason"] == "tests failed: line 1 of the tests: AssertionError"
    # With `isinstance` patched the candidate's own exporter lies about what its names are:
    # it only hurts itself.
    (lying,) = _grade("import builtins\nbuiltins.isinstance = lambda *a: True\n" + WRONG_ADD)
    _closed(lying)


def test_dir_fd_and_symlink_swaps_read_nothing_of_the_host(secret_env: str) -> None:
    code = (
        "import os, threading\nout = []\n"
        "root = os.open('/', os.O_RDONLY)\n"
        "for rel in ('etc/passwd', 'proc/1/environ', 'root/.bashrc'):\n"
        "    try:\n        out.append(os.read(os.open(rel, os.O_RDONLY, dir_fd=root), 4096))\n"
        "    except OSError as e:\n        out.append(repr(e))\n"
        "os.mkdir('d')\nopen('d/safe', 'w').write('x')\n"
        "def swap():\n"
        "    for _ in range(2000):\n"
        "        for target in ('/etc/passwd', f'/proc/{os.getppid()}/environ'):\n"
        "            try:\n                os.remove('d/link')\n"
        "            except OSError:\n                pass\n"
        "            os.symlink(target, 'd/link')\n"
        "t = threading.Thread(target=swap)\nt.start()\n"
        "d = os.open('d', os.O_RDONLY)\n"
        "for _ in range(2000):\n"
        "    try:\n        out.append(os.read(os.open('link', os.O_RDONLY, dir_fd=d), 4096))\n"
        "    except OSError:\n        pass\n"
        "t.join()\nraise Exception(repr(out)[:3000])\n" + ADD
    )
    attacked, after = _grade(code, GOOD)
    _closed(attacked, secret=secret_env)
    assert "No such file" in attacked["reason"]
    assert after["reward"] == 1.0


@pytest.mark.parametrize("form", FORMS)
def test_the_graders_environment_is_out_of_reach(secret_env: str, form: str) -> None:
    code = (
        "import os\nfound = [repr(dict(os.environ))]\n"
        "for pid in ['self', '1', str(os.getppid())] + (os.listdir('/proc') if "
        "os.path.isdir('/proc') else []):\n"
        "    try:\n        found.append(open(f'/proc/{pid}/environ').read())\n"
        "    except OSError as e:\n        found.append(repr(e))\n"
        "def add(a, b):\n    raise Exception(' '.join(found)[:3000])\n"
    )
    (row,) = _grade(code, tests=TESTS + FORMS[form])
    _closed(row, secret=secret_env)
    assert "the candidate raised Exception" in row["reason"]
    (cases,) = _grade(code, tests=[{"call": "add(1, 2)", "expected": 3}])
    _closed(cases, secret=secret_env)


def _alive_with(marker: str) -> list[int]:
    out = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if marker in Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace"):
                out.append(int(pid))
        except OSError:
            continue
    return out


@pytest.mark.parametrize("sandbox", ["bubblewrap", "none"])
def test_a_setsid_child_does_not_outlive_the_run(sandbox: str) -> None:
    if sandbox == "none" and controller_base("pids")[0] is None:
        pytest.skip("without a pids cgroup, --sandbox none only kills its session")
    marker = "whileai-orphan-" + uuid.uuid4().hex
    code = (
        "import os, sys\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n"
        f"        os.execv(sys.executable, [sys.executable, '-c', 'import time; time.sleep(60)', "
        f"{marker!r}])\n    os._exit(0)\n" + WRONG_ADD
    )
    (row,) = _grade(code, sandbox=sandbox)
    assert row["reward"] == 0.0
    deadline = time.monotonic() + 5
    while _alive_with(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive_with(marker)


def test_a_fork_bomb_is_capped_and_grading_goes_on() -> None:
    start = time.monotonic()
    bomb, shell, after = _grade(
        "import os\nwhile True:\n    os.fork()\n" + ADD,
        "import subprocess\nsubprocess.run(['sh', '-c', ':(){ :|:& };:'])\n" + ADD,
        GOOD,
        timeout=3.0,
    )
    assert time.monotonic() - start < 20
    _closed(bomb)
    _closed(shell)
    assert "FileNotFoundError" in shell["reason"]  # there is no shell in the sandbox
    assert after["reward"] == 1.0


@pytest.mark.skipif(controller_base("pids")[0] is None, reason="no writable pids cgroup")
def test_the_process_limit_binds_root() -> None:
    code = (
        "import os, time\n"
        "def spawned():\n    n = 0\n    for _ in range(100):\n"
        "        try:\n            pid = os.fork()\n"
        "        except OSError:\n            break\n"
        "        if pid == 0:\n            time.sleep(30)\n            os._exit(0)\n"
        "        n += 1\n    return n\n"
    )
    _passes(code, tests="assert spawned() < 40\n", max_procs=16)


def test_without_a_writable_cgroup_the_run_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    from whileai_core.judges.codeexec import cgroup

    def unwritable(controller: str) -> tuple[None, bool, str]:
        return None, False, f"cannot make a {controller} cgroup under /x (Read-only file system)"

    monkeypatch.setattr(cgroup, "controller_base", unwritable)
    meta = _passes(GOOD)["judge_meta"]
    assert meta["pids_limit"].startswith("RLIMIT_NPROC only")
    assert meta["memory_limit"].startswith("RLIMIT_AS only")
    assert "Read-only file system" in meta["pids_limit"]


@pytest.mark.skipif(controller_base("memory")[0] is None, reason="no writable memory cgroup")
def test_memory_is_bounded_for_the_whole_sandbox_not_per_process() -> None:
    # Each child stays under RLIMIT_AS; together they would hold 3.6 GB without the group,
    # which kills inside the sandbox once it holds memory_mb + its tmpfs + 64 MB.
    code = (
        "import os, time\nKILLED = 0\nfor _ in range(8):\n    if os.fork() == 0:\n"
        "        x = bytearray(450 << 20)\n        time.sleep(2)\n        os._exit(0)\n"
        "for _ in range(8):\n    KILLED += os.WIFSIGNALED(os.wait()[1])\n" + ADD
    )
    start = time.monotonic()
    # A generous wall: zero-filling 450 MB eight times is slow on a loaded 2-core machine.
    row = _passes(code, tests="assert KILLED >= 6\n" + TESTS, timeout=25.0)
    assert time.monotonic() - start < 40
    assert row["judge_meta"]["memory_limit"] == "cgroup"


def test_no_network_not_even_the_hosts_loopback() -> None:
    port = free_port()
    connected: list[object] = []
    server = socket.create_server(("127.0.0.1", port))
    server.settimeout(0.2)
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                connected.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        code = (
            "import socket\n"
            f"socket.create_connection(('127.0.0.1', {port}), timeout=2).sendall(b'hi')\n" + ADD
        )
        attacked, after = _grade(code, GOOD)
    finally:
        stop.set()
        thread.join()
        server.close()
    _closed(attacked)
    assert not connected
    assert after["reward"] == 1.0


def test_nothing_outside_the_tmpfs_is_writable(tmp_path: Path) -> None:
    prefix_file = Path(sys.base_prefix).resolve() / f"whileai-escape-{uuid.uuid4().hex}"
    targets = [str(tmp_path / "out"), str(prefix_file), "/escape", "/dev/escape",
               "/dev/shm/escape", str(Path.home() / "escape")]  # fmt: skip
    code = (
        "import os\nWROTE = []\n"
        f"for path in {targets!r}:\n"
        "    try:\n        open(path, 'w').write('x')\n        WROTE.append(path)\n"
        "    except OSError:\n        pass\n"
        "try:\n    os.chmod(os.__file__, 0o777)\n    WROTE.append('chmod')\n"
        "except OSError:\n    pass\n" + ADD
    )
    _passes(code, tests="assert WROTE == []\n" + TESTS)
    assert not (tmp_path / "out").exists() and not prefix_file.exists()


def test_a_candidate_cannot_signal_another_process() -> None:
    victim = subprocess.Popen(["sleep", "30"])
    try:
        code = (
            "import os, signal\n"
            f"for sig in (lambda: os.kill({victim.pid}, 9), lambda: os.kill(-1, 9),\n"
            f"            lambda: signal.pidfd_send_signal(os.pidfd_open({victim.pid}), 9)):\n"
            "    try:\n        sig()\n    except OSError:\n        pass\n" + WRONG_ADD
        )
        (row,) = _grade(code)
        time.sleep(0.2)
        assert victim.poll() is None, "the candidate killed another process"
        _closed(row)
    finally:
        victim.kill()
        victim.wait()


@pytest.mark.parametrize(
    "body",
    [
        "raise SystemExit(0)",
        "raise KeyboardInterrupt",
        "raise StopIteration",
        "x = []\n    for _ in range(500):\n        x = [x]\n    return x",
    ],
    ids=["system-exit", "keyboard-interrupt", "stop-iteration", "too-deep"],
)
def test_what_a_call_raises_or_cannot_send_fails_the_test(body: str) -> None:
    (row,) = _grade(f"def add(a, b):\n    {body}\n")
    _closed(row)


@pytest.mark.parametrize(
    "body",
    [
        "import os\n    os._exit(0)",
        "import os, sys\n    os.write(int(sys.argv[4]), b'garbage\\n')\n    return a + b",
        "import os, sys\n    os.close(int(sys.argv[4]))\n    return a + b",
    ],
    ids=["exit", "garbage", "hang-up"],
)
def test_breaking_the_exchange_fails_even_where_a_test_swallows_it(body: str) -> None:
    tests = "try:\n    add(1, 2)\nexcept BaseException:\n    pass\nassert True\n"
    (row,) = _grade(f"def add(a, b):\n    {body}\n", tests=tests)
    _closed(row)
    assert "the candidate" in row["reason"]


# -- refusing to run without isolation ------------------------------------------------------


def test_without_bubblewrap_code_exec_refuses(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no bwrap on it
    marker = tmp_path / "ran"
    code = f"open({str(marker)!r}, 'w').write('x')\n" + ADD
    (row,) = _grade(code)
    assert row["judge_status"] == "error" and row["reward"] is None
    assert "bubblewrap" in row["reason"] and "\n" not in row["reason"]
    assert not marker.exists()  # nothing fell back to running it unisolated


def test_a_bubblewrap_that_cannot_make_namespaces_is_an_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: Creating new namespace failed: EPERM' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    (row,) = _grade(GOOD)
    assert row["judge_status"] == "error" and row["reward"] is None
    assert "Creating new namespace failed" in row["reason"] and "bubblewrap" in row["reason"]


def test_sandbox_none_is_explicit_and_says_so(tmp_path: Path) -> None:
    (row,) = list(
        grade_rows(
            [{"final_text": GOOD, "privileged": {"tests": TESTS}}],
            parse_judge("code-exec", JudgeOptions(sandbox="none")),
        )
    )
    assert row["reward"] == 1.0 and row["judge_meta"]["sandbox"].startswith("none")
    rows = tmp_path / "rows.jsonl"
    rows.write_bytes(orjson.dumps({"final_text": GOOD, "privileged": {"tests": TESTS}}) + b"\n")
    done = run_cli("grade", str(rows), "-j", "code-exec", env={"WHILEAI_SANDBOX": "none"})
    assert done.returncode == 0, done.stderr
    assert orjson.loads(done.stdout)["judge_meta"]["sandbox"].startswith("none")
    bad = run_cli("grade", str(rows), "-j", "code-exec", "--sandbox", "weak")
    assert bad.returncode == 2 and b"--sandbox" in bad.stderr
