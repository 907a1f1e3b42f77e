"""Spec loading: both tool shapes, JSON and YAML, folders, and one clear line per bad spec."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from whileai_core.errors import SpecError
from whileai_core.spec import guess_kind, load_spec, split_rules

REPO = Path(__file__).resolve().parent.parent

BARE = {"name": "get_order", "parameters": {"type": "object", "properties": {}}}
WRAPPED = {"type": "function", "function": {"name": "refund_order", "description": "Refund it."}}


def _spec_file(tmp_path: Path, data: object, name: str = "spec.json") -> Path:
    path = tmp_path / name
    path.write_bytes(orjson.dumps(data))
    return path


def test_both_tool_shapes_are_normalised(tmp_path: Path) -> None:
    spec = load_spec(_spec_file(tmp_path, {"tools": [BARE, WRAPPED], "policy": "Be kind."}))
    assert [t.name for t in spec.tools] == ["get_order", "refund_order"]
    assert [t.kind for t in spec.tools] == ["read", "write"]
    assert spec.tools[1].openai()["function"]["name"] == "refund_order"


def test_yaml_and_json_folders_load_with_rubric_and_situations(tmp_path: Path) -> None:
    folder = tmp_path / "agent"
    folder.mkdir()
    (folder / "spec.yaml").write_text(
        "tools:\n  - name: search_docs\n    parameters: {type: object}\n"
        "system_prompt: |\n  1. Cite sources.\n  2. Be brief.\n"
    )
    (folder / "rubric.md").write_text("Good answers cite.")
    (folder / "situations.jsonl").write_text('{"prompt": "find x"}\n"find y"\n')
    spec = load_spec(folder)
    assert spec.rules == ["Cite sources.", "Be brief."]
    assert spec.rubric == "Good answers cite."
    assert [s["prompt"] for s in spec.situations] == ["find x", "find y"]
    assert spec.name == "agent"


def test_fixture_spec_and_example_specs_load() -> None:
    fixture = load_spec(REPO / "tests" / "fixtures" / "orders-spec.json")
    assert fixture.rules == [
        "You are the support agent for an online store.",
        "Look orders up before acting.",
        "Refund only delivered orders.",
        "Never cancel an order that has shipped.",
    ]
    for name in ("orders", "airline", "repo-maint"):
        spec = load_spec(REPO / "specs" / name)
        assert 3 <= len(spec.tools) <= 6
        assert spec.rubric and len(spec.rules) >= 4
        assert any(t.kind == "write" for t in spec.tools)
        assert any(t.kind == "read" for t in spec.tools)


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        ({"policy": "x"}, "no tools"),
        ({"tools": []}, "no tools"),
        ({"tools": [{"description": "nameless"}]}, r"tools\[0\] has no name"),
        ({"tools": [BARE, BARE]}, "duplicate tool name 'get_order'"),
        ({"tools": [{"name": "a", "parameters": {"type": "array"}}]}, "JSON-schema object"),
        ({"tools": [{"name": "a", "parameters": "x"}]}, "JSON-schema object"),
        ({"tools": [{"name": "a", "parameters": {"properties": []}}]}, "properties"),
        ({"tools": [BARE], "policy": 3}, "must be a string"),
        ([1, 2], "must be an object"),
    ],
)
def test_bad_spec_is_one_clear_error(tmp_path: Path, data: object, problem: str) -> None:
    with pytest.raises(SpecError, match=problem) as info:
        load_spec(_spec_file(tmp_path, data))
    assert "\n" not in str(info.value)


def test_unreadable_yaml_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text("tools:\n  - name: a\n    parameters: {type: object\n")
    with pytest.raises(SpecError, match=r"spec.yaml:\d+: unreadable YAML"):
        load_spec(path)


def test_missing_spec_and_empty_folder(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="no such spec"):
        load_spec(tmp_path / "nope")
    with pytest.raises(SpecError, match=r"no spec\.json or spec\.yaml"):
        load_spec(tmp_path)


def test_rules_split_on_numbers_bullets_or_sentences() -> None:
    assert split_rules("Intro.\n1. One.\n2) Two.\n- Three.") == ["One.", "Two.", "Three."]
    assert split_rules("Look first. Refund only delivered orders! Never guess.") == [
        "Look first.",
        "Refund only delivered orders!",
        "Never guess.",
    ]


def test_tool_kind_guess_and_override(tmp_path: Path) -> None:
    assert guess_kind("lookupOrder") == "read"
    assert guess_kind("cancel_order") == "write"
    assert guess_kind("frobnicate", "Deletes the widget.") == "write"
    data = {"tools": [{"name": "frobnicate"}], "tool_kinds": {"frobnicate": "write"}}
    assert load_spec(_spec_file(tmp_path, data)).tools[0].kind == "write"
    with pytest.raises(SpecError, match="unknown tools"):
        load_spec(_spec_file(tmp_path, {"tools": [BARE], "tool_kinds": {"zzz": "read"}}))
