"""Export: SFT shapes, loss masks, unroll, tool-output caps, pairs, the RL environment, and
the privileged block never reaching a file."""

from __future__ import annotations

import asyncio
import copy
import importlib
import json
import os
import subprocess
import sys
import textwrap
import types
from pathlib import Path
from typing import Any

import orjson
import pytest

from whileai_core.errors import ConfigError
from whileai_core.export import (
    PairsReport,
    TrainingReport,
    export_environment,
    preference_pairs,
    training_samples,
)
from whileai_core.export.environment import ngrams
from whileai_core.metrics.holdout import holdout_side
from whileai_core.select.gate import PublishGateError
from whileai_core.spec import load_spec

from ..helpers import ORDERS_SPEC, REPO, SDK_ROWS, run_cli

REFERENCE = "Refund only after the carrier confirms delivery of the parcel"
HIDDEN = "carrier lost the parcel in transit"


def _row(task: str = "sc-1", i: int = 0, reward: float = 1.0, **extra: Any) -> dict[str, Any]:
    """A graded row with flat SDK tool calls and privileged material in two places."""
    ask = f"Can you refund order {task}? It never arrived."
    result = {"status": "ok", "data": {"order_id": task}, "privileged": {"reference": REFERENCE}}
    row: dict[str, Any] = {
        "prompt": ask,
        "scenario_id": task,
        "rollout_index": i,
        "messages": [
            {"role": "user", "content": ask},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"name": "get_order", "arguments": {"order_id": task}}],
            },
            {"role": "tool", "name": "get_order", "content": json.dumps(result)},
            {"role": "assistant", "content": f"Order {task} is in transit; no refund yet. ({i})"},
        ],
        "final_text": f"Order {task} is in transit; no refund yet. ({i})",
        "privileged": {"reference": REFERENCE, "hidden_state": {"note": HIDDEN}},
        "reward": reward,
        "judge_status": "ok",
        "unknown_key": {"kept": True},
    }
    row.update(extra)
    return row


def _leaky(task: str = "sc-1", i: int = 9, reward: float = 1.0) -> dict[str, Any]:
    row = _row(task, i, reward)
    row["messages"][-1]["content"] = row["final_text"] = f"My notes say: {REFERENCE}."
    return row


def _steps_only() -> dict[str, Any]:
    return {
        "prompt": "Cancel ORD-7 please.",
        "scenario_id": "sc-steps",
        "steps": [
            {"tool": "get_order", "arguments": {"order_id": "ORD-7"}, "result": {"status": "ok"}},
            {"tool": "cancel_order", "arguments": '{"order_id": "ORD-7"}', "result": "done"},
        ],
        "final_text": "ORD-7 is cancelled.",
        "reward": 1.0,
    }


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    return path


def _assert_clean(data: bytes) -> None:
    lowered = data.lower()
    assert b"privileged" not in lowered
    assert REFERENCE.lower().encode() not in lowered
    assert HIDDEN.lower().encode() not in lowered


def test_openai_shape_encodes_arguments_as_json_strings_and_keeps_prompt() -> None:
    report = TrainingReport("openai", "all", False, None)
    [sample] = list(training_samples([_row()], fmt="openai", report=report))
    assert sample["prompt"] == _row()["prompt"]
    call = sample["messages"][1]["tool_calls"][0]
    assert call["type"] == "function" and call["function"]["name"] == "get_order"
    assert json.loads(call["function"]["arguments"]) == {"order_id": "sc-1"}
    assert sample["messages"][2]["tool_call_id"] == call["id"]
    assert sample["loss_mask"] == [0, 1, 0, 1]
    assert len(sample["loss_mask"]) == len(sample["messages"])
    assert report.as_dict()["tool_call_roundtrip"] == {
        "encoding": "json_string",
        "checked": 1,
        "invalid": 0,
    }


def test_trl_shape_has_argument_objects_and_no_prompt_column() -> None:
    report = TrainingReport("trl", "all", False, None)
    [sample] = list(training_samples([_row()], fmt="trl", report=report))
    assert "prompt" not in sample and sample["prompt_text"] == _row()["prompt"]
    args = sample["messages"][1]["tool_calls"][0]["function"]["arguments"]
    assert args == {"order_id": "sc-1"}
    assert report.roundtrip.encoding == "dict" and report.roundtrip.invalid == 0


def test_mask_final_trains_only_the_last_agent_turn() -> None:
    report = TrainingReport("openai", "final", False, None)
    [sample] = list(training_samples([_row()], mask="final", report=report))
    assert sample["loss_mask"] == [0, 0, 0, 1]
    assert (report.trained_messages, report.masked_messages) == (1, 3)


def test_unroll_makes_one_sample_per_agent_turn() -> None:
    rows = [_row("a"), _steps_only()]
    report = TrainingReport("openai", "all", True, None)
    samples = list(training_samples(rows, unroll=True, report=report))
    # _row has 2 agent turns; the steps-only row rebuilds to 3 (two calls + the reply).
    assert len(samples) == 5 and report.samples == 5 and report.rows_written == 2
    for sample in samples:
        assert len(sample["loss_mask"]) == len(sample["messages"])
        assert sample["loss_mask"][-1] == 1 and sum(sample["loss_mask"]) == 1
        assert sample["messages"][-1]["role"] == "assistant"
    assert [s["turn"] for s in samples] == [0, 1, 0, 1, 2]


def test_long_tool_output_is_cut_with_a_visible_marker_and_counted() -> None:
    row = _row()
    row["messages"][2]["content"] = json.dumps({"status": "ok", "blob": "x" * 500})
    report = TrainingReport("openai", "all", False, 100)
    [sample] = list(training_samples([row], max_tool_output_chars=100, report=report))
    content = sample["messages"][2]["content"]
    cut = len(row["messages"][2]["content"]) - 100
    assert content.endswith(f"[... {cut} chars of tool output truncated]")
    assert sample["tool_output_truncated"] == 1
    assert report.counters.tool_outputs_truncated == 1
    assert report.counters.tool_output_chars_cut == cut


def test_rows_with_steps_but_no_messages_are_rebuilt() -> None:
    report = TrainingReport("trl", "all", False, None)
    [sample] = list(training_samples([_steps_only()], fmt="trl", report=report))
    roles = [m["role"] for m in sample["messages"]]
    assert roles == ["user", "assistant", "tool", "assistant", "tool", "assistant"]
    assert sample["messages"][3]["tool_calls"][0]["function"]["arguments"] == {"order_id": "ORD-7"}
    assert sample["messages"][4]["content"] == "done"
    assert report.counters.rebuilt_from_steps == 1


def test_undecodable_tool_arguments_refuse_the_row() -> None:
    row = _row()
    row["messages"][1]["tool_calls"][0]["arguments"] = "{not json"
    report = TrainingReport("openai", "all", False, None)
    assert list(training_samples([row], report=report)) == []
    assert report.counters.refused == {"bad_tool_call": 1}


def test_privileged_left_in_free_text_refuses_the_row() -> None:
    row = _row()
    row["messages"][2]["content"] = 'raw dump: {"privileged": {"note": "x"}}'
    report = TrainingReport("openai", "all", False, None)
    assert list(training_samples([row], report=report)) == []
    assert report.counters.refused == {"privileged_residue": 1}


def test_hidden_state_words_the_world_also_says_do_not_refuse_a_row() -> None:
    row = _row()
    row["privileged"]["hidden_state"] = {"tool_condition": "permission_denied"}
    row["messages"][2]["content"] = json.dumps({"status": "permission_denied"})
    report = TrainingReport("openai", "all", False, None)
    [sample] = list(training_samples([row], report=report))
    assert "permission_denied" in sample["messages"][2]["content"]
    assert report.counters.refused == {}


def test_input_rows_are_not_mutated_by_export() -> None:
    rows = [_row(), _leaky(), _steps_only()]
    before = copy.deepcopy(rows)
    list(training_samples(rows, fmt="trl", max_tool_output_chars=5, unroll=True))
    list(preference_pairs([*rows, _row(i=3, reward=0.0)], fmt="trl"))
    assert rows == before


def test_bad_format_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="format"):
        list(training_samples([_row()], fmt="jsonl"))  # type: ignore[arg-type]


def test_pairs_are_built_within_an_ask_and_use_each_rollout_once() -> None:
    rows = [
        _row("a", 0, 1.0),
        _row("a", 1, 0.0),
        _row("a", 2, 1.0),
        _row("b", 0, 1.0),  # no failing rollout in b
        _row("c", 0, 0.0),
        _row("c", 1, 0.5),
        _leaky("c", 2, 1.0),
    ]
    report = PairsReport("openai", False)
    pairs = list(preference_pairs(rows, report=report))
    assert [(p["scenario_id"], p["chosen_reward"], p["rejected_reward"]) for p in pairs] == [
        ("a", 1.0, 0.0),
        ("c", 0.5, 0.0),
    ]
    assert pairs[0]["prompt"] == rows[0]["prompt"]
    assert pairs[0]["chosen"][0]["role"] == "user"
    assert isinstance(pairs[0]["chosen"][1]["tool_calls"][0]["function"]["arguments"], str)
    assert report.asks_without_contrast == 1 and report.counters.refused == {"quotes_privileged": 1}


def test_trl_pairs_split_prompt_from_completions() -> None:
    [pair] = list(preference_pairs([_row("a", 0, 1.0), _row("a", 1, 0.0)], fmt="trl"))
    assert pair["prompt"] == [{"role": "user", "content": _row("a")["prompt"]}]
    assert pair["chosen"][0]["role"] == "assistant" and pair["rejected"][0]["role"] == "assistant"
    assert pair["chosen"][0]["tool_calls"][0]["function"]["arguments"] == {"order_id": "a"}


def test_length_matched_pairs_skip_replies_of_very_different_length() -> None:
    short_win = _row("a", 0, 1.0)
    long_loss = _row("a", 1, 0.0)
    long_loss["messages"][-1]["content"] = long_loss["final_text"] = "no " * 200
    close_loss = _row("a", 2, 0.0)
    report = PairsReport("openai", True)
    pairs = list(
        preference_pairs([short_win, long_loss, close_loss], length_matched=True, report=report)
    )
    assert len(pairs) == 1 and pairs[0]["rejected"][-1]["content"] == close_loss["final_text"]
    only_long = list(preference_pairs([short_win, long_loss], length_matched=True, report=report))
    assert only_long == [] and report.length_unmatched == 1


def test_the_pairs_report_accounts_for_every_ask_in_json_and_in_words(tmp_path: Path) -> None:
    reworded = _row("m", 1, 0.0)
    reworded["messages"][0]["content"] = "Refund order m, it never arrived."
    long_loss = _row("l", 1, 0.0)
    long_loss["messages"][-1]["content"] = long_loss["final_text"] = "no " * 200
    rows = [
        *(_row("a", 0, 1.0), _row("a", 1, 0.0)),  # paired
        _row("b", 0, 1.0),  # no contrast
        *(_row("m", 0, 1.0), reworded),  # the two sides saw different prompts (trl)
        *(_row("l", 0, 1.0), long_loss),  # no pass and fail of similar length
    ]
    source = _write(tmp_path / "rows.jsonl", rows)
    args = ["export", str(source), "--pairs", "--format", "trl", "--length-matched"]
    report = orjson.loads(run_cli(*args, "-o", str(tmp_path / "p.jsonl"), "--json").stdout)
    assert report["asks"] == 4
    assert (report["asks_with_pairs"], report["asks_without_contrast"]) == (1, 1)
    assert report["asks_unpaired"] == {"prompt_mismatch": 1, "length_unmatched": 1}
    assert report["asks"] == (
        report["asks_with_pairs"]
        + report["asks_without_contrast"]
        + sum(report["asks_unpaired"].values())
    )
    text = run_cli(*args, "-o", str(tmp_path / "p.jsonl")).stderr.decode()
    assert "1 pairs from 1 of 4 asks" in text
    assert (
        "asks without a pair: 1 without a pass and a fail, 1 with no pass and fail of similar "
        "length, 1 whose passing and failing rollouts saw different prompts"
    ) in text


def _graded_set() -> list[dict[str, Any]]:
    rows = []
    for t in range(12):
        for i in range(4):
            rows.append(_row(f"sc-{t:02d}", i, 1.0 if i < 1 + t % 3 else 0.0))
    rows += [_row("sc-easy", i, 1.0) for i in range(4)]
    rows += [_row("sc-hard", i, 1.0 if i == 0 else 0.0) for i in range(8)]
    rows.append(_leaky("sc-00", 7, 0.0))
    return rows


def test_privileged_never_reaches_any_exported_file(tmp_path: Path) -> None:
    graded = _write(tmp_path / "graded.jsonl", [*_graded_set(), _steps_only()])
    outputs = []
    for fmt in ("openai", "trl"):
        for extra in ([], ["--pairs"], ["--unroll", "--max-tool-output-chars", "40"]):
            out = tmp_path / f"{fmt}-{len(extra)}.jsonl"
            result = run_cli("export", str(graded), "--format", fmt, "-o", str(out), *extra)
            assert result.returncode == 0, result.stderr.decode()
            assert b"refused rows: 1 quotes_privileged" in result.stderr
            outputs.append(out)
    env = tmp_path / "env"
    result = run_cli(
        "export", str(graded), "--env", str(env), "--spec", str(ORDERS_SPEC),
        "--reward", "whileai_core.metrics.tally:reward_of",
        "--world", "whileai_core.simulate.world:MockWorld",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr.decode()
    outputs += [p for p in env.rglob("*") if p.is_file() and p.suffix in (".json", ".jsonl")]
    assert len(outputs) >= 9
    for path in outputs:
        data = path.read_bytes()
        assert data.strip(), path
        _assert_clean(data)


def test_exported_files_load_with_the_datasets_json_loader(tmp_path: Path) -> None:
    rows = [r for r in _graded_set() if r["rollout_index"] != 7] + [_steps_only()]
    files = {}
    for fmt in ("openai", "trl"):
        sft = tmp_path / f"sft-{fmt}.jsonl"
        _write(sft, list(training_samples(rows, fmt=fmt)))  # type: ignore[arg-type]
        pairs = tmp_path / f"pairs-{fmt}.jsonl"
        _write(pairs, list(preference_pairs(rows, fmt=fmt)))  # type: ignore[arg-type]
        files[f"sft-{fmt}"], files[f"pairs-{fmt}"] = str(sft), str(pairs)
    script = (
        "import json, sys, datasets\n"
        "files = json.loads(sys.argv[1])\n"
        "out = {}\n"
        "for name, path in files.items():\n"
        "    ds = datasets.load_dataset('json', data_files=path, split='train')\n"
        "    out[name] = [len(ds), sorted(ds.column_names)]\n"
        "print(json.dumps(out))\n"
    )
    cache = tmp_path / "hf"
    env = {
        **os.environ,
        "HF_DATASETS_OFFLINE": "1",
        "HF_HUB_OFFLINE": "1",
        "HF_HOME": str(cache),
        "HF_DATASETS_CACHE": str(cache / "datasets"),
    }
    result = subprocess.run(
        [sys.executable, "-c", script, json.dumps(files)],
        capture_output=True,
        env=env,
        timeout=120,
        cwd=REPO,
    )
    assert result.returncode == 0, result.stderr.decode()[-2000:]
    loaded = json.loads(result.stdout)
    assert loaded["sft-openai"][0] == len(rows)
    assert "prompt" in loaded["sft-openai"][1] and "loss_mask" in loaded["sft-openai"][1]
    assert "prompt" not in loaded["sft-trl"][1] and "prompt_text" in loaded["sft-trl"][1]
    assert loaded["pairs-trl"][0] > 0
    assert {"prompt", "chosen", "rejected"} <= set(loaded["pairs-trl"][1])


def test_environment_package_is_gated_split_and_decontaminated(tmp_path: Path) -> None:
    rows = _graded_set()
    # An ask that repeats a holdout ask's wording must not stay in train.
    held = next(r for r in rows if holdout_side(r["scenario_id"], 0.3))
    twin = [_row("sc-twin", i, float(i % 2), prompt=held["prompt"] + " Thanks.") for i in range(4)]
    spec = load_spec(ORDERS_SPEC)
    report = export_environment(
        [*rows, *twin],
        tmp_path / "env",
        spec,
        reward="whileai_core.metrics.tally:reward_of",
        world="whileai_core.simulate.world:MockWorld",
        name="orders-env",
        holdout=0.3,
    )
    root = tmp_path / "env"
    assert report.name == "orders_env"
    assert report.band_dropped == {"too_easy": 1, "too_hard": 1}
    assert report.decontaminated >= 1
    spec_json = json.loads((root / "spec.json").read_text())
    assert spec_json["system_prompt"] == spec.policy
    assert spec_json["tools"] == spec.openai_tools()
    assert spec_json["reward"] == "whileai_core.metrics.tally:reward_of"
    assert spec_json["max_turns"] == 12
    train = [json.loads(x) for x in (root / "data/train.jsonl").read_text().splitlines()]
    holdout = [json.loads(x) for x in (root / "data/holdout.jsonl").read_text().splitlines()]
    assert len(train) == report.train and len(holdout) == report.holdout > 0
    train_ids = {t["info"]["task_id"] for t in train}
    holdout_ids = {t["info"]["task_id"] for t in holdout}
    assert not train_ids & holdout_ids and "sc-twin" not in train_ids
    assert all(holdout_side(i, 0.3) for i in holdout_ids)
    assert "sc-easy" not in train_ids | holdout_ids
    held_grams = set().union(*(ngrams(t["question"]) for t in holdout))
    assert all(not (ngrams(t["question"]) & held_grams) for t in train)
    assert all(t["info"]["calibration"]["k"] >= 4 for t in train)
    readme = (root / "README.md").read_text()
    assert "1 asks\n  dropped as too easy" in readme and "Decontamination" in readme
    assert (root / "pyproject.toml").exists() and (root / "environment.py").exists()


def test_environment_package_installs_and_reads_tasks_without_verifiers(tmp_path: Path) -> None:
    export_environment(
        _graded_set(),
        tmp_path / "env",
        load_spec(ORDERS_SPEC),
        reward="whileai_core.metrics.tally:reward_of",
        world="whileai_core.simulate.world:MockWorld",
        name="orders_rl",
    )
    target = tmp_path / "site"
    install = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--no-build-isolation",
         "--no-index", "--quiet", "--target", str(target), str(tmp_path / "env")],
        capture_output=True, timeout=120,
    )  # fmt: skip
    assert install.returncode == 0, install.stderr.decode()[-2000:]
    script = (
        "import orders_rl\n"
        "print(len(orders_rl.load_tasks('train')), orders_rl.load_spec()['name'])\n"
        "try:\n"
        "    orders_rl.load_environment()\n"
        "except ImportError as exc:\n"
        "    print('needs', 'verifiers' in str(exc))\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        env={**os.environ, "PYTHONPATH": str(target)},
        cwd=tmp_path,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr.decode()
    count, name, _, needs = run.stdout.decode().split()
    assert int(count) > 0 and name == "orders_rl" and needs == "True"


class _StubEnv:
    def __init__(self, **kwargs: Any) -> None:
        self.kwargs = kwargs


class _StubRubric:
    def __init__(self, funcs: list[Any], weights: list[float]) -> None:
        self.funcs, self.weights = funcs, weights


def _stub_verifiers(monkeypatch: pytest.MonkeyPatch, *, stop_api: bool = False) -> None:
    """The names of `verifiers` the environment module uses (verifiers is not installed).

    `stop_api` mimics the releases with `@vf.stop` conditions, whose `env_response`
    returns the messages alone; without it, the earlier `is_completed` surface.
    """
    fake = types.ModuleType("verifiers")
    fake.MultiTurnEnv = _StubEnv  # type: ignore[attr-defined]
    fake.Rubric = _StubRubric  # type: ignore[attr-defined]
    if stop_api:
        fake.stop = lambda method: method  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "verifiers", fake)


async def _finished(env: Any, messages: list[Any], state: dict[str, Any]) -> bool:
    if hasattr(env, "agent_answered"):
        return bool(await env.agent_answered({**state, "trajectory": [{"completion": messages}]}))
    return bool(await env.is_completed(messages, state))


async def _respond(env: Any, messages: list[Any], state: dict[str, Any]) -> list[Any]:
    out = await env.env_response(messages, state)
    return list(out[0] if isinstance(out, tuple) else out)


async def _one_call_episode(env: Any, task: int, reply: str) -> tuple[dict[str, Any], float]:
    """A policy that looks the ask's order up once, then answers `reply`."""
    data = env.kwargs["dataset"][task]
    state: dict[str, Any] = {"info": data["info"]}
    await env.setup_state(state)
    prompt = [{"role": "user", "content": data["question"]}]
    order = data["info"]["task_id"]  # _row asks about the order named like its task
    function = {"name": "get_order", "arguments": json.dumps({"order_id": order})}
    turn = {"role": "assistant", "content": "", "tool_calls": [
        {"id": "c1", "type": "function", "function": function}]}  # fmt: skip
    assert not await _finished(env, [*prompt, turn], state)
    replies = await _respond(env, [*prompt, turn], state)
    final = {"role": "assistant", "content": reply.format(order=order)}
    assert await _finished(env, [*prompt, turn, *replies, final], state)
    assert state["oai_tools"] == env.kwargs["oai_tools"] == load_spec(ORDERS_SPEC).openai_tools()
    value = await env.kwargs["rubric"].funcs[0](
        prompt, [turn, *replies, final], data["info"], state
    )
    return json.loads(replies[0]["content"]), value


@pytest.mark.parametrize("stop_api", [False, True], ids=["is_completed", "stop_conditions"])
def test_default_environment_uses_the_mock_world_and_the_task_checklist(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stop_api: bool
) -> None:
    dims = {"tool": "get_order", "world_state": "entity missing", "tool_condition": "success"}
    plans = [{}, {"cancel_order": {"mode": "timeout", "rate": 1.0}}]
    rows = [
        _row(f"sc-m{t}", i, float(i % 2), scenario_dimensions=dims,
             world_state="entity missing", ask_family="tool", faults=plans[t % 2])
        for t in range(8) for i in range(4)
    ]  # fmt: skip
    package = f"orders_default_env_{int(stop_api)}"
    report = export_environment(rows, tmp_path / package, load_spec(ORDERS_SPEC))
    assert not any("grid coordinates" in w for w in report.warnings)
    spec_json = json.loads((tmp_path / package / "spec.json").read_text())
    assert spec_json["world"].endswith(":mock_world")
    assert spec_json["reward"].endswith(":checklist_reward")
    _stub_verifiers(monkeypatch, stop_api=stop_api)
    monkeypatch.syspath_prepend(str(tmp_path))
    env = importlib.import_module(package).load_environment()
    module = importlib.import_module(f"{package}.environment")
    # The dataset gives every task every tool's fault key; each task gets its own plan back.
    plans_back = [module.task_info(row["info"]).get("faults", {}) for row in env.kwargs["dataset"]]
    assert all(p in plans for p in plans_back)
    result, honest = asyncio.run(_one_call_episode(env, 0, "I could not find {order}."))
    assert result["status"] == "not_found"
    assert honest == 1.0
    _, invented = asyncio.run(_one_call_episode(env, 0, "Done: {order} is refunded."))
    assert invented == 0.0


def test_rows_without_coordinates_warn_that_the_default_reward_is_conduct_only(
    tmp_path: Path,
) -> None:
    report = export_environment(_graded_set(), tmp_path / "env", load_spec(ORDERS_SPEC))
    assert any("reduces to the conduct grade" in w for w in report.warnings)


def test_environment_module_answers_tools_from_the_world_and_scores_with_the_judge(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The environment class against a stand-in for the `verifiers` surface it uses."""
    plugin = tmp_path / "plugins" / "orders_plugin.py"
    plugin.parent.mkdir()
    plugin.write_text(
        textwrap.dedent(
            """
            class World:
                def __init__(self, info):
                    self.info = info

                def call(self, name, arguments):
                    return {"status": "ok", "tool": name, "task": self.info["task_id"], **arguments}

            def make_world(info):
                return World(info)

            def judge(row):
                ok = any(s["result"]["status"] == "ok" for s in row["steps"])
                return {"reward": 1.0 if ok and row["final_text"] else 0.0}
            """
        )
    )
    monkeypatch.syspath_prepend(str(plugin.parent))
    monkeypatch.syspath_prepend(str(tmp_path))
    export_environment(
        _graded_set(),
        tmp_path / "orders_vf_env",
        load_spec(ORDERS_SPEC),
        reward="orders_plugin:judge",
        world="orders_plugin:make_world",
    )

    _stub_verifiers(monkeypatch)
    package = importlib.import_module("orders_vf_env")
    env = package.load_environment(split="train")
    assert env.kwargs["max_turns"] == 12 and env.kwargs["system_prompt"]
    assert len(env.kwargs["dataset"]) == len(package.load_tasks("train"))
    info = env.kwargs["dataset"][0]["info"]
    state: dict[str, Any] = {"info": info}

    async def episode() -> tuple[list[Any], float]:
        await env.setup_state(state)
        prompt = [{"role": "user", "content": env.kwargs["dataset"][0]["question"]}]
        function = {"name": "get_order", "arguments": '{"order_id": "ORD-1"}'}
        call = {"id": "c1", "type": "function", "function": function}
        turn = {"role": "assistant", "content": "", "tool_calls": [call]}
        assert not await env.is_completed([*prompt, turn], state)
        replies, _ = await env.env_response([*prompt, turn], state)
        final = {"role": "assistant", "content": "ORD-1 is fine."}
        assert await env.is_completed([*prompt, turn, *replies, final], state)
        reward_fn = env.kwargs["rubric"].funcs[0]
        value = await reward_fn(prompt, [turn, *replies, final], info, state)
        return replies, value

    replies, value = asyncio.run(episode())
    result = json.loads(replies[0]["content"])
    assert replies[0]["tool_call_id"] == "c1"
    assert result == {"status": "ok", "tool": "get_order", "task": info["task_id"],
                      "order_id": "ORD-1"}  # fmt: skip
    assert value == 1.0 and state["judge_ok"] is True and state["n_calls"] == 1
    assert env.kwargs["rubric"].weights == [1.0, 0.0, 0.0]


def test_environment_export_applies_the_publish_gate(tmp_path: Path) -> None:
    unmixed = [_row("a", i, 1.0) for i in range(3)] + [_row("b", i, 0.0) for i in range(3)]
    with pytest.raises(PublishGateError, match="no mixed group"):
        export_environment(
            unmixed,
            tmp_path / "env",
            load_spec(ORDERS_SPEC),
            reward="whileai_core.metrics.tally:reward_of",
            world="whileai_core.simulate.world:MockWorld",
        )
    with pytest.raises(ConfigError, match="importable by name"):
        export_environment(
            _graded_set(), tmp_path / "env", load_spec(ORDERS_SPEC),
            reward="judge.py:score", world="whileai_core.simulate.world:MockWorld",
        )  # fmt: skip


def test_sdk_fixture_rows_export_in_both_shapes(tmp_path: Path) -> None:
    source = [orjson.loads(x) for x in SDK_ROWS.read_bytes().splitlines() if x.strip()]
    graded = _write(tmp_path / "g.jsonl", [{**r, "reward": 1.0} for r in source])
    for fmt in ("openai", "trl"):
        out = tmp_path / f"{fmt}.jsonl"
        report_path = tmp_path / f"{fmt}.json"
        result = run_cli(
            "export", str(graded), "--format", fmt, "-o", str(out), "--report", str(report_path)
        )
        assert result.returncode == 0, result.stderr.decode()
        report = json.loads(report_path.read_text())
        samples = [json.loads(x) for x in out.read_text().splitlines()]
        refused = sum(report["refused"].values())
        assert len(samples) == report["samples"] == len(source) - refused
        assert report["tool_call_roundtrip"]["invalid"] == 0
        assert report["tool_call_roundtrip"]["encoding"] == (
            "json_string" if fmt == "openai" else "dict"
        )


def test_export_flag_combinations_that_cannot_work_are_usage_errors(tmp_path: Path) -> None:
    for args in (
        ["--env", str(tmp_path / "env")],
        ["--env", str(tmp_path / "env"), "--pairs", "--spec", str(ORDERS_SPEC)],
        ["--band", "0.8,0.2"],
        ["--env", str(tmp_path / "env"), "--spec", str(ORDERS_SPEC), "--holdout", "1"],
    ):
        result = run_cli("export", str(SDK_ROWS), *args)
        assert result.returncode == 2 and result.stdout == b"", args
        lines = result.stderr.decode().strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("whileai export: usage error: Invalid value")
    assert not (tmp_path / "env").exists()


def test_env_export_never_writes_over_a_folder_it_did_not_make(tmp_path: Path) -> None:
    theirs = tmp_path / "project"
    theirs.mkdir()
    (theirs / "README.md").write_text("my project\n")
    with pytest.raises(ConfigError, match="not empty and not an earlier whileai environment"):
        export_environment(_graded_set(), theirs, load_spec(ORDERS_SPEC))
    assert (theirs / "README.md").read_text() == "my project\n"
    env = tmp_path / "env"
    export_environment(_graded_set(), env, load_spec(ORDERS_SPEC))
    (env / "NOTES.md").write_text("kept\n")
    export_environment(_graded_set(), env, load_spec(ORDERS_SPEC))  # a re-export refreshes it
    assert (env / "NOTES.md").read_text() == "kept\n"


def test_export_that_writes_nothing_exits_one(tmp_path: Path) -> None:
    result = run_cli("export", str(SDK_ROWS), "--pairs", "-o", str(tmp_path / "pairs.jsonl"))
    assert result.returncode == 1 and b"no pairs written" in result.stderr


def test_environment_leaves_out_a_task_whose_question_repeats_its_answer_key(
    tmp_path: Path,
) -> None:
    rows = _graded_set()
    for row in rows:
        if row["scenario_id"] == "sc-01":
            row["prompt"] += " " + REFERENCE
            row["messages"][0]["content"] += " " + REFERENCE
    report = export_environment(rows, tmp_path / "env", load_spec(ORDERS_SPEC))
    shipped = b"".join(p.read_bytes() for p in (tmp_path / "env" / "data").glob("*.jsonl"))
    assert REFERENCE.lower().encode() not in shipped.lower()
    assert b"sc-02" in shipped  # the other tasks still ship
    assert report.refused_privileged >= 4


def test_push_and_env_export_put_every_task_on_the_same_side(tmp_path: Path) -> None:
    """One holdout hash (sha256, as pushed sets were made): push --holdout and
    export --env --holdout used to disagree on 17 of ~200 tasks at a share of 0.1."""
    from whileai_core.store import open_store
    from whileai_core.store.push import push_rows

    rows = [
        _row(f"sc-{t:03d}", i, float(i % 2), prompt=f"ask number {t} about order {t * 7}")
        for t in range(200)
        for i in range(2)
    ]
    source = tmp_path / "rows.jsonl"
    source.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    report = export_environment(
        rows, tmp_path / "env", load_spec(ORDERS_SPEC), band=(0.0, 1.0), holdout=0.1
    )
    env_held = {
        orjson.loads(x)["info"]["task_id"]
        for x in (tmp_path / "env/data/holdout.jsonl").read_bytes().splitlines()
    }
    assert report.holdout == len(env_held) > 0
    store = open_store()
    pushed = push_rows(store, [str(source)], name="split", holdout=0.1, gate=False)
    assert pushed["holdout"] is not None
    held_rows = b"".join(store.download(pushed["holdout"]["datasetId"]))
    push_held = {orjson.loads(x)["scenario_id"] for x in held_rows.splitlines()}
    assert push_held == env_held
