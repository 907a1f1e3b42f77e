"""Specs: an agent's tools and policy, loaded from a folder or a single JSON/YAML file.

A folder holds `spec.json` or `spec.yaml`, optionally `rubric.md` (what doing the job
well means, for judges) and `situations.jsonl` (seed situations). Tools come in the
OpenAI `{"type": "function", "function": {...}}` shape or as the bare function dict;
both are normalised to the bare dict. The policy is split into rule clauses because
each clause owns its own block of grid cells.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field

from .errors import SpecError

ToolKind = Literal["read", "write"]

_WRITE_VERBS = (
    "add", "apply", "approve", "assign", "book", "cancel", "change", "charge", "close",
    "commit", "create", "delete", "deploy", "disable", "edit", "enable", "issue", "merge",
    "modify", "move", "open", "pay", "post", "publish", "push", "refund", "reject", "remove",
    "rename", "reopen", "replace", "reset", "revoke", "run", "schedule", "send", "set",
    "submit", "transfer", "update", "upgrade", "write",
)  # fmt: skip
_READ_VERBS = (
    "check", "describe", "fetch", "find", "get", "inspect", "list", "lookup", "look",
    "query", "read", "retrieve", "search", "show", "status", "view",
)  # fmt: skip


class Tool(BaseModel):
    """One tool in the bare function shape, plus whether it reads or changes the world."""

    model_config = ConfigDict(extra="allow")

    name: str
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    kind: ToolKind = "read"

    def openai(self) -> dict[str, Any]:
        """The OpenAI function-calling wire shape, with the schema exactly as given."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }

    @property
    def required(self) -> list[str]:
        req = self.parameters.get("required") or []
        return [r for r in req if isinstance(r, str)]

    @property
    def properties(self) -> dict[str, Any]:
        props = self.parameters.get("properties") or {}
        return props if isinstance(props, dict) else {}


class Spec(BaseModel):
    """Everything a run needs to know about the agent under test."""

    name: str
    tools: list[Tool]
    policy: str = ""
    rules: list[str] = Field(default_factory=list)
    rubric: str | None = None
    situations: list[dict[str, Any]] = Field(default_factory=list)
    agent: str | None = None
    source: str = ""
    raw: dict[str, Any] = Field(default_factory=dict, repr=False)

    @property
    def policy_sha(self) -> str:
        """Short hash of the system prompt: the lineage stamp rows carry."""
        return hashlib.sha256(self.policy.encode()).hexdigest()[:16]

    def tool(self, name: str) -> Tool | None:
        return next((t for t in self.tools if t.name == name), None)

    def openai_tools(self) -> list[dict[str, Any]]:
        return [t.openai() for t in self.tools]


def split_rules(policy: str) -> list[str]:
    """Rule clauses of a policy: numbered or bulleted lines when it has them, else sentences."""
    lines = [ln.strip() for ln in policy.splitlines() if ln.strip()]
    marked = re.compile(r"^(?:\d+[.)]|[-*•]|\(\d+\))\s+(.*)$")
    rules = [m.group(1).strip() for ln in lines if (m := marked.match(ln))]
    if rules:
        return rules
    text = " ".join(lines)
    parts = re.split(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])", text)
    return [p.strip() for p in parts if len(p.strip()) > 1]


def guess_kind(name: str, description: str = "") -> ToolKind:
    """Read or write, from the verbs in the tool's name first and its description second."""
    words = re.findall(r"[a-z]+", re.sub(r"([a-z])([A-Z])", r"\1 \2", name).lower())
    for word in words:
        if word in _READ_VERBS:
            return "read"
        if word in _WRITE_VERBS:
            return "write"
    for word in re.findall(r"[a-z]+", description.lower())[:3]:
        # Descriptions say "Deletes the widget" or "Searches docs": try the bare verb too.
        for form in (word, word[:-1], word[:-2]):
            if form in _READ_VERBS:
                return "read"
            if form in _WRITE_VERBS:
                return "write"
    return "read"


def _normalise_tool(raw: Any, index: int, source: str, kinds: dict[str, Any]) -> Tool:
    if not isinstance(raw, dict):
        raise SpecError(source, f"tools[{index}] is not an object")
    fn = raw.get("function") if raw.get("type") == "function" or "function" in raw else raw
    if not isinstance(fn, dict):
        raise SpecError(source, f"tools[{index}].function is not an object")
    name = fn.get("name")
    if not isinstance(name, str) or not name.strip():
        raise SpecError(source, f"tools[{index}] has no name")
    params = fn.get("parameters", {"type": "object", "properties": {}})
    if not isinstance(params, dict) or params.get("type", "object") != "object":
        raise SpecError(
            source, f"tool '{name}': parameters must be a JSON-schema object with type 'object'"
        )
    props = params.get("properties", {})
    if not isinstance(props, dict):
        raise SpecError(source, f"tool '{name}': parameters.properties must be an object")
    required = params.get("required", [])
    if not isinstance(required, list) or any(not isinstance(r, str) for r in required):
        raise SpecError(source, f"tool '{name}': parameters.required must be a list of names")
    description = fn.get("description") or ""
    if not isinstance(description, str):
        raise SpecError(source, f"tool '{name}': description must be a string")
    kind = kinds.get(name) or fn.get("x-kind") or raw.get("kind")
    if kind is not None and kind not in ("read", "write"):
        raise SpecError(source, f"tool '{name}': kind must be 'read' or 'write', not {kind!r}")
    extra = {k: v for k, v in fn.items() if k not in ("name", "description", "parameters", "kind")}
    return Tool(
        name=name,
        description=description,
        parameters=params,
        kind=kind or guess_kind(name, description),
        **extra,
    )


def _read_structured(path: Path) -> Any:
    text = _read_text(path)
    if path.suffix in (".yaml", ".yml"):
        import yaml

        try:
            return yaml.safe_load(text)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
            problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
            raise SpecError(where, f"unreadable YAML: {problem}") from None
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise SpecError(f"{path}:{exc.lineno}", f"unreadable JSON: {exc.msg}") from None


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise SpecError(str(path), "not UTF-8 text") from None
    except OSError as exc:
        raise SpecError(str(path), f"cannot read ({exc.strerror or exc})") from None


def _read_situations(path: Path) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for lineno, line in enumerate(_read_text(path).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            raise SpecError(f"{path}:{lineno}", f"not valid JSON ({exc.msg})") from None
        if isinstance(item, str):
            item = {"prompt": item}
        if not isinstance(item, dict):
            raise SpecError(f"{path}:{lineno}", "a situation must be an object or a string")
        out.append(item)
    return out


def load_spec(target: str | Path) -> Spec:
    """Load a spec folder or file; any problem is one SpecError line, never a traceback."""
    path = Path(target)
    if not path.exists():
        raise SpecError(str(path), "no such spec folder or file")
    folder = path if path.is_dir() else path.parent
    if path.is_dir():
        candidates = [path / n for n in ("spec.json", "spec.yaml", "spec.yml")]
        found = [c for c in candidates if c.exists()]
        if not found:
            raise SpecError(str(path), "folder has no spec.json or spec.yaml")
        spec_file = found[0]
    else:
        spec_file = path
    data = _read_structured(spec_file)
    if not isinstance(data, dict):
        raise SpecError(str(spec_file), "a spec must be an object with 'tools' and 'policy'")
    source = str(spec_file)
    tools_raw = data.get("tools")
    if not isinstance(tools_raw, list) or not tools_raw:
        raise SpecError(source, "no tools: 'tools' must be a non-empty list")
    kinds = data.get("tool_kinds") or {}
    if not isinstance(kinds, dict):
        raise SpecError(source, "'tool_kinds' must map tool names to 'read' or 'write'")
    tools = [_normalise_tool(t, i, source, kinds) for i, t in enumerate(tools_raw)]
    seen: set[str] = set()
    for tool in tools:
        if tool.name in seen:
            raise SpecError(source, f"duplicate tool name '{tool.name}'")
        seen.add(tool.name)
    unknown = set(kinds) - seen
    if unknown:
        raise SpecError(source, f"'tool_kinds' names unknown tools: {', '.join(sorted(unknown))}")
    policy = data.get("policy", data.get("system_prompt", "")) or ""
    if not isinstance(policy, str):
        raise SpecError(source, "'policy' / 'system_prompt' must be a string")
    rubric = data.get("rubric")
    if rubric is not None and not isinstance(rubric, str):
        raise SpecError(source, "'rubric' must be a string")
    if path.is_dir() and (folder / "rubric.md").exists():
        rubric = _read_text(folder / "rubric.md")
    situations_raw = data.get("situations") or []
    if not isinstance(situations_raw, list):
        raise SpecError(source, "'situations' must be a list")
    situations = [s if isinstance(s, dict) else {"prompt": str(s)} for s in situations_raw]
    if path.is_dir() and (folder / "situations.jsonl").exists():
        situations += _read_situations(folder / "situations.jsonl")
    agent = data.get("agent")
    if agent is not None and not isinstance(agent, str):
        raise SpecError(source, "'agent' must be a string such as 'seeded' or 'openai:MODEL'")
    name = data.get("name") or (path.name if path.is_dir() else path.stem)
    return Spec(
        name=str(name),
        tools=tools,
        policy=policy,
        rules=split_rules(policy),
        rubric=rubric,
        situations=situations,
        agent=agent,
        source=source,
        raw=data,
    )


# -- what a tool's name says -------------------------------------------------------------
# The judges, the seeded agent and the mock world all read tool names the same way; the
# reading lives with the tools, so none of them imports another stage to do it.

_IRREGULAR = {"cancel": "cancelled", "send": "sent", "pay": "paid", "set": "set", "reset": "reset",
              "put": "put", "run": "run", "shut": "shut", "rebook": "rebooked"}  # fmt: skip


def is_key_param(name: str) -> bool:
    """Parameters that name an entity (ids, numbers, codes, emails) rather than describe it."""
    low = name.lower()
    return low in ("id", "number", "ref") or low.endswith(
        ("_id", "id", "number", "_code", "email", "_ref")
    )


_SEARCH_VERBS = frozenset({"search", "list", "find", "query", "browse"})


def is_search(tool: Tool) -> bool:
    """A read that answers with a list (`search_orders`, `list_invoices`): what it finds
    is zero, one or several records, never one record by its key."""
    words = name_words(tool.name)
    return tool.kind == "read" and bool(words) and words[0] in _SEARCH_VERBS


def record_readers(tools: Iterable[Tool]) -> dict[str, list[str]]:
    """For each write tool, the read tools that look up the same record (they share a
    required key parameter): what "read before you write" can ask of an agent."""
    tools = list(tools)
    reads = [t for t in tools if t.kind == "read"]
    out: dict[str, list[str]] = {}
    for write in (t for t in tools if t.kind == "write"):
        keys = {k for k in write.required if is_key_param(k)}
        out[write.name] = [r.name for r in reads if keys & set(r.required)]
    return out


def past_tense(verb: str) -> str:
    if verb in _IRREGULAR:
        return _IRREGULAR[verb]
    if verb.endswith("e"):
        return verb + "d"
    if verb.endswith("y") and len(verb) > 1 and verb[-2] not in "aeiou":
        return verb[:-1] + "ied"
    return verb + "ed"


@functools.lru_cache(maxsize=4096)
def _name_words(name: str) -> tuple[str, ...]:
    return tuple(re.findall(r"[a-z]+|\d+", re.sub(r"([a-z])([A-Z])", r"\1 \2", name).lower()))


def name_words(name: str) -> list[str]:
    """`refund_order` / `refundOrder` -> ['refund', 'order']."""
    return list(_name_words(name))
