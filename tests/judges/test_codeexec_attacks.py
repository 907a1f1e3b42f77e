"""Code-exec against the attacks the bubblewrap sandbox still let through (issue 21, items
11, 12, 13 and 15), each on the real sandbox and each failing closed:

- forged passes through operators forwarded to the candidate's objects (`obj - expected`,
  `'w' in obj`), and through methods a test takes for a builtin type's
  (`obj.startswith(expected)`);
- blocked system calls made through the 32-bit (`int 0x80`) and x32 entries;
- a reply flood that took the grader's memory past 1 GB and its rows to `timeout`;
- a class only named ValueError passing a `raises: ValueError` case, and the interpreter's
  own site-packages readable (and importable) in the sandbox.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import orjson
import pytest

from whileai_core.judges.codeexec import sandbox as sb

from .test_codeexec import ADD, GOOD, _closed, _grade, _passes

pytestmark = pytest.mark.skipif(
    shutil.which("bwrap") is None, reason="bubblewrap missing: .ci/run installs it"
)

# -- item 11: operators that would hand the tests' value to the candidate's object ---------

# An object that says yes to everything a test could ask with an operator.
LIAR = (
    "class Liar:\n"
    "    def __sub__(self, other):\n        return 0.0\n"
    "    __rsub__ = __add__ = __radd__ = __mul__ = __rmul__ = __truediv__ = __sub__\n"
    "    __mod__ = __rmod__ = __pow__ = __xor__ = __rxor__ = __and__ = __or__ = __sub__\n"
    "    def __contains__(self, item):\n        return True\n"
    "    def __eq__(self, other):\n        return True\n"
    "    def __ne__(self, other):\n        return False\n"
    "    def __lt__(self, other):\n        return True\n"
    "    __le__ = __gt__ = __ge__ = __lt__\n"
    "    def __abs__(self):\n        return 0.0\n"
    "    __hash__ = object.__hash__\n"
)
# HumanEval/4's own test, verbatim in what matters.
HUMANEVAL_4 = (
    "def check(candidate):\n"
    "    assert abs(candidate([1.0, 2.0, 3.0]) - 2.0/3.0) < 1e-6\n"
    "    assert abs(candidate([1.0, 2.0, 3.0, 4.0]) - 1.0) < 1e-6\n"
    "    assert abs(candidate([1.0, 2.0, 3.0, 4.0, 5.0]) - 6.0/5.0) < 1e-6\n"
    "check(mean_absolute_deviation)\n"
)
MAD = (
    "def mean_absolute_deviation(numbers):\n"
    "    mean = sum(numbers) / len(numbers)\n"
    "    return sum(abs(x - mean) for x in numbers) / len(numbers)\n"
)
OPERATOR_TESTS = {
    "sub": HUMANEVAL_4,
    "contains": "assert 'w' in f('hello world')\nassert 'o' in f('hello world')\n",
    "getitem": "assert f('hello world')['w']\n",
    "order": "assert f('hello world') < 1\n",
    "add": "assert f('hello world') + 0.5 - 0.5 == 0.0\n",
    "inside-a-list": "assert abs(f('x')[0] - 0.5) < 1e-6\n",
    "isclose": "import math\nassert math.isclose(f('x'), 2.0 / 3.0)\n",
}
RIGHT = {
    "sub": MAD,
    "contains": "def f(s):\n    return s.split()[1]\n",
    "getitem": "def f(s):\n    return {'w': 1}\n",
    "order": "def f(s):\n    return 0\n",
    "add": "def f(s):\n    return 0.0\n",
    "inside-a-list": "def f(s):\n    return [0.5]\n",
    "isclose": "def f(s):\n    return 2.0 / 3.0\n",
}


@pytest.mark.parametrize("kind", OPERATOR_TESTS)
def test_an_operator_with_a_value_of_the_tests_never_reaches_the_candidate(kind: str) -> None:
    tests = OPERATOR_TESTS[kind]
    liar = LIAR + (
        "def mean_absolute_deviation(numbers):\n    return Liar()\n"
        "def f(s):\n    return [Liar()] if s == 'x' else Liar()\n"
    )
    if kind == "isclose":  # its float() is the candidate's to answer, and answers wrong
        liar += "Liar.__float__ = lambda self: 0.0\n"
    if kind == "getitem":  # (with it, `in` would iterate Liar()[0], [1], ... for ever)
        liar += "Liar.__getitem__ = lambda self, key: True\n"
    right, forged = _grade(RIGHT[kind], liar, tests=tests)
    assert right["reward"] == 1.0, right["reason"]  # the tests are sound
    _closed(forged)
    assert "the tests: TypeError" in forged["reason"] or "AssertionError" in forged["reason"]


def test_what_a_test_may_still_ask_of_a_candidate_object_comes_back_as_data() -> None:
    # Calls, attributes, len, bool, iteration and conversions take nothing of the tests':
    # their answers are plain data the tests' own code judges.
    code = (
        "class Bag:\n    def __init__(self, *items):\n        self.items = list(items)\n"
        "    def __len__(self):\n        return len(self.items)\n"
        "    def __iter__(self):\n        return iter(self.items)\n"
        "    def __bool__(self):\n        return bool(self.items)\n"
        "    def __float__(self):\n        return float(sum(self.items))\n"
        "    def __contains__(self, item):\n        return True\n"  # never asked
        "def make(*items):\n    return Bag(*items)\n"
    )
    tests = (
        "b = make(1, 2)\nassert len(b) == 2 and list(b) == [1, 2] and b.items == [1, 2]\n"
        "assert b and not make() and float(b) == 3.0\n"
        "assert 2 in b and 5 not in b\n"  # `in` iterates: the items decide, not __contains__
        "assert isinstance(b, Bag) and not isinstance(1, Bag)\n"
        "try:\n    b[0]\n    raise AssertionError('subscript forwarded')\nexcept TypeError:\n"
        "    pass\n"
    )
    _passes(code, tests=tests)


# An object that answers yes to any method a test could call on a value it takes for a
# str, a list, a dict or a set: every attribute is a function that returns True.
YES_MAN = (
    "class YesMan:\n    def __getattr__(self, name):\n        return lambda *args, **kwargs: True\n"
)
METHOD_TESTS = {
    "startswith": "assert f('hello world').startswith('wor')\n",
    "isdigit": "assert f('a1').isdigit()\n",
    "issubset": "assert f([1, 2]).issubset({1, 2, 3})\n",
    "count": "assert f('hello world').count('w')\n",
    "get": "assert f('hello world').get('ok')\n",
    "inside-a-list": "assert f('x')[0].endswith('x')\n",
    "through-getattr": "assert getattr(f('hello world'), 'startswith')('wor')\n",
}
METHOD_RIGHT = {
    "startswith": "def f(s):\n    return s.split()[1]\n",
    "isdigit": "def f(s):\n    return s[1:]\n",
    "issubset": "def f(xs):\n    return set(xs)\n",
    "count": "def f(s):\n    return s\n",
    "get": "def f(s):\n    return {'ok': True}\n",
    "inside-a-list": "def f(s):\n    return [s]\n",
    "through-getattr": "def f(s):\n    return s.split()[1]\n",
}


@pytest.mark.parametrize("kind", METHOD_TESTS)
def test_a_method_a_test_calls_on_what_it_takes_for_data_is_never_the_candidates(
    kind: str,
) -> None:
    """`result.startswith(x)` on an object that is not a str handed the tests' value to a
    method the candidate wrote, which answered True: a pass without the answer. A method
    of a builtin type is now never asked of a candidate's object; the test fails."""
    forger = YES_MAN + "def f(s):\n    return [YesMan()] if s == 'x' else YesMan()\n"
    # The same object under a name of its module, returned: still an answer.
    named = YES_MAN + "YES = YesMan()\ndef f(s):\n    return [YES] if s == 'x' else YES\n"
    right, forged, forged_named = _grade(
        METHOD_RIGHT[kind], forger, named, tests=METHOD_TESTS[kind]
    )
    assert right["reward"] == 1.0, right["reason"]  # the tests are sound
    for row in (forged, forged_named):
        _closed(row)
        assert "AttributeError" in row["reason"] and "YesMan" in row["reason"], row["reason"]


CASE_FORMS = {
    "method": "f('hello world').startswith('wor')",
    "builtin": "len(f('hello world'))",
    "subscript": "f('hello world')[0]",
    "compare": "f('hello world') == 'world'",
}


@pytest.mark.parametrize("form", CASE_FORMS)
def test_a_case_whose_value_the_candidate_could_compute_is_never_a_pass(form: str) -> None:
    """A case's expression runs in the candidate's process: `f(x).startswith(...)`,
    `len(f(x))`, `f(x)[0]` and `f(x) == y` are answered by whatever `f` returned, so a
    YesMan passes them. Such a case is refused before anything runs: the row is unjudged
    (no_gold, with the reason), never passed; a plain call of `f` is still judged."""
    forger = YES_MAN + "def f(s):\n    return YesMan()\n"
    case = [{"call": CASE_FORMS[form], "expected": True}]
    (row,) = _grade(forger, tests=case)
    assert row["reward"] != 1.0 and row["judge_status"] != "ok", row
    assert "write that check as an assert" in row["reason"], row["reason"]
    plain = [{"call": "f('hello world')", "expected": "world"}]
    right, forged = _grade(METHOD_RIGHT["startswith"], forger, tests=plain)
    assert right["reward"] == 1.0, right["reason"]
    _closed(forged)


def test_the_candidates_own_api_is_still_asked() -> None:
    # Methods and attributes a builtin type does not have are the candidate's API, which
    # the tests call on purpose; its answers come back as plain data. So is an attribute
    # that holds data, whatever its name (`self.items`, `self.count`). A method named like
    # a builtin type's is called through the class the tests name: `Stack.pop(s)`.
    code = (
        "class Stack:\n    def __init__(self):\n        self.items, self.count = [], 0\n"
        "    def push(self, x):\n        self.items.append(x)\n        self.count += 1\n"
        "    def peek(self):\n        return self.items[-1]\n"
        "    def pop(self):\n        return self.items.pop()\n"
        "def counter():\n    n = 0\n    while True:\n        n += yield n\n"
    )
    tests = (
        "s = Stack()\ns.push(1)\ns.push(2)\n"
        "assert s.peek() == 2 and s.items == [1, 2] and s.count == 2\n"
        "try:\n    s.pop()\n    raise AssertionError('pop asked of the candidate')\n"
        "except AttributeError:\n    pass\n"
        "assert Stack.pop(s) == 2 and s.items == [1] and s == s and s != Stack()\n"
        "c = counter()\nassert next(c) == 0 and c.send(5) == 5 and c.send(2) == 7\n"
    )
    _passes(code, tests=tests)


def test_values_cross_as_genuine_builtin_data() -> None:
    # Subclasses with the candidate's own methods arrive as their builtin base, nested too.
    code = (
        "class L(list):\n    def __contains__(self, item):\n        return True\n"
        "class S(str):\n    def __contains__(self, item):\n        return True\n"
        "    def startswith(self, prefix):\n        return True\n"
        "class F(float):\n    def __sub__(self, other):\n        return 0.0\n"
        "    __rsub__ = __sub__\n"
        "def value():\n"
        "    return {'list': L([1, 2.5, 'x', None, True]), 'tuple': (1, (2, [3])),\n"
        "            'set': {1, 2}, 'frozen': frozenset({'a'}), 'str': S('abc'),\n"
        "            'float': F(0.5), 'nested': [[{'k': (None, False)}]]}\n"
    )
    tests = (
        "v = value()\n"
        "assert type(v) is dict and type(v['list']) is list and type(v['str']) is str\n"
        "assert v['list'] == [1, 2.5, 'x', None, True] and 'w' not in v['list']\n"
        "assert 'w' not in v['str'] and not v['str'].startswith('z')\n"
        "assert type(v['float']) is float and abs(v['float'] - 2.0) > 1\n"
        "assert v['tuple'] == (1, (2, [3])) and type(v['tuple'][1]) is tuple\n"
        "assert v['set'] == {1, 2} and type(v['frozen']) is frozenset\n"
        "assert v['nested'] == [[{'k': (None, False)}]]\n"
        "assert type(v['list'][4]) is bool and type(v['list'][0]) is int\n"
    )
    _passes(code, tests=tests)


# -- item 12: the 32-bit and x32 system-call entries ----------------------------------------

# x86-64 machine code: push rbx; mov eax, NR; mov ebx, A; mov ecx, B; mov edx, C;
# int 0x80; pop rbx; ret. Run from an RWX page through ctypes.
INT80 = (
    "import ctypes, mmap, struct\n"
    "def int80(nr, a=0, b=0, c=0):\n"
    "    page = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)\n"
    "    page.write(b'\\x53' + b''.join(op + struct.pack('<i', v) for op, v in\n"
    "               ((b'\\xb8', nr), (b'\\xbb', a), (b'\\xb9', b), (b'\\xba', c)))\n"
    "               + b'\\xcd\\x80\\x5b\\xc3')\n"
    "    address = ctypes.addressof(ctypes.c_char.from_buffer(page))\n"
    "    return ctypes.CFUNCTYPE(ctypes.c_int)(address)()\n"
)
# i386 numbers: what each was blocked as on x86-64 (socket 41, kill 62, unshare 272).
I386_CALLS = {"socket": "int80(359, 1, 1, 0)", "kill": "int80(37, 1, 0)",
              "unshare": "int80(310, 0)"}  # fmt: skip
X32_SOCKET = (
    "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
    "libc.syscall.restype = ctypes.c_long\n"
    "RESULT = [libc.syscall(0x40000000 | 41, 1, 1, 0), ctypes.get_errno()]\n"
)


def _i386_entry_works_here() -> bool:
    """The kernel has the 32-bit entry (IA32 emulation): i386 getpid works unsandboxed."""
    code = INT80 + "import os\nprint(int80(20) == os.getpid())\n"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)  # fmt: skip
    return done.stdout.strip() == "True"


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the filter is x86-64's")
@pytest.mark.parametrize("call", [*I386_CALLS, "x32-socket"])
def test_a_call_through_another_syscall_entry_kills_the_candidate(call: str) -> None:
    if call == "x32-socket":
        attack = X32_SOCKET
    else:
        if not _i386_entry_works_here():
            pytest.skip("this kernel has no 32-bit syscall entry (no IA32 emulation)")
        attack = INT80 + f"RESULT = {I386_CALLS[call]}\n"
    # Before the filter checked the architecture, the call returned (a socket's fd, 0 for
    # kill and unshare) and the right `add` after it passed.
    for tests in ("assert add(2, 3) == 5\n", [{"call": "add(2, 3)", "expected": 5}]):
        (row,) = _grade(attack + ADD, tests=tests)
        _closed(row)
        assert "SIGSYS" in row["reason"] and "seccomp" in row["reason"], row["reason"]
        assert row["judge_meta"]["seccomp"] is True
    # The native entry still answers EPERM, and the candidate goes on.
    native = "import socket\ntry:\n    socket.socket()\nexcept PermissionError:\n    DENIED = 1\n"
    _passes(native + ADD, tests="assert DENIED == 1\n" + "assert add(2, 3) == 5\n")


# -- item 13: a flood on the reply pipe -------------------------------------------------------

FLOOD = (
    "import os, sys, time\n"
    "def add(a, b):\n"
    "    n = (16 << 20) // 9 - 10\n"
    '    os.write(int(sys.argv[4]), b\'["ok",["list",[\' + b\'["none"],\' * n'
    " + b'[\"none\"]]]]\\n')\n"
    "    time.sleep(30)\n"
)
FLOOD_TESTS = {
    "plain": "assert add(2, 3) == 5\n",
    "sandboxed": "assert add(2, 3) == 5\n_ = 0\n",
    "cases": [{"call": "add(2, 3)", "expected": 5}],
}


@pytest.mark.parametrize("form", FLOOD_TESTS)
def test_a_flood_on_the_reply_pipe_is_a_zero_not_a_timeout(form: str) -> None:
    rows = _grade(FLOOD, FLOOD, GOOD, tests=FLOOD_TESTS[form], timeout=10.0)
    for row in rows[:2]:
        _closed(row)
        assert "1 MiB limit" in row["reason"], row["reason"]
    assert rows[2]["reward"] == 1.0


def test_eight_floods_at_once_stay_within_the_graders_memory(tmp_path: Path) -> None:
    rows = tmp_path / "rows.jsonl"
    row = {"final_text": FLOOD, "privileged": {"tests": FLOOD_TESTS["cases"]}}
    rows.write_bytes(b"".join(orjson.dumps(row) + b"\n" for _ in range(8)))
    out = tmp_path / "graded.jsonl"
    # The grade command's own peak RSS, read by a small waiting interpreter (os.wait4).
    waiter = (
        "import json, os, subprocess, sys\n"
        "p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)\n"
        "_, status, usage = os.wait4(p.pid, 0)\n"
        "print(json.dumps([os.waitstatus_to_exitcode(status), usage.ru_maxrss / 1024]))\n"
    )
    cmd = [sys.executable, "-m", "whileai_cli", "grade", str(rows), "-j", "code-exec",
           "-c", "8", "--timeout", "10", "-o", str(out)]  # fmt: skip
    done = subprocess.run([sys.executable, "-c", waiter, *cmd], capture_output=True,
                          text=True, timeout=300)  # fmt: skip
    code, peak_mb = json.loads(done.stdout)
    assert code == 0, done.stderr
    graded = [orjson.loads(line) for line in out.read_bytes().splitlines()]
    assert [(r["judge_status"], r["reward"]) for r in graded] == [("ok", 0.0)] * 8
    # A generous safety bound: before the reply cap, 8 floods took it to 1.4 GB.
    assert peak_mb < 400, f"grader peak RSS {peak_mb:.0f} MB"


def test_a_large_answer_under_the_limit_still_counts() -> None:
    code = (
        "def primes(n):\n    sieve = bytearray([1]) * n\n    sieve[:2] = b'\\0\\0'\n"
        "    for i in range(2, int(n ** 0.5) + 1):\n"
        "        if sieve[i]:\n            sieve[i * i :: i] = bytearray(len(sieve[i * i :: i]))\n"
        "    return [i for i, flag in enumerate(sieve) if flag]\n"
    )
    namespace: dict[str, object] = {}
    exec(code, namespace)
    expected = namespace["primes"](300000)  # type: ignore[operator]
    assert len(orjson.dumps(expected)) > 150_000  # some 400 KB on the wire
    _passes(code, tests=[{"call": "primes(300000)", "expected": expected}])
    _passes(code, tests=f"p = primes(300000)\nassert p[-1] == {expected[-1]}\n")


# -- item 15: exception classes by identity; the standard library and nothing else ----------


def test_a_class_only_named_like_a_builtin_exception_is_not_it() -> None:
    fakes = [
        "class ValueError(Exception):\n    pass\ndef f():\n    raise ValueError('x')\n",
        "import builtins\nclass Mine(Exception):\n    pass\nMine.__name__ = 'ValueError'\n"
        "builtins.ValueError = Mine\ndef f():\n    raise Mine('x')\n",
    ]
    real = [
        "def f():\n    raise ValueError('x')\n",
        "class Mine(ValueError):\n    pass\ndef f():\n    raise Mine('x')\n",
        "class ValueError(ValueError):\n    pass\ndef f():\n    raise ValueError('x')\n",
    ]
    cases = [{"call": "f()", "raises": "ValueError"}]
    asserts = "try:\n    f()\n    raise AssertionError('no raise')\nexcept ValueError:\n    pass\n"
    for tests in (cases, asserts):
        rows = _grade(*fakes, *real, tests=tests)
        for row in rows[: len(fakes)]:
            _closed(row)
            if tests is cases:
                assert "not the builtin" in row["reason"], row["reason"]
        for row in rows[len(fakes) :]:
            assert row["reward"] == 1.0, row["reason"]


def test_raises_follows_the_builtin_hierarchy_and_names_the_candidates_own_classes() -> None:
    code = (
        "class Empty(Exception):\n    pass\n"
        "def missing():\n    open('/no/such/file')\n"
        "def empty():\n    raise Empty('none')\n"
        "def sysexit():\n    raise SystemExit(1)\n"
    )
    cases = [
        {"call": "missing()", "raises": "OSError"},
        {"call": "missing()", "raises": "IOError"},  # OSError's alias
        {"call": "missing()", "raises": "FileNotFoundError"},
        {"call": "empty()", "raises": "Empty"},
        {"call": "empty()", "raises": "Exception"},
        {"call": "sysexit()", "raises": "BaseException"},
    ]
    _passes(code, tests=cases)
    (row,) = _grade(code, tests=[{"call": "sysexit()", "raises": "Exception"}])
    _closed(row)


def _installed_in_the_prefix() -> tuple[str, str] | None:
    """(the base interpreter's own site-packages, a module installed there), if any."""
    purelib = sysconfig.get_paths(vars={"base": sys.base_prefix})["purelib"]
    for entry in sorted(Path(purelib).glob("*")) if Path(purelib).is_dir() else []:
        if entry.suffix == ".py" and entry.stem.isidentifier():
            return purelib, entry.stem
        if (entry / "__init__.py").exists() and entry.name.isidentifier():
            return purelib, entry.name
    return None


def test_the_sandbox_has_the_standard_library_and_no_installed_packages() -> None:
    exe, _ = sb.interpreter()
    roots, hidden = sb.stdlib_layout()
    assert hidden, "the standard library's folder holds no site-packages or bundled wheels?"
    # Every standard-library extension module that imports here imports in the sandbox.
    dynload = [Path(r) / "lib-dynload" for r in roots if (Path(r) / "lib-dynload").is_dir()]
    names = sorted({p.name.split(".")[0] for d in dynload for p in d.glob("*.so")})
    probe = "import importlib, sys\nfor n in sys.argv[1:]:\n    try:\n" \
            "        importlib.import_module(n)\n        print(n)\n    except Exception:\n" \
            "        pass\n"  # fmt: skip
    done = subprocess.run([exe, "-S", "-s", "-c", probe, *names], capture_output=True,
                          text=True, env={"LANG": "C.UTF-8"}, timeout=120)  # fmt: skip
    importable = done.stdout.split()
    assert "_json" in importable or "math" in importable
    found = _installed_in_the_prefix()
    purelib, installed = found or (sysconfig.get_paths()["purelib"], "")
    code = (
        "import importlib, os, sys\nMISSING, SEEN = [], []\n"
        f"for n in {importable!r}:\n"
        "    try:\n        importlib.import_module(n)\n"
        "    except Exception as e:\n        MISSING.append(n + ': ' + repr(e))\n"
        "import json, decimal, sqlite3, ssl, asyncio, email.parser, zoneinfo, unittest\n"
        f"for folder in {[purelib, *hidden]!r}:\n"
        "    try:\n        SEEN += os.listdir(folder)\n"
        "    except OSError:\n        pass\n"
        f"sys.path += {[purelib, *hidden]!r}\n"
        "try:\n"
        f"    importlib.import_module({installed!r} or 'not_installed_anywhere')\n"
        f"    SEEN.append({installed!r})\n"
        "except ImportError:\n    pass\n"
        "BIN = sorted(os.listdir(os.path.dirname(sys.executable)))\n"
        "TOP = sorted(os.listdir(sys.base_prefix))\n" + ADD
    )
    tests = (
        "assert MISSING == []\nassert SEEN == []\n"
        f"assert BIN == [{os.path.basename(exe)!r}]\n"
        "assert set(TOP) <= {'bin', 'lib', 'lib64'}\n"  # no include, share, site-packages
    )
    _passes(code, tests=tests, timeout=20.0)
