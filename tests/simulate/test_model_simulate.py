"""`whileai simulate` end to end with model backends on the loopback stub (real subprocess)."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest

from whileai_core.agents.model import make_agent
from whileai_core.errors import ConfigError
from whileai_core.models.options import ModelOptions
from whileai_core.people.model import make_writer
from whileai_core.spec import load_spec
from whileai_core.testing import OpenAIStub, Reply, Request, answer, http_error, tool_call

from ..helpers import ORDERS_SPEC, run_cli

_HELD = re.compile(r'"order_id": "([^"]+)"')
_SAID = re.compile(r"ORD-[0-9A-Za-z]+")


def _chooser(request: Request) -> Reply:
    """Agent requests (they carry tools) look the order up, then answer; writer requests get
    an opener naming the order the brief holds (so openers differ per situation and none
    is a near-duplicate or an invented id), users say DONE."""
    body = request.body if isinstance(request.body, dict) else {}
    messages = body.get("messages") or [{}]
    if not body.get("tools"):
        if any(m.get("role") == "assistant" for m in messages):
            return answer("DONE")
        held = _HELD.search(messages[0]["content"])
        digest = hashlib.sha256(messages[0]["content"].encode()).hexdigest()[:6]
        order = held.group(1) if held else f"I bought in batch {digest}"
        return answer(f"hi, order {order} looks wrong, can you check it?")
    if messages[-1].get("role") == "tool":
        return answer("I checked it: here is what I found.", logprobs=[-0.5] * 8)
    said = _SAID.findall(str(messages[1].get("content") or ""))
    order_id = said[0] if said else "ORD-77"
    return tool_call("get_order", {"order_id": order_id}, usage=(30, 7))


def _simulate(stub: OpenAIStub, out: Path, *extra: str) -> Any:
    return run_cli(
        "simulate", str(ORDERS_SPEC), "--agent", stub.base_url, "--model", "m",
        "--writer", stub.base_url, "--person-mode", "free", "--budget", "4",
        "--concurrency", "4", "-o", str(out), "--report", str(out) + ".report.json", *extra,
    )  # fmt: skip


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_simulate_with_a_model_agent_and_writer_writes_valid_rows(tmp_path: Path) -> None:
    out = tmp_path / "rows.jsonl"
    with OpenAIStub(default=_chooser) as stub:
        proc = _simulate(stub, out, "--logprobs")
        bodies = stub.bodies
    assert proc.returncode == 0, proc.stderr.decode()
    rows = _rows(out)
    assert len(rows) == 4
    for row in rows:
        assert row["model_version"] == "m" and row["writer_model"] == "m"
        assert row["steps"][0]["tool"] == "get_order"
        assert row["usage"] == {"input_tokens": 40, "output_tokens": 12}
        assert row["finish_reason"] == "stop"
        assert row["logprob"] == -4.0 and row["n_tokens"] == 8
        assert row["prompt"].startswith("hi, order ")
    assert run_cli("validate", str(out)).returncode == 0
    report = json.loads(Path(str(out) + ".report.json").read_text())
    # The agent's and the writer's traffic, reported apart (one client each).
    models = report["models"]
    assert set(models) == {"agent m", "writer m"}
    assert models["agent m"]["calls"] == sum(1 for b in bodies if b.get("tools"))
    assert models["writer m"]["calls"] == sum(1 for b in bodies if not b.get("tools"))
    assert models["agent m"]["failed"] == models["writer m"]["failed"] == 0
    assert models["agent m"]["input_tokens"] == 4 * 40  # the stub's agent usage, 4 rows
    # The writer's completions are capped by its own limit, the agent's are left alone.
    assert all(b["max_tokens"] == 400 for b in bodies if not b.get("tools"))
    assert all("max_tokens" not in b for b in bodies if b.get("tools"))
    # the writer's and the simulated user's requests never carry the agent's policy
    policy = load_spec(ORDERS_SPEC)
    writer_side = json.dumps([b for b in bodies if not b.get("tools")])
    assert writer_side and policy.policy not in writer_side
    assert all(rule not in writer_side for rule in policy.rules)
    agent_side = [b for b in bodies if b.get("tools")]
    assert all(b["messages"][0]["content"] == policy.policy for b in agent_side)


def test_a_cached_rerun_pays_for_no_model_calls(tmp_path: Path) -> None:
    with OpenAIStub(default=_chooser) as stub:
        # --reproducible: a free-running engine opens a few speculative asks that differ
        # from run to run; those would be (correctly) new calls.
        first = _simulate(stub, tmp_path / "a.jsonl", "--cache", "--reproducible")
        assert first.returncode == 0, first.stderr.decode()
        paid = stub.calls
        second = _simulate(stub, tmp_path / "b.jsonl", "--cache", "--reproducible")
        assert second.returncode == 0, second.stderr.decode()
        assert stub.calls == paid
    report = json.loads((tmp_path / "b.jsonl.report.json").read_text())
    assert sum(m["cache_hits"] for m in report["models"].values()) == paid
    strip = [
        {k: v for k, v in r.items() if k != "selection_reason"} for r in _rows(tmp_path / "a.jsonl")
    ]
    again = [
        {k: v for k, v in r.items() if k != "selection_reason"} for r in _rows(tmp_path / "b.jsonl")
    ]
    assert strip == again


def test_the_writer_has_its_own_token_cap_and_read_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--writer-max-tokens caps the person's completions only; WHILEAI_WRITER_MAX_TOKENS
    and WHILEAI_WRITER_TIMEOUT are read through settings when the flags are not given."""
    out = tmp_path / "rows.jsonl"
    with OpenAIStub(default=_chooser) as stub:
        proc = _simulate(stub, out, "--writer-max-tokens", "64", "--max-tokens", "900")
        bodies = stub.bodies
    assert proc.returncode == 0, proc.stderr.decode()
    assert {b["max_tokens"] for b in bodies if not b.get("tools")} == {64}
    assert {b["max_tokens"] for b in bodies if b.get("tools")} == {900}
    spec = load_spec(ORDERS_SPEC)
    monkeypatch.setenv("WHILEAI_WRITER_MAX_TOKENS", "77")
    monkeypatch.setenv("WHILEAI_WRITER_TIMEOUT", "7.5")
    options = ModelOptions(model="m")
    writer = make_writer("http://127.0.0.1:9/v1", spec, options)
    agent = make_agent("http://127.0.0.1:9/v1", spec, options)
    assert writer.sampling["max_tokens"] == 77 and writer.client.read_timeout == 7.5
    assert agent.client is not writer.client and agent.client.read_timeout == 60.0
    flagged = make_writer(
        "http://127.0.0.1:9/v1", spec, ModelOptions(model="m", writer_timeout=2.0)
    )
    assert flagged.client.read_timeout == 2.0
    monkeypatch.setenv("WHILEAI_WRITER_TIMEOUT", "soon")
    with pytest.raises(ConfigError, match="WHILEAI_WRITER_TIMEOUT='soon' is not a float"):
        make_writer("http://127.0.0.1:9/v1", spec, ModelOptions(model="m"))


def test_the_person_mode_is_a_flag_and_a_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A model writer words a planned person unless --person-mode or WHILEAI_PERSON_MODE
    says free; a mode that is neither is one line naming where it came from, and exit 2,
    before any model is called."""
    spec = load_spec(ORDERS_SPEC)
    monkeypatch.delenv("WHILEAI_PERSON_MODE", raising=False)
    assert make_writer("http://127.0.0.1:9/v1", spec, ModelOptions(model="m")).plan
    monkeypatch.setenv("WHILEAI_PERSON_MODE", "free")
    assert not make_writer("http://127.0.0.1:9/v1", spec, ModelOptions(model="m")).plan
    flagged = ModelOptions(model="m", person_mode="plan")
    assert make_writer("http://127.0.0.1:9/v1", spec, flagged).plan
    monkeypatch.setenv("WHILEAI_PERSON_MODE", "chatty")
    with pytest.raises(ConfigError, match="WHILEAI_PERSON_MODE='chatty'"):
        make_writer("http://127.0.0.1:9/v1", spec, ModelOptions(model="m"))
    out = tmp_path / "rows.jsonl"
    with OpenAIStub(default=_chooser) as stub:
        proc = _simulate(stub, out, "--person-mode", "loose")
        called = stub.bodies
    err = proc.stderr.decode().strip()
    assert proc.returncode == 2 and not called and not out.exists(), err
    assert err.count("\n") == 0 and "'loose' is not one of plan, free" in err


def test_execute_answers_tool_calls_and_no_faults_are_scheduled(tmp_path: Path) -> None:
    backend = tmp_path / "backend.py"
    backend.write_text(
        "def execute(name, arguments):\n"
        "    return {'status': 'ok', 'data': {'from': 'real backend', **arguments}}\n"
    )
    out = tmp_path / "rows.jsonl"
    with OpenAIStub(default=_chooser) as stub:
        proc = _simulate(stub, out, "--execute", f"{backend}:execute")
    assert proc.returncode == 0, proc.stderr.decode()
    for row in _rows(out):
        assert row["steps"][0]["result"]["data"]["from"] == "real backend"
        assert row["faults"] == {} and row["faults_fired"] == []


def test_a_spent_allowance_stops_the_run_with_its_reason(tmp_path: Path) -> None:
    spent = http_error(429, message="daily token allowance spent", code="insufficient_quota")
    with OpenAIStub(default=spent) as stub:
        proc = _simulate(stub, tmp_path / "rows.jsonl")
        assert stub.calls <= 4  # one refused call per in-flight opener, no retries
    assert proc.returncode == 1
    assert b"daily token allowance spent" in proc.stderr


def test_the_agents_read_timeout_is_a_flag_and_a_variable(tmp_path: Path) -> None:
    """A small model on a CPU server takes longer than the 60 s default per reply: the
    agent's read timeout is `--agent-timeout` or WHILEAI_AGENT_TIMEOUT (the flag wins), and
    the writer keeps its own. How often a failed call is retried is `--model-retries` or
    WHILEAI_MODEL_RETRIES, the same way round."""

    def slow(request: Request) -> Reply:
        if not request.body.get("tools"):
            return answer("Where is my order ORD-1234?")  # the writer: at once
        reply = answer("Which order is it? Please give me the order id.")
        reply.delay = 0.3  # slept in the request's own thread, so calls overlap
        return reply

    with OpenAIStub(default=slow) as stub:
        cut = run_cli("simulate", str(ORDERS_SPEC), "--agent", stub.base_url, "--model", "m",
                      "--budget", "8", "--concurrency", "16", "-o", str(tmp_path / "cut.jsonl"),
                      "--agent-timeout", "0.05", "--model-retries", "1",
                      env={"WHILEAI_AGENT_TIMEOUT": "30",
                           "WHILEAI_MODEL_RETRIES": "7"})  # fmt: skip
        assert cut.returncode == 1
        assert b"(timeout)" in cut.stderr and b"read timeout" in cut.stderr, cut.stderr
        # Every failed agent call was tried twice: once, and its one retry.
        counts = rb"model agent m: (\d+) calls .*?, (\d+) retries, (\d+) failed"
        agent = re.search(counts, cut.stderr)
        assert agent is not None, cut.stderr
        assert int(agent[2]) == int(agent[3]) > 0, agent[0]
        waited = run_cli("simulate", str(ORDERS_SPEC), "--agent", stub.base_url, "--model", "m",
                         "--budget", "2", "-o", str(tmp_path / "ok.jsonl"),
                         env={"WHILEAI_AGENT_TIMEOUT": "30",
                              "WHILEAI_MODEL_RETRIES": "0"})  # fmt: skip
    assert waited.returncode == 0, waited.stderr.decode()
    assert _rows(tmp_path / "ok.jsonl")
