"""The tool surface read off traces, for `simulate --traces FILE` with no spec.

Graded telemetry alone is enough to start: every tool the traces call becomes a tool,
its parameters the arguments seen (each typed by the values it took; required when it
was present in every call), read or write by its name. The mock world then answers from
those schemas, seeded with what the traces show: a tool's `returns` lists each result
field with the values it was seen to take, so a record the world makes up carries real
ones, and the statuses read tools were seen to report become the lifecycle records move
through (the commonest last: a record's settled state).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import orjson

from ..errors import ConfigError
from ..spec import Spec, Tool, guess_kind

_TYPES = ((bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"),
          (list, "array"), (dict, "object"))  # fmt: skip
_MAX_EXAMPLES = 20
_NOT_RETURNED = frozenset({"status", "error", "message", "stale", "as_of"})


def json_type(value: Any) -> str | None:
    for kind, name in _TYPES:
        if isinstance(value, kind):
            return name
    return None


def _schema_of(values: list[Any]) -> dict[str, Any]:
    kinds = Counter(k for k in map(json_type, values) if k)
    if set(kinds) == {"integer", "number"}:
        return {"type": "number"}
    if len(kinds) == 1:
        return {"type": next(iter(kinds))}
    return {}  # mixed types: no type is enforced


def _examples(values: list[Any]) -> list[Any]:
    seen: dict[bytes, Any] = {}
    for value in values:
        seen.setdefault(orjson.dumps(value, option=orjson.OPT_SORT_KEYS), value)
        if len(seen) >= _MAX_EXAMPLES:
            break
    return list(seen.values())


def _record_of(result: Any) -> dict[str, Any] | None:
    """The record a result describes: its `data` when it wraps one, else itself."""
    if not isinstance(result, dict):
        return None
    data = result.get("data")
    return data if isinstance(data, dict) else result


def spec_from_traces(
    traces: Sequence[dict[str, Any]], *, name: str = "traces", source: str = "traces"
) -> Spec:
    calls: dict[str, list[dict[str, Any]]] = {}
    records: dict[str, list[dict[str, Any]]] = {}
    statuses: Counter[str] = Counter()
    for trace in traces:
        for step in trace.get("steps") or []:
            if not isinstance(step, dict) or not step.get("tool"):
                continue
            tool = str(step["tool"])
            args = step.get("arguments")
            calls.setdefault(tool, []).append(args if isinstance(args, dict) else {})
            record = _record_of(step.get("result"))
            if record is not None:
                records.setdefault(tool, []).append(record)
                # A read shows a record as it stands; a write's answer is what it just did.
                if isinstance(record.get("status"), str) and guess_kind(tool) == "read":
                    statuses[record["status"]] += 1
    if not calls:
        raise ConfigError(
            f"--traces {source}: no tool calls to read a tool surface from; give a SPEC"
        )
    tools = []
    for tool, seen in sorted(calls.items()):
        names = list(dict.fromkeys(k for args in seen for k in args))
        props = {
            n: _schema_of([a[n] for a in seen if a.get(n) is not None]) for n in names
        }
        required = [n for n in names if all(a.get(n) is not None for a in seen)]
        parameters: dict[str, Any] = {"type": "object", "properties": props}
        if required:
            parameters["required"] = required
        fields: dict[str, list[Any]] = {}
        for record in records.get(tool, []):
            for key, value in record.items():
                if key not in _NOT_RETURNED and value is not None:
                    fields.setdefault(key, []).append(value)
        returns = {
            "type": "object",
            "properties": {
                key: {**_schema_of(values), "enum": _examples(values)}
                for key, values in fields.items()
            },
        }
        tools.append(
            Tool.model_validate(
                {"name": tool, "description": f"Read off {len(seen)} calls in the traces.",
                 "parameters": parameters, "kind": guess_kind(tool), "returns": returns}
            )
        )  # fmt: skip
    # The world's last status is a record's settled state: the one seen most.
    world = {"statuses": [s for s, _ in reversed(statuses.most_common(8))]} if statuses else {}
    raw = {"name": name, "tools": [t.openai() for t in tools], "world": world}
    return Spec(name=name, tools=tools, source=f"inferred from {source}", raw=raw)
