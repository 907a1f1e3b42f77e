"""The two programs code-exec runs inside its sandboxes.

`candidate` imports the candidate's module and then only answers questions about it
(evaluate this call, get this attribute): every answer is a value on the wire. It decides
nothing, so owning this process entirely (rewriting this file's functions, writing to its
pipes by hand, `os._exit`) buys the candidate nothing but the values it answers.

`tests` runs the hidden asserts in another sandbox where no candidate code ever runs. Each
name the candidate defined is a `Remote`: calling it asks the candidate's process, and the
answer is rebuilt here from the wire as a genuine builtin value (an int is an `int`, never a
subclass with the candidate's `__eq__`). An object that is not plain data stays a handle
compared by identity that takes no operator with a value of the tests' (see `Remote`), so
no comparison, arithmetic or `in` a test makes is ever decided by candidate code. The
verdict is written to a pipe that only this process holds.

`calls` is `candidate` for the grader, which asks calls itself and needs no names.

Like `wire.py`, whose code runs into this namespace first inside a sandbox, it
imports only the standard library.
"""

from __future__ import annotations

import builtins
import keyword
import os
import sys
import types

TYPE_CHECKING = False  # not typing's: importing typing would slow every sandbox's start
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, NoReturn

if __package__:  # imported by the grader; in a sandbox the wire's code already ran here
    from .wire import (
        DATA_ATTRIBUTES,
        MAX_NAMES,
        MAX_REPLY,
        OPS,
        Link,
        WireError,
        builtin_bases,
        builtin_exception,
        decode,
        describe,
        encode,
        encode_exception,
        set_limits,
        stdlib_name,
        stdlib_object,
    )


# -- the candidate's process ---------------------------------------------------------------


class _Exports:
    """The candidate's objects the other side holds handles to, kept alive by index."""

    def __init__(self) -> None:
        self.objects: list[Any] = []
        self.index: dict[int, int] = {}

    def handle(self, obj: Any) -> int:
        key = id(obj)
        if key not in self.index:
            self.index[key] = len(self.objects)
            self.objects.append(obj)
        return self.index[key]

    def ref(self, obj: Any) -> list[Any]:
        kind = "call" if callable(obj) else "obj"
        return ["ref", self.handle(obj), getattr(type(obj), "__qualname__", "?")[:80], kind]

    def resolve(self, item: list[Any]) -> Any:
        """A handle back to its object; a standard-library name to this process's own."""
        if item[0] in ("module", "stdlib"):
            return stdlib_object(item)
        if item[0] != "ref" or len(item) < 2 or type(item[1]) is not int:
            raise WireError("a handle the candidate did not give")
        if not 0 <= item[1] < len(self.objects):
            raise WireError("a handle out of range")
        return self.objects[item[1]]

    def export(self, name: str, value: Any) -> list[Any]:
        """A module-level name as the tests side will see it."""
        if isinstance(value, types.ModuleType):
            return ["module", value.__name__]
        if isinstance(value, type) and issubclass(value, BaseException):
            return ["excclass", self.handle(value), value.__name__, builtin_bases(value)]
        module = getattr(value, "__module__", None)
        if (
            callable(value)
            and isinstance(module, str)
            and getattr(value, "__name__", "") == name
            and module.split(".")[0] in getattr(sys, "stdlib_module_names", ())
        ):
            return ["stdlib", module, name]  # `from math import sqrt`: the tests import it
        try:
            return encode(value, self.ref)
        except WireError:
            return self.ref(value)


def serve_candidate(link: Link, source: str, *, names: bool = True) -> None:
    """Import the candidate's source as module `solution`, then answer requests until the
    other side closes its end. `names`: send the module's names and values once imported
    (the tests' sandbox binds them; the grader, which only sends calls, does not ask)."""
    exports = _Exports()
    link.send(["started"])  # from here on, anything that goes wrong is the candidate's doing
    module = types.ModuleType("solution")
    module.__file__ = "solution.py"
    sys.modules["solution"] = module
    try:
        exec(compile(source, "solution.py", "exec"), module.__dict__)
    except BaseException as exc:
        link.send(["broken", encode_exception(exc)])
        return
    exported = {}
    for name, value in list(module.__dict__.items()) if names else ():
        if isinstance(name, str) and not name.startswith("__"):
            exported[name] = exports.export(name, value)
    link.send(["ready", exported])

    def decoded(item: Any) -> Any:
        return decode(item, exports.resolve)

    while True:
        request = link.recv()
        if request is None:
            return
        op, args = request[0], request[1:]
        try:
            if op == "eval":
                result = eval(compile(str(args[0]), "<case>", "eval"), module.__dict__)
            elif op == "call":
                fn, pos, kw = exports.resolve(args[0]), decoded(args[1]), decoded(args[2])
                result = fn(*pos, **kw)
            elif op == "getattr":
                result = getattr(exports.resolve(args[0]), str(args[1]))
            elif op == "setattr":
                setattr(exports.resolve(args[0]), str(args[1]), decoded(args[2]))
                result = None
            elif op == "op":
                result = OPS[str(args[1])](exports.resolve(args[0]), *decoded(args[2]))
            else:
                raise WireError(f"unknown request {op!r:.40}")
            reply = ["ok", encode(result, exports.ref)]
        except BaseException as exc:
            reply = ["raise", encode_exception(exc, exports.index.get(id(type(exc))))]
        link.send(reply)


# -- the tests' process --------------------------------------------------------------------


class LinkLost(BaseException):
    """The candidate's process died, hung up or broke the wire. A BaseException, so a
    test's `except Exception` cannot swallow it (and the verdict remembers it anyway)."""


class Unsupported(BaseException):
    """The tests asked for something that cannot cross between the two processes."""


class NotStarted(Exception):
    """The candidate's process never reached its first line of candidate code."""


class CandidateExit(BaseException):
    """The candidate raised SystemExit, KeyboardInterrupt or GeneratorExit in a call."""


class Remote:
    """A handle to one of the candidate's objects. Calls, attributes and the operand-free
    protocols in OPS (len, bool, iteration, conversions) go to the candidate, and their
    answers come back as plain data. No operator that pairs it with a value of the tests'
    is forwarded: arithmetic, comparisons, `in` and subscripts raise TypeError here, as on
    an object that defines none, so `abs(candidate(x) - 2/3) < 1e-6` or `'w' in
    candidate(x)` fails unless the candidate returned a real number or a real container.
    Nor, on an object the candidate returned (an answer, not a name of its module), is a
    method named like one of a builtin type's (`wire.DATA_ATTRIBUTES`):
    `candidate(x).startswith(p)` raises AttributeError unless the candidate returned a
    real str. A name of the candidate's module (`named`) answers any attribute, so a test
    calls a class's `pop` as `Stack.pop(s)`. Equality is the same handle, whatever the
    candidate defines."""

    __slots__ = ("__weakref__", "_handle", "_label", "_named", "_peer")

    def __init__(self, peer: TestsSide, handle: int, label: str, named: bool = False) -> None:
        object.__setattr__(self, "_peer", peer)
        object.__setattr__(self, "_handle", handle)
        object.__setattr__(self, "_label", label)
        object.__setattr__(self, "_named", named)

    def _op(self, name: str, *args: Any) -> Any:
        return self._peer.ask(["op", ["ref", self._handle], name, self._peer.wire(list(args))])

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)  # copy, pickle and friends probe these: stay local
        found = self._peer.ask(["getattr", ["ref", self._handle], name])
        if name in DATA_ATTRIBUTES and isinstance(found, Remote) and not self._named:
            # `result.startswith(expected)`: the test takes `result` for a str, and the
            # method it means is str's. The candidate's would see the tests' value and
            # could answer True. (The one object under a module name and as an answer is
            # two handles: only the name's answers these.) A data attribute
            # (`self.items`) is data, and stays.
            raise AttributeError(
                f"the candidate's {self._label} object is not plain data: {name!r} is a"
                " builtin type's method, never asked of an object the candidate returned"
                f" (a class's own: {self._label}.{name}(obj, ...))"
            )
        return found

    def __setattr__(self, name: str, value: Any) -> None:
        self._peer.ask(["setattr", ["ref", self._handle], name, self._peer.wire(value)])

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        peer = self._peer
        return peer.ask(["call", ["ref", self._handle], peer.wire(list(args)), peer.wire(kwargs)])

    def __eq__(self, other: object) -> bool:
        return self is other or (
            isinstance(other, Remote) and (other._peer, other._handle) == (self._peer, self._handle)
        )

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash(self._handle)

    def __repr__(self) -> str:
        try:
            text = self._op("repr")
        except (Exception, LinkLost):
            text = None
        return text if isinstance(text, str) else f"<candidate {self._label}>"

    def __str__(self) -> str:
        return str(self._op("str"))

    def __instancecheck__(self, obj: Any) -> bool:
        # Only the candidate's own objects can be instances of its classes; a value of the
        # tests' is never sent to it for the asking.
        return isinstance(obj, Remote) and self._op("instancecheck", obj) is True


def _forward(name: str) -> Callable[..., Any]:
    def method(self: Remote, *args: Any) -> Any:
        return self._op(name, *args)

    method.__name__ = f"__{name.rstrip('_')}__"
    return method


for _name in ("len", "bool", "iter", "next", "int", "float", "index", "neg", "pos", "abs",
              "invert"):  # fmt: skip
    setattr(Remote, f"__{_name}__", _forward(_name))
# What a TypeError in the tests calls it ("unsupported operand type(s) for -: ...").
Remote.__name__ = Remote.__qualname__ = "CandidateObject"


class TestsSide:
    """The tests' end of the link: turns test values into wire items and answers back into
    values, and remembers whether the candidate ever broke the exchange."""

    def __init__(self, link: Link) -> None:
        self.link = link
        self.remotes: dict[int, Remote] = {}
        self.exc_classes: dict[int, type[BaseException]] = {}
        self.made: dict[tuple[str, type], type[BaseException]] = {}
        self.lost: str | None = None
        self.unsupported: str | None = None

    def fail(self, why: str) -> NoReturn:
        self.lost = self.lost or why
        raise LinkLost(why)

    def wire(self, value: Any) -> list[Any]:
        def ref(obj: Any) -> list[Any]:
            if isinstance(obj, Remote):
                return ["ref", obj._handle]
            named = stdlib_name(obj)  # `len`, `str.upper`, `math`: the other side has its own
            if named is not None:
                return named
            why = f"the tests pass a {type(obj).__name__} to the candidate"
            self.unsupported = self.unsupported or why
            raise Unsupported(why + " (only data and the candidate's own objects cross)")

        return encode(value, ref)

    def local(self, item: list[Any]) -> Any:
        tag = item[0]
        if tag == "ref" and len(item) >= 3 and type(item[1]) is int:
            if item[1] not in self.remotes:
                self.remotes[item[1]] = Remote(self, item[1], str(item[2])[:80])
            return self.remotes[item[1]]
        raise WireError(f"a {tag!r} where a value belongs")

    def value(self, item: Any) -> Any:
        try:
            return decode(item, self.local)
        except WireError as exc:
            self.fail(f"the candidate's answer is not a value ({exc})")

    def exception(self, item: Any) -> BaseException:
        """A local exception for one the candidate raised: a builtin one as itself, its own
        classes as the classes the tests know them by."""
        if not isinstance(item, list) or len(item) != 5 or item[0] != "exc":
            self.fail("the candidate's exception is not in the wire format")
        _, name, bases, text, class_ref = item
        bases = [str(b) for b in bases] if isinstance(bases, list) else []
        cls = self.exc_classes.get(class_ref) if type(class_ref) is int else None
        err: BaseException | None = None
        for candidate in ([cls] if cls else []) + [
            self._exc_class(str(name), bases[i:]) for i in range(len(bases) + 1)
        ]:
            try:
                err = candidate(str(text))  # UnicodeDecodeError and kin want other arguments
                break
            except Exception:
                continue
        if err is None:
            err = Exception(str(text))
        err.from_candidate = True  # type: ignore[attr-defined]
        return err

    def _exc_class(self, name: str, bases: list[str]) -> type[BaseException]:
        # The builtin classes are this process's own, found from the names of the builtin
        # classes the exception derives from (`wire.builtin_bases`): a class the candidate
        # only named ValueError derives from Exception, and is made here as one.
        base: type = Exception
        for b in bases:
            found = builtin_exception(b)
            if found is not None:
                base = found
                break
        if not issubclass(base, Exception):
            base = CandidateExit  # SystemExit and friends must not end or skip the tests
        if getattr(builtins, name, None) is base:
            return base
        if (name, base) not in self.made:
            made = type(name if name.isidentifier() else "CandidateError", (base,), {})
            made.__module__ = "solution"
            self.made[(name, base)] = made
        return self.made[(name, base)]

    def ask(self, request: list[Any]) -> Any:
        if self.lost:
            raise LinkLost(self.lost)
        try:
            self.link.send(request)
            reply = self.link.recv()
        except WireError as exc:
            self.fail(f"the candidate broke the wire ({exc})")
        except OSError:
            reply = None
        if reply is None:
            self.fail("the candidate's process ended or stopped answering")
        if reply[0] == "ok" and len(reply) == 2:
            return self.value(reply[1])
        if reply[0] == "raise" and len(reply) == 2:
            raise self.exception(reply[1])
        self.fail("the candidate answered out of turn")

    def hello(self) -> dict[str, Any] | BaseException:
        """The candidate's names, or the exception its import raised."""
        try:
            started = self.link.recv()
        except (WireError, OSError):
            started = None
        if started is None or started[0] != "started":
            raise NotStarted("the candidate's sandbox did not start")
        try:  # from here on, what arrives is the candidate's doing
            greeting = self.link.recv(MAX_NAMES)
        except WireError as exc:
            self.fail(f"the candidate broke the wire ({exc})")
        except OSError:
            greeting = None
        if greeting is None:
            self.fail("the candidate's process ended while its code was imported")
        if greeting[0] == "broken" and len(greeting) == 2:
            return self.exception(greeting[1])
        if greeting[0] != "ready" or len(greeting) != 2 or not isinstance(greeting[1], dict):
            self.fail("the candidate's process sent something else than its names")
        return {name: item for name, item in greeting[1].items() if self._acceptable(name)}

    @staticmethod
    def _acceptable(name: Any) -> bool:
        # A builtin's name would let the candidate answer for `abs`, `len` or `isinstance`
        # in the tests' own expressions.
        return (
            isinstance(name, str)
            and name.isidentifier()
            and not keyword.iskeyword(name)
            and not name.startswith("__")
            and not hasattr(builtins, name)
        )

    def bind(self, name: str, item: Any) -> Any:
        """What `name` is in the tests' namespace (raises LookupError to leave it out)."""
        if not isinstance(item, list) or not item:
            raise LookupError(name)
        if item[0] in ("module", "stdlib"):
            # `import math` (bound as `math`) or `from math import sqrt` (as `sqrt`): the
            # tests get their own, untouched copy from the standard library.
            module = item[1] if len(item) > 1 and isinstance(item[1], str) else ""
            if item[0] == "module" and module.split(".")[0] != name:
                raise LookupError(name)
            if item[0] == "stdlib" and (len(item) != 3 or item[2] != name):
                raise LookupError(name)
            try:
                found = stdlib_object(["module", name] if item[0] == "module" else item)
            except Exception:
                raise LookupError(name) from None
            return found
        if item[0] == "ref" and len(item) >= 3 and type(item[1]) is int:
            return Remote(self, item[1], str(item[2])[:80], named=True)
        if item[0] == "excclass" and len(item) == 4 and type(item[1]) is int:
            cls = self._exc_class(name, item[3] if isinstance(item[3], list) else [])
            if cls.__module__ != "solution":  # its name is a builtin's: give it its own class
                cls = type(name, (cls,), {"__module__": "solution"})
            self.exc_classes[item[1]] = cls
            return cls
        return self.value(item)


def _failure(exc: BaseException) -> str:
    line, tb = None, exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "<tests>":
            line = tb.tb_lineno
        tb = tb.tb_next
    where = f"line {line} of the tests" if line else "the tests"
    if getattr(exc, "from_candidate", False):
        return f"{where}: the candidate raised {describe(exc)}"
    if isinstance(exc, AssertionError):
        return f"{where}: AssertionError"  # its message is the tests' own: it may hold answers
    return f"{where}: {describe(exc)}"


def run_tests(link: Link, verdict: Link, source: str) -> None:
    """Run the hidden asserts against the candidate's names; write pass, fail or error."""
    verdict.send(["started"])
    try:
        code = compile(source, "<tests>", "exec")
    except (SyntaxError, ValueError) as exc:
        verdict.send(["error", f"the tests do not compile: {type(exc).__name__}: {exc}"[:300]])
        return
    side = TestsSide(link)
    try:
        names = side.hello()
    except NotStarted as exc:
        verdict.send(["error", str(exc)])
        return
    except LinkLost as exc:
        verdict.send(["fail", str(exc)])
        return
    if isinstance(names, BaseException):
        verdict.send(["fail", f"the candidate's code raised {describe(names)} on import"])
        return
    namespace: dict[str, Any] = {"__name__": "__main__", "__builtins__": builtins}
    module = types.ModuleType("solution")
    for name, item in names.items():
        try:
            namespace[name] = bound = side.bind(name, item)
        except LookupError:
            continue
        except LinkLost as exc:
            verdict.send(["fail", str(exc)])
            return
        setattr(module, name, bound)
    sys.modules["solution"] = module
    outcome: list[Any] = ["pass"]
    try:
        exec(code, namespace)
    except BaseException as exc:
        outcome = ["fail", _failure(exc)]
    # What went wrong on the wire counts even where a test's bare `except` swallowed it.
    if side.unsupported:
        outcome = ["error", f"code-exec cannot run these tests: {side.unsupported}"]
    elif side.lost:
        outcome = ["fail", side.lost]
    verdict.send(outcome)


def main(argv: list[str]) -> None:
    role, limits = argv[0], dict(item.split("=") for item in argv[-1].split(","))
    set_limits({key: int(value) for key, value in limits.items()})
    source = sys.stdin.buffer.read().decode("utf-8", "replace")
    fds = [int(a) for a in argv[1:-1]]
    if role in ("candidate", "calls"):  # "calls": asked by the grader, which needs no names
        serve_candidate(Link(fds[0], fds[1]), source, names=role == "candidate")
    else:  # what the candidate's process says is read within MAX_REPLY, as the grader does
        run_tests(Link(fds[1], fds[0], MAX_REPLY), Link(None, fds[2]), source)
    sys.stdout.flush()
    os._exit(0)  # threads the candidate started do not keep the sandbox alive


if __name__ == "__main__":
    main(sys.argv[2:])  # argv[1] is the size of this code on stdin (see sandbox._BOOT)
