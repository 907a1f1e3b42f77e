"""The mock world: tool results made up from the tools' own schemas, consistent per rollout.

`World(tools).call(name, arguments)` answers like a backend would. Arguments are checked
against the tool's schema first, with `jsonschema` (missing required fields, wrong types,
values outside an enum or a bound, unknown fields where none are allowed, or placeholder
values come back `rejected`, naming the fields). The row's `world_state` then shapes every answer
about the entities the person named: missing ones are `not_found`, acted-on ones answer
writes with `already_done`, duplicated ones come back as two matches, half-done ones
as a record with steps still pending. Last, the fault schedule may swap the answer for
a timeout, a denial, junk or a stale copy. One World serves one rollout: an order looked
up twice is the same order, and an order refunded once is refunded.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable
from typing import Any

from ..errors import ConfigError
from ..schemas import argument_problems
from ..spec import Tool, guess_kind, is_key_param, name_words, past_tense
from .faults import FaultSchedule, faulted_result
from .grid import seed_int
from .values import date_text, fake_value

WORLD_STATE_EFFECTS = {
    "entity exists": "ok",
    "entity missing": "not_found",
    "entity already acted on": "already_done",
    "duplicate entity": "matches",
    "partially completed": "partial",
}
_PLACEHOLDERS = frozenset(
    {"", "string", "none", "null", "n/a", "na", "tbd", "todo", "unknown", "xxx", "...",
     "example", "placeholder", "id", "your_id", "<id>", "?", "-"}
)  # fmt: skip
_COMMERCE = frozenset(
    {"order", "orders", "booking", "refund", "payment", "invoice", "price", "charge", "flight",
     "ticket", "subscription", "purchase", "fare", "cart"}
)  # fmt: skip


def coerce_tools(tools: Iterable[Tool | dict[str, Any]]) -> list[Tool]:
    """Accept `Tool`s, bare function dicts or the OpenAI wire shape."""
    out: list[Tool] = []
    for raw in tools:
        if isinstance(raw, Tool):
            out.append(raw)
            continue
        fn = raw.get("function", raw) if isinstance(raw, dict) else raw
        name = str(fn["name"])
        description = str(fn.get("description") or "")
        kind = fn.get("kind") or raw.get("kind") or guess_kind(name, description)
        params = fn.get("parameters") or {"type": "object", "properties": {}}
        extra = {
            k: v for k, v in fn.items() if k not in ("name", "description", "parameters", "kind")
        }
        out.append(Tool(name=name, description=description, parameters=params, kind=kind, **extra))
    return out


class World:
    """A consistent, rule-following fake backend for one rollout.

    `targets` are the entity values the situation is about ({param: value}); `world_state`
    applies to them. With no targets (the public default) it applies to every entity, so
    `World(tools).call(...)` alone gives plain, existing records.
    """

    def __init__(
        self,
        tools: Iterable[Tool | dict[str, Any]],
        *,
        world_state: str = "entity exists",
        targets: dict[str, Any] | None = None,
        faults: dict[str, Any] | None = None,
        seed: int = 0,
        statuses: list[str] | None = None,
        acted_verb: str | None = None,
    ) -> None:
        self.tools = {t.name: t for t in coerce_tools(tools)}
        if world_state not in WORLD_STATE_EFFECTS:
            raise ValueError(f"world_state must be one of {sorted(WORLD_STATE_EFFECTS)}")
        self.world_state = world_state
        self.targets = {k: str(v) for k, v in (targets or {}).items()}
        self.seed = seed
        self.schedule = FaultSchedule(faults, seed_int("faults", seed))
        self.statuses = statuses or ["open", "in_progress", "completed"]
        default_verb, self.commercial = _tool_facts(tuple(self.tools.values()))
        self.acted_verb = acted_verb or default_verb
        self.steps = 0
        self._records: dict[str, dict[str, Any]] = {}
        self._done: set[str] = set()
        # (key parameter, value) -> entity: a booking read by its ref and changed by its ref
        # plus a new flight id is one booking, with one record.
        self._by_key: dict[tuple[str, str], str] = {}

    @property
    def fired(self) -> list[dict[str, Any]]:
        return self.schedule.fired

    @classmethod
    def for_situation(
        cls,
        tools: Iterable[Tool | dict[str, Any]],
        situation: dict[str, Any],
        *,
        seed: int,
        statuses: list[str] | None = None,
    ) -> World:
        """The world one rollout of a situation meets: its world state, targets and fault
        plan, and the verb the person's own phrasing uses for the action."""
        acted = next(
            (situation["phrases"][t][0] for t in situation["tools"]
             if situation["tool_kinds"][t] == "write"),
            None,
        )  # fmt: skip
        return cls(
            tools,
            world_state=situation["world"]["world_state"],
            targets=situation["targets"],
            faults=situation["faults"],
            seed=seed,
            statuses=statuses,
            acted_verb=acted,
        )

    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        step = self.steps
        self.steps += 1
        tool = self.tools.get(name)
        if tool is None:
            return {"status": "rejected", "fields": [], "error": f"no tool named {name!r}"}
        if not isinstance(arguments, dict):
            return {"status": "rejected", "fields": [], "error": "arguments must be an object"}
        problems = self._check(tool, arguments)
        if problems:
            fields = sorted(problems)
            detail = "; ".join(f"{f}: {problems[f]}" for f in fields)
            return {"status": "rejected", "fields": fields, "error": detail}
        honest = self._answer(tool, arguments)
        mode = self.schedule.draw(name, step, found=honest.get("status") == "ok")
        return faulted_result(mode, name, honest) if mode else honest

    # -- arguments -------------------------------------------------------------------

    def _check(self, tool: Tool, arguments: dict[str, Any]) -> dict[str, str]:
        """What a backend refuses: the tool's schema (through `jsonschema`, the one
        validator the judges use too), then placeholder values a person never typed."""
        try:
            problems = argument_problems(tool.parameters, arguments)
        except ConfigError:
            # A schema jsonschema cannot read checks nothing but the required fields.
            problems = {f: "required" for f in tool.required if arguments.get(f) is None}
        for field, value in arguments.items():
            if field not in problems and _placeholder(value):
                problems[field] = "placeholder value"
        return problems

    # -- answers ---------------------------------------------------------------------

    def _answer(self, tool: Tool, arguments: dict[str, Any]) -> dict[str, Any]:
        keys = {k: str(v) for k, v in arguments.items() if is_key_param(k)}
        if not keys:
            keys = {k: str(arguments[k]) for k in tool.required if k in arguments}
        if not keys:
            keys = {k: str(v) for k, v in sorted(arguments.items())[:1]}
        entity = next(
            (self._by_key[(k, v.lower())] for k, v in sorted(keys.items()) if (k, v.lower())
             in self._by_key),
            "|".join(f"{k}={v}" for k, v in sorted(keys.items())) or tool.name,
        )  # fmt: skip
        targeted = not self.targets or any(
            self.targets.get(k, "").lower() == v.lower() for k, v in keys.items()
        )
        known = targeted or not any(k in self.targets for k in keys)
        effect = WORLD_STATE_EFFECTS[self.world_state] if targeted else "ok"
        if not known or effect == "not_found":
            return {"status": "not_found", "missing": sorted(keys.values())}
        record = self._record(entity, keys, tool)
        for k, v in keys.items():
            self._by_key.setdefault((k, v.lower()), entity)
        if effect == "matches":
            twin = dict(record)
            twin["created_at"] = date_text(random.Random(seed_int(self.seed, entity, "twin")))
            twin["status"] = self.statuses[0]
            return {"status": "ok", "matches": [record, twin]}
        if tool.kind == "read":
            if effect == "partial" and entity not in self._done:
                data = dict(record)
                data.update(
                    status=self.statuses[min(1, len(self.statuses) - 1)],
                    progress="partial",
                    completed_steps=["requested"],
                    pending_steps=["confirmation"],
                )
                return {"status": "ok", "data": data}
            return {"status": "ok", "data": dict(record)}
        verb = name_words(tool.name)[0] if name_words(tool.name) else "process"
        if entity in self._done or effect == "already_done":
            return {
                "status": "already_done",
                "data": dict(record),
                "error": f"{_describe(keys)} was already {record['status']}",
            }
        record["status"] = past_tense(verb)
        self._done.add(entity)
        data = dict(record)
        if effect == "partial":
            data["note"] = "finished the steps left pending"
        for field, value in arguments.items():
            data.setdefault(field, value)
        return {"status": "ok", "data": data}

    def _record(self, entity: str, keys: dict[str, str], tool: Tool) -> dict[str, Any]:
        record = self._records.get(entity)
        if record is not None:
            return record
        rng = random.Random(seed_int(self.seed, entity))
        record = dict(keys)
        if self.world_state == "entity already acted on" and (
            not self.targets or any(self.targets.get(k) == v for k, v in keys.items())
        ):
            record["status"] = past_tense(self.acted_verb)
        else:
            record["status"] = self.statuses[-1]
        returns = getattr(tool, "returns", None)
        props = returns.get("properties") if isinstance(returns, dict) else None
        if isinstance(props, dict):
            for field, schema in props.items():
                if field not in record and isinstance(schema, dict):
                    record[field] = fake_value(field, schema, rng)
        else:
            if self.commercial:
                record["amount"] = round(rng.uniform(5, 500), 2)
                record["currency"] = "USD"
            record["created_at"] = date_text(rng)
            record["updated_at"] = date_text(rng)
        self._records[entity] = record
        return record


# The tools' default action verb and whether they sell things, by the tools' identities: a
# run builds a World per rollout over the same Tool objects, and reading every name and
# description again cost ~40 us a rollout. The tuple keeps the tools, so ids stay theirs.
_TOOL_FACTS: dict[tuple[int, ...], tuple[tuple[Tool, ...], str, bool]] = {}


def _tool_facts(tools: tuple[Tool, ...]) -> tuple[str, bool]:
    key = tuple(map(id, tools))
    hit = _TOOL_FACTS.get(key)
    if hit is None or any(a is not b for a, b in zip(hit[0], tools, strict=True)):
        writes = [t for t in tools if t.kind == "write"]
        verb = name_words(writes[0].name)[0] if writes else "process"
        words = {w for t in tools for w in name_words(f"{t.name} {t.description}")}
        if len(_TOOL_FACTS) >= 64:
            _TOOL_FACTS.clear()
        hit = _TOOL_FACTS[key] = (tools, verb, bool(words & _COMMERCE))
    return hit[1], hit[2]


def _describe(keys: dict[str, str]) -> str:
    return ", ".join(keys.values()) or "that request"


def _placeholder(value: Any) -> bool:
    """A value standing in for one: `string`, `<id>`, `{order_id}`, `n/a`."""
    if not isinstance(value, str):
        return False
    if value.strip().lower().strip("<>{}[] ") in _PLACEHOLDERS:
        return True
    return re.fullmatch(r"<[^>]*>|\{[^}]*\}", value.strip()) is not None
