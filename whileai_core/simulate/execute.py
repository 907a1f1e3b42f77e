"""The `--execute` world: the user's own backend answers tool calls instead of the mock.

Kept apart from the model code so an offline run with `--execute` never imports httpx.
"""

from __future__ import annotations

from typing import Any

from ..agents.base import ToolWorld
from ..plugins import load_callable


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


def load_execute(ref: str) -> ToolWorld:
    """Resolve `--execute module:function` (or `path/file.py:function`) into a ToolWorld."""
    return ExecuteWorld(ref)
