"""SFT export: the shapes trainers honour, the system prompt first, the pass line, metadata
out of OpenAI's lines, and the checks every export shares."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from whileai_core.errors import ConfigError
from whileai_core.export import (
    Context,
    SampleExport,
    TrainingReport,
    line_problems,
    preference_pairs,
    training_samples,
    write_samples,
)
from whileai_core.spec import load_spec

from ..helpers import ORDERS_SPEC, SDK_ROWS, run_cli
from .rows import SYSTEM, leaky, read, row, steps_only, write

SPEC = load_spec(ORDERS_SPEC)
CTX = Context.of_spec(SPEC)


def _report(fmt: str = "openai", mask: str = "all", unroll: bool = False) -> TrainingReport:
    return TrainingReport(fmt, mask, unroll, None)


def test_openai_lines_carry_exactly_the_documented_keys() -> None:
    report = _report()
    [line] = list(training_samples([row()], fmt="openai", context=CTX, report=report))
    assert set(line) == {"messages", "tools", "parallel_tool_calls"}
    assert line["tools"] == SPEC.openai_tools() and line["parallel_tool_calls"] is False
    system, user, call, tool, reply = line["messages"]
    assert system == {"role": "system", "content": SPEC.policy}
    assert user == {"role": "user", "content": row()["prompt"]}
    assert call["content"] is None and call["weight"] == 1
    fn = call["tool_calls"][0]["function"]
    assert fn["name"] == "get_order" and json.loads(fn["arguments"]) == {"order_id": "sc-1"}
    assert set(tool) == {"role", "tool_call_id", "content"}
    assert tool["tool_call_id"] == call["tool_calls"][0]["id"]
    assert reply["weight"] == 1 and reply["content"].startswith("Order sc-1")
    assert line_problems(line) == []
    assert report.as_dict()["tool_call_roundtrip"] == {
        "encoding": "json_string",
        "checked": 1,
        "invalid": 0,
    }
    assert report.as_dict()["meta"] == "dropped"


def test_openai_mask_final_and_unroll_are_per_message_weights() -> None:
    [final] = list(training_samples([row()], mask="final", context=CTX))
    weights = [m.get("weight") for m in final["messages"] if m["role"] == "assistant"]
    assert weights == [0, 1]
    unrolled = list(training_samples([row()], unroll=True, context=CTX))
    assert [len(s["messages"]) for s in unrolled] == [3, 5]
    for sample in unrolled:
        assistants = [m for m in sample["messages"] if m["role"] == "assistant"]
        assert [m["weight"] for m in assistants] == [0] * (len(assistants) - 1) + [1]
        assert sample["messages"][-1]["role"] == "assistant"
        assert line_problems(sample) == []


def test_trl_mask_all_is_conversational_messages_with_argument_objects() -> None:
    report = _report("trl")
    [sample] = list(training_samples([row()], fmt="trl", context=CTX, report=report))
    assert "prompt" not in sample and "loss_mask" not in sample
    assert sample["messages"][0] == {"role": "system", "content": SPEC.policy}
    assert sample["messages"][2]["tool_calls"][0]["function"]["arguments"] == {"order_id": "sc-1"}
    assert sample["tools"] == SPEC.openai_tools()
    # Metadata stays inline in TRL rows (TRL reads only its own columns).
    assert sample["prompt_text"] == row()["prompt"] and sample["reward"] == 1.0
    assert report.shape() == "trl messages (needs assistant_only_loss=True)"
    assert (report.trained_messages, report.masked_messages) == (2, 3)


def test_trl_mask_final_and_unroll_are_prompt_completion_rows() -> None:
    report = _report("trl", "final")
    [final] = list(training_samples([row()], fmt="trl", mask="final", context=CTX, report=report))
    assert [m["role"] for m in final["prompt"]] == ["system", "user", "assistant", "tool"]
    assert final["completion"] == [
        {"role": "assistant", "content": "Order sc-1 is in transit; no refund yet. (0)"}
    ]
    assert (report.trained_messages, report.masked_messages) == (1, 4)
    rows = [row("a"), steps_only()]
    report = _report("trl", unroll=True)
    samples = list(training_samples(rows, fmt="trl", unroll=True, context=CTX, report=report))
    # row has 2 agent turns; the steps-only row rebuilds to 3 (two calls + the reply).
    assert len(samples) == 5 and report.rows_written == 2
    assert [s["turn"] for s in samples] == [0, 1, 0, 1, 2]
    for sample in samples:
        assert set(sample) >= {"prompt", "completion", "tools"} and "messages" not in sample
        assert len(sample["completion"]) == 1 and sample["completion"][0]["role"] == "assistant"
        assert sample["prompt"][0]["role"] == "system"
        assert sample["prompt"][-1]["role"] in ("user", "tool")


def test_rows_keep_their_own_system_prompt_and_others_take_the_specs() -> None:
    report = _report()
    own, taken = training_samples([row(system=True), row()], context=CTX, report=report)
    assert own["messages"][0]["content"] == SYSTEM
    assert taken["messages"][0]["content"] == SPEC.policy
    counts = report.as_dict()["system_prompt"]
    assert counts == {"from_row": 1, "from_spec": 1, "missing": 0, "differs_from_spec": 1}
    assert any("other than --spec's" in w for w in report.warnings)


def test_a_row_stamped_with_another_system_prompt_is_not_given_the_specs() -> None:
    stamped = row(lineage={"system_prompt_sha": "0000000000000000"})
    matching = row("b", lineage={"system_prompt_sha": SPEC.policy_sha})
    report = _report()
    samples = list(training_samples([stamped, matching], context=CTX, report=report))
    assert len(samples) == 1 and samples[0]["messages"][0]["content"] == SPEC.policy
    assert report.counters.refused == {"system_prompt_mismatch": 1}


def test_without_a_system_prompt_the_export_warns_once_and_counts() -> None:
    report = _report()
    samples = list(training_samples([row("a"), row("b"), row("c")], report=report))
    assert all(s["messages"][0]["role"] == "user" for s in samples)
    assert report.as_dict()["system_prompt"]["missing"] == 3
    assert sum("no system prompt" in w for w in report.warnings) == 1
    assert sum("carry no `tools`" in w for w in report.warnings) == 1


def test_rows_below_the_pass_line_are_left_out_unless_asked() -> None:
    rows = [row("a", 0, 1.0), row("b", 0, 0.0), row("c", 0, 0.49), row("d", 0, 0.5)]
    rows += [row("e", 0, 0.0, judge_status="error"), {**row("f"), "reward": None}]
    del rows[-1]["judge_status"]
    report = _report()
    kept = list(training_samples(rows, context=CTX, report=report))
    assert len(kept) == 3  # a, d and the ungraded f
    data = report.as_dict()
    assert data["left_out_below_pass_line"] == 2 and data["left_out_judge_failed"] == 1
    assert data["ungraded"] == 1
    assert any("left out 2 rows below the pass line" in w for w in report.warnings)
    everything = list(training_samples(rows, context=CTX, include_failures=True))
    assert len(everything) == 6


def test_cli_says_how_many_failures_it_left_out_and_exits_zero(tmp_path: Path) -> None:
    graded = write(tmp_path / "g.jsonl", [row("a", 0, 1.0), row("b", 0, 0.0)])
    out = tmp_path / "sft.jsonl"
    done = run_cli("export", str(graded), "--spec", str(ORDERS_SPEC), "-o", str(out))
    assert done.returncode == 0, done.stderr.decode()
    assert b"left out 1 rows below the pass line (reward < 0.5)" in done.stderr
    assert len(read(out)) == 1
    failing = write(tmp_path / "f.jsonl", [row("b", 0, 0.0)])
    none_left = run_cli("export", str(failing), "-o", str(tmp_path / "none.jsonl"))
    assert none_left.returncode == 1 and b"no samples written" in none_left.stderr
    kept = run_cli("export", str(failing), "--include-failures", "-o", str(out))
    assert kept.returncode == 0 and len(read(out)) == 1


def test_metadata_goes_to_a_sidecar_line_for_line_or_stays_with_keep_meta(tmp_path: Path) -> None:
    rows = [row("a", 0), row("b", 1)]
    out, meta = tmp_path / "sft.jsonl", tmp_path / "meta.jsonl"
    plan = SampleExport(fmt="openai", unroll=True, context=CTX)
    report = write_samples(rows, plan, str(out), str(meta))
    lines, metas = read(out), read(meta)
    assert len(lines) == len(metas) == 4 and report.as_dict()["meta"] == "sidecar"
    assert all(set(line) == {"messages", "tools", "parallel_tool_calls"} for line in lines)
    assert [m["line"] for m in metas] == [0, 1, 2, 3]
    assert [(m["scenario_id"], m["turn"]) for m in metas] == [
        ("a", 0),
        ("a", 1),
        ("b", 0),
        ("b", 1),
    ]
    assert (
        metas[0]["prompt_text"] == rows[0]["prompt"] and metas[0]["system_prompt_source"] == "spec"
    )
    report = _report()
    [kept] = list(training_samples(rows[:1], context=CTX, keep_meta=True, report=report))
    assert kept["scenario_id"] == "a" and line_problems(kept)
    assert any("not OpenAI's documented shape" in w for w in report.warnings)


def test_long_tool_output_is_cut_with_a_visible_marker_and_counted() -> None:
    source = row()
    source["messages"][2]["content"] = json.dumps({"status": "ok", "blob": "x" * 500})
    report = TrainingReport("trl", "all", False, 100)
    [sample] = list(training_samples([source], fmt="trl", max_tool_output_chars=100, report=report))
    content = sample["messages"][2]["content"]
    cut = len(source["messages"][2]["content"]) - 100
    assert content.endswith(f"[... {cut} chars of tool output truncated]")
    assert sample["tool_output_truncated"] == 1
    assert report.counters.tool_outputs_truncated == 1
    assert report.counters.tool_output_chars_cut == cut


def test_rows_with_steps_but_no_messages_are_rebuilt() -> None:
    report = _report("trl")
    [sample] = list(training_samples([steps_only()], fmt="trl", context=CTX, report=report))
    roles = [m["role"] for m in sample["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "assistant", "tool", "assistant"]
    assert sample["messages"][4]["tool_calls"][0]["function"]["arguments"] == {"order_id": "ORD-7"}
    assert sample["messages"][5]["content"] == "done"
    assert report.counters.rebuilt_from_steps == 1


def test_undecodable_tool_arguments_refuse_the_row() -> None:
    source = row()
    source["messages"][1]["tool_calls"][0]["arguments"] = "{not json"
    report = _report()
    assert list(training_samples([source], report=report)) == []
    assert report.counters.refused == {"bad_tool_call": 1}


def test_privileged_left_in_free_text_refuses_the_row() -> None:
    source = row()
    source["messages"][2]["content"] = 'raw dump: {"privileged": {"note": "x"}}'
    report = _report()
    assert list(training_samples([source], report=report)) == []
    assert report.counters.refused == {"privileged_residue": 1}


def test_hidden_state_words_the_world_also_says_do_not_refuse_a_row() -> None:
    source = row()
    source["privileged"]["hidden_state"] = {"tool_condition": "permission_denied"}
    source["messages"][2]["content"] = json.dumps({"status": "permission_denied"})
    report = _report()
    [sample] = list(training_samples([source], report=report))
    assert "permission_denied" in sample["messages"][2]["content"]
    assert report.counters.refused == {}


def test_input_rows_are_not_mutated_by_export() -> None:
    rows = [row(), leaky(), steps_only(), row(system=True)]
    before = copy.deepcopy(rows)
    list(training_samples(rows, fmt="trl", max_tool_output_chars=5, unroll=True, context=CTX))
    list(training_samples(rows, fmt="openai", mask="final", context=CTX))
    list(preference_pairs([*rows, row(i=3, reward=0.0)], fmt="trl", context=CTX))
    assert rows == before


def test_bad_format_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="format"):
        list(training_samples([row()], fmt="jsonl"))  # type: ignore[arg-type]


def test_sdk_rows_take_the_system_prompt_from_the_spec_in_both_shapes(tmp_path: Path) -> None:
    """The original SDK's rows carry no system turn, only `lineage.system_prompt_sha`."""
    source = read(SDK_ROWS)
    graded = write(tmp_path / "g.jsonl", [{**r, "reward": 1.0} for r in source])
    policy = load_spec(ORDERS_SPEC).policy
    for fmt in ("openai", "trl"):
        out, report_path = tmp_path / f"{fmt}.jsonl", tmp_path / f"{fmt}.json"
        done = run_cli(
            "export", str(graded), "--format", fmt, "--spec", str(ORDERS_SPEC),
            "-o", str(out), "--report", str(report_path),
        )  # fmt: skip
        assert done.returncode == 0, done.stderr.decode()
        report = json.loads(report_path.read_text())
        samples = read(out)
        refused = sum(report["refused"].values())
        assert len(samples) == report["samples"] == len(source) - refused
        assert report["system_prompt"]["from_spec"] == len(samples)
        assert all(s["messages"][0] == {"role": "system", "content": policy} for s in samples)
        assert report["tool_call_roundtrip"]["invalid"] == 0
        if fmt == "openai":
            assert all(line_problems(s) == [] for s in samples)
