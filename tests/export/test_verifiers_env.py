"""The exported RL environment on today's verifiers: `vf-eval` runs two rollouts against the
loopback OpenAI stub, in the side environment `make test` builds (verifiers 0.4 needs
Python >= 3.11). The person answers the agent's question back, the world answers its
calls, and the reward is the verdict `whileai grade` gives the same conversation."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

from whileai_core.export import export_environment
from whileai_core.spec import load_spec
from whileai_core.testing import OpenAIStub, Reply, Request, answer, tool_call

from ..helpers import REPO, run_cli
from .rows import read
from .side import side_python

SPEC = load_spec(REPO / "specs" / "orders")
GRADED = REPO / "tests" / "golden" / "grade" / "orders-rl.jsonl"
ORDER = re.compile(r"ORD-\d{4}")
ASK_BACK = "Which order is it? Please give me the order id."
SPEC_TURNS = 12  # the exported turn cap (--max-turns' default)


def _policy(only_asks: str) -> Any:
    """A scripted policy: it asks for the order id until the person gives one, looks the
    order up, and reports the world's answer; on the ask `only_asks` it only ever asks."""

    def reply(request: Request) -> Reply:
        body = request.body if isinstance(request.body, dict) else {}
        messages = body.get("messages") or []
        users = [m.get("content") or "" for m in messages if m.get("role") == "user"]
        if users and users[0] == only_asks:
            return answer(ASK_BACK)
        if messages and messages[-1].get("role") == "tool":
            status = json.loads(messages[-1]["content"]).get("status")
            return answer(f"I looked the order up: the system says {status}.")
        called = any(m.get("tool_calls") for m in messages if m.get("role") == "assistant")
        ids = ORDER.findall(" ".join(users))
        if ids and not called:
            return tool_call("get_order", {"order_id": ids[-1]})
        return answer(ASK_BACK)

    return reply


def _pick(tasks: list[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A vague ask whose person knows an order id, and a second ask for the ask-back policy."""
    vague = next(
        t for t in tasks
        if t["info"].get("ask_family") == "vague"
        and ORDER.fullmatch(str(t["info"]["person"]["targets"].get("order_id", "")))
    )  # fmt: skip
    other = next(t for t in tasks if t is not vague and t["info"].get("ask_family") == "vague")
    return vague, other


def _vf_eval(
    tmp_path: Path, policy: Any, task_ids: list[str]
) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]], list[Any]]:
    """Run vf-eval on the exported package against the stub playing `policy`: the
    episodes, the rows the environment graded (by task id) and the stub's request bodies."""
    python = side_python()
    rows_file, out = tmp_path / "graded-by-env.jsonl", tmp_path / "runs"
    with OpenAIStub(default=policy) as stub:
        env = {
            **os.environ,
            "PYTHONPATH": str(tmp_path),
            "STUB_KEY": "stub-key",
            "WHILEAI_ENV_ROWS": str(rows_file),
            "NO_COLOR": "1",
        }
        done = subprocess.run(
            [str(python.parent / "vf-eval"), "orders_env", "-m", "stub-policy",
             "--client.base-url", stub.base_url, "--client.api-key-var", "STUB_KEY",
             "--select.include.ids", *task_ids,
             "-n", str(len(task_ids)), "-r", "1", "--no-push", "-o", str(out)],
            capture_output=True, env=env, timeout=300, cwd=tmp_path,
        )  # fmt: skip
        bodies = stub.bodies
    assert done.returncode == 0, (done.stdout + done.stderr).decode()[-4000:]
    [traces_file] = out.glob("*/traces.jsonl")
    rows = {r["scenario_id"]: r for r in read(rows_file)}
    return read(traces_file), rows, bodies


def _package(tmp_path: Path) -> list[dict[str, Any]]:
    side_python()
    report = export_environment(read(GRADED), tmp_path / "orders_env", SPEC, band=(0.0, 1.0))
    assert report.train > 0
    return read(tmp_path / "orders_env" / "data" / "train.jsonl")


def test_vf_eval_runs_two_rollouts_with_the_person_the_world_and_whileais_judge(
    tmp_path: Path,
) -> None:
    vague, asker = _pick(_package(tmp_path))
    ids = [vague["info"]["task_id"], asker["info"]["task_id"]]
    episodes, rows, bodies = _vf_eval(tmp_path, _policy(asker["question"]), ids)
    assert len(episodes) == 2 and all(e["ok"] and not e["errors"] for e in episodes)
    env_rewards = {
        e["task"]["data"]["id"]: e["traces"][0]["rewards"]["whileai_reward"]["score"]
        for e in episodes
    }
    # The policy ran under the spec's system prompt and tools on every model call.
    assert bodies and all(b["messages"][0] == {"role": "system", "content": SPEC.policy}
                          for b in bodies)  # fmt: skip
    assert all(b["tools"] == SPEC.openai_tools() for b in bodies)
    assert set(rows) == set(env_rewards)
    # The multi-turn ask did not end at the first question: the person gave the id the
    # situation had, the agent looked it up, the world answered.
    convo = rows[vague["info"]["task_id"]]["messages"]
    said = [m["content"] for m in convo if m["role"] == "user"]
    target = vague["info"]["person"]["targets"]["order_id"]
    assert len(said) >= 2 and target in said[1] and target not in said[0]
    calls = [m for m in convo if m.get("tool_calls")]
    assert json.loads(calls[0]["tool_calls"][0]["function"]["arguments"]) == {"order_id": target}
    result = json.loads(next(m["content"] for m in convo if m["role"] == "tool"))
    assert result["status"] in ("ok", "not_found", "timeout", "permission_denied", "malformed")
    # The reward is whileai's judge: `whileai grade` gives these very rows the same
    # verdict, so a fix to that judge (the ask-back rule) is the environment's reward too.
    source = tmp_path / "env-rows.jsonl"
    source.write_text("".join(json.dumps(rows[k]) + "\n" for k in sorted(rows)))
    graded = run_cli("grade", str(source))
    assert graded.returncode == 0, graded.stderr.decode()
    regraded = {r["scenario_id"]: r["reward"] for r in map(json.loads, graded.stdout.splitlines())}
    assert regraded == env_rewards
    asked_only = rows[asker["info"]["task_id"]]["messages"]
    assert all(m["content"] == ASK_BACK for m in asked_only if m["role"] == "assistant")


def test_a_rollout_cut_at_the_turn_cap_scores_zero_and_is_logged_truncated(
    tmp_path: Path,
) -> None:
    task = next(t for t in _package(tmp_path) if t["info"].get("ask_family") == "tool")
    endless = tool_call("get_order", {"order_id": "ORD-1234"})
    [episode], rows, bodies = _vf_eval(tmp_path, endless, [task["info"]["task_id"]])
    trace = episode["traces"][0]
    assert episode["ok"] and trace["stop_condition"] == "max_turns"
    assert len(bodies) == SPEC_TURNS
    assert trace["rewards"]["whileai_reward"]["score"] == 0.0
    assert trace["metrics"] == {"n_calls": float(SPEC_TURNS), "truncated": 1.0}
    assert rows[task["info"]["task_id"]]["truncated"] is True
