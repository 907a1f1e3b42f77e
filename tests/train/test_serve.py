"""`serve-model`: a trained adapter behind an OpenAI-compatible /v1/chat/completions that
answers with tool calls, listed by `whileai models`, and played by `simulate --agent`.

The adapter is an SFT run that taught a tiny model to open every ask `simulate` will play
with one call, `get_order(ORD-1042)`: so the served model's answer is a real model's
tool call (written as Qwen's `<tool_call>` text and read back by the server), and the
world simulate runs answers it. Runs in the training side venv."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from whileai_core.spec import load_spec
from whileai_core.testing.server import free_port

from ..export.side import train_python
from ..helpers import run_cli
from .side import build_tiny, side_env, train, write_jsonl

TOOL = {"type": "function", "function": {
    "name": "get_order", "description": "Look up an order by its id.",
    "parameters": {"type": "object", "properties": {"order_id": {
        "type": "string", "description": "Order id such as ORD-1234."}},
        "required": ["order_id"]}}}  # fmt: skip
SPEC = {"name": "lookup", "agent": "seeded", "tools": [TOOL],
        "policy": "You are the support agent for an online store. Look orders up."}  # fmt: skip
CALL = {"role": "assistant", "content": "", "tool_calls": [{"type": "function", "function": {
    "name": "get_order", "arguments": {"order_id": "ORD-1042"}}}]}  # fmt: skip
PLAY = ("--budget", "3", "--reproducible", "--seed", "0", "--concurrency", "1")


def _rows(done: subprocess.CompletedProcess[bytes]) -> list[dict]:
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    return [json.loads(line) for line in done.stdout.splitlines()]


def _served(deadline: float) -> list[dict]:
    while time.monotonic() < deadline:
        listed = json.loads(run_cli("models", "--json").stdout)["models"]
        if listed:
            return list(listed)
        time.sleep(1)
    return []


def test_a_served_adapter_answers_with_a_tool_call_that_simulate_plays(tmp_path: Path) -> None:
    python = train_python()
    spec_file = tmp_path / "lookup.json"
    spec_file.write_text(json.dumps(SPEC))
    spec = load_spec(spec_file)
    # The asks simulate plays with this seed (the built-in seeded agent shows them).
    asks = [row["messages"][1]["content"] for row in _rows(run_cli("simulate", str(spec_file),
                                                                     *PLAY))]  # fmt: skip
    lines = [{"messages": [{"role": "system", "content": spec.policy},
                           {"role": "user", "content": ask}, CALL],
              "tools": spec.openai_tools()} for ask in asks] * 2  # fmt: skip
    data = write_jsonl(tmp_path / "sft.jsonl", lines)
    tiny = build_tiny(tmp_path / "tiny", data, spec_file, hidden=64)
    record = train(str(data), "--method", "sft", "--base-model", str(tiny), "--steps", "60",
                   "--batch-size", "4", "--learning-rate", "0.03", "--max-length", "512",
                   "--holdout", "none")  # fmt: skip
    port = free_port()
    server = subprocess.Popen(
        [str(python), "-m", "whileai_cli", "serve-model", record["runId"], "--port", str(port),
         "--max-tokens", "48"],
        env=side_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        listed = _served(time.monotonic() + 120)
        assert [m["url"] for m in listed] == [f"http://127.0.0.1:{port}/v1"], server.poll()
        assert listed[0]["run"] == record["runId"] and listed[0]["method"] == "sft"
        name = listed[0]["name"]
        # One chat completion: the model's call comes back as an OpenAI tool call.
        answer = httpx.post(f"http://127.0.0.1:{port}/v1/chat/completions", timeout=60, json={
            "model": name, "tools": spec.openai_tools(),
            "messages": [{"role": "system", "content": spec.policy},
                         {"role": "user", "content": asks[0]}]}).json()  # fmt: skip
        choice = answer["choices"][0]
        assert choice["finish_reason"] == "tool_calls"
        [call] = choice["message"]["tool_calls"]
        assert call["function"]["name"] == "get_order"
        assert json.loads(call["function"]["arguments"]) == {"order_id": "ORD-1042"}
        assert answer["usage"]["completion_tokens"] > 0
        # simulate --agent plays the served model: its calls run against the world.
        rows = _rows(run_cli("simulate", str(spec_file), *PLAY, "--agent",
                             f"http://127.0.0.1:{port}/v1", "--model", name,
                             "--max-tokens", "48", timeout=300))  # fmt: skip
        assert len(rows) == 3
        for row in rows:
            first = row["steps"][0]
            assert first["tool"] == "get_order" and first["arguments"] == {"order_id": "ORD-1042"}
            assert isinstance(first["result"], dict)
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)
    # A server that stopped is no longer listed.
    assert json.loads(run_cli("models", "--json").stdout)["models"] == []


def test_a_bad_chat_request_is_a_400_before_any_token(tmp_path: Path) -> None:
    """The request checks run before the model: a server with no model answers them."""
    from whileai_core.train.serve import ModelServer

    with ModelServer(None, None, name="none") as server:
        url = server.base_url
        assert httpx.get(f"{url}/models").json()["data"][0]["id"] == "none"
        for body, word in (({"messages": []}, "messages"), ({"messages": [{"role": "x"}]}, "role"),
                           ({"messages": [{"role": "user", "content": "hi"}], "n": 99}, "n must"),
                           ({"messages": [{"role": "user", "content": "hi"}],
                             "max_tokens": 0}, "max_tokens")):  # fmt: skip
            reply = httpx.post(f"{url}/chat/completions", json=body)
            assert reply.status_code == 400 and word in reply.json()["error"]["message"]
        bad = httpx.post(f"{url}/chat/completions", content=b"{not json",
                         headers={"Content-Type": "application/json"})  # fmt: skip
        assert bad.status_code == 400 and server.requests == 0


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
