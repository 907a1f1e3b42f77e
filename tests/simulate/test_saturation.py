"""`--until saturation`: it stops once cells, axis pairs and new behaviours plateau, and
not before; on a grid small enough it stops well short of the budget."""

from __future__ import annotations

import json
from pathlib import Path

from whileai_core.simulate.run import run_simulation
from whileai_core.simulate.saturation import MIN_WINDOW, Saturation
from whileai_core.simulate.scheduler import SimulateConfig
from whileai_core.spec import load_spec

TINY = {
    "name": "tiny",
    "policy": "Look orders up by their id and say what you found.",
    "tools": [{
        "name": "get_order",
        "description": "Look up an order by its id.",
        "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}},
                       "required": ["order_id"]},
    }],
}  # fmt: skip


def _row(cell: int, trail: str = "ok", stance: str = "ordinary") -> dict:
    return {
        "scenario_dimensions": {"tool": "get_order", "world_state": f"state{cell}"},
        "stance": stance,
        "steps": [{"tool": "get_order", "arguments": {"order_id": "x"},
                   "result": {"status": trail}}],
    }  # fmt: skip


def test_a_plateau_in_cells_pairs_and_behaviour_is_saturation() -> None:
    seen = Saturation(cells=8)
    assert seen.window == MIN_WINDOW
    for i in range(MIN_WINDOW):
        seen.see(_row(i))  # a new cell every row
    assert not seen.reached()
    for _ in range(MIN_WINDOW - 1):
        seen.see(_row(3))
    assert not seen.reached()  # the window still holds the last new cell
    seen.see(_row(3))
    assert seen.reached()
    seen.see(_row(3, stance="hurried"))  # a pair never seen: not yet
    assert not seen.reached()


def test_new_behaviour_above_the_rate_keeps_a_run_going() -> None:
    seen = Saturation(cells=8)
    for i in range(3 * MIN_WINDOW):
        seen.see(_row(1, trail=f"status{i}" if i % 10 == 0 else "ok"))  # 10% new trails
    assert not seen.reached() and seen.new_trails == MIN_WINDOW // 10
    for _ in range(MIN_WINDOW):
        seen.see(_row(1))
    assert seen.reached()


def test_until_saturation_stops_a_small_spec_well_short_of_the_budget(tmp_path: Path) -> None:
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(TINY))
    spec = load_spec(path)
    out = tmp_path / "rows.jsonl"
    config = SimulateConfig(mode="adaptive", until="saturation", budget=20_000, concurrency=8)
    report = run_simulation(spec, config, output=str(out))
    assert report.stopped == "saturation"
    assert report.cells_visited == report.cells
    rows = out.read_text().splitlines()
    assert len(rows) == report.rows < 2_000
    sat = report.saturation
    assert sat["new_trails_in_window"] < sat["rate"] * sat["window"]
    assert any(line.startswith("saturation: ") for line in report.lines())


def test_until_compute_runs_to_the_budget(tmp_path: Path) -> None:
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(TINY))
    report = run_simulation(
        load_spec(path), SimulateConfig(mode="adaptive", budget=300), output=str(tmp_path / "r")
    )
    assert report.stopped == "budget" and report.rows == 300 and report.saturation == {}
