"""Sizing a run before buying it: cells, visits per cell, budget, situations x repeats.

Offline arithmetic over this agent's own covering grid, with the rule-of-thumb numbers of
published post-training practice: a few visits per cell before coverage saturates, about
3x more candidates than an SFT selection keeps (FireAct, LIMA, AgentTuning report small,
diverse, filtered sets beating large raw ones), and for RL groups of 8 where only mixed
groups carry a gradient (DAPO's dynamic sampling, Skywork-OR1), so rollouts are bought
in proportion to the expected mixed rate.
"""

from __future__ import annotations

import math
from typing import Any

from ..errors import ConfigError
from ..spec import Spec
from .grid import build_grid

VISITS_PER_CELL = 5
SELECTION_OVERSAMPLE = 3


def recommend(
    spec: Spec, mode: str = "sft", *, target: int = 800, mixed_rate: float = 0.5, repeats: int = 8
) -> dict[str, Any]:
    if mode not in ("explore", "sft", "rl", "adaptive"):
        raise ConfigError(f"--mode must be explore, sft, rl or adaptive, not {mode!r}")
    if target < 1:
        raise ConfigError("--target must be at least 1")
    if not 0.0 < mixed_rate <= 1.0:
        raise ConfigError("--mixed-rate must be in (0, 1]")
    cells = len(build_grid(spec).cells)
    saturation = cells * VISITS_PER_CELL
    lines = [f"covering grid: {cells} cells for this agent (pairwise, one block per rule)"]
    if mode == "rl":
        k = repeats
        probe = min(2, k)
        per_ask = probe + mixed_rate * (k - probe)
        asks = math.ceil(target / (mixed_rate * k))
        budget = math.ceil(asks * per_ask)
        lines += [
            f"rl wants {target} rows in mixed groups of k={k}: "
            f"{math.ceil(target / k)} mixed groups",
            f"at a mixed rate of {mixed_rate:.2f} that is {asks} asks probed with {probe} rollouts",
            f"a probe that splits is filled to {k}: about {per_ask:.1f} rollouts per ask",
            f"generate {budget} rollouts over {asks} situations x up to {k} repeats",
            "measure the mixed rate on a small run and pass it back with --mixed-rate",
        ]
        return _out(mode, cells, budget / cells, budget, asks, 1, k, lines)
    if mode == "explore":
        budget = max(saturation, target)
        lines += [
            f"saturation wants {VISITS_PER_CELL} visits per cell = {saturation} rows",
            f"generate {budget} rows, one new situation each",
        ]
        return _out(mode, cells, budget / cells, budget, budget, 1, 1, lines)
    phrasings = 3 if mode == "sft" else 2
    budget = max(saturation, SELECTION_OVERSAMPLE * target)
    lines += [
        f"saturation wants {VISITS_PER_CELL} visits per cell = {saturation} rows",
        f"selection wants about {SELECTION_OVERSAMPLE}x its target of {target} to choose from",
        f"generate {budget}, select {target} diverse rows",
        f"{phrasings} phrasings per situation: {math.ceil(budget / phrasings)} situations",
    ]
    repeats_out = 1 if mode == "sft" else 4
    situations = math.ceil(budget / (phrasings * repeats_out))
    return _out(mode, cells, budget / cells, budget, situations, phrasings, repeats_out, lines)


def _out(
    mode: str,
    cells: int,
    visits: float,
    budget: int,
    situations: int,
    n: int,
    k: int,
    lines: list[str],
) -> dict[str, Any]:
    return {
        "mode": mode,
        "cells": cells,
        "visits_per_cell": round(visits, 2),
        "budget": budget,
        "situations": situations,
        "phrasings": n,
        "repeats": k,
        "reasoning": lines,
        "simulate_args": ["--mode", mode, "--budget", str(budget), "--repeats", str(k)]
        + (["--phrasings", str(n)] if n > 1 else []),
    }
