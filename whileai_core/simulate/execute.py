"""The `--execute` world: the user's own backend answers tool calls instead of the mock.

Kept apart from the model code so an offline run with `--execute` never imports httpx.

A backend that keeps state per rollout (a scratch database, a sandbox checkout) needs to
know which rollout a call belongs to: `current_rollout()` returns the rollout being
answered (its prompt, rollout index and scenario id) inside every call, whichever thread
the agent runs the call in, and inside the rollout's own task for the agent itself.

    from whileai_core.simulate.execute import current_rollout

    def execute(tool, arguments):
        rollout = current_rollout()
        db = scratch_db(rollout.scenario_id, rollout.rollout_index)
        ...
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from ..agents.base import ToolWorld
from ..plugins import load_callable


@dataclass(frozen=True)
class CurrentRollout:
    """The rollout a tool call is answered for."""

    prompt: str
    rollout_index: int
    scenario_id: str


_CURRENT: ContextVar[CurrentRollout | None] = ContextVar("whileai_current_rollout", default=None)


def current_rollout() -> CurrentRollout | None:
    """The rollout being played (None outside a simulate run)."""
    return _CURRENT.get()


def enter_rollout(rollout: CurrentRollout) -> None:
    """Mark the calling task as playing `rollout` (asyncio tasks each have their own
    context, so this never leaks into another rollout)."""
    _CURRENT.set(rollout)


class ExecuteWorld:
    """The user's real world: `execute(tool_name, arguments) -> result` answers every call.

    No fault schedule applies (the faults a row lists are the mock world's plan; the real
    world breaks when it breaks). A result that is not a dict is wrapped as
    `{"status": "ok", "data": result}`; an exception becomes an error result the model
    sees. `blocking` tells the agent to run calls in a worker thread, since a real
    backend does I/O.
    """

    blocking = True

    def __init__(self, ref: str) -> None:
        self.ref = ref
        self._fn = load_callable(ref, what="--execute")
        self.fired: list[dict[str, Any]] = []

    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        result = self._fn(name, arguments)
        if isinstance(result, dict):
            return result
        return {"status": "ok", "data": result}

    def for_rollout(self, rollout: CurrentRollout) -> RolloutWorld:
        return RolloutWorld(self, rollout)


class RolloutWorld:
    """The execute world as one rollout sees it: every call runs with `current_rollout()`
    set, in whatever thread the agent makes it."""

    blocking = True

    def __init__(self, world: ExecuteWorld, rollout: CurrentRollout) -> None:
        self.world = world
        self.rollout = rollout
        self.fired = world.fired

    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        token = _CURRENT.set(self.rollout)
        try:
            return self.world.call(name, arguments)
        finally:
            _CURRENT.reset(token)


def load_execute(ref: str) -> ToolWorld:
    """Resolve `--execute module:function` (or `path/file.py:function`) into a ToolWorld."""
    return ExecuteWorld(ref)
