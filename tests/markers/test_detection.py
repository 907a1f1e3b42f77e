"""Each planted behaviour is caught on rows written three ways: by our seeded agent, by the
original SDK's seeded agent (the fixture rows), and by hand in tests/data (other domains,
other wording, committed before any detector existed). The bar: >= 95% caught, <= 2% false
alarms on clean rows."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from whileai_core.api import simulate_rows

from ..helpers import REPO, SDK_ROWS
from .handset import TICS, behaviour_rows, measure

CATCH, FALSE_ALARM = 0.95, 0.02


def _check(result: dict[str, dict[str, Any]], tics: tuple[str, ...] = TICS) -> None:
    for tic in tics:
        entry = result[tic]
        assert entry["planted"] >= 20, (tic, entry["planted"])
        caught = entry["caught"] / entry["planted"]
        alarms = entry["alarms"] / entry["clean"]
        assert caught >= CATCH, (tic, caught, entry["misses"][:5])
        assert alarms <= FALSE_ALARM, (tic, alarms, entry["alarm_rows"][:5])


@pytest.fixture(scope="module")
def seeded_rows() -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for spec in ("orders", "airline", "repo-maint"):
        got, _ = simulate_rows(REPO / "specs" / spec, mode="rl", budget=900, reproducible=True)
        rows += got
    return rows


def test_seeded_agent_behaviours_are_caught(seeded_rows: list[dict[str, Any]]) -> None:
    result = measure(seeded_rows, lambda r: r.get("seeded") or [])
    assert sum(1 for r in seeded_rows if not r.get("seeded")) > 1500
    _check(result)


def test_hand_written_rows_in_other_wording_are_caught() -> None:
    rows = behaviour_rows()
    result = measure(rows, lambda r: [] if r["label"] == "clean" else [r["label"]])
    assert result["apology"]["clean"] >= 100
    _check(result)


def test_the_original_sdks_rows_are_caught_where_they_can_be() -> None:
    """The SDK's own seeded wording ("Generally speaking ... may or may not hold",
    "Absolutely! Happy to help."). Its rows carry no privileged block, so a leak there is
    uncheckable, and its agent passes 'the record' as an order id where none was given:
    an invention it did not label, so grounding is left out of the false-alarm count."""
    rows = [orjson.loads(line) for line in SDK_ROWS.read_bytes().splitlines() if line.strip()]
    result = measure(rows, lambda r: r.get("seeded") or [])
    for tic in ("apology", "hedging", "sycophancy", "boilerplate"):
        entry = result[tic]
        assert entry["caught"] == entry["planted"] > 0, tic
        assert entry["alarms"] == 0, (tic, entry["alarm_rows"])
