"""The wire between code-exec's grader and its two sandboxed processes.

Every value crosses as a JSON list whose first item names its type, and is rebuilt on the
other side from builtin types only: whatever the sender was, the receiver holds a genuine
`int`, `str` or `list`, never an object whose `__eq__` someone else wrote. What is not
plain data crosses as a handle, and a standard-library object (`len`, `math`) by its name,
each side using its own copy. A message is one line of JSON.

This file runs inside the sandboxes too (see `sandbox.runner_code`), where nothing of
whileai is importable: it imports only the standard library, and not `json` or `typing`,
whose imports (`re`, above all) were a third of a sandbox's start-up.
"""

from __future__ import annotations

import builtins
import operator
import os
import sys
import types

TYPE_CHECKING = False  # not typing's own: see above
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

MAX_LINE = 16 << 20  # one message from a trusted side; a bigger one is a broken peer
# One message from the candidate's process, read before it is decoded. Decoding costs up
# to 23 bytes of the reader's memory per byte of line (a list of empty lists), so a 16 MiB
# line took a grader 450 MB. A reply this big is no function's answer: it fails the run.
MAX_REPLY = 1 << 20
# The names message (`ready`) carries the values of the candidate's module-level names;
# only the tests' sandbox asks for it, and reads it within that sandbox's own memory limit.
MAX_NAMES = MAX_LINE
MAX_DEPTH = 100  # nesting of one value

# What a test may ask of a candidate object besides calls and attributes: only questions
# that carry nothing of the tests' (an operand-free protocol), whose answer comes back as
# plain data the tests' own code then judges. Any operator with another operand is absent
# on purpose: `obj - expected`, `expected in obj`, `obj == expected`, `obj[key]` would hand
# the tests' value to the candidate's `__sub__`, `__contains__`, `__eq__` or `__getitem__`,
# which can answer 0.0 or True without knowing the answer.
OPS: dict[str, Callable[..., Any]] = {
    "len": len,
    "bool": bool,
    "str": str,
    "repr": repr,
    "iter": iter,
    "next": next,
    "int": int,
    "float": float,
    "index": operator.index,
    "neg": operator.neg,
    "pos": operator.pos,
    "abs": abs,
    "invert": operator.invert,
    "instancecheck": lambda cls, obj: isinstance(obj, cls),  # obj: a candidate's handle
}


# The types values cross as (`encode`): every answer that is not a handle is one of them.
DATA_TYPES = (type(None), bool, int, float, complex, str, bytes, bytearray, tuple, list,
              frozenset, set, dict)  # fmt: skip
# Their public attributes (`startswith`, `count`, `get`, `issubset`, ...): what a test
# calls on a value it takes for data. The tests' side never asks one of a handle.
DATA_ATTRIBUTES = frozenset(
    name for kind in DATA_TYPES for name in dir(kind) if not name.startswith("_")
)


class WireError(Exception):
    """A message that is not in the wire format."""


# -- the wire format: every value is a JSON list whose first item names its type ----------


def encode(value: Any, ref: Callable[[Any], list[Any]], depth: int = 0) -> list[Any]:
    """`value` on the wire; what is not plain data goes through `ref` as a handle."""
    if value is None:
        return ["none"]
    if value is True or value is False:
        return ["bool", value]
    if isinstance(value, int):
        return ["int", format(int(value), "x")]  # hex: exact, and no str-digits limit
    if isinstance(value, float):
        return ["float", float(value).hex()]
    if isinstance(value, complex):
        return ["complex", value.real.hex(), value.imag.hex()]
    if isinstance(value, str):
        return ["str", str.__str__(value)]
    if isinstance(value, bytes):
        return ["bytes", bytes(value).hex()]
    if isinstance(value, bytearray):
        return ["bytearray", bytes(value).hex()]
    if depth >= MAX_DEPTH:
        raise WireError(f"a value nested deeper than {MAX_DEPTH}")
    for kind, tag in ((tuple, "tuple"), (list, "list"), (frozenset, "frozenset"), (set, "set")):
        if isinstance(value, kind):
            return [tag, [encode(v, ref, depth + 1) for v in value]]
    if isinstance(value, dict):
        return ["dict", [[encode(k, ref, depth + 1), encode(v, ref, depth + 1)]
                         for k, v in value.items()]]  # fmt: skip
    return ref(value)


_CONTAINERS: dict[str, Callable[[list[Any]], Any]] = {
    "list": list,
    "tuple": tuple,
    "set": set,
    "frozenset": frozenset,
}


def _text(item: list[Any], i: int) -> str:
    if len(item) <= i or not isinstance(item[i], str):
        raise WireError(f"{item[0]!r} without its text")
    return item[i]


def decode(item: Any, ref: Callable[[list[Any]], Any], depth: int = 0) -> Any:
    """The value `item` stands for, built from builtin types only; handles go to `ref`."""
    if not isinstance(item, list) or not item or not isinstance(item[0], str):
        raise WireError("a value that is not a tagged list")
    tag = item[0]
    try:
        if tag == "none":
            return None
        if tag == "bool":
            if len(item) != 2 or type(item[1]) is not bool:
                raise WireError("a bool that is not true or false")
            return item[1]
        if tag == "int":
            return int(_text(item, 1), 16)
        if tag == "float":
            return float.fromhex(_text(item, 1))
        if tag == "complex":
            return complex(float.fromhex(_text(item, 1)), float.fromhex(_text(item, 2)))
        if tag == "str":
            return _text(item, 1)
        if tag in ("bytes", "bytearray"):
            data = bytes.fromhex(_text(item, 1))
            return data if tag == "bytes" else bytearray(data)
        if tag in ("ref", "excclass", "module", "stdlib"):
            return ref(item)
        if depth >= MAX_DEPTH:
            raise WireError(f"a value nested deeper than {MAX_DEPTH}")
        if len(item) != 2 or not isinstance(item[1], list):
            raise WireError(f"{tag!r} without its items")
        if tag in _CONTAINERS:
            return _CONTAINERS[tag]([decode(v, ref, depth + 1) for v in item[1]])
        if tag == "dict":
            out = {}
            for pair in item[1]:
                if not isinstance(pair, list) or len(pair) != 2:
                    raise WireError("a dict item that is not a pair")
                out[decode(pair[0], ref, depth + 1)] = decode(pair[1], ref, depth + 1)
            return out
    except (ValueError, TypeError, OverflowError, MemoryError, RecursionError) as exc:
        raise WireError(f"a bad {tag!r}: {type(exc).__name__}") from None
    raise WireError(f"an unknown type tag {tag!r:.40}")


# The builtin exception classes by identity, taken when this code starts: in a sandbox,
# before any candidate code runs. A class is a builtin one by being that object, never by
# its name: the candidate's `class ValueError(Exception)`, or whatever it puts in
# `builtins.ValueError` later, is not ValueError.
_BUILTIN_EXCEPTIONS = {
    id(cls): name
    for name, cls in vars(builtins).items()
    if isinstance(cls, type) and issubclass(cls, BaseException) and cls.__name__ == name
}


def builtin_bases(cls: type) -> list[str]:
    """The names of the builtin exception classes `cls` derives from, most derived first."""
    mro = cls.__mro__ if isinstance(cls, type) else ()
    return [_BUILTIN_EXCEPTIONS[id(c)] for c in mro if id(c) in _BUILTIN_EXCEPTIONS]


def builtin_exception(name: Any) -> type[BaseException] | None:
    """The builtin exception class `name` names in this process (an alias such as IOError
    included), or None. Run where it is trusted: the grader and the tests' sandbox."""
    found = getattr(builtins, name, None) if isinstance(name, str) else None
    if isinstance(found, type) and issubclass(found, BaseException):
        return found
    return None


def encode_exception(exc: BaseException, class_ref: int | None = None) -> list[Any]:
    """An exception on the wire: its class's name, the builtin classes it derives from
    (see `builtin_bases`), its text."""
    kind = type(exc)
    bases = builtin_bases(kind)
    try:
        text = str(exc)
    except Exception:
        text = ""
    return ["exc", kind.__name__, bases, " ".join(text.split())[:300], class_ref]


# -- messages: JSON without the json package; `_json` is its C half ---------------------


class _ScanContext:
    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int

    @staticmethod
    def parse_constant(name: str) -> float:
        raise ValueError(f"{name} is not JSON")


def dumps(obj: Any) -> str:
    """JSON for a message: lists, str-keyed dicts, str, int, bool and None."""
    if obj is None:
        return "null"
    if obj is True or obj is False:
        return "true" if obj else "false"
    if type(obj) is int:
        return int.__repr__(obj)
    if type(obj) is str:
        return _quote(obj)
    if type(obj) in (list, tuple):
        return "[" + ",".join([dumps(v) for v in obj]) + "]"
    if type(obj) is dict:
        return "{" + ",".join([_quote(str(k)) + ":" + dumps(v) for k, v in obj.items()]) + "}"
    raise WireError(f"a {type(obj).__name__} in a message")


def loads(text: str) -> Any:
    """The value of one JSON document; WireError for anything else."""
    text = text.strip()
    try:
        value, end = _scan(text, 0)
    except (StopIteration, ValueError, RecursionError):
        raise WireError("a message that is not JSON") from None
    if end != len(text):
        raise WireError("a message with trailing data")
    return value


try:
    import _json

    _scan: Callable[[str, int], tuple[Any, int]] = _json.make_scanner(
        _ScanContext()  # type: ignore[arg-type]
    )
    _quote: Callable[[str], str] = _json.encode_basestring_ascii
except (ImportError, AttributeError):  # not CPython: the json package then
    import json as _json_package

    _scan = _json_package.JSONDecoder(parse_constant=_ScanContext.parse_constant).raw_decode
    _quote = _json_package.encoder.encode_basestring_ascii


class Link:
    """Line-delimited JSON over a pair of pipes (blocking: the grader's wall clock is the
    deadline for both ends). `limit` caps one message read, before it is decoded."""

    def __init__(self, read_fd: int | None, write_fd: int | None, limit: int = MAX_LINE) -> None:
        self.inp = os.fdopen(read_fd, "rb") if read_fd is not None else None
        self.out = os.fdopen(write_fd, "wb") if write_fd is not None else None
        self.limit = limit

    def send(self, message: list[Any]) -> None:
        assert self.out is not None
        self.out.write(dumps(message).encode() + b"\n")
        self.out.flush()

    def recv(self, limit: int | None = None) -> list[Any] | None:
        """The next message, or None when the peer closed its end."""
        assert self.inp is not None
        limit = limit or self.limit
        line = self.inp.readline(limit + 1)
        if not line:
            return None
        if len(line) > limit or not line.endswith(b"\n"):
            raise WireError(over_limit(limit))
        try:
            message = loads(line.decode("utf-8", "replace"))
        except MemoryError:
            raise WireError("a message too big to decode") from None
        if not isinstance(message, list) or not message or not isinstance(message[0], str):
            raise WireError("a message that is not a tagged list")
        return message


def over_limit(limit: int) -> str:
    """Why a message over `limit` bytes was refused."""
    size = f"{limit >> 20} MiB" if limit >= 1 << 20 else f"{limit >> 10} KiB"
    return f"a message over the {size} limit"


def set_limits(limits: dict[str, int]) -> None:
    """Lower this process's rlimits before anything it runs is untrusted. Without
    CAP_SYS_RESOURCE (bubblewrap drops every capability) nothing can raise them again."""
    import resource

    names = {"cpu": "RLIMIT_CPU", "as": "RLIMIT_AS", "fsize": "RLIMIT_FSIZE",
             "nofile": "RLIMIT_NOFILE", "nproc": "RLIMIT_NPROC", "core": "RLIMIT_CORE"}  # fmt: skip
    for key, value in limits.items():
        which = getattr(resource, names[key])
        soft, hard = (value, value + 1) if key == "cpu" else (value, value)
        resource.setrlimit(which, (soft, hard))  # soft CPU: SIGXCPU; hard: SIGKILL


def describe(exc: BaseException) -> str:
    """`Kind: text` of an exception, on one short line."""
    try:
        text = " ".join(str(exc).split())[:200]
    except Exception:
        text = ""
    kind = type(exc)
    name = kind.__name__
    if kind.__module__ == "solution":  # the candidate's class (as the tests' side made it)
        name = kind_name(name, builtin_bases(kind))
    return f"{name}: {text}" if text else name


def kind_name(name: str, bases: list[Any]) -> str:
    """An exception class's name for a reason; one that only borrows a builtin's name says
    so (`raise ValueError` of the candidate's `class ValueError(Exception)`)."""
    name = name[:60]
    if builtin_exception(name) is not None and (not bases or bases[0] != name):
        return f"{name} (the candidate's own class, not the builtin)"
    return name


# -- the standard library, named rather than sent ------------------------------------------


def _stdlib(module: str) -> bool:
    return module.split(".")[0] in getattr(sys, "stdlib_module_names", ())


def stdlib_name(obj: Any) -> list[Any] | None:
    """`obj` as a standard-library name (`["module", "math"]`, `["stdlib", "builtins",
    "str.upper"]`) when it is one, so the other side can use its own copy; else None."""
    if isinstance(obj, types.ModuleType):
        return ["module", obj.__name__] if _stdlib(obj.__name__) else None
    qualname = getattr(obj, "__qualname__", None)
    module = getattr(obj, "__module__", None) or getattr(
        getattr(obj, "__objclass__", None), "__module__", None
    )
    if not isinstance(qualname, str) or not isinstance(module, str) or not _stdlib(module):
        return None
    item = ["stdlib", module, qualname]
    try:
        return item if stdlib_object(item) is obj else None
    except Exception:
        return None


def stdlib_object(item: list[Any]) -> Any:
    """The object a standard-library name stands for, in this process."""
    import importlib

    if len(item) < 2 or not isinstance(item[1], str) or not _stdlib(item[1]):
        raise WireError("a name outside the standard library")
    found: Any = importlib.import_module(item[1])
    if item[0] == "stdlib":
        if len(item) != 3 or not isinstance(item[2], str):
            raise WireError("a standard-library name without its attribute")
        for part in item[2].split("."):
            found = getattr(found, part)
    return found
