"""`--judge` values to judges, in one place.

    exact-match                    a built-in, by name (see JUDGES)
    numeric(tolerance=0.01)        a built-in with options; a bare first value is its
    json-schema(schema.json)       main argument (regex pattern, schema file, json path)
    all:exact-match,json-valid     every part passes (the lowest reward)
    any:includes,regex(^\\d+$)     any part passes (the highest reward)
    weighted:exact-match=0.7,includes=0.3
    cmd:python judge.py            an external command, kept alive as a JSONL co-process
    openai:MODEL | vllm:MODEL@URL | http(s)://...   an LLM judge with a rubric
    module:function | path/judge.py:function        your own callable

Options that apply to many judges (`--field`, `--schema`, `--tolerance`, `--timeout`,
`--spec`, `--sandbox`) come in through JudgeOptions; a value written in the judge string
wins.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..plugins import load_callable
from ..spec import Spec
from . import verifiers as v
from .checklist import checklist
from .codeexec import code_exec
from .command import command_judge
from .conduct import conduct
from .contract import Judge


@dataclass
class JudgeOptions:
    field: str | None = None
    schema: str | None = None
    tolerance: float | None = None
    timeout: float = 60.0
    spec: Spec | None = None
    rubric: str | None = None
    use_privileged: bool = False
    model: str | None = None
    concurrency: int = 8
    sandbox: str | None = None  # code-exec: bubblewrap (the default) or none


Factory = Callable[[JudgeOptions, list[Any], dict[str, Any]], Judge]


def _kw(opts: JudgeOptions, kwargs: dict[str, Any], *names: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in names:
        value = getattr(opts, name, None)
        if value is not None:
            out[name] = value
    out.update(kwargs)
    return out


def _one(args: list[Any], what: str, fallback: Any = None) -> Any:
    if len(args) > 1:
        raise ConfigError(f"{what}: takes one positional value, got {len(args)}")
    if args:
        return args[0]
    if fallback is None:
        raise ConfigError(f"{what}: needs a value, e.g. {what}(VALUE)")
    return fallback


def _json_schema(o: JudgeOptions, a: list[Any], k: dict[str, Any]) -> Judge:
    schema = k.pop("schema", None) or _one(a, "json-schema", o.schema)
    return v.json_schema(str(schema), **k)


def _code_exec(o: JudgeOptions, a: list[Any], k: dict[str, Any]) -> Judge:
    k.setdefault("timeout", min(o.timeout, 30.0) if o.timeout > 0 else 30.0)  # 0: no limit
    return code_exec(**_kw(o, k, "field", "tolerance", "sandbox"))


JUDGES: dict[str, Factory] = {
    "exact-match": lambda o, a, k: v.exact_match(**_kw(o, k, "field")),
    "includes": lambda o, a, k: v.includes(**_kw(o, k, "field")),
    "regex": lambda o, a, k: v.regex(
        _one(a, "regex") if a else k.pop("pattern", None), **_kw(o, k, "field")
    ),
    "multiple-choice": lambda o, a, k: v.multiple_choice(**_kw(o, k, "field")),
    "numeric": lambda o, a, k: v.numeric(**_kw(o, k, "field", "tolerance")),
    "math-equal": lambda o, a, k: v.math_equal(**_kw(o, k, "field")),
    "json-valid": lambda o, a, k: v.json_valid(**k),
    "json-schema": _json_schema,
    "json-field": lambda o, a, k: v.json_field(
        str(k.pop("path", None) or _one(a, "json-field")), **_kw(o, k, "field")
    ),
    "code-exec": _code_exec,
    "conduct": lambda o, a, k: conduct(spec=o.spec, **k),
    "checklist": lambda o, a, k: checklist(spec=o.spec, **k),
}
DEFAULT_JUDGE = "checklist"
# Options whose value is a number: caught when the judge is named, not on every row.
_NUMBER_OPTIONS = frozenset(
    {"tolerance", "relative", "timeout", "memory_mb", "file_mb", "max_procs"}
)
_LLM_PREFIXES = ("openai:", "vllm:", "http://", "https://")


def _split_top(text: str, sep: str = ",") -> list[str]:
    """Split on `sep` outside parentheses, so regex(a,b) stays one part."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(0, depth - 1)
        elif ch == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def _value(text: str) -> Any:
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            continue
    return text


def _builtin(text: str, opts: JudgeOptions) -> Judge:
    name, args_text = text, ""
    if "(" in text:
        if not text.endswith(")"):
            raise ConfigError(f"judge {text!r}: unbalanced parentheses")
        name, args_text = text[:-1].split("(", 1)
    name = name.strip().replace("_", "-")
    factory = JUDGES.get(name)
    if factory is None:
        known = ", ".join(sorted(JUDGES))
        raise ConfigError(
            f"unknown judge {name!r}; built-ins: {known}; or module:function, "
            "cmd:COMMAND, openai:MODEL"
        )
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    for part in _split_top(args_text):
        key, eq, val = part.partition("=")
        if eq and key.strip().isidentifier():
            kwargs[key.strip()] = _value(val.strip())
            if key.strip() in _NUMBER_OPTIONS and not isinstance(kwargs[key.strip()], (int, float)):
                raise ConfigError(f"judge {text!r}: {key.strip()} must be a number, got {val!r}")
        else:
            args.append(part)
    try:
        judge = factory(opts, args, kwargs)
    except TypeError as exc:
        raise ConfigError(f"judge {text!r}: {exc}") from None
    if args_text.strip():
        # The options are part of what graded the row: regex(x) is not regex(y).
        judge.name = f"{name}({args_text.strip()})"
        judge.meta = {**judge.meta, "version": judge.name}
    return judge


def _callable(ref: str) -> Judge:
    # A user's callable may block (HTTP, a model): it runs in worker threads, or on the
    # event loop when it is async, under the per-row timeout.
    fn = load_callable(ref, what="judge")
    return Judge(name=ref, fn=fn, meta={"version": ref})


def parse_judge(value: str | None, opts: JudgeOptions | None = None) -> Judge:
    """The judge a `--judge` value names. None means the default: conduct × checklist."""
    opts = opts or JudgeOptions()
    text = (value or DEFAULT_JUDGE).strip()
    if not text:
        raise ConfigError("--judge is empty")
    if text.startswith("cmd:"):
        return command_judge(text[4:].strip(), timeout=opts.timeout)
    if text.startswith(_LLM_PREFIXES):
        from .llm import llm_judge

        return llm_judge(
            text,
            rubric=opts.rubric,
            spec=opts.spec,
            model=opts.model,
            use_privileged=opts.use_privileged,
            timeout=opts.timeout,
            concurrency=opts.concurrency,
        )
    for kind in ("all", "any", "weighted"):
        if text.startswith(kind + ":"):
            return _composite(kind, text[len(kind) + 1 :], opts)
    if ":" in text.split("(", 1)[0] or Path(text.split(":", 1)[0]).suffix == ".py":
        return _callable(text)
    return _builtin(text, opts)


def _composite(kind: str, body: str, opts: JudgeOptions) -> Judge:
    parts = _split_top(body)
    if not parts:
        raise ConfigError(f"{kind}: lists no judges, e.g. {kind}:exact-match,json-valid")
    if kind != "weighted":
        judges = [parse_judge(p, opts) for p in parts]
        return v.all_of(*judges) if kind == "all" else v.any_of(*judges)
    pairs: list[tuple[Judge, float]] = []
    for part in parts:
        head, eq, weight = part.rpartition("=")
        if not eq or "(" in weight:
            raise ConfigError(f"weighted: {part!r} needs a weight, e.g. {part}=0.5")
        try:
            pairs.append((parse_judge(head, opts), float(weight)))
        except ValueError:
            raise ConfigError(f"weighted: weight {weight!r} is not a number") from None
    return v.weighted(pairs)
