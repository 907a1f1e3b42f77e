"""Preference pairs: cut at the first agent turn where the two rollouts differ, the shared
prefix as the prompt, nothing the environment wrote in a completion (unless asked)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from whileai_core.errors import ConfigError
from whileai_core.export import Context, PairsReport, line_problems, preference_pairs
from whileai_core.spec import load_spec

from ..helpers import ORDERS_SPEC, run_cli
from .rows import leaky, row, write

CTX = Context.of_spec(load_spec(ORDERS_SPEC))


def _wire_call(name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": "", "tool_calls": [{"name": name, "arguments": args}]}


def _differs_at_first_call() -> list[dict[str, Any]]:
    good, bad = row("a", 0, 1.0), row("a", 1, 0.0)
    bad["messages"][1] = _wire_call("get_order", {"order_id": "ORD-99999"})
    return [good, bad]


def test_pairs_split_at_the_first_agent_turn_that_differs() -> None:
    report = PairsReport("trl", False)
    [pair] = list(preference_pairs([row("a", 0, 1.0), row("a", 1, 0.0)], fmt="trl",
                                   context=CTX, report=report))  # fmt: skip
    # Same call, same tool output: the prompt runs up to the reply that differs.
    assert [m["role"] for m in pair["prompt"]] == ["system", "user", "assistant", "tool"]
    assert pair["chosen"] == [{"role": "assistant", "content": row("a", 0)["final_text"]}]
    assert pair["rejected"] == [{"role": "assistant", "content": row("a", 1)["final_text"]}]
    assert pair["diverged_at_turn"] == 1 and pair["tools"] == CTX.tools
    assert report.as_dict()["completions_contain_tool_output"] is False


def test_a_pair_whose_first_calls_differ_has_the_ask_as_prompt() -> None:
    [pair] = list(preference_pairs(_differs_at_first_call(), fmt="trl", context=CTX))
    assert [m["role"] for m in pair["prompt"]] == ["system", "user"]
    chosen, rejected = pair["chosen"][0], pair["rejected"][0]
    assert chosen["tool_calls"][0]["function"]["arguments"] == {"order_id": "a"}
    assert rejected["tool_calls"][0]["function"]["arguments"] == {"order_id": "ORD-99999"}
    assert len(pair["chosen"]) == len(pair["rejected"]) == 1


def test_rollouts_that_first_differ_in_tool_output_make_no_pair() -> None:
    good, bad = row("a", 0, 1.0), row("a", 1, 0.0)
    bad["messages"][2]["content"] = json.dumps({"status": "timeout"})
    report = PairsReport("trl", False)
    assert list(preference_pairs([good, bad], fmt="trl", report=report)) == []
    assert report.diverged_outside_agent_turn == 1
    assert any("did not write" in w for w in report.warnings)


def test_whole_continuations_say_they_carry_tool_output() -> None:
    good, bad = row("a", 0, 1.0), row("a", 1, 0.0)
    bad["messages"][2]["content"] = json.dumps({"status": "timeout"})
    report = PairsReport("trl", False)
    [pair] = list(preference_pairs([good, bad], fmt="trl", completions="continuation",
                                   context=CTX, report=report))  # fmt: skip
    assert [m["role"] for m in pair["prompt"]] == ["system", "user"]
    assert [m["role"] for m in pair["chosen"]] == ["assistant", "tool", "assistant"]
    data = report.as_dict()
    assert data["completions"] == "continuation" and data["completions_contain_tool_output"]
    assert any("contain tool output" in w for w in report.warnings)
    with pytest.raises(ConfigError, match="one assistant message"):
        list(preference_pairs([good, bad], fmt="openai", completions="continuation"))


def test_openai_pairs_are_openai_preference_lines() -> None:
    report = PairsReport("openai", False)
    [line] = list(preference_pairs(_differs_at_first_call(), fmt="openai", context=CTX,
                                   report=report))  # fmt: skip
    assert set(line) == {"input", "preferred_output", "non_preferred_output"}
    assert set(line["input"]) == {"messages", "tools", "parallel_tool_calls"}
    assert line_problems(line) == []
    [preferred] = line["preferred_output"]
    assert preferred["content"] is None
    assert json.loads(preferred["tool_calls"][0]["function"]["arguments"]) == {"order_id": "a"}
    assert report.as_dict()["meta"] == "dropped"


def test_pairs_are_built_within_an_ask_and_use_each_rollout_once() -> None:
    rows = [
        row("a", 0, 1.0),
        row("a", 1, 0.0),
        row("a", 2, 1.0),
        row("b", 0, 1.0),  # no failing rollout in b
        row("c", 0, 0.0),
        row("c", 1, 0.5),
        leaky("c", 2, 1.0),
    ]
    report = PairsReport("trl", False)
    pairs = list(preference_pairs(rows, fmt="trl", report=report))
    assert [(p["scenario_id"], p["chosen_reward"], p["rejected_reward"]) for p in pairs] == [
        ("a", 1.0, 0.0),
        ("c", 0.5, 0.0),
    ]
    assert report.asks_without_contrast == 1 and report.counters.refused == {"quotes_privileged": 1}


def test_length_matched_pairs_skip_turns_of_very_different_length() -> None:
    short_win = row("a", 0, 1.0)
    long_loss = row("a", 1, 0.0)
    long_loss["messages"][-1]["content"] = long_loss["final_text"] = "no " * 200
    close_loss = row("a", 2, 0.0)
    report = PairsReport("trl", True)
    pairs = list(preference_pairs([short_win, long_loss, close_loss], fmt="trl",
                                  length_matched=True, report=report))  # fmt: skip
    assert len(pairs) == 1 and pairs[0]["rejected"][-1]["content"] == close_loss["final_text"]
    report = PairsReport("trl", True)
    only_long = list(preference_pairs([short_win, long_loss], fmt="trl", length_matched=True,
                                      report=report))  # fmt: skip
    assert only_long == [] and report.length_unmatched == 1


def test_the_pairs_report_accounts_for_every_ask_in_json_and_in_words(tmp_path: Path) -> None:
    """Every ask is paired, without contrast, or unpaired under its reason, in --json and
    in the words on stderr (one used to go missing, visible only in --json)."""
    tool_differs = row("e", 1, 0.0)
    tool_differs["messages"][2]["content"] = json.dumps({"status": "timeout"})
    long_loss = row("l", 1, 0.0)
    long_loss["messages"][-1]["content"] = long_loss["final_text"] = "no " * 200
    rows = [
        *(row("a", 0, 1.0), row("a", 1, 0.0)),  # paired
        row("b", 0, 1.0),  # no contrast
        *(row("e", 0, 1.0), tool_differs),  # first differ where the agent did not write
        *(row("l", 0, 1.0), long_loss),  # no pass and fail of similar length
    ]
    source = write(tmp_path / "rows.jsonl", rows)
    args = ["export", str(source), "--pairs", "--format", "trl", "--length-matched"]
    report = orjson.loads(run_cli(*args, "-o", str(tmp_path / "p.jsonl"), "--json").stdout)
    assert report["asks"] == 4
    assert (report["asks_with_pairs"], report["asks_without_contrast"]) == (1, 1)
    assert report["asks_unpaired"] == {"environment": 1, "length_unmatched": 1}
    assert report["asks"] == (
        report["asks_with_pairs"]
        + report["asks_without_contrast"]
        + sum(report["asks_unpaired"].values())
    )
    text = run_cli(*args, "-o", str(tmp_path / "p.jsonl")).stderr.decode()
    assert "from 1 of 4 asks" in text
    assert (
        "asks without a pair: 1 without a pass and a fail, 1 whose rollouts first differed in "
        "text the agent did not write, 1 with no pass and fail of similar length"
    ) in text
