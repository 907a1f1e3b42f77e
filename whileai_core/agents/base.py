"""The seams the simulation engine plugs into: agents, the simulated user, the world.

One interface each, so the built-in seeded agent, a user's callable, an external
command and a model on an OpenAI-compatible endpoint all run under the same engine,
and so do the template writer and a model writer. Everything is `async` because model
backends are; offline implementations simply return without awaiting.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ..errors import AgentError as AgentError
from ..spec import Spec


@runtime_checkable
class ToolWorld(Protocol):
    """What answers tool calls: the mock world (faults apply) or the user's real one."""

    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]: ...


class UserSimulator(Protocol):
    """The person on the other side, after the opener. None means they have nothing to add."""

    async def reply(self, messages: list[dict[str, Any]]) -> str | None: ...


@dataclass
class Episode:
    """Everything one rollout needs. The agent must not read `cell` or `privileged` for
    honest play; the built-in seeded agent reads them only to plant labelled mistakes."""

    spec: Spec
    prompt: str
    scenario_id: str
    rollout_index: int
    world: ToolWorld
    seed: int
    cell: dict[str, Any] = field(default_factory=dict)
    privileged: dict[str, Any] = field(default_factory=dict)
    user: UserSimulator | None = None
    max_turns: int = 12
    # How often the person may speak after the opener (avg_turns // 2); None: max_turns // 2.
    max_user_turns: int | None = None


@dataclass
class RolloutResult:
    """What an agent hands back; the engine turns it into a row."""

    messages: list[dict[str, Any]]
    steps: list[dict[str, Any]]
    final_text: str
    finish_reason: str = "stop"  # stop | length | tool | error
    usage: dict[str, Any] | None = None
    seeded: list[str] | None = None
    truncated: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


class Agent(Protocol):
    """Plays one rollout. `name` becomes the row's `model_version`."""

    name: str

    async def run(self, episode: Episode) -> RolloutResult: ...

    async def aclose(self) -> None: ...


class Writer(Protocol):
    """Writes the person: the opener for a situation and, through `user`, their follow-ups.

    A situation is the grid cell plus what the world holds for it (entity ids that exist
    or not, by world_state). A writer never sees the agent's policy. `name` becomes the
    row's `writer_model`.
    """

    name: str

    async def opener(self, situation: dict[str, Any], seed: int) -> str: ...

    def user(self, situation: dict[str, Any], seed: int) -> UserSimulator | None: ...

