"""`simulate --traces`: the coverage grid aimed at what the deployed agent got wrong.

A cold run spreads its budget evenly over the grid. An aimed run keeps that spread in
one lane (the grid in its own visiting order, so every axis value still comes up) and
spends the rest on lanes of cells built around the flaw signatures the traces show:
for a signature such as tool=get_order, tool_condition=timeout, a pairwise design over
every other axis with those coordinates fixed, so the repeats of a failure meet fresh
people, phrasings, histories and rules rather than one cell over and over. Lanes are
served by smooth weighted round-robin: `FOCUS_SHARE` of the asks go to the signatures,
in proportion to how many flaw rows show each (the `LANES` commonest), the rest to the
grid. `broaden=False` (`--no-broaden`) also narrows the grid lane to the tools the
traces touched. Ungraded traces with no fault carry no flaw; traces with no flaw at all
leave the grid as a cold run draws it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from ..errors import ConfigError, NoRows
from ..seeding import seed_int
from ..simulate.config import SimulateConfig
from ..simulate.grid import (
    MULTI_TOOL,
    Cell,
    Grid,
    block_axes,
    build_grid,
    compatible,
    ordered_coords,
    pairwise_design,
)
from ..simulate.plan import RunPlan
from ..simulate.tasks import AimedTasks, Lane
from ..spec import Spec, load_spec
from ..text.levels import NEAR_COPY_COSINE
from ..text.similarity import SimilarityIndex
from .load import load_traces
from .mine import Mined, mine_traces, trace_report

FOCUS_SHARE = 0.5
LANES = 16
# Signatures are aimed on the world coordinates a trace shows; history and rule (known
# only for rows with a cell) would split them into lanes of a row or two each.
_LANE_AXES = ("tool", "world_state", "tool_condition")


def focus_cells(axes: dict[str, list[str]], fixed: dict[str, str]) -> list[Cell]:
    """A pairwise design over every axis but the `fixed` ones, which every cell keeps."""
    design_axes: dict[str, list[str]] = {}
    for name, values in {"rule": axes["rule"], **block_axes(axes)}.items():
        if name in fixed:
            design_axes[name] = [fixed[name]]
        else:
            design_axes[name] = [v for v in values if compatible(name, v, fixed)]
    rows = pairwise_design(design_axes, seed_int("aim", fixed, design_axes))
    return [Cell(coords=ordered_coords(row), block=axes["rule"].index(row["rule"])) for row in rows]


def lane_signatures(mined: Mined, tools: list[str]) -> Counter[tuple[tuple[str, str], ...]]:
    """Flaw signatures cut to the lane axes, counted, on the tools the grid has."""
    out: Counter[tuple[tuple[str, str], ...]] = Counter()
    for sig, n in mined.signatures.items():
        cut = tuple((a, v) for a, v in sig if a in _LANE_AXES and (a != "tool" or v in tools))
        if cut:
            out[cut] += n
    return out


def aimed_tasks(
    spec: Spec, mined: Mined, *, broaden: bool = True, fault_rate: float = 1.0
) -> tuple[AimedTasks, Grid]:
    touched = [t.name for t in spec.tools if t.name in mined.tools]
    pool = None
    tools: list[str] | None = None
    if not broaden:
        if not touched:
            raise ConfigError("--no-broaden: the traces touch none of the spec's tools")
        tools = touched + ([MULTI_TOOL] if len(touched) > 1 else [])
        pool = [t for t in spec.tools if t.name in touched]
    grid = build_grid(spec, tools)
    signatures = lane_signatures(mined, grid.axes["tool"]).most_common(LANES)
    total = sum(n for _, n in signatures)
    lanes = [Lane(grid.cells, "grid", 1.0 - FOCUS_SHARE if signatures else 1.0)]
    for sig, n in signatures:
        label = "traces: " + ", ".join(f"{a}={v}" for a, v in sig)
        lanes.append(Lane(focus_cells(grid.axes, dict(sig)), label, FOCUS_SHARE * n / total))
    return AimedTasks(spec, grid, lanes, fault_rate=fault_rate, tool_pool=pool), grid


def plan_from_traces(
    spec_ref: Spec | str | None,
    config: SimulateConfig,
    source: str | Iterable[dict[str, Any]],
    *,
    since: str | None = None,
    broaden: bool = True,
) -> RunPlan:
    """The spec (given, or read off the traces), aimed tasks, and the source prompts no
    generated row may near-copy."""
    loaded = load_traces(source, since=since)
    label = loaded.source
    if not loaded.traces:
        if not loaded.dropped:  # nothing there at all: no traces today is nothing to do
            raise NoRows(f"--traces {label}: no traces")
        why = ", ".join(f"{k} {v}" for k, v in loaded.dropped.items())
        raise ConfigError(f"--traces {label}: no usable trace ({why})")
    if isinstance(spec_ref, Spec):
        spec = spec_ref
    elif spec_ref is not None:
        spec = load_spec(spec_ref)
    else:
        from .infer import spec_from_traces

        spec = spec_from_traces(loaded.traces, name="traces", source=label)
    mined = mine_traces(loaded.traces, spec)
    tasks, _grid = aimed_tasks(spec, mined, broaden=broaden, fault_rate=config.fault_rate)
    report: dict[str, Any] = trace_report(
        loaded.traces, spec, source=label, read=loaded.read, dropped=dict(loaded.dropped)
    ).as_dict()
    report["spec"] = "inferred from the traces" if spec_ref is None else spec.source
    report["broaden"] = broaden
    sources = SimilarityIndex(loaded.prompts(), threshold=NEAR_COPY_COSINE)
    return RunPlan(spec, tasks=tasks, sources=sources, traces=report)


def dimensions_from_traces(
    traces: Iterable[dict[str, Any]], spec: Spec, *, broaden: bool = True
) -> dict[str, Any]:
    """The focused coverage axes an aimed run draws from: the grid's axes (the tool axis
    narrowed under `broaden=False`), the emphasis, and each aimed lane with its share of
    the asks and its cells."""
    loaded = load_traces(traces)
    mined = mine_traces(loaded.traces, spec)
    tasks, grid = aimed_tasks(spec, mined, broaden=broaden)
    total = sum(lane.weight for lane in tasks.lanes)
    lanes = [
        {"lane": lane.label, "share": round(lane.weight / total, 6), "cells": len(lane.cells)}
        for lane in tasks.lanes
    ]
    return {"axes": grid.axes, "emphasis": mined.emphasis(), "lanes": lanes}
