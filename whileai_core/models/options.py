"""Knobs shared by every model-backed agent, writer and judge of one run.

A plain dataclass with no HTTP import, so the CLI can build it for offline runs too. The
run's clients live on `clients` (filled by `models.factory.client_for`): the agent, the
writer and the judge of one run that talk to the same endpoint share one client, and so
one concurrency bound, one cache and one failure count.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class ModelOptions:
    """Knobs shared by every model-backed agent, writer and judge (one client, one parser)."""

    model: str | None = None  # the model name for a bare http(s)://.../v1 URL
    temperature: float | None = None
    max_tokens: int | None = None
    top_p: float | None = None
    logprobs: bool | str = False  # True, or "tokens" to keep the per-token list
    cache: bool = False
    concurrency: int = 32
    timeout: float = 60.0
    retries: int = 5
    backoff: float = 0.5  # seconds before the first retry; doubles with jitter
    execute: str | None = None  # module:function answering tool calls instead of the mock world
    # The run's model clients by endpoint, filled by whileai_core.models.factory so the agent,
    # writer and judge of one run share one client (and one failure count) per endpoint.
    clients: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
