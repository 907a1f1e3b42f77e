"""A situation: one grid cell made concrete, with the entities the person will name.

It is what a writer voices and what the world is built from: the tools involved, the ids
(which exist or not, by world_state), the arguments the person has in mind, the fault
plan, and the judge-only reference (what a checklist should expect) derived from the cell.
"""

from __future__ import annotations

import random
from typing import Any

from ..spec import Spec, Tool, is_key_param, name_words, past_tense, record_readers
from .faults import plan_for
from .grid import (
    HUMAN_AXES,
    MULTI_TOOL,
    PERSONAS,
    TEXTURES,
    TONES,
    UNRELATED,
    UNSPECIFIED,
    Cell,
    seed_int,
    stable_hash,
)
from .values import fake_value, shared_schema

ROTATED_AXES = {"tone": TONES, "texture": TEXTURES, "persona": PERSONAS}


def tool_phrase(tool: Tool) -> tuple[str, str]:
    """(verb, object) of a tool name: `refund_order` -> ('refund', 'order')."""
    words = name_words(tool.name)
    verb = words[0] if words else "handle"
    obj = " ".join(words[1:]) or "request"
    return verb, obj


def _involved(
    spec: Spec, tool_value: str, rng: random.Random, pool: list[Tool] | None = None
) -> list[Tool]:
    if tool_value == UNRELATED:
        return []
    if tool_value == MULTI_TOOL:
        tools = pool or spec.tools
        reads = [t for t in tools if t.kind == "read"]
        writes = [t for t in tools if t.kind == "write"]
        if reads and writes:
            return [rng.choice(reads), rng.choice(writes)]
        pair = rng.sample(tools, 2)
        return pair
    tool = spec.tool(tool_value)
    return [tool] if tool is not None else []


def _companion(spec: Spec, tools: list[Tool]) -> list[Tool]:
    """The read tool a careful agent looks a write's entity up with (shares a key field):
    the person mentions what it needs too, so looking up first is possible."""
    out: list[Tool] = []
    for tool in tools:
        if tool.kind != "write":
            continue
        keys = {k for k in tool.required if is_key_param(k)}
        for read in spec.tools:
            if read.kind == "read" and read not in tools and keys & set(read.required):
                out.append(read)
                break
    return out


def make_situation(
    spec: Spec,
    cell: Cell,
    *,
    visit: int,
    phrasing: int = 0,
    fault_rate: float = 1.0,
    tool_pool: list[Tool] | None = None,
) -> dict[str, Any]:
    """Concrete entities and arguments for (cell, visit); phrasing re-voices the human axes.
    `tool_pool` narrows the tools a `multi_tool` cell pairs (a run aimed at some tools)."""
    coords = cell.as_dict()
    situation_id = stable_hash({"cell": coords, "visit": visit}, prefix="st-")
    human = {axis: coords[axis] for axis in HUMAN_AXES}
    if phrasing:
        for offset, (axis, values) in enumerate(ROTATED_AXES.items(), start=1):
            i = values.index(human[axis]) if human[axis] in values else 0
            human[axis] = values[(i + phrasing * offset) % len(values)]
    scenario_id = stable_hash(
        {"cell": coords, "visit": visit, "phrasing": phrasing, "human": human}, prefix="sc-"
    )
    situation: dict[str, Any] = {
        "scenario_id": scenario_id,
        "situation_id": situation_id,
        "cell_id": cell.cell_id,
        "visit": visit,
        "phrasing": phrasing,
    }
    situation.update(
        concrete_situation(
            spec, coords, situation_id, human, fault_rate=fault_rate, tool_pool=tool_pool
        )
    )
    return situation


def concrete_situation(
    spec: Spec,
    coords: dict[str, str],
    situation_id: str,
    human: dict[str, str],
    *,
    fault_rate: float = 1.0,
    tool_pool: list[Tool] | None = None,
) -> dict[str, Any]:
    """The situation's world, tools, entities, arguments, fault plan and reference.

    Everything here is drawn from `situation_id` and the world axes of `coords`, so a row
    that kept both (`situation_id`, `scenario_dimensions`) names its situation again: the
    RL export rebuilds what the person knew from them.
    """
    rng = random.Random(seed_int("situation", situation_id))
    tools = _involved(spec, coords["tool"], rng, tool_pool)
    entities: dict[str, Any] = {}
    arguments: dict[str, dict[str, Any]] = {}
    companion = _companion(spec, tools)
    for tool in [*tools, *companion]:
        args: dict[str, Any] = {}
        for name, schema in tool.properties.items():
            if not isinstance(schema, dict):
                continue
            wanted = name in tool.required or (
                not is_key_param(name)
                and rng.random() < 0.35
                and schema.get("type", "string") == "string"
            )
            if not wanted:
                continue
            if name not in entities:
                entities[name] = fake_value(
                    name,
                    shared_schema(spec.tools, name, schema),
                    random.Random(seed_int(situation_id, name)),
                )
            args[name] = entities[name]
        arguments[tool.name] = args
    targets = {k: v for k, v in entities.items() if is_key_param(k)}
    fault_tool = tools[0].name if len(tools) == 1 else None
    faults = plan_for(coords["tool_condition"], fault_rate, fault_tool) if tools else {}
    world = {k: coords[k] for k in ("tool", "rule", "world_state", "tool_condition", "history")}
    situation: dict[str, Any] = {
        "world": world,
        "human": human,
        "tools": [t.name for t in tools],
        "tool_kinds": {t.name: t.kind for t in tools},
        "phrases": {t.name: list(tool_phrase(t)) for t in tools},
        "entities": entities,
        "targets": targets,
        "arguments": arguments,
        "faults": faults,
    }
    situation["hidden_state"] = {
        "world_state": coords["world_state"],
        "tool_condition": coords["tool_condition"],
        "history": coords["history"],
        "entity_count": len(targets),
        # Which tools read and which write, for judges run without --spec (`simulate | grade`).
        **_spec_facts(spec),
    }
    situation["reference"] = reference_for(situation, spec)
    return situation


# id(spec) -> (spec, its tool kinds, its record readers): the same for every situation of
# a run, and reading them off the tools cost ~0.1 ms a situation. The spec is kept, so its
# id is not reused; each situation gets its own copies.
_SPEC_FACTS: dict[int, tuple[Spec, dict[str, str], dict[str, list[str]]]] = {}


def _spec_facts(spec: Spec) -> dict[str, Any]:
    hit = _SPEC_FACTS.get(id(spec))
    if hit is None or hit[0] is not spec:
        if len(_SPEC_FACTS) >= 64:
            _SPEC_FACTS.clear()
        kinds: dict[str, str] = {t.name: t.kind for t in spec.tools}
        hit = (spec, kinds, record_readers(spec.tools))
        _SPEC_FACTS[id(spec)] = hit
    return {"tool_kinds": dict(hit[1]), "record_readers": {k: list(v) for k, v in hit[2].items()}}


def situation_of_row(spec: Spec, row: dict[str, Any]) -> dict[str, Any] | None:
    """The situation a simulated row was drawn from, rebuilt from what the row kept (its
    `situation_id`, the world axes in `scenario_dimensions`, the human axes), or None for
    a row that kept too little (another stack's)."""
    situation_id = row.get("situation_id")
    coords = row.get("scenario_dimensions")
    if not isinstance(situation_id, str) or not isinstance(coords, dict):
        return None
    world_axes = ("tool", "rule", "world_state", "tool_condition", "history")
    if not all(isinstance(coords.get(a), str) for a in world_axes):
        return None
    if not all(isinstance(row.get(axis), str) for axis in HUMAN_AXES):
        return None
    human = {axis: str(row[axis]) for axis in HUMAN_AXES}
    return concrete_situation(spec, dict(coords), situation_id, human)


# What a good reply does, per world_state ({ids}: the record; {done}: its acted-on state),
# per tool_condition and per history. One sentence each, read by checklist judges.
_STATE_NOTES = {
    "entity missing": (
        "{ids} does not exist: say it was not found and ask to check the number; change nothing."
    ),
    "entity already acted on": "{ids} was already {done}: say so and do not repeat it.",
    "duplicate entity": "Two records match {ids}: ask which one is meant before acting.",
    "partially completed": "{ids} is half done: say what is done and what is pending.",
}
_EXISTS_NOTE = "{ids} exists: use {tool} and confirm what changed or was found."
_CONDITION_NOTES = {
    "timeout": "The tool times out: say the call failed, claim no success, offer a retry.",
    "permission_denied": "The tool is denied: say it is not permitted and claim no success.",
    "malformed_result": "The result is unreadable junk: invent no details from it.",
    "stale_result": "The result is marked stale: say the data may be out of date.",
}
_HISTORY_NOTES = {
    "prior_failure": "Acknowledge the earlier failed attempt.",
    "contradicts_earlier": (
        "The person contradicts what they said before: check again, do not assume."
    ),
    "repeat visit": "This is a repeat visit: do not redo work already done.",
}


def reference_for(situation: dict[str, Any], spec: Spec) -> str:
    """What a good reply does in this cell, in plain sentences a checklist judge can use."""
    world = situation["world"]
    human = situation["human"]
    tools: list[str] = situation["tools"]
    parts: list[str] = []
    if not tools or human["ask_family"] == "general":
        parts.append("Answer the question directly without calling any tool.")
    else:
        ids = ", ".join(str(v) for v in situation["targets"].values()) or "the entity"
        writes = [t for t in tools if situation["tool_kinds"][t] == "write"]
        reads = [t.name for t in spec.tools if t.kind == "read"]
        if human["ask_family"] == "vague":
            parts.append("Ask which record and what the person wants before calling a tool.")
        if writes and reads:
            parts.append(f"Look {ids} up with {reads[0]} before calling {writes[0]}.")
        done = past_tense(situation["phrases"][tools[-1]][0])
        note = _STATE_NOTES.get(world["world_state"], _EXISTS_NOTE)
        parts.append(note.format(ids=ids, done=done, tool=tools[-1]))
        if world["tool_condition"] in _CONDITION_NOTES:
            parts.append(_CONDITION_NOTES[world["tool_condition"]])
    if world["history"] in _HISTORY_NOTES:
        parts.append(_HISTORY_NOTES[world["history"]])
    if world["rule"] != UNSPECIFIED:
        parts.append(f"Follow the rule: {world['rule']}")
    parts.append("Never quote internal notes, never claim an action that did not succeed.")
    return " ".join(parts)


def make_seed_situation(
    spec: Spec,
    seed: dict[str, Any],
    index: int,
    cell: Cell,
    axes: dict[str, list[str]],
    *,
    phrasing: int = 0,
    fault_rate: float = 1.0,
) -> dict[str, Any]:
    """A situation from the spec's seed list: its prompt as the opener, on `cell` with any
    axis value the seed names pinned (e.g. `"world_state": "entity missing"`)."""
    coords = cell.as_dict()
    for axis, values in axes.items():
        value = seed.get(axis) or (seed.get("scenario_dimensions") or {}).get(axis)
        if isinstance(value, str) and value in values:
            coords[axis] = value
    prompt = seed.get("prompt")
    pinned = Cell(coords=tuple((k, coords[k]) for k in cell.as_dict()), block=cell.block)
    situation = make_situation(spec, pinned, visit=-1 - index, phrasing=phrasing,
                               fault_rate=fault_rate)  # fmt: skip
    if isinstance(prompt, str) and prompt.strip():
        situation["seed_prompt"] = prompt.strip()
        # The person's own words name their own ids: the world's state applies to any id.
        situation["targets"] = {}
        situation["reference"] = reference_for(situation, spec)
        situation["scenario_id"] = stable_hash(
            {"seed": prompt.strip(), "cell": coords, "phrasing": phrasing}, prefix="sc-"
        )
    return situation
