"""What a run is given to play before it starts: the spec, and where its asks come from.

Three ways in, one engine: the spec's coverage grid (a cold start), traces of the
deployed agent that aim the grid at what it got wrong (`--traces`, with or without a
spec: without one the tool surface is read off the traces), or an earlier run's task set
pinned as it was (`--tasks`). `plan_run` turns the flags into a `RunPlan`; the engine
only ever sees a spec and a `TaskSource`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigError
from ..spec import Spec, load_spec
from ..text.similarity import SimilarityIndex
from .config import SimulateConfig
from .tasks import TaskSource


@dataclass
class RunPlan:
    spec: Spec
    tasks: TaskSource | None = None
    # The prompts a generated row must not near-copy (the source traces).
    sources: SimilarityIndex | None = None
    # What the traces were and what they aim at, for the run report.
    traces: dict[str, Any] = field(default_factory=dict)


def plan_run(
    spec_ref: Spec | str | None,
    config: SimulateConfig,
    *,
    tasks_from: str | None = None,
    traces_from: str | Iterable[dict[str, Any]] | None = None,
    since: str | None = None,
    broaden: bool = True,
) -> RunPlan:
    """Load what the run plays. `config` is completed in place where the task set decides
    (k and the budget of a pinned set)."""
    if tasks_from and traces_from is not None:
        raise ConfigError("give --tasks (re-run a task set) or --traces (aim a new one), not both")
    if since and traces_from is None:
        raise ConfigError("--since filters platform traces: it needs --traces agent:NAME")
    if not broaden and traces_from is None:
        raise ConfigError("--no-broaden narrows the grid to the tools traces touched: add --traces")
    if traces_from is not None:
        from ..traces.aim import plan_from_traces

        return plan_from_traces(spec_ref, config, traces_from, since=since, broaden=broaden)
    if spec_ref is None:
        raise ConfigError("give a SPEC (or --traces FILE to read the tools off traces)")
    spec = spec_ref if isinstance(spec_ref, Spec) else load_spec(spec_ref)
    if tasks_from is None:
        return RunPlan(spec)
    from ..store.source import iter_source_rows
    from .pinned import load_pinned

    pinned = load_pinned(
        spec, iter_source_rows(tasks_from), label=tasks_from, repeats=config.repeats,
        fault_rate=config.fault_rate,
    )  # fmt: skip
    config.repeats = pinned.k
    config.phrasings = 1
    if not config.budget_given:
        config.budget = pinned.needed()
    return RunPlan(spec, tasks=pinned)
