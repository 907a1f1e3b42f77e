"""The second scripted agent: runs under simulate as `module:function`, labels its own
planted mistakes in `seeded`, and the default judge tells them from its clean rows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from whileai_core.judges import grade_rows, parse_judge
from whileai_core.simulate.config import SimulateConfig
from whileai_core.simulate.run import run_simulation
from whileai_core.spec import load_spec
from whileai_core.testing.plainspoken import MISTAKES

SPECS = Path(__file__).resolve().parents[2] / "specs"
AGENT = "whileai_core.testing.plainspoken:agent"


def _rows(spec: str, budget: int = 200) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    run_simulation(
        load_spec(SPECS / spec),
        SimulateConfig(budget=budget, seed=3),
        agent_ref=AGENT,
        sink=rows.append,
    )
    return rows


@pytest.mark.parametrize("spec", ["orders", "airline"])
def test_the_second_agent_plants_labelled_mistakes_the_default_judge_catches(spec: str) -> None:
    rows = _rows(spec)
    assert {r["model_version"] for r in rows} == {AGENT}
    planted = [r for r in rows if r["seeded"]]
    clean = [r for r in rows if r["seeded"] == []]
    assert len(clean) > 100 and len(planted) > 40
    assert {m for r in planted for m in r["seeded"]} <= set(MISTAKES)
    graded = list(grade_rows(rows, parse_judge(None)))
    by_id = {id(r): g for r, g in zip(rows, graded, strict=True)}
    caught = sum(by_id[id(r)]["reward"] == 0.0 for r in planted) / len(planted)
    passed = sum(by_id[id(r)]["reward"] == 1.0 for r in clean) / len(clean)
    assert caught >= 0.95 and passed >= 0.95, (caught, passed)


def test_its_wording_is_its_own() -> None:
    from whileai_core.agents import seeded

    texts = " ".join(r["final_text"] for r in _rows("orders", budget=60))
    for phrase in (seeded.APOLOGY, seeded.FLATTERY, "Here is what I found for", "went through"):
        assert phrase.strip() not in texts
