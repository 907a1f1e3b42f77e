"""The mock world: tool results made up from the tools' own schemas, consistent per rollout.

`World(tools).call(name, arguments)` answers like a backend would. Arguments are checked
against the tool's schema first, with `jsonschema` (missing required fields, wrong types,
values outside an enum or a bound, unknown fields where none are allowed, or placeholder
values come back `rejected`, naming the fields).

A rollout's world knows a fixed set of records: the values the person holds (the
situation's entities, which are also the person's brief), any id the person's own opener
names (a spec's seed prompt, a pinned task's prompt), and every key a tool returned
earlier in the rollout (a search's results). A call whose key (an id, a number, an
e-mail, a reference) is none of them is `not_found`, in every cell: a policy trained on
these rows must never learn that guessing an id works. The row's `world_state` then
shapes every answer about the entities the person named: missing ones are `not_found`,
acted-on ones answer writes with `already_done`, duplicated ones come back as two
matches (a write to them changes neither and is `ambiguous`), half-done ones as a record
with steps still pending. A search answers with a
list (`results`: empty when nothing matches, two records in a `duplicate entity` cell),
and a write's result shows the arguments it was given. Last, the fault schedule may swap
the answer for a timeout, a denial, junk or a stale copy (a denied write changes
nothing; one that timed out or came back as junk may have gone through). One World
serves one rollout:
an order looked up twice is the same order, and an order refunded once is refunded.
`docs/world.md` says all of this for users.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable
from typing import Any

from ..errors import ConfigError
from ..schemas import argument_problems
from ..spec import Tool, guess_kind, is_key_param, is_search, name_words, past_tense
from .faults import FaultSchedule, faulted_result
from .grid import seed_int
from .values import date_text, fake_value, shared_schema

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
# Parameters that describe rather than name a thing: a call is never refused for a title or
# a comment the world has not seen (the agent words those itself).
_FREE_TEXT = frozenset(
    {"title", "comment", "content", "body", "text", "message", "reason", "note", "notes",
     "description", "summary", "query", "search", "subject", "glob"}
)  # fmt: skip
# A value this long is a phrase: a search matches it on a shared word, not verbatim.
_PHRASE_WORD = re.compile(r"[a-z0-9]{4,}")
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
    applies to them. `known` are the values the world holds records for (the situation's
    entities) and `known_text` words the person wrote themselves (an id in it exists too);
    a key outside both, and not returned by an earlier call, is `not_found`. With neither
    targets nor `known` (the public default) the world is open: every entity exists, so
    `World(tools).call(...)` alone gives plain, existing records. Targets alone close it
    to the targets.
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
        known: Iterable[Any] | None = None,
        known_text: str | None = None,
    ) -> None:
        self.tools = {t.name: t for t in coerce_tools(tools)}
        if world_state not in WORLD_STATE_EFFECTS:
            raise ValueError(f"world_state must be one of {sorted(WORLD_STATE_EFFECTS)}")
        self.world_state = world_state
        self.targets = {k: str(v) for k, v in (targets or {}).items()}
        # None: the open world. Otherwise every value a key may take, lower-cased.
        self._known: set[str] | None = None
        if known is not None or self.targets:
            self._known = {_norm(v) for v in (known or ())} | {
                _norm(v) for v in self.targets.values()
            }
        self._known_text = (known_text or "")[:20_000].casefold()
        self.seed = seed
        self.schedule = FaultSchedule(faults, seed_int("faults", seed))
        self.statuses = statuses or ["open", "in_progress", "completed"]
        default_verb, self.commercial = _tool_facts(tuple(self.tools.values()))
        self.acted_verb = acted_verb or default_verb
        self.steps = 0
        self._records: dict[str, dict[str, Any]] = {}
        self._done: set[tuple[str, str]] = set()  # (entity, verb): what was done to what
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
            known=known_values(situation),
            known_text=situation.get("pinned_prompt") or situation.get("seed_prompt"),
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
        kept = self._snapshot() if tool.kind == "write" else None
        honest = self._answer(tool, arguments)
        mode = self.schedule.draw(name, step, found=honest.get("status") == "ok")
        if mode == "permission_denied" and kept is not None:
            # A refused write never ran: the record reads as it did before. (A timeout or
            # an unreadable answer may hide a write that went through, as on a real
            # backend, so those keep its effect.)
            self._records, self._done = kept
        return faulted_result(mode, name, honest) if mode else honest

    def _snapshot(self) -> tuple[dict[str, dict[str, Any]], set[tuple[str, str]]]:
        """The records and what was done to them, copied one level deep (a write changes a
        record's own fields, never a nested value)."""
        return {k: dict(v) for k, v in self._records.items()}, set(self._done)

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

    def knows(self, param: str, value: Any) -> bool:
        """Whether the world holds a record under this key value."""
        text = _norm(value)
        if self._known is None:  # the open world: everything exists
            return True
        if self._keys_another(param, text):
            return False
        if text in self._known:
            return True
        # An id the person wrote in their own words (a seed's or a pinned task's prompt).
        return (
            len(text) >= 3
            and re.search(rf"(?<![\w@.-]){re.escape(text)}(?![\w@-])", self._known_text) is not None
        )

    def _acted(self, entity: str) -> bool:
        """Some write landed on the record in this rollout (a half-done one is now done)."""
        return any(done == entity for done, _ in self._done)

    def _keys_another(self, param: str, text: str) -> bool:
        """The value is the person's key for another kind of record: their flight id
        given as a booking reference names no booking ("FLI-37829" refunded as a
        booking). Only the person's own keys know their kind; a value a tool returned
        or the person wrote elsewhere keeps the benefit of the doubt."""
        mine = name_words(param)[:1]
        if not mine:
            return False
        kinds = {tuple(name_words(k)[:1]) for k, v in self.targets.items() if _norm(v) == text}
        return bool(kinds) and tuple(mine) not in kinds and all(kinds)

    def _learn(self, record: dict[str, Any]) -> None:
        """A key a result showed is one the agent may use next (a search's order id)."""
        if self._known is None:
            return
        for field, value in record.items():
            if is_key_param(field) and isinstance(value, (str, int)):
                self._known.add(_norm(value))

    def _answer(self, tool: Tool, arguments: dict[str, Any]) -> dict[str, Any]:
        if is_search(tool):
            return self._search(tool, arguments)
        keys, checked = _identity(tool, arguments)
        unknown = sorted(v for k, v in checked.items() if not self.knows(k, v))
        if unknown:
            return {"status": "not_found", "missing": unknown}
        entity = self._entity(keys, tool)
        targeted = self._targeted(keys)
        effect = WORLD_STATE_EFFECTS[self.world_state] if targeted else "ok"
        if effect == "not_found":
            return {"status": "not_found", "missing": sorted(keys.values())}
        record = self._record(entity, keys, tool)
        self._learn(record)
        for k, v in keys.items():
            self._by_key.setdefault((k, v.lower()), entity)
        if effect == "matches":
            matches = [record, self._twin(entity, record)]
            if tool.kind == "read":
                return {"status": "ok", "matches": matches}
            # A write cannot pick between two records: it changes neither and says so, as a
            # backend answers a conflict. An "ok" here would teach a policy that "ok" can
            # mean nothing happened.
            return {
                "status": "ambiguous",
                "matches": matches,
                "error": f"2 records match {_describe(keys)}; nothing was changed",
            }
        if tool.kind == "read":
            if effect == "partial" and not self._acted(entity):
                return {"status": "ok", "data": self._partial(record)}
            return {"status": "ok", "data": dict(record)}
        verb = name_words(tool.name)[0] if name_words(tool.name) else "process"
        # The same action twice is already done; another on the same record is not (a
        # booking cancelled, then refunded, is how a refund of a cancellation goes). A
        # record whose status already says it was done (an acted-on order a search by
        # e-mail returned) is done, whichever key the write names it by.
        done = record.get("status") == past_tense(verb) or (entity, verb) in self._done
        if done or effect == "already_done":
            # The error names what was done: a refund asked again of an order refunded and
            # then cancelled was already refunded, whatever its status says now.
            what = past_tense(verb) if done else record["status"]
            return {
                "status": "already_done",
                "data": dict(record),
                "error": f"{_describe(keys)} was already {what}",
            }
        record["status"] = past_tense(verb)
        self._done.add((entity, verb))
        data = dict(record)
        if effect == "partial":
            data["note"] = "finished the steps left pending"
        # What was asked for is what was done: a refund of 0 shows 0, not the order's total.
        data.update(arguments)
        return {"status": "ok", "data": data}

    def _targeted(self, keys: dict[str, str]) -> bool:
        """The call is about the entity the cell's world state is about."""
        return not self.targets or any(
            self.targets.get(k, "").lower() == v.lower() for k, v in keys.items()
        )

    def _entity(self, keys: dict[str, str], tool: Tool) -> str:
        return next(
            (self._by_key[(k, v.lower())] for k, v in sorted(keys.items())
             if (k, v.lower()) in self._by_key),
            "|".join(f"{k}={v}" for k, v in sorted(keys.items())) or tool.name,
        )  # fmt: skip

    def _twin(self, entity: str, record: dict[str, Any]) -> dict[str, Any]:
        twin = dict(record)
        twin["created_at"] = date_text(random.Random(seed_int(self.seed, entity, "twin")))
        twin["status"] = self.statuses[0]
        return twin

    def _partial(self, record: dict[str, Any]) -> dict[str, Any]:
        data = dict(record)
        data.update(
            status=self.statuses[min(1, len(self.statuses) - 1)],
            progress="partial",
            completed_steps=["requested"],
            pending_steps=["confirmation"],
        )
        return data

    # -- searches ----------------------------------------------------------------------

    def _search(self, tool: Tool, arguments: dict[str, Any]) -> dict[str, Any]:
        """A list: the records the criteria match (one, two in a duplicate cell), or none.
        A key criterion the world does not hold (an invented e-mail) is `not_found` as
        any unknown key is; other criteria (a date, a query) that match nothing it holds
        are an empty list."""
        keys = {k: str(v) for k, v in arguments.items() if is_key_param(k)}
        unknown = sorted(v for k, v in keys.items() if not self.knows(k, v))
        if unknown:
            return {"status": "not_found", "results": [], "missing": unknown}
        criteria = {
            k: str(v)
            for k, v in arguments.items()
            if k not in keys and isinstance(v, str) and k in tool.required
        }
        if not all(self._matches(v) for v in criteria.values()):
            return {"status": "ok", "results": []}
        shown = keys or criteria or {k: str(v) for k, v in sorted(arguments.items())[:1]}
        targeted = self._targeted(shown)
        effect = WORLD_STATE_EFFECTS[self.world_state] if targeted else "ok"
        if effect == "not_found":  # the cell's missing record: nothing under it
            return {"status": "not_found", "results": [], "missing": sorted(shown.values())}
        base = "|".join(f"{k}={v}" for k, v in sorted(shown.items())) or tool.name
        found = [self._found(tool, base, shown, 0, targeted)]
        if effect == "matches":  # the same order twice: alike but for its id and date
            found.append(self._found(tool, base, shown, 1, targeted, like=found[0][1]))
        results = []
        for entity, record in found:
            if effect == "partial" and not self._acted(entity):
                results.append(self._partial(record))
            else:
                results.append(dict(record))
        return {"status": "ok", "results": results}

    def _matches(self, value: str) -> bool:
        """A search criterion the world holds: the value itself, or for a phrase (a code
        search's query) a word of one it holds."""
        if self._known is None or self.knows("", value):
            return True
        words = set(_PHRASE_WORD.findall(value.casefold()))
        return bool(words) and any(
            words & set(_PHRASE_WORD.findall(known)) for known in self._known if " " in known
        )

    def _found(
        self,
        tool: Tool,
        base: str,
        shown: dict[str, str],
        index: int,
        targeted: bool,
        like: dict[str, Any] | None = None,
    ) -> tuple[str, dict[str, Any]]:
        """Search result `index`: a record under the key the look-up tools take for the
        searched object (a search of orders returns order ids `get_order` accepts), or,
        when no tool looks that object up, a record of the criteria."""
        rng = random.Random(seed_int(self.seed, base, "found", index))
        ids = {param: str(fake_value(param, schema, rng))
               for param, schema in self._result_keys(tool)}  # fmt: skip
        if targeted and index == 0:
            # The person's own record is what a search under their own key finds: their
            # e-mail's order is the order id they gave, not a made-up one beside it.
            ids.update({k: v for k, v in self.targets.items() if k in ids and v})
        entity = "|".join(f"{k}={v}" for k, v in sorted(ids.items())) or f"{base}#{index}"
        for k, v in ids.items():
            self._by_key.setdefault((k, v.lower()), entity)
        if like is not None and entity not in self._records:
            self._records[entity] = {**like, **ids, "created_at": date_text(rng),
                                     "status": self.statuses[0]}  # fmt: skip
        record = self._record(entity, ids or dict(shown), tool, targeted=targeted)
        for k, v in shown.items():
            record.setdefault(k, v)
        self._learn(record)
        return entity, record

    def _result_keys(self, tool: Tool) -> list[tuple[str, dict[str, Any]]]:
        """The key parameters of the searched object in the other tools (`order_id` for
        `search_orders`), each with every constraint the tools put on it."""
        objects = {w.rstrip("s") for w in name_words(tool.name)[1:]}
        out: dict[str, dict[str, Any]] = {}
        for other in self.tools.values():
            if other is tool:
                continue
            for param, schema in other.properties.items():
                words = name_words(param)
                if (
                    is_key_param(param)
                    and isinstance(schema, dict)
                    and len(words) == 2
                    and words[0] in objects
                    and param not in out
                ):
                    out[param] = shared_schema(self.tools.values(), param, schema)
        return sorted(out.items())

    def _record(
        self, entity: str, keys: dict[str, str], tool: Tool, *, targeted: bool | None = None
    ) -> dict[str, Any]:
        """The entity's record, made once. `targeted` says whether the cell's world state
        applies to it (a search's results inherit it from the search); by default, when
        its keys are the targets."""
        record = self._records.get(entity)
        if record is not None:
            return record
        rng = random.Random(seed_int(self.seed, entity))
        record = dict(keys)
        if targeted is None:
            targeted = not self.targets or any(self.targets.get(k) == v for k, v in keys.items())
        if self.world_state == "entity already acted on" and targeted:
            record["status"] = past_tense(self.acted_verb)
        else:
            record["status"] = self.statuses[-1]
        returns = getattr(tool, "returns", None)
        if isinstance(returns, dict) and isinstance(returns.get("items"), dict):
            returns = returns["items"]  # a search's returns: the schema of one result
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


def known_values(situation: dict[str, Any]) -> list[Any]:
    """Every value the person holds for their errand: the records the world knows."""
    values = list((situation.get("entities") or {}).values())
    for args in (situation.get("arguments") or {}).values():
        values.extend(args.values())
    return [v for v in values if isinstance(v, (str, int, float)) and not isinstance(v, bool)]


def _norm(value: Any) -> str:
    return str(value).strip().casefold()


def _identity(tool: Tool, arguments: dict[str, Any]) -> tuple[dict[str, str], dict[str, str]]:
    """(what names the record a call is about, what of that must be a value the world
    knows). A call is named by its keys (ids, numbers, e-mails, references), else by its
    required arguments, else by its first; the keys are checked, or for a tool with none
    its required arguments that are not free text (a file's path, a branch; never a
    title or a comment the agent words itself)."""
    keys = {k: str(v) for k, v in arguments.items() if is_key_param(k)}
    if keys:
        return keys, keys
    named = {k: str(arguments[k]) for k in tool.required if k in arguments}
    if not named:
        return {k: str(v) for k, v in sorted(arguments.items())[:1]}, {}
    checked = {k: v for k, v in named.items() if not set(name_words(k)) & _FREE_TEXT}
    return named, checked


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
