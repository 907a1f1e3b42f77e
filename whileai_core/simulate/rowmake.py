"""Assembling a row from one rollout: the shared vocabulary simulate writes and every
later stage reads (see the README's row section), in a stable key order."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any

import orjson

from ..agents.base import Episode, RolloutResult, ToolWorld
from ..row import SCHEMA_VERSION
from .world import World


@dataclass(frozen=True)
class RowContext:
    """What every row of a run shares."""

    agent_name: str
    writer_name: str
    policy_sha: str
    lineage: dict[str, Any]
    seed: int
    cells: int
    embedder: str
    external_world: bool


def behavior_trail(steps: list[dict[str, Any]]) -> list[list[Any]]:
    """What the agent did, without its wording: each call's tool, argument names and the
    status the world answered. `--until saturation` counts new trails (the reply's words
    carry the person's values, so nearly every signature is new forever)."""
    trail = []
    for step in steps:
        if step.get("tool") is not None:
            result = step.get("result")
            status = result.get("status") if isinstance(result, dict) else type(result).__name__
            args = step.get("arguments")
            trail.append([step["tool"], sorted(args) if isinstance(args, dict) else [], status])
    return trail


def behavior_signature(steps: list[dict[str, Any]], final_text: str) -> str:
    """What the agent did, coarsely: tools, arguments' names, result statuses, reply shape."""
    shape = re.sub(r"\d+", "#", final_text.lower())[:160]
    raw = orjson.dumps([behavior_trail(steps), shape])
    return hashlib.sha1(raw).hexdigest()[:12]


def with_system_prompt(messages: list[dict[str, Any]], policy: str) -> list[dict[str, Any]]:
    """The conversation as the agent ran it: the system prompt first.

    A row records the context it was generated under, so every export can train in that
    same context (a chat template given no system turn inserts its own default, and SFT
    would then train under a prompt the agent never runs with). An agent that already
    returned its system turn keeps it as it is.
    """
    if not policy or (messages and messages[0].get("role") == "system"):
        return messages
    return [{"role": "system", "content": policy}, *messages]


def where_from(situation: dict[str, Any], cells: int) -> str:
    """Which task this is: its cell and visit, plus what aimed it there (traces) or the
    task set it was pinned from."""
    pinned = situation.get("pinned")
    if isinstance(pinned, str):
        return pinned
    text = (
        f"cell {situation['cell_position'] + 1}/{cells} visit {situation['visit']} "
        f"phrasing {situation['phrasing']}"
    )
    aim = situation.get("aim")
    return f"{text} ({aim})" if isinstance(aim, str) else text


def build_row(
    run: RowContext,
    ep: Episode,
    situation: dict[str, Any],
    result: RolloutResult,
    world: ToolWorld,
    prompt: str,
    reason: str,
) -> dict[str, Any]:
    human, cellw = situation["human"], situation["world"]
    steps = result.steps
    tools_used = list(
        dict.fromkeys(str(s["tool"]) for s in steps if isinstance(s, dict) and s.get("tool"))
    )
    ordinary = (
        human["stance"] == "ordinary"
        and cellw["world_state"] == "entity exists"
        and cellw["tool_condition"] == "success"
    )
    fired = list(world.fired) if isinstance(world, World) else []
    row: dict[str, Any] = {
        "prompt": prompt,
        "messages": with_system_prompt(result.messages, ep.spec.policy),
        "steps": steps,
        "final_text": result.final_text,
        "scenario_id": situation["scenario_id"],
        "situation_id": situation["situation_id"],
        "tier": "ordinary" if ordinary else "edge",
        "ask_family": human["ask_family"],
        "stance": human["stance"],
        "tone": human["tone"],
        "texture": human["texture"],
        "persona": human["persona"],
        "length": human["length"],
        "world_state": cellw["world_state"],
        "rollout_index": ep.rollout_index,
        "model_version": run.agent_name,
        "policy_version": f"{run.agent_name}@{run.policy_sha}",
        "writer_model": run.writer_name,
        "schema_version": SCHEMA_VERSION,
        "scenario_dimensions": dict(cellw),
        "faults": situation["faults"] if not run.external_world else {},
        "faults_fired": fired,
        "privileged": ep.privileged,
        "behavior_signature": behavior_signature(steps, result.final_text),
        "lineage": run.lineage,
        "seed": run.seed,
        "selection_reason": (
            f"{where_from(situation, run.cells)}; {reason} (embedder={run.embedder})"
        ),
    }
    if result.seeded is not None:
        row["seeded"] = list(result.seeded)
    row["finish_reason"] = result.finish_reason
    if result.truncated:
        row["truncated"] = True
    if result.usage is not None:
        row["usage"] = result.usage
    row["tools_used"] = tools_used
    for key, value in result.extra.items():
        row.setdefault(key, value)
    return row
