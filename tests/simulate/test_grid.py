"""The coverage grid, scenario identity, the template writer and the near-duplicate filter."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

from whileai_core.people.template import TemplateWriter, compose_opener
from whileai_core.simulate.grid import HUMAN_AXES, _pair_ok, build_grid
from whileai_core.simulate.novelty import NearDuplicateFilter
from whileai_core.simulate.situation import make_situation
from whileai_core.spec import Spec, load_spec

from ..helpers import ORDERS_SPEC as SPEC
from ..helpers import run_cli


def _spec_with(rules: list[str]) -> Spec:
    spec = load_spec(SPEC)
    policy = "\n".join(f"{i + 1}. {r}" for i, r in enumerate(rules))
    return spec.model_copy(update={"policy": policy, "rules": rules})


def test_every_block_covers_every_pair_of_axis_values() -> None:
    grid = build_grid(load_spec(SPEC))
    for rule in grid.axes["rule"]:
        cells = [c.as_dict() for c in grid.cells if c.get("rule") == rule]
        names = [n for n in grid.axes if n != "rule"]
        seen = {(a, c[a], b, c[b]) for c in cells for a in names for b in names if a < b}
        for a in names:
            for b in names:
                if a >= b:
                    continue
                for va in grid.axes[a]:
                    for vb in grid.axes[b]:
                        if _pair_ok(a, va, b, vb):
                            assert (a, va, b, vb) in seen, (rule, a, va, b, vb)


def test_grid_is_far_smaller_than_the_product_and_unrelated_means_general() -> None:
    grid = build_grid(load_spec(SPEC))
    described = grid.describe()
    assert described["cells"] < described["full_product"] / 1000
    for cell in grid.cells:
        assert (cell.get("tool") == "unrelated") == (cell.get("ask_family") == "general")


def test_editing_one_rule_changes_only_that_rules_tasks() -> None:
    before = _spec_with(["Look orders up first.", "Refund only delivered orders.", "Be brief."])
    after = _spec_with(["Look orders up first.", "Refund only shipped orders.", "Be brief."])

    def ids(spec: Spec) -> dict[str, set[str]]:
        out: dict[str, set[str]] = {}
        for cell in build_grid(spec).cells:
            sid = make_situation(spec, cell, visit=0)["scenario_id"]
            out.setdefault(cell.get("rule"), set()).add(sid)
        return out

    a, b = ids(before), ids(after)
    assert a["Look orders up first."] == b["Look orders up first."]
    assert a["Be brief."] == b["Be brief."]
    assert a["unspecified"] == b["unspecified"]
    assert not a["Refund only delivered orders."] & b["Refund only shipped orders."]


def test_scenario_ids_are_stable_across_processes() -> None:
    code = (
        "from whileai_core.spec import load_spec;"
        "from whileai_core.simulate.grid import build_grid;"
        "from whileai_core.simulate.situation import make_situation;"
        f"s = load_spec({str(SPEC)!r}); g = build_grid(s);"
        "print(','.join(make_situation(s, c, visit=1)['scenario_id'] for c in g.cells[:20]))"
    )
    runs = {
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True,
            env={"PYTHONHASHSEED": str(seed), "PATH": "/usr/bin:/bin"},
        ).stdout
        for seed in (1, 2)
    }  # fmt: skip
    assert len(runs) == 1


_LEAKY = (
    "entity", "acted on", "permission_denied", "malformed", "stale_result", "prior_failure",
    "prior_partial", "contradicts_earlier", "repeat visit", "adversarial", "ambiguous",
    "exploratory", "run_on", "no_punctuation", "first_time", "non_native", "detail_oriented",
    "ask_family", "world_state", "tool_condition", "multi_tool", "unspecified", "unrelated",
    "stance", "texture", "persona", "boundary", "mistaken", "conflicting",
)  # fmt: skip


def test_template_writer_never_leaks_axis_names() -> None:
    spec = load_spec(SPEC)
    writer = TemplateWriter(avg_turns=12)

    async def voice() -> list[str]:
        texts = []
        for i, cell in enumerate(build_grid(spec).cells):
            situation = make_situation(spec, cell, visit=i % 3, phrasing=i % 2)
            texts.append(await writer.opener(situation, i))
            user = writer.user(situation, i)
            assert user is not None
            for ask in ("Which order is it? Please give me the order number.", "Done."):
                reply = await user.reply([{"role": "assistant", "content": ask}])
                if reply:
                    texts.append(reply)
        return texts

    for text in asyncio.run(voice()):
        low = text.lower()
        assert not [w for w in _LEAKY if w in low], text


def test_openers_vary_by_every_human_axis() -> None:
    spec = load_spec(SPEC)
    cell = build_grid(spec).cells[0]
    base = make_situation(spec, cell, visit=0)
    for axis in HUMAN_AXES:
        texts = set()
        for value in build_grid(spec).axes[axis]:
            situation = json.loads(json.dumps(base))
            situation["human"][axis] = value
            if axis != "ask_family":
                situation["human"]["length"] = (
                    situation["human"]["length"] if axis == "length" else "long"
                )
            texts.add(compose_opener(situation, 7))
        assert len(texts) > 1, axis


def test_writer_never_runs_dry_on_one_cell() -> None:
    spec = load_spec(SPEC)
    cell = build_grid(spec).cells[0]
    dedupe = NearDuplicateFilter()
    kept = 0
    for visit in range(300):
        situation = make_situation(spec, cell, visit=visit)
        for attempt in range(8):
            if dedupe.admit(compose_opener(situation, visit * 100 + attempt)):
                kept += 1
                break
    # The original SDK's writer stopped at about 160 openers in all; one cell alone gives 300.
    assert kept >= 270


def test_near_duplicate_filter_rejects_copies_and_keeps_distinct_texts() -> None:
    dedupe = NearDuplicateFilter()
    first = "Hello, can you look up my order ORD-1234 please? It was supposed to arrive on Monday."
    assert dedupe.admit(first)
    assert not dedupe.admit(first)
    assert not dedupe.admit(first.replace("Hello,", "Hello!"))
    assert dedupe.admit("Do you have an office in Europe where I could drop by on Friday?")
    assert dedupe.rejected == 2


def test_grid_and_recommend_commands() -> None:
    grid = run_cli("grid", str(SPEC), "--json")
    assert grid.returncode == 0, grid.stderr
    described = json.loads(grid.stdout)
    assert described["cells"] == len(build_grid(load_spec(SPEC)).cells)
    assert set(described["axes"]) >= {"tool", "rule", "world_state", "stance", "ask_family"}
    rec = run_cli("recommend", str(SPEC), "--mode", "rl")
    assert rec.returncode == 0, rec.stderr
    assert b"covering grid" in rec.stdout and b"--repeats 8" in rec.stdout
