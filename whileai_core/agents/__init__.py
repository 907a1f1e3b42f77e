"""Agents the engine can run: seeded (built in), a Python callable, an external command, a
model (`model.py`). `base.py` holds the seams every agent plugs into (Agent, Episode,
RolloutResult, and the Writer / UserSimulator protocols the person's voices implement)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

_NAMES = {
    "CallableAgent": ".callable",
    "CommandAgent": ".command",
    "SeededAgent": ".seeded",
    "pick_agent_ref": ".registry",
    "resolve_agent": ".registry",
}
__all__ = [
    "CallableAgent",
    "CommandAgent",
    "SeededAgent",
    "pick_agent_ref",
    "resolve_agent",
]
__getattr__, __dir__ = lazy_exports(__name__, _NAMES)

if TYPE_CHECKING:
    from .callable import CallableAgent
    from .command import CommandAgent
    from .registry import pick_agent_ref, resolve_agent
    from .seeded import SeededAgent
