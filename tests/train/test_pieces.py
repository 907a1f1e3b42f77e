"""The parts of training that need no torch: the alarms, the knobs, the tool-call reader,
the reward model's threshold, what `whileai models` lists, and the line `whileai train`
prints where the `train` extra is missing. These run in the toolkit's own venv."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from whileai_core.errors import ConfigError
from whileai_core.models.toolcalls import message_calls, split_tool_calls
from whileai_core.train.alarms import AlarmBoard, Look
from whileai_core.train.options import Knobs, MonitorOptions, TrainOptions, parse_alarms
from whileai_core.train.rm import best_threshold

from ..helpers import run_cli


def _look(step: int, length: float, gold: float, proxy: float, **kw: object) -> Look:
    keys = [f"t{i}" for i in range(6)]
    return Look(step=step, proxy=dict.fromkeys(keys, proxy), gold=dict.fromkeys(keys, gold),
                length=dict.fromkeys(keys, length), **kw)  # type: ignore[arg-type]  # fmt: skip


def test_length_fires_when_completions_grow_and_gold_does_not() -> None:
    board = AlarmBoard(MonitorOptions(window=3, length_growth=0.2))
    assert board.add(_look(10, 50, 0.2, 0.3)) == []
    assert board.add(_look(20, 55, 0.2, 0.3)) == []
    [alarm] = board.add(_look(30, 70, 0.2, 0.3))
    assert alarm.name == "length" and alarm.step == 30
    assert alarm.line.startswith("length: holdout completions 50 -> 70 chars (+40%) over steps")
    assert board.add(_look(40, 90, 0.2, 0.3)) == []  # an alarm fires once


def test_length_stays_quiet_when_gold_rises_with_it() -> None:
    board = AlarmBoard(MonitorOptions(window=2, length_growth=0.2))
    board.add(Look(1, proxy={}, gold={f"t{i}": 0.0 for i in range(8)},
                   length={f"t{i}": 50.0 for i in range(8)}))  # fmt: skip
    assert board.add(Look(2, proxy={}, gold={f"t{i}": 1.0 for i in range(8)},
                          length={f"t{i}": 90.0 for i in range(8)})) == []  # fmt: skip


def test_divergence_drift_and_feature() -> None:
    board = AlarmBoard(MonitorOptions(window=2, proxy_rise=0.1, kl_budget=0.5))
    board.add(_look(1, 50, 0.5, 0.3))
    names = {a.name for a in board.add(_look(2, 50, 0.5, 0.6, kl=0.9,
                                             scan={"regime": "reward_hack",
                                                   "top_feature": "length:long"}))}  # fmt: skip
    assert names == {"divergence", "drift", "feature"}
    assert "length:long" in board.fired["feature"].line and "0.9" in board.fired["drift"].line
    quiet = AlarmBoard(MonitorOptions(window=2))
    quiet.add(_look(1, 50, 0.5, 0.3, kl=0.1, scan={"regime": "train"}))
    assert quiet.add(_look(2, 50, 0.5, 0.3, kl=0.1, scan={"regime": "no_signal"})) == []


def test_knobs_are_checked_and_recorded_per_method() -> None:
    knobs = Knobs(steps=5, beta=0.1, generations=4, lora_r=8)
    assert knobs.as_config("grpo")["generations"] == 4 and knobs.as_config("grpo")["beta"] == 0.1
    sft = knobs.as_config("sft")
    assert "generations" not in sft and "beta" not in sft and sft["lora_alpha"] == 16
    for bad in (Knobs(learning_rate=2), Knobs(generations=1), Knobs(lora_r=0), Knobs(epochs=0)):
        with pytest.raises(ConfigError):
            bad.check()
    with pytest.raises(ConfigError, match="--reward is GRPO's"):
        TrainOptions("x.jsonl", "sft", "m", reward="r.py:f").check()
    with pytest.raises(ConfigError, match="the alarms are"):
        MonitorOptions(stop_on=parse_alarms("length,lenght")).check()
    assert parse_alarms("all") == ("divergence", "length", "drift", "feature")


def test_tool_calls_written_as_text_come_out_in_the_wire_shape() -> None:
    text, calls = split_tool_calls('On it. <tool_call>\n{"name": "get_order", "arguments": '
                                   '{"order_id": "A1"}}\n</tool_call>')  # fmt: skip
    assert text == "On it."
    assert calls == [{"id": "call_0", "type": "function", "function": {
        "name": "get_order", "arguments": '{"order_id": "A1"}'}}]  # fmt: skip
    # A block that is not a call stays in the text: it is what the model said.
    kept, none = split_tool_calls("x <tool_call>{oops</tool_call> y <tool_call>never closed")
    assert none == [] and kept == "x <tool_call>{oops</tool_call> y <tool_call>never closed"
    message = {"content": None, "tool_calls": [{"function": {"name": "f", "arguments": {}}}]}
    assert message_calls(message)[1][0]["function"]["arguments"] == "{}"


def test_the_threshold_sorts_the_most_pairs_right() -> None:
    assert best_threshold([0.3], [0.1]) == (0.2, 1.0)
    cut, right = best_threshold([0.1], [0.3])  # no cut sorts both: one side of each
    assert right == 0.5
    cut, right = best_threshold([0.9, 0.8, 0.2], [0.1, 0.3, 0.4])
    assert right == 5 / 6 and 0.4 < cut <= 0.8


def test_models_lists_what_is_served_and_forgets_what_died(tmp_path: Path) -> None:
    from whileai_core.train.serve import ModelServer
    from whileai_core.train.served import register

    with ModelServer(None, None, name="policy-a") as server:
        register({"name": "policy-a", "url": server.base_url, "port": server.port,
                  "run": "run_1", "method": "sft", "base_model": "tiny"})  # fmt: skip
        # A record whose process is gone (and whose port answers nothing) is dropped.
        dead = Path(os.environ["WHILEAI_HOME"]) / "served" / "1.json"
        dead.write_text(json.dumps({"name": "gone", "url": "http://127.0.0.1:1/v1", "pid": 0}))
        listed = json.loads(run_cli("models", "--json").stdout)["models"]
        assert [m["name"] for m in listed] == ["policy-a"] and not dead.exists()
        table = run_cli("models")
        assert b"policy-a" in table.stdout and b"1 models served" in table.stderr


def test_train_without_the_extra_says_how_to_install_it(tmp_path: Path) -> None:
    from whileai_core.train.options import missing_extra

    if not missing_extra():
        pytest.skip("this interpreter has the train extra")
    rows = tmp_path / "rows.jsonl"
    rows.write_text("{}\n")
    done = run_cli("train", str(rows), "--method", "sft", "--base-model", "m")
    assert done.returncode == 1
    assert b"needs the train extra" in done.stderr and b"whileai-toolkit[train]" in done.stderr


def test_sources_are_shaped_by_the_exporters_and_bad_lines_named(tmp_path: Path) -> None:
    from whileai_core.spec import load_spec
    from whileai_core.train.data import Source, shape_lines

    from ..helpers import REPO

    rows = REPO / "tests" / "golden" / "grade" / "orders-rl.jsonl"
    spec = load_spec(REPO / "specs" / "orders")
    sft = shape_lines("sft", Source("rows", path=rows), spec=spec, scratch=tmp_path)
    assert sft.shape == "trl messages (needs assistant_only_loss=True)"
    assert all(set(line) <= {"messages", "tools"} for line in sft.lines)
    assert all("privileged" not in json.dumps(line) for line in sft.lines)
    pairs = shape_lines("rm", Source("rows", path=rows), scratch=tmp_path)
    assert pairs.lines and all({"prompt", "chosen", "rejected"} <= set(x) for x in pairs.lines)
    grpo = shape_lines("grpo", Source("rows", path=rows), spec=spec, scratch=tmp_path)
    assert grpo.environment is not None and callable(grpo.reward)
    assert all(set(x) == {"prompt", "task_id", "world", "tools"} for x in grpo.lines)
    with pytest.raises(ConfigError, match="needs --spec"):
        shape_lines("grpo", Source("rows", path=rows), scratch=tmp_path / "b")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"messages": [{"role": "user", "content": "hi"}]}\n{"text": "no"}\n')
    with pytest.raises(ConfigError, match=r"bad:2: not an SFT line"):
        shape_lines("sft", Source("bad", path=bad), scratch=tmp_path)
    with pytest.raises(ConfigError, match=r"bad:1: not a preference pair"):
        shape_lines("dpo", Source("bad", path=bad), scratch=tmp_path)
