"""Agents the engine can run: seeded (built in), a Python callable, an external command, a model."""

from .callable import CallableAgent
from .command import CommandAgent
from .registry import pick_agent_ref, resolve_agent, resolve_writer
from .seeded import SeededAgent

__all__ = [
    "CallableAgent",
    "CommandAgent",
    "SeededAgent",
    "pick_agent_ref",
    "resolve_agent",
    "resolve_writer",
]
