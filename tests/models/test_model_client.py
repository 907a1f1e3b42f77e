"""The model client against the loopback stub: retries, Retry-After, stops, timeouts."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import pytest

from whileai_core.errors import ConfigError, WhileaiError
from whileai_core.models import (
    AllowanceExhausted,
    EndpointRefused,
    ModelCallError,
    ModelClient,
    parse_model_spec,
)
from whileai_core.models.client import parse_retry_after
from whileai_core.testing import (
    OpenAIStub,
    Reply,
    answer,
    disconnect,
    http_error,
    tool_calls,
)

MSGS = [{"role": "user", "content": "hi"}]


def _client(stub: OpenAIStub, **kwargs: Any) -> ModelClient:
    kwargs.setdefault("backoff", 0.01)
    kwargs.setdefault("retries", 3)
    return ModelClient(parse_model_spec(stub.base_url, model="m"), **kwargs)


def _run(client: ModelClient, *args: Any, **kwargs: Any) -> Any:
    async def go() -> Any:
        try:
            return await client.chat(*args, **kwargs)
        finally:
            await client.aclose()

    return asyncio.run(go())


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "VLLM_API_KEY", "OLLAMA_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("OPENAI_MODEL", raising=False)
    monkeypatch.delenv("WHILEAI_MODEL_API_KEY", raising=False)
    yield monkeypatch


def test_openai_spec_reads_key_and_base_url(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("OPENAI_API_KEY", "sk-test")
    clean_env.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1/")
    spec = parse_model_spec("openai:gpt-4.1-mini")
    assert (spec.model, spec.base_url, spec.api_key) == (
        "gpt-4.1-mini",
        "http://127.0.0.1:9/v1",
        "sk-test",
    )
    assert "sk-test" not in repr(spec)


def test_openai_spec_without_key_for_openai_is_a_config_error(
    clean_env: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        parse_model_spec("openai:gpt-4.1-mini")


def test_vllm_ollama_and_bare_url_specs(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("OPENAI_API_KEY", "sk-secret")
    vllm = parse_model_spec("vllm:Qwen/Qwen3-4B@http://gpu:8000/v1")
    assert (vllm.model, vllm.base_url) == ("Qwen/Qwen3-4B", "http://gpu:8000/v1")
    ollama = parse_model_spec("ollama:llama3.1")
    assert ollama.base_url == "http://localhost:11434/v1"
    bare = parse_model_spec("http://localhost:8080/v1/chat/completions", model="local")
    assert (bare.base_url, bare.model, bare.api_key) == ("http://localhost:8080/v1", "local", None)


@pytest.mark.parametrize(
    ("ref", "needle"),
    [
        ("http://localhost:8080/v1", "--model"),
        ("vllm:qwen", "vllm:MODEL@URL"),
        ("ollama:", "model name"),
        ("claude:opus", "expected openai:MODEL"),
        ("vllm:qwen@ftp://x", "not an http"),
    ],
)
def test_bad_model_specs_say_what_is_missing(
    clean_env: pytest.MonkeyPatch, ref: str, needle: str
) -> None:
    with pytest.raises(ConfigError, match=needle.replace(".", r"\.").replace("(", r"\(")):
        parse_model_spec(ref)


def test_chat_returns_message_usage_and_sends_sampling() -> None:
    with OpenAIStub([answer("hello there", usage=(12, 3))]) as stub:
        result = _run(_client(stub), MSGS, temperature=0.2, max_tokens=50, top_p=None)
        body = stub.bodies[0]
    assert result.text == "hello there"
    assert result.finish_reason == "stop"
    assert result.usage == {"input_tokens": 12, "output_tokens": 3}
    assert body["temperature"] == 0.2 and body["max_tokens"] == 50 and "top_p" not in body
    assert body["model"] == "m"


def test_parallel_tool_calls_come_back_in_the_wire_shape() -> None:
    reply = tool_calls([("get_order", {"order_id": "A1"}), ("get_order", {"order_id": "B2"})])
    with OpenAIStub([reply]) as stub:
        result = _run(_client(stub), MSGS, tools=[{"type": "function", "function": {"name": "x"}}])
        assert stub.bodies[0]["tools"]
    assert [c["function"]["name"] for c in result.tool_calls] == ["get_order", "get_order"]
    assert result.finish_reason == "tool_calls"


def test_logprobs_are_summed_and_kept_per_token() -> None:
    with OpenAIStub([answer("a b c", logprobs=[-0.5, -1.0, -0.25])]) as stub:
        result = _run(_client(stub), MSGS, logprobs=True)
        assert stub.bodies[0]["logprobs"] is True
    assert result.logprob == pytest.approx(-1.75)
    assert result.n_tokens == 3
    assert [t["token"] for t in result.tokens] == ["a", "b", "c"]


def test_429_with_retry_after_waits_then_succeeds() -> None:
    with OpenAIStub([http_error(429, retry_after=0.3), answer("ok")]) as stub:
        client = _client(stub, backoff=0.001)
        started = time.monotonic()
        result = _run(client, MSGS)
        elapsed = time.monotonic() - started
        assert stub.calls == 2
    assert result.text == "ok"
    assert elapsed >= 0.3  # the header's wait, not the 1 ms backoff
    assert client.stats.errors["http_429"] == 1 and client.stats.retries == 1
    assert client.stats.ok == 1 and client.stats.failed == 0


def test_500_then_success_is_retried_and_counted() -> None:
    with OpenAIStub([http_error(500), http_error(503), answer("fine")]) as stub:
        client = _client(stub)
        assert _run(client, MSGS).text == "fine"
        assert stub.calls == 3
    assert client.stats.errors == {"http_500": 1, "http_503": 1}


def test_connection_drop_is_retried() -> None:
    with OpenAIStub([disconnect(), answer("back")]) as stub:
        client = _client(stub)
        assert _run(client, MSGS).text == "back"
    assert client.stats.errors["connect"] == 1


def test_persistent_429_stops_the_run_with_its_reason() -> None:
    with OpenAIStub(default=http_error(429, message="slow down")) as stub:
        client = _client(stub, retries=2)
        with pytest.raises(AllowanceExhausted, match="slow down") as caught:
            _run(client, MSGS)
        assert stub.calls == 3
    assert isinstance(caught.value, WhileaiError)
    assert client.stats.stopped_because and "slow down" in client.stats.stopped_because


def test_allowance_spent_429_stops_at_once_and_trips_the_client() -> None:
    spent = http_error(429, message="daily allowance spent", code="insufficient_quota")

    async def two_calls(client: ModelClient) -> list[Any]:
        try:
            return await asyncio.gather(
                client.chat(MSGS), client.chat(MSGS), return_exceptions=True
            )
        finally:
            await client.aclose()

    with OpenAIStub(default=spent) as stub:
        client = _client(stub, retries=5, concurrency=1)
        outcomes = asyncio.run(two_calls(client))
        assert stub.calls == 1  # no retries burned, the second call never went out
    assert all(isinstance(o, AllowanceExhausted) for o in outcomes)
    assert "daily allowance spent" in str(outcomes[0])


def test_retry_after_beyond_the_limit_stops_instead_of_sleeping() -> None:
    with OpenAIStub(default=http_error(429, retry_after=3600)) as stub:
        client = _client(stub, max_retry_after=30)
        started = time.monotonic()
        with pytest.raises(AllowanceExhausted, match="3600"):
            _run(client, MSGS)
        assert time.monotonic() - started < 5 and stub.calls == 1


def test_wrong_key_is_refused_for_the_whole_run() -> None:
    with OpenAIStub(default=http_error(401, message="bad key")) as stub:
        client = _client(stub)
        with pytest.raises(EndpointRefused, match="401"):
            _run(client, MSGS)
        assert stub.calls == 1


def test_read_timeout_is_retried_then_reported_as_a_call_error() -> None:
    with OpenAIStub(default=answer("late", delay=0.5)) as stub:
        client = _client(stub, read_timeout=0.1, retries=1)
        with pytest.raises(ModelCallError) as caught:
            _run(client, MSGS)
        assert stub.calls == 2
    assert caught.value.kind == "timeout"
    assert client.stats.errors["timeout"] == 2 and client.stats.failed == 1


def test_a_400_is_not_retried() -> None:
    with OpenAIStub(default=http_error(400, message="context too long")) as stub:
        client = _client(stub)
        with pytest.raises(ModelCallError, match="context too long"):
            _run(client, MSGS)
        assert stub.calls == 1


def test_non_json_body_is_a_bad_response_after_retries() -> None:
    with OpenAIStub(default=Reply(raw=b"<html>oops</html>")) as stub:
        client = _client(stub, retries=1)
        with pytest.raises(ModelCallError) as caught:
            _run(client, MSGS)
    assert caught.value.kind == "bad_response"


def test_concurrency_is_bounded_by_the_semaphore() -> None:
    async def many(client: ModelClient) -> None:
        try:
            await asyncio.gather(*(client.chat(MSGS) for _ in range(8)))
        finally:
            await client.aclose()

    with OpenAIStub(default=answer("x", delay=0.2)) as stub:
        client = _client(stub, concurrency=4)
        started = time.monotonic()
        asyncio.run(many(client))
        elapsed = time.monotonic() - started
    assert 0.38 < elapsed < 1.5  # two waves of four, not one of eight


def test_retry_after_http_date() -> None:
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412470.0) == 10.0
    assert parse_retry_after("2.5") == 2.5
    assert parse_retry_after("soon") is None


def test_a_200_that_is_not_a_completion_is_counted_as_a_bad_response() -> None:
    with OpenAIStub(default=Reply(raw=b'{"object": "list"}')) as stub:
        client = _client(stub)
        with pytest.raises(ModelCallError, match="no choices"):
            _run(client, MSGS)
    assert client.stats.errors["bad_response"] == 1 and client.stats.failed == 1


def test_max_tokens_is_renamed_only_for_api_openai_com(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    openai = ModelClient(parse_model_spec("openai:gpt-4.1-mini"))
    assert openai.request_body(MSGS, None, max_tokens=9)["max_completion_tokens"] == 9
    local = ModelClient(parse_model_spec("http://127.0.0.1:9/v1", model="m"))
    assert local.request_body(MSGS, None, max_tokens=9)["max_tokens"] == 9
