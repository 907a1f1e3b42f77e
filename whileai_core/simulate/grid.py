"""The coverage grid: the axes a situation is drawn across, and a pairwise covering design.

World axes come from the spec (its tools and policy clauses); human axes are fixed
vocabularies the writer knows how to voice. Every policy clause owns its own block of
cells: a block's design is seeded by its clause text alone and every `scenario_id` hashes
the clause verbatim, so editing one rule changes that rule's tasks and no other's.
Within a block the design covers every pair of axis values at least once, so a budget as
small as the cell count touches every pair.
"""

from __future__ import annotations

import functools
import hashlib
import random
from dataclasses import dataclass
from typing import Any

import orjson

from ..seeding import seed_int
from ..spec import Spec

UNRELATED = "unrelated"
MULTI_TOOL = "multi_tool"
UNSPECIFIED = "unspecified"

WORLD_STATES = (
    "entity exists",
    "entity missing",
    "entity already acted on",
    "duplicate entity",
    "partially completed",
)
TOOL_CONDITIONS = ("success", "timeout", "permission_denied", "malformed_result", "stale_result")
HISTORIES = (
    "fresh",
    "prior_failure",
    "prior_partial_action",
    "contradicts_earlier",
    "repeat visit",
)
STANCES = (
    "ordinary", "ambiguous", "boundary", "adversarial", "hurried",
    "unsure", "mistaken", "conflicting", "exploratory", "retry",
)  # fmt: skip
TONES = ("polite", "neutral", "impatient", "frustrated", "friendly", "formal")
TEXTURES = ("standard", "lowercase", "typo", "abbreviations", "clipped", "run_on", "no_punctuation")
PERSONAS = ("first_time", "returning", "in_a_hurry", "non_native", "detail_oriented", "elderly")
LENGTHS = ("short", "medium", "long")
ASK_FAMILIES = ("tool", "general", "vague")

WORLD_AXES = ("tool", "rule", "world_state", "tool_condition", "history")
HUMAN_AXES = ("stance", "tone", "texture", "persona", "length", "ask_family")
# The axes a block's design covers; `rule` is fixed per block.
_BLOCK_AXES = ("tool", "world_state", "tool_condition", "history", *HUMAN_AXES)


@dataclass(frozen=True)
class Cell:
    """One point of the grid. `block` is the rule clause's position, for round-robin order."""

    coords: tuple[tuple[str, str], ...]
    block: int

    def get(self, axis: str) -> str:
        return dict(self.coords)[axis]

    def as_dict(self) -> dict[str, str]:
        return dict(self.coords)

    @property
    def cell_id(self) -> str:
        return stable_hash(self.as_dict(), prefix="cell-")


@dataclass
class Grid:
    """The axes, their values and the covering design, in the order a run visits cells."""

    axes: dict[str, list[str]]
    cells: list[Cell]

    def describe(self) -> dict[str, Any]:
        return {
            "axes": {name: list(values) for name, values in self.axes.items()},
            "world_axes": list(WORLD_AXES),
            "human_axes": list(HUMAN_AXES),
            "cells": len(self.cells),
            "blocks": len(self.axes["rule"]),
            "pairs_covered": count_covered_pairs(self.cells),
            "full_product": _product_size(self.axes),
        }


def stable_hash(value: Any, *, prefix: str = "", length: int = 10) -> str:
    """A short hex digest of a JSON-able value with sorted keys: the same on every machine."""
    raw = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    return prefix + hashlib.sha256(raw).hexdigest()[:length]


def tool_values(spec: Spec) -> list[str]:
    values = [t.name for t in spec.tools] + [UNRELATED]
    if len(spec.tools) > 1:
        values.append(MULTI_TOOL)
    return values


def build_axes(spec: Spec, tools: list[str] | None = None) -> dict[str, list[str]]:
    """The grid's axes; `tools` narrows the tool axis (a run aimed at some tools). With no
    `unrelated` tool value there is no general question either (they go together)."""
    tool = tools if tools is not None else tool_values(spec)
    families = [f for f in ASK_FAMILIES if UNRELATED in tool or f != "general"]
    return {
        "tool": list(tool),
        "rule": [*spec.rules, UNSPECIFIED],
        "world_state": list(WORLD_STATES),
        "tool_condition": list(TOOL_CONDITIONS),
        "history": list(HISTORIES),
        "stance": list(STANCES),
        "tone": list(TONES),
        "texture": list(TEXTURES),
        "persona": list(PERSONAS),
        "length": list(LENGTHS),
        "ask_family": families,
    }


# An unrelated question touches no record and no tool: its world is the plain one.
_QUIET_WORLD = {"world_state": "entity exists", "tool_condition": "success"}


def compatible(axis: str, value: str, fixed: dict[str, str]) -> bool:
    """Whether `value` on `axis` can share a cell with the `fixed` coordinates: an
    unrelated question is a general one (and back), and meets a plain world."""
    if (
        axis == "tool"
        and "ask_family" in fixed
        and (value == UNRELATED) != (fixed["ask_family"] == "general")
    ):
        return False
    if (
        axis == "ask_family"
        and "tool" in fixed
        and (value == "general") != (fixed["tool"] == UNRELATED)
    ):
        return False
    unrelated = value == UNRELATED if axis == "tool" else fixed.get("tool") == UNRELATED
    general = value == "general" if axis == "ask_family" else fixed.get("ask_family") == "general"
    for quiet_axis, quiet in _QUIET_WORLD.items():
        mine = value if axis == quiet_axis else fixed.get(quiet_axis)
        if (unrelated or general) and mine is not None and mine != quiet:
            return False
    return True


def block_axes(axes: dict[str, list[str]]) -> dict[str, list[str]]:
    """The axes one rule block's design covers (all but `rule`)."""
    return {name: axes[name] for name in _BLOCK_AXES}


def ordered_coords(coords: dict[str, str]) -> tuple[tuple[str, str], ...]:
    """A cell's coordinates in the grid's axis order (the order rows and ids use)."""
    return tuple((name, coords[name]) for name in (*WORLD_AXES, *HUMAN_AXES))


def _pair_ok(a: str, va: str, b: str, vb: str) -> bool:
    return compatible(a, va, {b: vb}) and compatible(b, vb, {a: va})


def pairwise_design(axes: dict[str, list[str]], seed: int) -> list[dict[str, str]]:
    """A greedy (AETG-style) pairwise covering array honouring the compatibility rule.

    Each new row starts from an uncovered pair and fills the other axes, in a seeded random
    order, with the value covering the most still-uncovered pairs. Deterministic per seed.

    The uncovered pairs are kept twice: as a set (to pick each row's seed pair) and as each
    (axis, value)'s still-uncovered partners, so a candidate's gain is one set
    intersection with the row so far instead of a tuple built and looked up per pair (the
    design was most of a run's start-up). The draws and the choices are the same.
    """
    names = list(axes)
    rng = random.Random(seed)
    pairs = _coverable_pairs(tuple((name, tuple(values)) for name, values in axes.items()))
    uncovered: set[tuple[str, str, str, str]] = set(pairs)
    partners: dict[tuple[str, str], set[tuple[str, str]]] = {}
    for a, va, b, vb in pairs:
        partners.setdefault((a, va), set()).add((b, vb))
        partners.setdefault((b, vb), set()).add((a, va))
    none: set[tuple[str, str]] = set()
    # The smallest uncovered pair seeds each row; pairs are only ever removed, so the
    # smallest is the first of the sorted list still uncovered (not a scan of the set).
    next_seed = 0

    rows: list[dict[str, str]] = []
    while uncovered:
        while pairs[next_seed] not in uncovered:
            next_seed += 1
        start = pairs[next_seed]  # deterministic choice of the seed pair
        best: dict[str, str] | None = None
        best_gain = -1
        for _attempt in range(4):
            row = {start[0]: start[1], start[2]: start[3]}
            placed = set(row.items())
            rest = [n for n in names if n not in row]
            rng.shuffle(rest)
            for name in rest:
                choices = [v for v in axes[name] if compatible(name, v, row)]
                rng.shuffle(choices)
                top, top_gain = choices[0], -1
                for v in choices:
                    gain = len(partners.get((name, v), none) & placed)
                    if gain > top_gain:
                        top, top_gain = v, gain
                row[name] = top
                placed.add((name, top))
            # Each uncovered pair inside the row is counted from both of its ends.
            gain = sum(len(partners.get(item, none) & placed) for item in placed) // 2
            if gain > best_gain:
                best, best_gain = row, gain
        assert best is not None
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                pair = (a, best[a], b, best[b])
                if pair in uncovered:
                    uncovered.discard(pair)
                    partners[(a, best[a])].discard((b, best[b]))
                    partners[(b, best[b])].discard((a, best[a]))
        rows.append({n: best[n] for n in names})
    return rows


@functools.lru_cache(maxsize=16)
def _coverable_pairs(
    axes: tuple[tuple[str, tuple[str, ...]], ...],
) -> list[tuple[str, str, str, str]]:
    """Every compatible value pair of two axes, sorted; the same for every rule block."""
    found = []
    for i, (a, values_a) in enumerate(axes):
        for b, values_b in axes[i + 1 :]:
            for va in values_a:
                for vb in values_b:
                    if _pair_ok(a, va, b, vb):
                        found.append((a, va, b, vb))
    return sorted(found)


def build_grid(spec: Spec, tools: list[str] | None = None) -> Grid:
    """The run's cells: one pairwise block per rule clause (plus `unspecified`), interleaved."""
    axes = build_axes(spec, tools)
    design_axes = block_axes(axes)
    blocks: list[list[Cell]] = []
    for index, rule in enumerate(axes["rule"]):
        design = pairwise_design(design_axes, seed_int("block", rule, design_axes))
        cells = []
        for row in design:
            coords = {"tool": row["tool"], "rule": rule}
            coords.update({k: row[k] for k in _BLOCK_AXES if k != "tool"})
            cells.append(Cell(coords=ordered_coords(coords), block=index))
        # Ordinary asks first, then the edges (fewer unusual values lead), taking the tool
        # values in turn so a small budget is not all one kind of ask.
        by_tool: dict[str, list[Cell]] = {}
        for cell in sorted(cells, key=lambda c: (_edginess(c), c.cell_id)):
            by_tool.setdefault(cell.get("tool"), []).append(cell)
        lanes = [by_tool[t] for t in axes["tool"] if t in by_tool]
        blocks.append(
            [lane[i] for i in range(max(map(len, lanes))) for lane in lanes if i < len(lane)]
        )
    interleaved: list[Cell] = []
    for i in range(max(len(b) for b in blocks)):
        interleaved.extend(block[i] for block in blocks if i < len(block))
    return Grid(axes=axes, cells=interleaved)


def _edginess(cell: Cell) -> int:
    d = cell.as_dict()
    return sum(
        (
            d["world_state"] != "entity exists",
            d["tool_condition"] != "success",
            d["history"] != "fresh",
            d["stance"] != "ordinary",
        )
    )


def count_covered_pairs(cells: list[Cell]) -> int:
    seen: set[tuple[str, str, str, str]] = set()
    for cell in cells:
        items = cell.coords
        for i, (a, va) in enumerate(items):
            for b, vb in items[i + 1 :]:
                seen.add((a, va, b, vb))
    return len(seen)


def _product_size(axes: dict[str, list[str]]) -> int:
    size = 1
    for values in axes.values():
        size *= len(values)
    return size
