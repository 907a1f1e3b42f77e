"""`--judge` values to judges, in one place.

    exact-match                    a built-in, by name (see JUDGES)
    numeric(tolerance=0.01)        a built-in with options; a bare first value is its
    json-schema(schema.json)       main argument (regex pattern, schema file, json path)
    all:exact-match,json-valid     every part passes (the lowest reward)
    any:includes,regex(^\\d+$)     any part passes (the highest reward)
    weighted:exact-match=0.7,includes=0.3
    cmd:python judge.py            an external command, kept alive as a JSONL co-process
    rm:RUN                         a reward model `whileai train --method rm` trained (its
                                   run id or adapter folder): 0/1 against its threshold
    openai:MODEL | vllm:MODEL@URL | http(s)://...   an LLM judge with a rubric
    module:function | path/judge.py:function        your own callable

Built-ins and plug-ins are found by name in the one registry (`whileai_core.registry`,
where each verifier registers with a decorator and a package adds its own through the
`whileai.judges` entry-point group). Options that apply to many judges (`--field`,
`--schema`, `--tolerance`, `--timeout`, `--spec`, `--sandbox`) come in through JudgeOptions; a value
written in the judge string wins. An LLM judge gets its client from the same factory as
agents and writers (`models.factory.client_for`), so `--cache`, the concurrency bound and
the failure counts are shared the same way.
"""

from __future__ import annotations

import dataclasses
import inspect
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..models.options import ModelOptions
from ..plugins import load_callable
from ..registry import JUDGES, Entry, is_model_ref
from ..spec import Spec
from . import verifiers as v
from .codeexec import code_exec
from .command import command_judge
from .contract import Judge, as_judge


@dataclass
class JudgeOptions:
    field: str | None = None
    schema: str | None = None
    tolerance: float | None = None
    timeout: float = 60.0
    spec: Spec | None = None
    rubric: str | None = None
    use_privileged: bool = False
    sandbox: str | None = None  # code-exec: bubblewrap (the default) or none
    # A rating judge's scale (`grade --scale 1,5`): its verdicts map to (r - lo) / (hi - lo).
    scale: tuple[float, float] | None = None
    # How an LLM judge reaches its model: the same knobs, and the same per-run clients, as
    # the agent and the writer (`model` is the name for a bare URL).
    models: ModelOptions = dataclasses.field(default_factory=lambda: ModelOptions(concurrency=8))


@JUDGES.register("code-exec", options=("field", "tolerance", "sandbox"))
def _code_exec(*, judge_options: JudgeOptions, timeout: float | None = None, **kw: Any) -> Judge:
    """Run the reply's code against the row's hidden tests, sandboxed."""
    if timeout is None:  # --timeout 0 means no per-row limit, not a 0 s wall for the code
        timeout = min(judge_options.timeout, 30.0) if judge_options.timeout > 0 else 30.0
    return code_exec(timeout=timeout, **kw)


DEFAULT_JUDGE = "checklist"
# Options whose value is a number: caught when the judge is named, not on every row.
_NUMBER_OPTIONS = frozenset(
    {"tolerance", "relative", "timeout", "memory_mb", "file_mb", "max_procs"}
)


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
    name = name.strip()
    entry = JUDGES.get(name) or JUDGES.get(name.replace("_", "-"))
    if entry is None:
        known = ", ".join(JUDGES.names())
        raise ConfigError(
            f"unknown judge {name!r}; registered: {known}; or module:function, "
            "cmd:COMMAND, openai:MODEL"
        )
    name = entry.name
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
    judge = _build(entry, opts, args, kwargs, text)
    if args_text.strip():
        # The options are part of what graded the row: regex(x) is not regex(y).
        judge.name = f"{name}({args_text.strip()})"
        judge.meta = {**judge.meta, "version": judge.name}
    return judge


def _build(
    entry: Entry, opts: JudgeOptions, args: list[Any], kwargs: dict[str, Any], text: str
) -> Judge:
    """Call a registered factory: the positional value fills `entry.main`, the shared
    options it declares fill in what the judge string left out."""
    params = inspect.signature(entry.factory).parameters
    positional: list[Any] = []
    if len(args) > 1:
        raise ConfigError(f"{entry.name}: takes one positional value, got {len(args)}")
    if args:
        if entry.main is None:
            positional = args
        elif entry.main in kwargs:
            raise ConfigError(f"judge {text!r}: {entry.main} is given twice")
        else:
            kwargs[entry.main] = args[0]
    for name in entry.options:
        value = getattr(opts, name, None)
        if value is not None:
            kwargs.setdefault(name, value)
    if "judge_options" in params:
        kwargs["judge_options"] = opts
    main = params.get(entry.main) if entry.main else None
    if main is not None and main.default is inspect.Parameter.empty and entry.main not in kwargs:
        raise ConfigError(f"{entry.name}: needs a value, e.g. {entry.name}(VALUE)")
    try:
        made = entry.factory(*positional, **kwargs)
    except TypeError as exc:
        raise ConfigError(f"judge {text!r}: {exc}") from None
    return made if isinstance(made, Judge) else as_judge(made, entry.name)


def _callable(ref: str) -> Judge:
    # A user's callable may block (HTTP, a model): it runs in worker threads, or on the
    # event loop when it is async, under the per-row timeout.
    fn = load_callable(ref, what="judge")
    return Judge(name=ref, fn=fn, meta={"version": ref})


@dataclass(frozen=True)
class JudgeRecipe:
    """What `parse_judge` was given: enough to build the same judge in another process
    (an executor's worker). The options travel without the run's model clients."""

    value: str | None
    options: JudgeOptions

    def portable(self) -> JudgeRecipe:
        """This recipe without live clients, so it pickles."""
        models = dataclasses.replace(self.options.models, clients={})
        return JudgeRecipe(self.value, dataclasses.replace(self.options, models=models))

    def build(self) -> Judge:
        return parse_judge(self.value, self.options)


def parse_judge(value: str | None, opts: JudgeOptions | None = None) -> Judge:
    """The judge a `--judge` value names. None means the default: conduct × checklist.
    With `opts.scale` the judge is read as a rater on that scale."""
    opts = opts or JudgeOptions()
    judge = _parse(value, opts)
    if opts.scale is not None and judge.scale is None:
        judge.scale = opts.scale
        judge.meta = {**judge.meta, "scale": list(opts.scale)}
    judge.recipe = JudgeRecipe(value, opts)
    return judge


def _parse(value: str | None, opts: JudgeOptions) -> Judge:
    text = (value or DEFAULT_JUDGE).strip()
    if not text:
        raise ConfigError("--judge is empty")
    if text.startswith("cmd:"):
        return command_judge(text[4:].strip(), timeout=opts.timeout)
    if text.startswith("rm:"):  # a reward model `whileai train --method rm` trained
        from ..train.rm import reward_model_judge

        return reward_model_judge(text[3:].strip(), spec=opts.spec)
    if is_model_ref(text):
        from .llm import llm_judge

        return llm_judge(
            text,
            rubric=opts.rubric,
            spec=opts.spec,
            use_privileged=opts.use_privileged,
            options=opts.models,
            scale=opts.scale,
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
