"""`--until saturation`: when a run has seen what its grid and its agent have to show.

A run is saturated when three things have plateaued over the last `window` rows:

- **cells**: no row landed in a cell no earlier row had;
- **pairs**: no row showed a pair of axis values (`world_state=entity missing` with
  `stance=hurried`, ...) no earlier row had;
- **behaviour**: fewer than `rate` of the rows showed a behaviour trail no earlier row
  had (`rowmake.behavior_trail`: the calls, their argument names and the world's
  statuses; not the reply's wording, which carries the person's own values and so is
  new on nearly every row forever).

The window is a quarter of the grid's cells, at least `MIN_WINDOW` rows, so a big grid
must go quiet for longer. Resumed rows count as seen. Nothing here is random: the same
rows in the same order saturate at the same row.
"""

from __future__ import annotations

import itertools
from collections import deque
from typing import Any

import orjson

from .grid import HUMAN_AXES
from .rowmake import behavior_trail

MIN_WINDOW = 100
RATE = 0.05


class Saturation:
    """What the rows so far have shown, and whether the last window showed anything new."""

    def __init__(self, cells: int, *, rate: float = RATE, min_window: int = MIN_WINDOW) -> None:
        self.window = max(min_window, cells // 4)
        self.rate = rate
        self.rows = 0
        self._cells: set[str] = set()
        self._pairs: set[tuple[str, str]] = set()
        self._trails: set[bytes] = set()
        # Per row of the window: (a new cell, a new pair, a new trail).
        self._recent: deque[tuple[bool, bool, bool]] = deque(maxlen=self.window)

    def see(self, row: dict[str, Any]) -> None:
        self.rows += 1
        coords = _coords(row)
        cell = orjson.dumps(coords, option=orjson.OPT_SORT_KEYS).decode()
        new_cell = cell not in self._cells
        self._cells.add(cell)
        values = sorted(f"{axis}={value}" for axis, value in coords.items())
        pairs = set(itertools.combinations(values, 2))
        new_pair = not pairs <= self._pairs
        self._pairs |= pairs
        steps = row.get("steps")
        trail = orjson.dumps(behavior_trail(steps if isinstance(steps, list) else []))
        new_trail = trail not in self._trails
        self._trails.add(trail)
        self._recent.append((new_cell, new_pair, new_trail))

    @property
    def new_trails(self) -> int:
        return sum(1 for _, _, trail in self._recent if trail)

    def reached(self) -> bool:
        """A full window with no new cell, no new pair and new trails below the rate."""
        if len(self._recent) < self.window:
            return False
        if any(cell or pair for cell, pair, _ in self._recent):
            return False
        return self.new_trails < self.rate * self.window

    def describe(self) -> dict[str, Any]:
        return {
            "window": self.window,
            "rate": self.rate,
            "cells_seen": len(self._cells),
            "pairs_seen": len(self._pairs),
            "trails_seen": len(self._trails),
            "new_trails_in_window": self.new_trails,
        }


def _coords(row: dict[str, Any]) -> dict[str, str]:
    """The row's cell: its world axes and its human axes."""
    dims = row.get("scenario_dimensions")
    coords = {k: str(v) for k, v in dims.items()} if isinstance(dims, dict) else {}
    for axis in HUMAN_AXES:
        if isinstance(row.get(axis), str):
            coords[axis] = row[axis]
    return coords
