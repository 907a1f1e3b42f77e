"""What a run is given to play before it starts: the spec, and where its asks come from.

Three ways in, one engine: the spec's coverage grid (a cold start), traces of the
deployed agent that aim the grid at what it got wrong (`--traces`, with or without a
spec: without one the tool surface is read off the traces), or an earlier run's task set
pinned as it was (`--tasks`). `whileai_core.api.plan_run` turns the flags into a
`RunPlan` (it sits above the traces and the store it reads from); the engine only ever
sees a spec and a `TaskSource`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..spec import Spec
from ..text.similarity import SimilarityIndex
from .tasks import TaskSource


@dataclass
class RunPlan:
    spec: Spec
    tasks: TaskSource | None = None
    # The prompts a generated row must not near-copy (the source traces).
    sources: SimilarityIndex | None = None
    # What the traces were and what they aim at, for the run report.
    traces: dict[str, Any] = field(default_factory=dict)
