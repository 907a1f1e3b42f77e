"""`whileai simulate` end to end with model backends on the loopback stub (real subprocess)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from whileai_core.spec import load_spec
from whileai_core.testing import OpenAIStub, Reply, Request, answer, http_error, tool_call

from ..helpers import ORDERS_SPEC, run_cli


def _chooser(request: Request) -> Reply:
    """Agent requests (they carry tools) look the order up, then answer; writer requests get
    an opener that differs per situation (so none is a near-duplicate), users say DONE."""
    body = request.body if isinstance(request.body, dict) else {}
    messages = body.get("messages") or [{}]
    if not body.get("tools"):
        if any(m.get("role") == "assistant" for m in messages):
            return answer("DONE")
        digest = hashlib.sha256(messages[0]["content"].encode()).hexdigest()[:6]
        return answer(f"hi, order ORD-{digest} looks wrong, can you check it?")
    if messages[-1].get("role") == "tool":
        return answer("I checked it: here is what I found.", logprobs=[-0.5] * 8)
    return tool_call("get_order", {"order_id": "ORD-77"}, usage=(30, 7))


def _simulate(stub: OpenAIStub, out: Path, *extra: str) -> Any:
    return run_cli(
        "simulate", str(ORDERS_SPEC), "--agent", stub.base_url, "--model", "m",
        "--writer", stub.base_url, "--budget", "4", "--concurrency", "4",
        "-o", str(out), "--report", str(out) + ".report.json", *extra,
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
        assert row["prompt"].startswith("hi, order ORD-")
    assert run_cli("validate", str(out)).returncode == 0
    report = json.loads(Path(str(out) + ".report.json").read_text())
    assert report["models"]["m"]["failed"] == 0 and report["models"]["m"]["calls"] == len(bodies)
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
    assert report["models"]["m"]["cache_hits"] == paid
    strip = [
        {k: v for k, v in r.items() if k != "selection_reason"} for r in _rows(tmp_path / "a.jsonl")
    ]
    again = [
        {k: v for k, v in r.items() if k != "selection_reason"} for r in _rows(tmp_path / "b.jsonl")
    ]
    assert strip == again


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
