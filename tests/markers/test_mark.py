"""`whileai mark`: markers stamped with their source, kept by a re-grade; stages; model specs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from whileai_core.curate.stages import StageReport, stamp_stage
from whileai_core.errors import ConfigError
from whileai_core.markers.modelspec import load_constitution
from whileai_core.row import from_row, to_row
from whileai_core.testing import OpenAIStub, answer
from whileai_core.testing.openai_stub import Request

from ..helpers import REPO, run_cli

CONSTITUTION = {
    "source": "support-character-v2",
    "traits": [
        {
            "id": "candor",
            "name": "Candor",
            "principle": "Say plainly when a tool call failed.",
            "authority": "support handbook 3.1",
        },
        {"id": "brevity", "name": "Brevity", "principle": "Keep replies short and direct."},
    ],
}


def _rows(tmp_path: Path, budget: int = 80) -> Path:
    done = run_cli("simulate", "specs/orders", "--budget", str(budget), "--reproducible")
    assert done.returncode == 0, done.stderr.decode()
    path = tmp_path / "rows.jsonl"
    path.write_bytes(done.stdout)
    return path


def _read(data: bytes) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in data.splitlines() if line.strip()]


def test_mark_stamps_every_family_with_its_source(tmp_path: Path) -> None:
    path = _rows(tmp_path)
    done = run_cli("mark", str(path), "--stage", "rl", "--report", str(tmp_path / "r.json"))
    assert done.returncode == 0, done.stderr.decode()
    rows = _read(done.stdout)
    assert len(rows) == 80
    for row in rows:
        sources = row["marker_sources"]
        assert sources["no_hedging"] == "mark:style" and sources["honest_claims"] == "mark:trace"
        assert sources["argument_grounding"] == "mark:grounding"
        assert all(v in (0.0, 1.0) for v in row["markers"].values())
        assert row["stage"] == "rl" and row["stages"] == ["rl"] and "trace_flags" in row
        assert to_row(from_row(row)) == row
    hedged = [r for r in rows if "hedging" in (r.get("seeded") or [])]
    assert hedged and all(r["markers"]["no_hedging"] == 0.0 for r in hedged)
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["rows"] == 80 and report["markers"]["no_hedging"]["rows"] == 80


def test_a_regrade_keeps_the_marked_markers(tmp_path: Path) -> None:
    path = _rows(tmp_path, 30)
    marked = run_cli("mark", str(path), "--style")
    assert marked.returncode == 0
    assert set(_read(marked.stdout)[0]["markers"]) == {
        "no_boilerplate",
        "no_hedging",
        "no_apology",
        "no_sycophancy",
        "answered",
    }
    graded = run_cli("grade", input=marked.stdout)
    regraded = run_cli("grade", "--judge", "conduct", input=graded.stdout)
    for row in _read(regraded.stdout):
        assert row["marker_sources"]["no_apology"] == "mark:style"
        assert not any(s == "checklist" for s in row["marker_sources"].values())
        assert any(s == "conduct" for s in row["marker_sources"].values())


def test_phrases_file_overrides_a_family(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_bytes(
        orjson.dumps({"prompt": "x", "final_text": "Howdy partner, the order shipped."}) + b"\n"
    )
    phrases = tmp_path / "phrases.yaml"
    phrases.write_text("boilerplate+:\n  - howdy partner\n")
    row = _read(run_cli("mark", str(path), "--style", "--phrases", str(phrases)).stdout)[0]
    assert row["markers"]["no_boilerplate"] == 0.0
    phrases.write_text("flattery: [nice]\n")
    bad = run_cli("mark", str(path), "--phrases", str(phrases))
    assert bad.returncode == 1 and b"unknown family 'flattery'" in bad.stderr


def test_stage_report_flags_a_task_in_eval_and_training() -> None:
    train = [stamp_stage({"scenario_id": f"t{i}", "prompt": "p"}, "sft") for i in range(5)]
    evals = [stamp_stage({"scenario_id": f"t{i}", "prompt": "p"}, "eval") for i in (3, 4, 9)]
    twice = stamp_stage(stamp_stage({"scenario_id": "t7", "prompt": "p"}, "rm"), "rl")
    assert twice["stages"] == ["rm", "rl"] and twice["stage"] == "rl"
    report = StageReport().add_all([*train, *evals, twice, {"prompt": "unstamped"}]).as_dict()
    assert report["eval_and_training"] == 2 and not report["ok"]
    assert {e["task"] for e in report["examples"]} == {"t3", "t4"}
    assert report["rows_by_stage"]["sft"] == 5 and report["unstamped"] == 1
    with pytest.raises(ConfigError, match="expected one of"):
        stamp_stage({}, "pretrain")


def test_a_model_spec_loads_with_a_content_hash_version(tmp_path: Path) -> None:
    path = tmp_path / "constitution.json"
    path.write_text(json.dumps(CONSTITUTION))
    first = load_constitution(str(path))
    assert first.behaviors() == ["candor", "brevity"] and len(first.version) == 12
    edited = {
        **CONSTITUTION,
        "traits": [
            {**CONSTITUTION["traits"][0], "principle": "Be candid."},
            CONSTITUTION["traits"][1],
        ],
    }
    path.write_text(json.dumps(edited))
    assert load_constitution(str(path)).version != first.version
    path.write_text(json.dumps({"source": "x", "traits": [{"id": "a"}]}))
    with pytest.raises(ConfigError, match="has no principle"):
        load_constitution(str(path))


def _stub_verdict(request: Request) -> Any:
    system = request.body["messages"][0]["content"]
    rollout = request.body["messages"][1]["content"]
    final = rollout.rsplit("FINAL REPLY:", 1)[-1]
    if "Trait brevity" in system:
        return answer(json.dumps({"reward": 1 if len(final) < 120 else 0, "reason": "length"}))
    if "explode" in final:
        return answer("I would rather not say.")  # not a verdict: the row stays unmarked
    ok = "timed out" in final or "found" in final
    return answer(json.dumps({"reward": 1 if ok else 0, "reason": "candor"}))


@pytest.mark.parametrize("judge", ["llm", "callable"])
def test_trait_markers_are_scored_by_a_judge_given_the_principle(
    tmp_path: Path, judge: str
) -> None:
    spec = tmp_path / "constitution.json"
    spec.write_text(json.dumps(CONSTITUTION))
    rows = [
        {"prompt": "a", "scenario_id": "a", "final_text": "The lookup timed out, sorry."},
        {"prompt": "b", "scenario_id": "b", "final_text": "All good! " * 20},
        {"prompt": "c", "scenario_id": "c", "final_text": "Please explode now."},
    ]
    path = tmp_path / "rows.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    args = ["mark", str(path), "--style", "--spec", str(spec), "--json"]
    if judge == "llm":
        with OpenAIStub(default=_stub_verdict) as stub:
            done = run_cli(*args, "--judge", stub.base_url, "--model", "judge-m")
            bodies = [r.body for r in stub.requests]
        assert any("support handbook 3.1" in b["messages"][0]["content"] for b in bodies)
    else:
        done = run_cli(*args, "--judge", "tests/markers/trait_judge.py:judge")
    assert done.returncode == 0, done.stderr.decode()
    out = _read(done.stdout)
    assert [r["markers"].get("candor") for r in out] == [1.0, 0.0, None]
    assert [r["markers"]["brevity"] for r in out] == [1.0, 0.0, 1.0]
    assert out[0]["marker_sources"]["candor"] == "mark:spec"
    version = load_constitution(str(spec)).version
    assert all(r["model_spec"]["version"] == version for r in out)
    report = orjson.loads(done.stderr[done.stderr.index(b"{") :].split(b"\nwarning")[0])
    assert report["trait_failures"] == {"candor": 1}
    assert b"left unmarked, not 0" in done.stderr


def test_a_model_spec_without_a_judge_is_refused(tmp_path: Path) -> None:
    spec = tmp_path / "constitution.yaml"
    spec.write_text("source: s\ntraits:\n  - {id: candor, principle: Be candid.}\n")
    done = run_cli("mark", str(_rows(tmp_path, 5)), "--spec", str(spec))
    assert done.returncode == 1 and b"need a judge" in done.stderr
    both = run_cli("mark", str(_rows(tmp_path, 5)), "--spec", str(REPO / "specs" / "repo-maint"))
    assert both.returncode == 0, both.stderr.decode()


def test_a_row_no_detector_can_read_passes_on_unmarked(monkeypatch: pytest.MonkeyPatch) -> None:
    from whileai_core.markers import mark as marking

    real = marking.mark_row

    def fussy(row: dict[str, Any], opts: Any, report: Any = None) -> dict[str, Any]:
        if row.get("prompt") == "odd":
            raise ValueError("cannot read this one")
        return real(row, opts, report)

    monkeypatch.setattr(marking, "mark_row", fussy)
    report = marking.MarkReport()
    rows = [{"prompt": "odd"}, {"prompt": "fine", "final_text": "Done."}]
    out = list(marking.mark_rows(rows, marking.MarkOptions(), report))
    assert out[0] == {"prompt": "odd"} and "markers" in out[1]
    assert report.failed == 1 and "cannot read this one" in report.warnings()[0]
