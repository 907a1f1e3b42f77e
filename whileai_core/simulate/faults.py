"""The fault schedule: which tool call breaks, and how, drawn from the rollout's seed.

A plan maps a tool name (or `*` for every tool) to `{"mode": kind, "rate": p}`. Each call
draws once from a generator seeded by the rollout seed, so the same rollout making the
same calls sees the same faults on every machine and at any concurrency.
"""

from __future__ import annotations

import random
from typing import Any

FAULT_KINDS = ("timeout", "permission_denied", "malformed", "stale")

# The grid's tool_condition values and the fault they schedule.
CONDITION_TO_FAULT = {
    "success": None,
    "timeout": "timeout",
    "permission_denied": "permission_denied",
    "malformed_result": "malformed",
    "stale_result": "stale",
}


def plan_for(condition: str, rate: float, tool: str | None = None) -> dict[str, Any]:
    """The row's fault plan for a grid tool_condition; `{}` when the tools behave."""
    mode = CONDITION_TO_FAULT.get(condition)
    if mode is None or rate <= 0:
        return {}
    return {tool or "*": {"mode": mode, "rate": float(min(rate, 1.0))}}


class FaultSchedule:
    """Draws, per call, whether the plan fires; remembers what fired for the row."""

    def __init__(self, plan: dict[str, Any] | None, seed: int) -> None:
        self.plan = dict(plan or {})
        for target, entry in self.plan.items():
            if not isinstance(entry, dict) or entry.get("mode") not in FAULT_KINDS:
                raise ValueError(f"fault plan for {target!r}: mode must be one of {FAULT_KINDS}")
        self._rng = random.Random(seed)
        self.fired: list[dict[str, Any]] = []

    def draw(self, tool: str, step: int, *, found: bool = True) -> str | None:
        """The fault for this call, if any. A stale copy needs a record, so it cannot fire
        on a call that found nothing (`found=False`)."""
        entry = self.plan.get(tool) or self.plan.get("*")
        if not entry:
            return None
        # Always consume one draw per call so later calls do not shift with the plan.
        roll = self._rng.random()
        if roll >= float(entry.get("rate", 1.0)):
            return None
        mode = str(entry["mode"])
        if mode == "stale" and not found:
            return None
        self.fired.append({"tool": tool, "mode": mode, "step": step})
        return mode


def faulted_result(mode: str, tool: str, honest: dict[str, Any]) -> dict[str, Any]:
    """What the caller sees instead of (or as a warped copy of) the honest result."""
    if mode == "timeout":
        return {"status": "timeout", "error": f"{tool} timed out after 30s"}
    if mode == "permission_denied":
        return {"status": "permission_denied", "error": f"not permitted to call {tool}"}
    if mode == "malformed":
        junk = str(honest)[:40].replace("'", "").replace("{", "<").replace(":", "=")
        return {"status": "malformed", "raw": f"<<ERR#0x1f {junk}"}
    # A search's list (or a look-up's two matches) comes back as an old copy of the same
    # list, not as one empty record: the agent still sees what was found, marked stale.
    for listed in ("results", "matches"):
        records = honest.get(listed)
        if isinstance(records, list):
            copies = [_stale_copy(r) for r in records if isinstance(r, dict)]
            return {"status": "ok", "stale": True, listed: copies, "as_of": STALE_AS_OF}
    return {"status": "ok", "stale": True, "data": _stale_copy(honest.get("data") or {})}


# When a stale copy says it was taken: long enough ago that no record could still hold.
STALE_AS_OF = "2023-01-01T00:00:00Z"


def _stale_copy(record: dict[str, Any]) -> dict[str, Any]:
    """An old copy of a record: its status still the first one, stamped with its date."""
    data = dict(record)
    if "status" in data:
        data["status"] = "pending"
    data["as_of"] = STALE_AS_OF
    return data
