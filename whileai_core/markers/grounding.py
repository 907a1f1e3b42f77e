"""Argument grounding: every value the agent passed to a tool came from the conversation.

A policy trained to call a tool learns to call it before it learns when not to, and the
first thing it invents is an id the person never gave. `argument_grounding` is 1.0 when
every string (or number) argument of every call appears in the prompt, the person's
turns, the system prompt or an earlier tool result (a row with no calls is grounded),
else 0.0. The check itself is the conduct judge's (`judges.grounding.invented_arguments`):
one implementation, so the marker and the judge can never disagree about a value.

`ignore_keys` skips free-text arguments (a comment, a file's new content); `allow` lists
values that are always fine (enums the spec does not declare, defaults). The spec's own
enums and defaults are allowed without being listed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..judges.grounding import Invented, invented_arguments
from ..judges.trajectory import tool_kinds
from ..spec import Spec
from .view import RowView, system_texts

MARKER = "argument_grounding"


@dataclass
class GroundingOptions:
    ignore_keys: tuple[str, ...] = ()
    allow: tuple[str, ...] = ()
    spec: Spec | None = None
    _allowed: frozenset[str] = field(default=frozenset(), init=False, repr=False)

    def __post_init__(self) -> None:
        defaults: set[str] = set()
        if self.spec is not None:
            for tool in self.spec.tools:
                for schema in tool.properties.values():
                    if isinstance(schema, dict) and "default" in schema:
                        defaults.add(str(schema["default"]))
        self._allowed = frozenset(self.allow) | frozenset(defaults)

    @property
    def allowed(self) -> frozenset[str]:
        return self._allowed


def split_list(text: str | None) -> tuple[str, ...]:
    """`a,b, c` -> ('a', 'b', 'c'): how the CLI's comma lists arrive."""
    return tuple(p.strip() for p in (text or "").split(",") if p.strip())


def invented(v: RowView, options: GroundingOptions | None = None) -> list[Invented]:
    opts = options or GroundingOptions()
    return invented_arguments(
        v.events,
        opts.spec,
        context=system_texts(v.row),
        ignore_keys=opts.ignore_keys,
        allow=opts.allowed,
        kinds=tool_kinds(opts.spec, v.row),
    )


def grounding_marker(found: Iterable[Invented]) -> dict[str, float]:
    return {MARKER: 0.0 if any(True for _ in found) else 1.0}


@dataclass
class GroundingReport:
    """Grounded rate, and the invented values by tool and key."""

    rows: int = 0
    with_calls: int = 0
    grounded: int = 0
    by_tool: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    examples: list[dict[str, Any]] = field(default_factory=list)

    def add(self, v: RowView, found: list[Invented]) -> None:
        self.rows += 1
        self.with_calls += bool(v.calls)
        if not found:
            self.grounded += 1
            return
        for item in found:
            entry = self.by_tool.setdefault(item.tool, {}).setdefault(
                item.key, {"count": 0, "values": []}
            )
            entry["count"] += 1
            if item.value not in entry["values"] and len(entry["values"]) < 5:
                entry["values"].append(item.value)
        if len(self.examples) < 10:
            self.examples.append({"row": v.label(), "invented": [str(i) for i in found[:3]]})

    def as_dict(self) -> dict[str, Any]:
        from ..metrics.stats import wilson

        rate = self.grounded / self.rows if self.rows else None
        return {
            "rows": self.rows,
            "rows_with_calls": self.with_calls,
            "grounded": self.grounded,
            "grounded_rate": rate,
            "grounded_ci95": list(wilson(self.grounded, self.rows)) if self.rows else None,
            "invented": self.by_tool,
            "examples": self.examples,
        }

    def lines(self) -> list[str]:
        data = self.as_dict()
        if not self.rows:
            return ["no rows"]
        lo, hi = data["grounded_ci95"]
        out = [
            f"argument grounding: {self.grounded} of {self.rows} rows grounded "
            f"({data['grounded_rate']:.0%}, 95% {lo:.0%}-{hi:.0%}; {self.with_calls} rows "
            "made calls)"
        ]
        for tool, keys in sorted(self.by_tool.items()):
            for key, entry in sorted(keys.items(), key=lambda kv: -kv[1]["count"]):
                values = ", ".join(repr(v[:40]) for v in entry["values"])
                out.append(f"  {tool}.{key}: {entry['count']} invented, e.g. {values}")
        return out
