"""Knobs shared by every model-backed agent, writer and judge of one run.

A plain dataclass with no HTTP import, so the CLI can build it for offline runs too. The
run's clients live on `clients` (filled by `models.factory.client_for`): one per role
(agent, writer) and endpoint, so the run report shows the agent's and the writer's
traffic apart and the writer keeps its own token cap and read timeout; they share the
cache.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..settings import MODEL_RETRIES


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
    retries: int = MODEL_RETRIES  # --model-retries / WHILEAI_MODEL_RETRIES (settings)
    backoff: float = 0.5  # seconds before the first retry; doubles with jitter
    execute: str | None = None  # module:function answering tool calls instead of the mock world
    # The writer's own caps (None: WHILEAI_WRITER_MAX_TOKENS / WHILEAI_WRITER_TIMEOUT, then
    # settings' defaults): a person's turn is short, and a stuck writer is not an agent.
    writer_max_tokens: int | None = None
    writer_timeout: float | None = None
    # How a model writer voices the person (None: WHILEAI_PERSON_MODE, then `plan`).
    person_mode: str | None = None
    # The run's model clients by role and endpoint, filled by whileai_core.models.factory.
    clients: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
