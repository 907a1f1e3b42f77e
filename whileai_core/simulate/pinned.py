"""`simulate --tasks BASE`: re-run exactly the asks of an earlier run, nothing new.

A/B-ing a prompt edit or a model swap needs the same eval on both sides. A fresh run
draws its asks from the grid by seed (and, above concurrency 1, by completion order), so
it shares only part of them with an earlier one; pinning the task set removes that.

Each distinct `scenario_id` of BASE becomes one ask, in BASE's order, with BASE's prompt
verbatim, its `scenario_id` kept (also for an ask of an edited policy clause, so a
compare still pairs it), its fault plan (`faults`) and its world state. The situation
behind the ask (the entity ids the world and the person share) is rebuilt from the row's
cell (`scenario_dimensions` and the human axes) and the visit and phrasing its
`selection_reason` names; when that reproduces BASE's `scenario_id` the rebuild is exact,
otherwise (rows from another tool, a changed tool list) it is the nearest cell and the
report counts it. k is BASE's: the most rollouts any of its asks has.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from ..errors import ConfigError, NoRows
from ..metrics.tally import task_key
from ..spec import Spec
from .grid import (
    HUMAN_AXES,
    UNRELATED,
    UNSPECIFIED,
    WORLD_AXES,
    Cell,
    build_axes,
    ordered_coords,
)
from .situation import ROTATED_AXES, make_situation, reference_for

_WHERE = re.compile(r"\bvisit (-?\d+) phrasing (\d+)")
_DEFAULTS = {
    "world_state": "entity exists", "tool_condition": "success", "history": "fresh",
    "rule": UNSPECIFIED, "stance": "ordinary", "tone": "neutral", "texture": "standard",
    "persona": "first_time", "length": "medium", "ask_family": "tool",
}  # fmt: skip


class PinnedTasks:
    """A fixed list of asks; `situation(i)` is ask i, None past the end (`tasks_done`)."""

    done_reason = "tasks_done"

    def __init__(self, situations: list[dict[str, Any]], k: int, label: str, stats: Counter[str]):
        self.situations = situations
        self.k = k
        self.label = label
        self.stats = stats
        self.cells = len({s["cell_id"] for s in situations})

    def situation(self, index: int, phrasings: int) -> dict[str, Any] | None:
        if index >= len(self.situations):
            return None
        return dict(self.situations[index])

    def cells_visited(self, asks: int, phrasings: int) -> int:
        return len({s["cell_id"] for s in self.situations[:asks]})

    def needed(self) -> int:
        """Rollouts the whole set takes at k each: the budget when none is given."""
        return len(self.situations) * self.k

    def describe(self) -> dict[str, Any]:
        return {"source": "tasks", "from": self.label, "tasks": len(self.situations),
                "k": self.k, **dict(sorted(self.stats.items()))}  # fmt: skip


def load_pinned(
    spec: Spec, rows: Any, *, label: str, repeats: int | None = None, fault_rate: float = 1.0
) -> PinnedTasks:
    """The task set of `rows` (an iterable of BASE's rows) on `spec`."""
    firsts: dict[str, dict[str, Any]] = {}
    counts: Counter[str] = Counter()
    seen = 0
    for row in rows:
        seen += 1
        sid = row.get("scenario_id") if isinstance(row.get("scenario_id"), str) else None
        key = sid or task_key(row)
        if not key:
            continue
        counts[key] += 1
        if key not in firsts:
            firsts[key] = row
    if not seen:  # an empty task set: nothing to simulate, not a bad one
        raise NoRows(f"--tasks {label}: no rows")
    if not firsts:
        raise ConfigError(f"--tasks {label}: no task in it (rows need a prompt or a scenario_id)")
    stats: Counter[str] = Counter()
    renamed = _renamed_clauses(spec, firsts.values())
    situations = []
    for position, (key, row) in enumerate(firsts.items()):
        situation = _rebuild(spec, row, key, fault_rate, renamed, stats)
        situation["pinned"] = f"pinned task {position + 1}/{len(firsts)} of {label}"
        situation["cell_position"] = position
        situations.append(situation)
    k = repeats or max(counts.values())
    return PinnedTasks(situations, k, label, stats)


def _renamed_clauses(spec: Spec, rows: Any) -> dict[str, str]:
    """BASE's clauses the spec no longer has, mapped to the one new clause replacing each
    (only when exactly one went and one came: a reworded rule)."""
    used = {
        str((r.get("scenario_dimensions") or {}).get("rule"))
        for r in rows
        if isinstance(r.get("scenario_dimensions"), dict)
    }
    gone = sorted(u for u in used if u not in spec.rules and u not in (UNSPECIFIED, "None"))
    base_rules = used | {UNSPECIFIED}
    came = [r for r in spec.rules if r not in base_rules]
    return {gone[0]: came[0]} if len(gone) == 1 and len(came) == 1 else {}


def _coords(spec: Spec, row: dict[str, Any], phrasing: int) -> tuple[dict[str, str], bool]:
    """The cell a row was drawn on (human axes un-rotated by its phrasing), and whether
    every axis came from the row."""
    dims = row.get("scenario_dimensions")
    dims = dims if isinstance(dims, dict) else {}
    axes = build_axes(spec)
    coords: dict[str, str] = {}
    complete = True
    for axis in (*WORLD_AXES, *HUMAN_AXES):
        value = dims.get(axis, row.get(axis)) if axis in WORLD_AXES else row.get(axis)
        if not isinstance(value, str):
            complete = False
            value = _DEFAULTS.get(axis)
            if axis == "tool":
                used = [t for t in row.get("tools_used") or [] if spec.tool(str(t))]
                value = used[0] if used else UNRELATED
        if axis == "tool" and value not in axes["tool"]:
            complete, value = False, UNRELATED
        coords[axis] = str(value)
    for offset, (axis, values) in enumerate(ROTATED_AXES.items(), start=1):
        if phrasing and coords[axis] in values:
            i = values.index(coords[axis])
            coords[axis] = values[(i - phrasing * offset) % len(values)]
    return coords, complete


def _rebuild(
    spec: Spec,
    row: dict[str, Any],
    key: str,
    fault_rate: float,
    renamed: dict[str, str],
    stats: Counter[str],
) -> dict[str, Any]:
    where = _WHERE.search(str(row.get("selection_reason") or ""))
    visit, phrasing = (int(where.group(1)), int(where.group(2))) if where else (0, 0)
    coords, complete = _coords(spec, row, phrasing)
    cell = Cell(coords=ordered_coords(coords), block=0)
    situation = make_situation(spec, cell, visit=visit, phrasing=phrasing, fault_rate=fault_rate)
    exact = complete and situation["scenario_id"] == key
    if visit < 0:  # a spec seed situation: the person's own words name their ids
        situation["targets"] = {}
    stats["rebuilt_exactly" if exact or visit < 0 else "rebuilt_nearest"] += 1
    rule = situation["world"]["rule"]
    if rule in renamed:
        situation["world"] = {**situation["world"], "rule": renamed[rule]}
        stats["on_an_edited_clause"] += 1
    elif rule not in spec.rules and rule != UNSPECIFIED:
        stats["on_a_removed_clause"] += 1
    situation["reference"] = reference_for(situation, spec)
    faults = row.get("faults")
    if isinstance(faults, dict):
        situation["faults"] = faults
    situation["scenario_id"] = key
    prompt = row.get("prompt") if isinstance(row.get("prompt"), str) else key
    situation["pinned_prompt"] = prompt
    return situation
