"""Clean up what accumulated: everything of one agent, or datasets too small to matter.

A purge is planned first (the counts a dry run prints and the y/N prompt shows) and run
second, over the `Store` protocol only, so it behaves the same on the embedded store and
on a server. Both plans also take the uploads a killed push abandoned: datasets created
but not finalized `STALE_UPLOAD_SECONDS` ago, whose upload link has expired (a younger
pending dataset may be a push still running, so it is left alone).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from ..store.base import STALE_UPLOAD_SECONDS, NotFound, Store, iter_all_traces


@dataclass
class PurgePlan:
    datasets: list[str] = field(default_factory=list)
    traces: list[str] = field(default_factory=list)
    agent: str | None = None  # the agent record itself, when it exists
    unfinished: list[str] = field(default_factory=list)  # stale pending datasets

    @property
    def empty(self) -> bool:
        return not (self.datasets or self.traces or self.agent or self.unfinished)

    def counts(self) -> dict[str, Any]:
        return {
            "datasets": len(self.datasets),
            "traces": len(self.traces),
            "agent": 1 if self.agent else 0,
            "unfinished": len(self.unfinished),
        }


def _created(record: dict[str, Any]) -> float:
    """When the dataset was created; a time this cannot read counts as now (never stale)."""
    try:
        parsed = datetime.fromisoformat(str(record.get("createdAt")).replace("Z", "+00:00"))
    except ValueError:
        return time.time()
    return (parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)).timestamp()


def stale_uploads(store: Store, agent: str | None = None, now: float | None = None) -> list[str]:
    """Pending datasets (of `agent`, when given) older than the upload link's lifetime.

    Each record's own `status` is checked too: a server that ignores `?status=pending`
    answers with its finalized datasets, and those must never be taken for abandoned."""
    cutoff = (now if now is not None else time.time()) - STALE_UPLOAD_SECONDS
    return [
        d["datasetId"]
        for d in store.list_datasets(status="pending")
        if d.get("status") == "pending"
        and _created(d) < cutoff
        and (agent is None or d.get("agent") == agent)
    ]


def plan_agent(store: Store, agent: str, now: float | None = None) -> PurgePlan:
    plan = PurgePlan()
    plan.datasets = [d["datasetId"] for d in store.list_datasets() if d.get("agent") == agent]
    plan.traces = [t["traceId"] for t in iter_all_traces(store, agent=agent)]
    plan.unfinished = stale_uploads(store, agent, now)
    if any(a["slug"] == agent for a in store.list_agents()):
        plan.agent = agent
    return plan


def plan_empty(store: Store, max_rows: int, now: float | None = None) -> PurgePlan:
    """Datasets with no bytes, or `max_rows` rows or fewer; and stale unfinished uploads."""
    return PurgePlan(
        datasets=[
            d["datasetId"]
            for d in store.list_datasets()
            if not d.get("sizeBytes") or int(d.get("rows") or 0) <= max_rows
        ],
        unfinished=stale_uploads(store, now=now),
    )


def _each(delete: Callable[[str], None], keys: list[str]) -> int:
    """Delete each key; one already gone (a concurrent purge) is skipped, not counted."""
    done = 0
    for key in keys:
        try:
            delete(key)
        except NotFound:
            continue
        done += 1
    return done


def run(store: Store, plan: PurgePlan) -> dict[str, Any]:
    """Delete what the plan lists; returns what was deleted, by the plan's counts' keys."""
    return {
        "datasets": _each(store.delete_dataset, plan.datasets),
        "traces": _each(store.delete_trace, plan.traces),
        "agent": _each(store.delete_agent, [plan.agent] if plan.agent else []),
        "unfinished": _each(store.delete_dataset, plan.unfinished),
    }
