"""Traces from today's GenAI instrumentation, produced by the real packages, into training
data: an OpenAI SDK client pointed at the loopback stub, each instrumentation exporting
OTLP/HTTP to a real `whileai serve` process (spans to /v1/traces, log events to
/v1/logs), then `score` -> `cut` -> `pull` -> `export --format trl`, and the file loaded
with `datasets` the way TRL loads it.

Each shape runs in a process of its own (an instrumentor patches the SDK process-wide).
The openai-v2, OpenInference and OpenLLMetry 0.62 packages share the test venv; OpenLLMetry's
flattened `gen_ai.prompt.N.*` shape is its 0.53 release, which `make` lays over the venv
in side/openllmetry (the two releases are one module name and cannot both be installed).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from whileai_core.testing import OpenAIStub, Request, answer, serve_process, tool_call

from ..helpers import REPO, run_cli
from .genai_agent import ASK, SYSTEM, TOOLS

DRIVER = Path(__file__).with_name("genai_agent.py")
OVERLAY = REPO / "side" / "openllmetry" / "lib"
FINAL = "Your order ORD-1042 has shipped."


def _policy(request: Request) -> Any:
    """Look the order up, then say what the tool said."""
    messages = (request.body or {}).get("messages") or []
    if messages and messages[-1].get("role") == "tool":
        return answer(FINAL)
    return tool_call("get_order", {"order_id": "ORD-1042"})


@pytest.fixture(scope="module")
def platform(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """A `whileai serve` process and an account on it, as the CLI's environment."""
    data = tmp_path_factory.mktemp("serve")
    with serve_process(data) as (_, url):
        key = httpx.post(f"{url}/signup", json={"email": "otel@example.com"}).json()["api_key"]
        yield {"WHILEAI_API_URL": url, "WHILEAI_API_KEY": key}


def _run_agent(shape: str, env: dict[str, str], agent: str, runs: int) -> list[str]:
    extra: dict[str, str] = {}
    if shape == "openllmetry-flat":
        if not (OVERLAY / "opentelemetry" / "instrumentation" / "openai").is_dir():
            pytest.skip("OpenLLMetry 0.53 is not laid out: run `make side/openllmetry/.installed`")
        extra["PYTHONPATH"] = os.pathsep.join([str(OVERLAY), str(REPO)])
    with OpenAIStub(default=_policy) as stub:
        done = subprocess.run(
            [sys.executable, str(DRIVER), shape, stub.base_url, env["WHILEAI_API_URL"],
             env["WHILEAI_API_KEY"], agent, str(runs)],
            capture_output=True, timeout=120, env={**os.environ, **extra},
        )  # fmt: skip
        assert done.returncode == 0, done.stderr.decode()[-3000:]
        assert stub.calls == 2 * runs  # a tool call, then the answer, per run
        assert all(body.get("tools") == TOOLS for body in stub.bodies)
    return done.stdout.decode().split()


def _agents_page(env: dict[str, str]) -> str:
    """The dashboard's agents page, signed in with the account's key as a browser is."""
    with httpx.Client(base_url=env["WHILEAI_API_URL"], timeout=30) as browser:
        form = browser.get("/ui/signin").text
        csrf = form.split("name='csrf' value='")[1].split("'")[0]
        browser.post("/ui/signin", data={"api_key": env["WHILEAI_API_KEY"], "csrf": csrf})
        page = browser.get("/ui/agents")
        assert page.status_code == 200
        return page.text


def _ok(*args: str, env: dict[str, str]) -> str:
    proc = run_cli(*args, env=env)
    assert proc.returncode == 0, proc.stderr.decode()[-3000:]
    return proc.stdout.decode()


# shape -> whether its traces carry the tool schemas (openai-v2 records none)
SHAPES = {
    "openai-v2-spans": False,
    "openai-v2-events": False,
    "openllmetry": True,
    "openllmetry-events": False,
    "openllmetry-flat": True,
    "openinference": True,
}


@pytest.mark.parametrize("shape", list(SHAPES))
def test_real_instrumentation_traces_become_samples_trl_loads(
    shape: str, platform: dict[str, str], tmp_path: Path
) -> None:
    agent = f"orders-{shape}"
    trace_ids = _run_agent(shape, platform, agent, runs=2)
    assert len(set(trace_ids)) == 2
    listed = json.loads(_ok("traces", "list", "--agent", agent, "--json", env=platform))
    rows = {r["trace_id"]: r for r in listed["traces"]}
    assert set(rows) == set(trace_ids)
    for row in rows.values():
        # The whole conversation: the system prompt, the ask, the call and its result, the
        # answer; the step and the final text read off it; tokens counted once per call.
        messages = row["messages"]
        assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool",
                                                 "assistant"]  # fmt: skip
        assert messages[0]["content"] == SYSTEM and messages[1]["content"] == ASK
        [call] = messages[2]["tool_calls"]
        assert call["function"]["name"] == "get_order"
        assert json.loads(call["function"]["arguments"]) == {"order_id": "ORD-1042"}
        assert messages[3]["tool_call_id"] == call["id"]
        assert json.loads(messages[3]["content"]) == {"order_id": "ORD-1042", "status": "shipped"}
        assert row["prompt"] == ASK and row["final_text"] == FINAL
        shipped = {"order_id": "ORD-1042", "status": "shipped"}
        assert row["steps"] == [{"tool": "get_order", "arguments": {"order_id": "ORD-1042"},
                                 "result": shipped}]  # fmt: skip
        assert row["usage"] == {"input_tokens": 20, "output_tokens": 10}
        assert row["agent"] == agent
        assert (row.get("tools") == TOOLS) is SHAPES[shape]
    # The agent's record shows what its traces carried.
    agents = httpx.get(
        f"{platform['WHILEAI_API_URL']}/agents",
        headers={"X-Api-Key": platform["WHILEAI_API_KEY"]},
    ).json()["agents"]
    record = next(a for a in agents if a["slug"] == agent)
    assert record["system_prompt"] == SYSTEM
    assert (record.get("tools") == TOOLS) is SHAPES[shape]
    page = _agents_page(platform)
    mine = page.split(f"id='agent-{agent}'")[1].split("</article>")[0]
    assert "<h3>System prompt</h3>" in mine and SYSTEM.split(".")[0] in mine
    assert ("<code>get_order</code>" in mine) is SHAPES[shape]
    # One run passed, one failed: the prompt sits in the RL band; score -> cut -> export.
    _ok("score", trace_ids[0], "1", env=platform)
    _ok("score", trace_ids[1], "0", env=platform)
    made = json.loads(_ok("cut", "--agent", agent, "--kind", "rl", "--holdout", "0", "--json",
                          env=platform))  # fmt: skip
    assert made["report"]["keptRuns"] == 2
    pulled, trl = tmp_path / "cut.jsonl", tmp_path / "train.trl.jsonl"
    _ok("pull", made["train"]["datasetId"], "-o", str(pulled), env=platform)
    _ok("export", str(pulled), "--format", "trl", "-o", str(trl), env=platform)
    from datasets import load_dataset

    loaded = load_dataset("json", data_files=str(trl), split="train")
    assert loaded.num_rows == 1  # the failed run is below SFT's pass line
    sample = loaded[0]
    assert [m["role"] for m in sample["messages"]] == ["system", "user", "assistant", "tool",
                                                       "assistant"]  # fmt: skip
    assert sample["messages"][-1]["content"] == FINAL
    assert sample["messages"][2]["tool_calls"][0]["function"]["arguments"] == {
        "order_id": "ORD-1042"
    }
    if SHAPES[shape]:
        assert [t["function"]["name"] for t in sample["tools"]] == ["get_order"]


# --- shapes no installed package sends any more, made with the OpenTelemetry SDK ----------


def _sdk_spans(build: Any) -> list[dict[str, Any]]:
    """Spans `build(tracer)` makes, through the SDK's own OTLP encoder and our decoder."""
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from whileai_core.otlp.decode import decode_request

    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    build(provider.get_tracer("agent"))
    body = encode_spans(memory.get_finished_spans()).SerializeToString()
    return decode_request(body, "application/x-protobuf")


def test_per_message_span_events_and_the_old_token_names() -> None:
    """The older conventions as span events (content in the event's attributes), with
    `gen_ai.usage.prompt_tokens` / `completion_tokens`."""
    from whileai_core.otlp.decode import trace_row

    def build(tracer: Any) -> None:
        with tracer.start_as_current_span("chat m") as span:
            span.set_attribute("gen_ai.usage.prompt_tokens", 31)
            span.set_attribute("gen_ai.usage.completion_tokens", 7)
            span.add_event("gen_ai.system.message", {"content": SYSTEM})
            span.add_event("gen_ai.user.message", {"content": ASK})
            calls = [{"id": "c1", "type": "function",
                      "function": {"name": "get_order", "arguments": '{"order_id": "ORD-1042"}'}}]
            span.add_event("gen_ai.assistant.message", {"tool_calls": json.dumps(calls)})
            span.add_event("gen_ai.tool.message", {"content": '{"status": "shipped"}', "id": "c1"})
            message = json.dumps({"content": FINAL})
            choice = {"index": 0, "finish_reason": "stop", "message": message}
            span.add_event("gen_ai.choice", choice)

    row = trace_row(_sdk_spans(build))
    assert [m["role"] for m in row["messages"]] == ["system", "user", "assistant", "tool",
                                                    "assistant"]  # fmt: skip
    assert row["messages"][3]["tool_call_id"] == "c1"
    assert row["prompt"] == ASK and row["final_text"] == FINAL
    assert row["steps"] == [{"tool": "get_order", "arguments": {"order_id": "ORD-1042"},
                             "result": {"status": "shipped"}}]  # fmt: skip
    assert row["usage"] == {"input_tokens": 31, "output_tokens": 7}


def test_a_json_message_list_in_gen_ai_prompt_is_messages_not_one_user_string() -> None:
    from whileai_core.otlp.decode import trace_row

    prompt = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": ASK}]
    completion = [{"role": "assistant", "content": FINAL}]

    def build(tracer: Any) -> None:
        with tracer.start_as_current_span("chat m") as span:
            span.set_attribute("gen_ai.prompt", json.dumps(prompt))
            span.set_attribute("gen_ai.completion", json.dumps(completion))
            span.set_attribute("gen_ai.system_instructions", json.dumps(
                [{"type": "text", "content": SYSTEM}]))  # fmt: skip

    row = trace_row(_sdk_spans(build))
    assert row["messages"] == [*prompt, *completion]
    assert row["prompt"] == ASK and row["final_text"] == FINAL


def test_logs_arrive_as_otlp_json_and_join_the_span_they_name(
    platform: dict[str, str], tmp_path: Path
) -> None:
    """The per-message log events in OTLP JSON (the SDK's records through its own encoder
    and protobuf's JSON mapping): joined to their span whichever arrives first; a record
    outside any trace is counted, not kept."""
    from google.protobuf.json_format import MessageToDict
    from opentelemetry._logs import LogRecord
    from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor

    memory = InMemoryLogRecordExporter()
    logs = LoggerProvider()
    logs.add_log_record_processor(SimpleLogRecordProcessor(memory))
    logger = logs.get_logger("agent")
    agent = "orders-json-logs"
    spans: list[Any] = []

    def build(tracer: Any) -> None:
        with tracer.start_as_current_span("invoke_agent") as root:
            root.set_attribute("gen_ai.agent.name", agent)
            with tracer.start_as_current_span("chat stub") as chat:
                chat.set_attribute("gen_ai.usage.input_tokens", 12)
                context = chat.get_span_context()
                said = [("gen_ai.system.message", {"content": SYSTEM}),
                        ("gen_ai.user.message", {"content": ASK}),
                        ("gen_ai.choice", {"index": 0, "finish_reason": "stop", "message": {
                            "role": "assistant", "content": FINAL}})]  # fmt: skip
                for n, (name, body) in enumerate(said):
                    logger.emit(LogRecord(timestamp=1000 + n, trace_id=context.trace_id,
                                          span_id=context.span_id, trace_flags=context.trace_flags,
                                          event_name=name, body=body))  # fmt: skip
        spans.append(root.get_span_context().trace_id)

    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    span_memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(span_memory))
    build(provider.get_tracer("agent"))
    logger.emit(LogRecord(timestamp=5, event_name="gen_ai.user.message", body={"content": "x"}))
    as_json = MessageToDict(encode_logs(memory.get_finished_logs()))
    url, key = platform["WHILEAI_API_URL"], platform["WHILEAI_API_KEY"]
    sent = httpx.post(f"{url}/v1/logs", json=as_json, headers={"X-Api-Key": key})
    assert sent.status_code == 200, sent.text
    assert sent.json()["accepted"] == 3 and sent.json()["unjoined"] == 1
    body = encode_spans(span_memory.get_finished_spans()).SerializeToString()
    protobuf = {"X-Api-Key": key, "Content-Type": "application/x-protobuf"}
    traced = httpx.post(f"{url}/v1/traces", content=body, headers=protobuf)
    assert traced.status_code == 200
    [row] = json.loads(_ok("traces", "list", "--agent", agent, "--json", env=platform))["traces"]
    assert row["trace_id"] == format(spans[0], "032x")
    assert [m["role"] for m in row["messages"]] == ["system", "user", "assistant"]
    assert row["final_text"] == FINAL and row["usage"]["input_tokens"] == 12
