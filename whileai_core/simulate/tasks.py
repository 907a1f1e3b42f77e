"""Where a run's asks come from: the one place a task (a situation phrased one way) is drawn.

The engine asks a `TaskSource` for ask number `index` and gets a situation, or None when
the source has nothing left. Three sources:

- `GridTasks`: the cold start. The spec's seed situations first, then the coverage grid's
  cells in their visiting order, round after round (visit 0, 1, ...).
- `AimedTasks` (built by `whileai_core.traces.focus`): the grid's order interleaved with
  lanes of cells aimed at what a set of traces got wrong.
- `PinnedTasks`: a previous run's asks, each on its own `scenario_id`, then nothing.

A source is a pure function of (index, phrasings) plus its own construction, so the same
index always names the same task. That is what a later `--shard I/N` filter needs: it can
wrap any source and keep the indices whose task ids fall in its shard.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from ..spec import Spec, Tool
from .grid import Cell, Grid
from .situation import make_seed_situation, make_situation

Situation = dict[str, Any]


class TaskSource(Protocol):
    """Ask `index` of a run (with `phrasings` phrasings per situation), or None when the
    source is used up. `done_reason` is the run's `stopped` value once it is."""

    cells: int
    done_reason: str

    def situation(self, index: int, phrasings: int) -> Situation | None: ...

    def cells_visited(self, asks: int, phrasings: int) -> int: ...

    def describe(self) -> dict[str, Any]: ...


class GridTasks:
    """Seed situations first (each on a grid cell it may pin), then the cells round-robin."""

    done_reason = "exhausted"

    def __init__(self, spec: Spec, grid: Grid, *, fault_rate: float = 1.0) -> None:
        self.spec = spec
        self.grid = grid
        self.fault_rate = fault_rate
        self.cells = len(grid.cells)

    def situation(self, index: int, phrasings: int) -> Situation:
        s_index, phrasing = divmod(index, phrasings)
        cells = self.grid.cells
        seeds = self.spec.situations
        if s_index < len(seeds):
            position = s_index % len(cells)
            situation = make_seed_situation(
                self.spec, seeds[s_index], s_index, cells[position], self.grid.axes,
                phrasing=phrasing, fault_rate=self.fault_rate,
            )  # fmt: skip
        else:
            position, visit = (s_index - len(seeds)) % len(cells), (s_index - len(seeds)) // len(
                cells
            )
            situation = make_situation(
                self.spec, cells[position], visit=visit, phrasing=phrasing,
                fault_rate=self.fault_rate,
            )  # fmt: skip
        situation["cell_position"] = position
        return situation

    def cells_visited(self, asks: int, phrasings: int) -> int:
        return min(asks // phrasings, self.cells)

    def describe(self) -> dict[str, Any]:
        return {"source": "grid", "cells": self.cells}


class Lane:
    """A list of cells drawn in turn, with a label saying why (for `selection_reason`)."""

    def __init__(self, cells: Sequence[Cell], label: str, weight: float) -> None:
        if not cells:
            raise ValueError(f"lane {label!r} has no cells")
        self.cells = list(cells)
        self.label = label
        self.weight = weight
        self.drawn = 0


def weighted_turns(weights: Sequence[float]) -> Callable[[], int]:
    """Smooth weighted round-robin (the nginx rule): each turn every lane gains its weight,
    the richest lane is served and pays the total. Deterministic, and any prefix of the
    sequence is as close to the weights as a prefix can be."""
    credit = [0.0] * len(weights)
    total = float(sum(weights))

    def next_lane() -> int:
        best = 0
        for i, w in enumerate(weights):
            credit[i] += w
            if credit[i] > credit[best]:
                best = i
        credit[best] -= total
        return best

    return next_lane


class AimedTasks:
    """The grid's own order in lane 0, aimed lanes beside it, served by weight.

    A cell drawn again (by any lane) gets the next visit number, so no two asks share a
    situation. Spec seed situations still come first, as on a cold run.
    """

    done_reason = "exhausted"

    def __init__(
        self,
        spec: Spec,
        grid: Grid,
        lanes: Sequence[Lane],
        *,
        fault_rate: float = 1.0,
        tool_pool: list[Tool] | None = None,
    ) -> None:
        self.spec = spec
        self.grid = grid
        self.lanes = list(lanes)
        self.fault_rate = fault_rate
        self.cells = len({c.cell_id for lane in self.lanes for c in lane.cells})
        self._pool = tool_pool
        self._seeds = GridTasks(spec, grid, fault_rate=fault_rate)
        self._turn = weighted_turns([lane.weight for lane in self.lanes])
        # Ask order is fixed by index: situations are made once, in index order.
        self._made: list[tuple[Cell, int, str, int]] = []
        self._visits: dict[str, int] = {}
        self._seen: set[str] = set()

    def _plan(self, s_index: int) -> tuple[Cell, int, str, int]:
        while len(self._made) <= s_index:
            lane_no = self._turn()
            lane = self.lanes[lane_no]
            position = lane.drawn % len(lane.cells)
            cell = lane.cells[position]
            lane.drawn += 1
            visit = self._visits.get(cell.cell_id, 0)
            self._visits[cell.cell_id] = visit + 1
            self._seen.add(cell.cell_id)
            self._made.append((cell, visit, lane.label, position))
        return self._made[s_index]

    def situation(self, index: int, phrasings: int) -> Situation:
        s_index, phrasing = divmod(index, phrasings)
        seeds = len(self.spec.situations)
        if s_index < seeds:
            return self._seeds.situation(index, phrasings)
        cell, visit, label, position = self._plan(s_index - seeds)
        situation = make_situation(
            self.spec, cell, visit=visit, phrasing=phrasing, fault_rate=self.fault_rate,
            tool_pool=self._pool,
        )  # fmt: skip
        situation["cell_position"] = position
        if label != "grid":
            situation["aim"] = label
        return situation

    def cells_visited(self, asks: int, phrasings: int) -> int:
        return len(self._seen)

    def describe(self) -> dict[str, Any]:
        return {
            "source": "traces",
            "cells": self.cells,
            "lanes": {lane.label: {"weight": lane.weight, "cells": len(lane.cells),
                                   "asks": lane.drawn} for lane in self.lanes},
        }  # fmt: skip
