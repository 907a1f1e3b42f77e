"""A Python function as the agent: `agent(message)` or `agent(message, world)`.

Sync functions run in a worker thread so a slow one never blocks the other rollouts;
async functions are awaited. Whatever it raises or returns in the wrong shape becomes an
AgentError, which the engine counts as a lost rollout instead of a row.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from typing import Any

from .base import AgentError, Episode, RolloutResult
from .transcript import result_from_output


def _wants_world(fn: Callable[..., Any]) -> bool:
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return False
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional) >= 2 or any(p.kind == p.VAR_POSITIONAL for p in params)


class CallableAgent:
    """Wraps `fn`; `name` (the row's model_version) defaults to the reference it came from."""

    def __init__(self, fn: Callable[..., Any], name: str | None = None) -> None:
        self.fn = fn
        self.name: str = name or str(getattr(fn, "__name__", "callable"))
        self._world = _wants_world(fn)
        self._async = inspect.iscoroutinefunction(fn)

    async def run(self, episode: Episode) -> RolloutResult:
        args: tuple[Any, ...] = (
            (episode.prompt, episode.world) if self._world else (episode.prompt,)
        )
        try:
            if self._async:
                out = await self.fn(*args)
            else:
                out = await asyncio.to_thread(self.fn, *args)
        except AgentError:
            raise
        except Exception as exc:
            raise AgentError(f"agent {self.name} raised {type(exc).__name__}: {exc}") from exc
        return result_from_output(out, episode.prompt, f"agent {self.name}")

    async def aclose(self) -> None:
        return None
