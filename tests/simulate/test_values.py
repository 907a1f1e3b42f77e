"""Generated values satisfy the spec's own schemas (checked with `jsonschema`, not by us):
the mock world's records, the situation's entities, and the arguments of simulated rows."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from whileai_core.simulate.grid import build_grid
from whileai_core.simulate.situation import make_situation
from whileai_core.simulate.values import fake_value
from whileai_core.simulate.world import World
from whileai_core.spec import Spec, load_spec

from ..helpers import REPO, run_cli

SPECS = {name: load_spec(REPO / "specs" / name) for name in ("orders", "airline", "repo-maint")}


def _valid(value: Any, schema: dict[str, Any]) -> bool:
    checker = Draft202012Validator.FORMAT_CHECKER
    return bool(Draft202012Validator(schema, format_checker=checker).is_valid(value))


SCHEMAS: list[tuple[str, dict[str, Any]]] = [
    ("order_id", {"type": "string", "pattern": "^ORD-[0-9]{4}$"}),
    ("origin", {"type": "string", "pattern": "^[A-Z]{3}$"}),
    ("booking_ref", {"type": "string", "pattern": "^[A-Z0-9]{6}$"}),
    ("sku", {"type": "string", "pattern": r"^[a-z]+(-[a-z]+)*$", "maxLength": 12}),
    ("ticket", {"type": "string", "pattern": r"^T\d+$"}),
    ("email", {"type": "string", "format": "email"}),
    ("contact", {"type": "string", "format": "email"}),
    ("date", {"type": "string", "format": "date"}),
    ("when", {"type": "string", "format": "date-time"}),
    ("request", {"type": "string", "format": "uuid"}),
    ("callback", {"type": "string", "format": "uri"}),
    ("code", {"type": "string", "minLength": 8, "maxLength": 8}),
    ("note", {"type": "string", "maxLength": 4}),
    ("name", {"type": "string", "minLength": 30}),
    ("reason", {"type": "string", "enum": ["damaged", "other"]}),
    ("limit", {"type": "integer", "minimum": 1, "maximum": 20}),
    ("page", {"type": "integer", "minimum": 50}),
    ("count", {"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 3}),
    ("step", {"type": "integer", "minimum": 10, "maximum": 100, "multipleOf": 5}),
    ("amount", {"type": "number", "minimum": 0}),
    ("ratio", {"type": "number", "minimum": 0, "maximum": 1}),
    ("below", {"type": "number", "maximum": -10}),
    ("tags", {"type": "array", "minItems": 2, "items": {"type": "string", "pattern": "^[a-z]$"}}),
    ("fixed", {"const": "v1"}),
    ("maybe", {"type": ["null", "string"], "pattern": "^x[0-9]$"}),
]


@pytest.mark.parametrize(("name", "schema"), SCHEMAS, ids=[n for n, _ in SCHEMAS])
def test_every_made_up_value_satisfies_its_schema(name: str, schema: dict[str, Any]) -> None:
    rng = random.Random(7)
    values = [fake_value(name, schema, rng) for _ in range(40)]
    bad = [v for v in values if not _valid(v, schema)]
    assert not bad, bad[:3]


def test_values_are_reproducible_from_the_seed_and_vary_across_seeds() -> None:
    schema = {"type": "string", "pattern": "^ORD-[0-9]{4}$"}
    again = [fake_value("order_id", schema, random.Random(s)) for s in range(20)]
    assert again == [fake_value("order_id", schema, random.Random(s)) for s in range(20)]
    assert len(set(again)) > 10


def test_a_plausible_guess_is_kept_when_the_schema_accepts_it() -> None:
    rng = random.Random(1)
    assert fake_value("origin", {"type": "string", "pattern": "^[A-Z]{3}$"}, rng) in (
        "LIS", "DEN", "KIX", "NBO", "YYZ", "LYS", "SFO", "AMS"
    )  # fmt: skip
    assert fake_value("email", {"type": "string"}, rng).endswith("@example.com")
    assert fake_value("order_id", {"type": "string"}, rng).startswith("ORD-")


def _argument_problems(spec: Spec, tool: str, arguments: dict[str, Any]) -> list[str]:
    """Every argument checked against every schema the spec gives that parameter name."""
    problems = []
    for name, value in arguments.items():
        for other in spec.tools:
            schema = other.properties.get(name)
            if isinstance(schema, dict) and not _valid(value, schema):
                problems.append(f"{tool}.{name}={value!r} breaks {other.name}'s schema")
    return problems


@pytest.mark.parametrize("spec_name", sorted(SPECS))
def test_situation_entities_satisfy_every_tool_schema_that_names_them(spec_name: str) -> None:
    spec = SPECS[spec_name]
    grid = build_grid(spec)
    problems = []
    for cell in grid.cells[:120]:
        situation = make_situation(spec, cell, visit=0)
        for tool, arguments in situation["arguments"].items():
            problems += _argument_problems(spec, tool, arguments)
    assert not problems, problems[:5]


def test_orders_ids_and_airline_codes_have_the_shapes_their_specs_ask_for() -> None:
    for spec_name, tool, param, shape in (
        ("orders", "get_order", "order_id", "^ORD-[0-9]{4}$"),
        ("airline", "search_flights", "origin", "^[A-Z]{3}$"),
        ("airline", "get_booking", "booking_ref", "^[A-Z0-9]{6}$"),
    ):
        spec = SPECS[spec_name]
        seen = []
        for cell in build_grid(spec).cells:
            situation = make_situation(spec, cell, visit=1)
            if param in situation["arguments"].get(tool, {}):
                seen.append(situation["arguments"][tool][param])
        assert seen, (spec_name, tool)
        assert all(_valid(v, {"type": "string", "pattern": shape}) for v in seen), seen[:5]


def test_world_records_follow_the_returns_schema() -> None:
    returns = {
        "type": "object",
        "properties": {
            "tracking": {"type": "string", "pattern": "^1Z[A-Z0-9]{8}$"},
            "eta": {"type": "string", "format": "date"},
            "items": {"type": "integer", "minimum": 1, "maximum": 5},
        },
    }
    tool = {
        "name": "get_shipment",
        "description": "Read a shipment.",
        "parameters": {"type": "object", "properties": {"shipment_id": {"type": "string"}}},
        "returns": returns,
    }
    for seed in range(10):
        record = World([tool], seed=seed).call("get_shipment", {"shipment_id": f"S{seed}"})
        data = {k: v for k, v in record["data"].items() if k in returns["properties"]}
        assert _valid(data, returns), data


@pytest.mark.parametrize("spec_name", sorted(SPECS))
def test_simulated_calls_satisfy_the_schema_unless_the_agent_invented_them(
    tmp_path: Path, spec_name: str
) -> None:
    """37 of 42 `get_order` calls used ORD-51326 against `^ORD-[0-9]{4}$` before; now only
    the seeded agent's labelled `invented_argument` rollouts carry a value the spec rejects."""
    out = tmp_path / "rows.jsonl"
    done = run_cli(
        "simulate", f"specs/{spec_name}", "--mode", "explore", "--budget", "60",
        "--reproducible", "--seed", "3", "-o", str(out),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr.decode()
    spec = SPECS[spec_name]
    checked = 0
    for line in out.read_text().splitlines():
        row = json.loads(line)
        if "invented_argument" in (row.get("seeded") or []):
            continue
        for step in row["steps"]:
            if step.get("tool"):
                checked += len(step["arguments"])
                problems = _argument_problems(spec, step["tool"], step["arguments"])
                assert not problems, problems
    assert checked > 20
