"""The world and reward an exported environment uses when none is named: whileai's own.

Both are module-level and import by name in the trainer's process (whileai installed
there). The world is the mock world the rows were simulated against, rebuilt from what a
task's `info` carries: the tools, the world state and the fault plan. The entities the
situation was about are not shipped, so the world state applies to every entity. The
reward is the task checklist: the conduct grade as an honesty gate times an outcome the
world can verify from the task's grid coordinates (no model in the loop).
"""

from __future__ import annotations

from typing import Any

from ..judges.checklist import checklist
from ..simulate.grid import seed_int
from ..simulate.world import WORLD_STATE_EFFECTS, World

_CHECKLIST = checklist()


def mock_world(info: dict[str, Any]) -> World:
    """A fresh mock world for one rollout of the task `info` describes."""
    state = info.get("world_state")
    faults = info.get("faults")
    return World(
        info.get("oai_tools") or [],
        world_state=state if state in WORLD_STATE_EFFECTS else "entity exists",
        faults=faults if isinstance(faults, dict) else None,
        seed=seed_int("env", info.get("task_id") or ""),
    )


def checklist_reward(row: dict[str, Any]) -> Any:
    """The task checklist's verdict on a finished rollout (reward, reason, markers)."""
    return _CHECKLIST(row)
