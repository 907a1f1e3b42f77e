"""Clean up what accumulated: everything of one agent, or datasets too small to matter.

A purge is planned first (the counts a dry run prints and the y/N prompt shows) and run
second, over the `Store` protocol only, so it behaves the same on the embedded store and
on a server.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .base import NotFound, Store, iter_all_traces


@dataclass
class PurgePlan:
    datasets: list[str] = field(default_factory=list)
    traces: list[str] = field(default_factory=list)
    agent: str | None = None  # the agent record itself, when it exists

    @property
    def empty(self) -> bool:
        return not (self.datasets or self.traces or self.agent)

    def counts(self) -> dict[str, Any]:
        return {
            "datasets": len(self.datasets),
            "traces": len(self.traces),
            "agent": 1 if self.agent else 0,
        }


def plan_agent(store: Store, agent: str) -> PurgePlan:
    plan = PurgePlan()
    plan.datasets = [d["datasetId"] for d in store.list_datasets() if d.get("agent") == agent]
    plan.traces = [t["traceId"] for t in iter_all_traces(store, agent=agent)]
    if any(a["slug"] == agent for a in store.list_agents()):
        plan.agent = agent
    return plan


def plan_empty(store: Store, max_rows: int) -> PurgePlan:
    """Datasets with no bytes, or `max_rows` rows or fewer."""
    return PurgePlan(
        datasets=[
            d["datasetId"]
            for d in store.list_datasets()
            if not d.get("sizeBytes") or int(d.get("rows") or 0) <= max_rows
        ]
    )


def run(store: Store, plan: PurgePlan) -> dict[str, Any]:
    """Delete what the plan lists; something already gone (a concurrent purge) is skipped."""
    done = {"datasets": 0, "traces": 0, "agent": 0}
    for dataset_id in plan.datasets:
        try:
            store.delete_dataset(dataset_id)
            done["datasets"] += 1
        except NotFound:
            pass
    for trace_id in plan.traces:
        try:
            store.delete_trace(trace_id)
            done["traces"] += 1
        except NotFound:
            pass
    if plan.agent:
        try:
            store.delete_agent(plan.agent)
            done["agent"] = 1
        except NotFound:
            pass
    return done
