"""The hidden tests a row carries, in either form, and how the grader judges a case.

Assert source runs in the tests' sandbox (`runner.py`). A case is judged here, in the
grader's own process, from the answer the candidate's process sent: decoded into builtin
types, compared by type and then by value with this module's code, never the candidate's
`__eq__`. A reason says what kind of thing was wrong, never the expected value or the call.

Asserts of the plain shape most datasets use, `assert f(2, 3) == 5` (a call of a name that
is not a builtin, on literals, against a literal), are judged here too, as calls: the
tests' sandbox would send the same call and apply the same `==` to the same rebuilt
builtin values, so the verdict is the one it would reach, at half the cost (one sandbox).
"""

from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass
from typing import Any

from ..verifiers import NoGold, gold_of
from .wire import DATA_ATTRIBUTES, WireError, builtin_exception, decode, kind_name


@dataclass(frozen=True)
class Case:
    """One call and what it must give: a value (`expected`) or an exception (`raises`)."""

    call: str
    expected: Any = None
    raises: str | None = None


def hidden_tests(row: dict[str, Any], field: str | None = None) -> str | list[Case]:
    """The row's tests: assert source, or a list of cases. NoGold when there are none or
    they cannot be run (an error for the row, not a 0 for the candidate)."""
    tests: Any = None
    privileged = row.get("privileged")
    if field is None and isinstance(privileged, dict) and privileged.get("tests"):
        tests = privileged["tests"]
    if tests is None:
        tests = gold_of(row, field)
    if isinstance(tests, list) and tests and all(isinstance(t, dict) for t in tests):
        return [_case(t, i) for i, t in enumerate(tests, 1)]
    if isinstance(tests, list) and all(isinstance(t, str) for t in tests):
        tests = "\n".join(tests)
    if not isinstance(tests, str):
        raise NoGold("the row's tests are neither assert source nor a list of cases")
    if not tests.strip():
        raise NoGold("the row's hidden tests are empty")
    return tests


def _case(item: dict[str, Any], i: int) -> Case:
    call = item.get("call")
    if not isinstance(call, str) or not call.strip():
        raise NoGold(f"case {i} has no 'call' (a Python expression such as add(1, 2))")
    try:
        compile(call, f"<case {i}>", "eval")  # compiling runs nothing
    except (SyntaxError, ValueError) as exc:
        raise NoGold(f"case {i}'s call is not a Python expression ({exc})") from None
    problem = _unplain(ast.parse(call, mode="eval").body)
    if problem is not None:
        raise NoGold(f"case {i}'s call {problem}: write that check as an assert")
    raises = item.get("raises")
    if "expected" not in item and not isinstance(raises, str):
        raise NoGold(f"case {i} has neither 'expected' nor 'raises'")
    return Case(call=call, expected=item.get("expected"), raises=raises or None)


def _unplain(node: ast.expr) -> str | None:
    """Why a case's expression could let the candidate choose the answer, or None.

    A case's expression is evaluated in the candidate's process, so whatever its outermost
    step is, the candidate's code may answer it: `f(x).startswith('a')` is answered by the
    object `f` returned, `len(f(x))` by its `__len__` (or by a `len` the candidate put in
    builtins), `f(x)[0]` by its `__getitem__`. A case is judged here only when its value is
    the return value of a call the test author named (`f(x)`, `mod.f(x)`,
    `Solution().two_sum(x)`), or a literal container of such values; anything else is an
    assert's job, where the candidate's results stay handles (`runner.py`)."""
    if isinstance(node, ast.Constant):
        return None
    if isinstance(node, ast.UnaryOp) and isinstance(node.operand, ast.Constant):
        return None
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return next((p for p in map(_unplain, node.elts) if p is not None), None)
    if isinstance(node, ast.Dict):
        if any(k is None for k in node.keys):
            return "unpacks a value into a dict"
        parts = [*(k for k in node.keys if k is not None), *node.values]
        return next((p for p in map(_unplain, parts) if p is not None), None)
    if not isinstance(node, ast.Call):
        return f"ends in {type(node).__name__.lower()} on a value the candidate made"
    func = node.func
    if isinstance(func, ast.Name):
        if hasattr(builtins, func.id):
            return f"ends in the builtin {func.id}()"
        return None
    if isinstance(func, ast.Attribute):
        if func.attr.startswith("_") or func.attr in DATA_ATTRIBUTES:
            return f"ends in .{func.attr}() on a value the candidate made"
        owner = func.value
        if isinstance(owner, ast.Call):
            owner = owner.func
        if isinstance(owner, ast.Name) and not hasattr(builtins, owner.id):
            return None
    return "does not end in a call of a function the test names"


def exception_text(item: list[Any]) -> str:
    """`Kind: text` of an exception as the wire carries it."""
    text = " ".join(str(item[3]).split())[:200]
    name = kind_name(str(item[1]), item[2] if isinstance(item[2], list) else [])
    return f"{name}: {text}" if text else name


def raised(item: list[Any], wanted: str) -> bool:
    """Whether the exception on the wire (`wire.encode_exception`) is a `wanted`.

    A builtin exception's name is checked as Python's `except` would: the most derived
    builtin class the exception derives from, taken in this process from the names the
    wire gives (each the name of a builtin class, found by identity in the candidate's
    process: `wire.builtin_bases`), must be `wanted`'s class or a subclass of it. A class
    the candidate only named ValueError derives from Exception and is not a ValueError.
    Any other name (the candidate's own classes, json.JSONDecodeError) is matched by the
    raised class's name: there is no class of the grader's to compare with.
    """
    want = builtin_exception(wanted)
    if want is None:
        return wanted == str(item[1])
    found = [builtin_exception(b) for b in item[2] if isinstance(b, str)]
    most_derived = next((c for c in found if c is not None), None)
    return most_derived is not None and issubclass(most_derived, want)


class Handle:
    """One of the candidate's objects that is not plain data: equal to nothing."""

    def __init__(self, item: list[Any]) -> None:
        self.label = str(item[2])[:60] if item[0] == "ref" and len(item) > 2 else "?"
        self.ref = item[1] if item[0] == "ref" and len(item) > 1 else None


def judge_case(case: Case, reply: list[Any] | None, tolerance: float | None) -> str | None:
    """None when the answer is right, else what was wrong (never the expected value)."""
    if reply is None:
        return "the candidate's process ended"
    if reply[0] == "raise":
        item = reply[1] if len(reply) == 2 else None
        if not isinstance(item, list) or len(item) != 5 or not isinstance(item[2], list):
            return "raised something unreadable"
        if case.raises and raised(item, case.raises):
            return None
        return f"raised {exception_text(item)}"
    if reply[0] != "ok" or len(reply) != 2:
        return "answered out of turn"
    if case.raises:
        return f"returned instead of raising {case.raises}"
    try:
        got = decode(reply[1], Handle)
    except WireError as exc:
        return f"answered something that is not a value ({exc})"
    return _mismatch(got, case.expected, tolerance)


_JSON_KINDS = ((bool, "a bool"), (int, "an int"), (float, "a float"), (str, "a str"),
               (list, "a list"), (dict, "a dict"), (type(None), "None"))  # fmt: skip


def _kind(value: Any) -> str:
    if isinstance(value, Handle):
        return f"the candidate's own {value.label} object"
    for t, name in _JSON_KINDS:
        if type(value) is t:
            return name
    return f"a {type(value).__name__}"


def _mismatch(got: Any, want: Any, tolerance: float | None) -> str | None:
    """Compare by type, then value; the grader's own code, never the candidate's `__eq__`."""
    wrong_type = f"returned {_kind(got)} where {_kind(want)} is expected"
    if isinstance(want, list):
        if type(got) not in (list, tuple):
            return wrong_type
        if len(got) != len(want):
            return "returned a wrong value"
        for g, w in zip(got, want, strict=True):
            inner = _mismatch(g, w, tolerance)
            if inner is not None:
                return inner if inner == "returned a wrong value" else inner + " (inside)"
        return None
    if isinstance(want, dict):
        if type(got) is not dict:
            return wrong_type
        if len(got) != len(want) or not all(type(k) is str and k in want for k in got):
            return "returned a wrong value"
        for key, w in want.items():
            inner = _mismatch(got[key], w, tolerance)
            if inner is not None:
                return inner if inner == "returned a wrong value" else inner + " (inside)"
        return None
    if type(got) is not type(want):
        return wrong_type
    close = type(want) is float and tolerance is not None and abs(got - want) <= tolerance
    return None if got == want or close else "returned a wrong value"


# -- plain asserts, judged as calls ---------------------------------------------------------


@dataclass(frozen=True)
class Check:
    """`assert CALL OP LITERAL` (or `assert CALL`, `assert not CALL`) at `line`."""

    line: int
    call: str
    op: str  # ==, !=, is, is not, truth, not
    expected: Any = None


_OPS = {ast.Eq: "==", ast.NotEq: "!=", ast.Is: "is", ast.IsNot: "is not"}


def plain_asserts(source: str) -> list[Check] | None:
    """The tests as checks when every statement is a plain assert; None otherwise (they
    then run in the tests' sandbox)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    checks = []
    for node in tree.body:
        check = _check(node.test, node.lineno) if isinstance(node, ast.Assert) else None
        if check is None:
            return None
        checks.append(check)
    return checks or None


def _literal(node: ast.expr) -> tuple[bool, Any]:
    try:
        return True, ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False, None


def _call(node: ast.expr) -> str | None:
    """The source of a call of a candidate's name on literals. A builtin's name would be
    the candidate's own (patched) builtin in its process, never the tests' one."""
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        return None
    if hasattr(builtins, node.func.id) or any(isinstance(a, ast.Starred) for a in node.args):
        return None
    if any(k.arg is None for k in node.keywords):
        return None
    if not all(_literal(a)[0] for a in [*node.args, *(k.value for k in node.keywords)]):
        return None
    return ast.unparse(node)


def _check(test: ast.expr, line: int) -> Check | None:
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        call = _call(test.operand)
        return Check(line, call, "not") if call else None
    call = _call(test)
    if call:
        return Check(line, call, "truth")
    if not isinstance(test, ast.Compare) or len(test.ops) != 1 or type(test.ops[0]) not in _OPS:
        return None
    op = _OPS[type(test.ops[0])]
    for one, other in ((test.left, test.comparators[0]), (test.comparators[0], test.left)):
        call, (ok, value) = _call(one), _literal(other)
        if call and ok and (op in ("==", "!=") or value is None or isinstance(value, bool)):
            return Check(line, call, op, value)
    return None


def check_holds(check: Check, got: Any) -> bool:
    """Python's own operator on builtin values (a Handle is equal only to itself)."""
    if check.op == "==":
        return bool(got == check.expected)
    if check.op == "!=":
        return bool(got != check.expected)
    if check.op == "is":
        return got is check.expected
    if check.op == "is not":
        return got is not check.expected
    return bool(got) if check.op == "truth" else not got
