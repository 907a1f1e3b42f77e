"""The model client's own HTTP/1.1 transport: keep-alive, framing, limits, timeouts.

The retry, Retry-After, stop and timeout behaviour of the client over this transport is
held by test_model_client.py (it runs on `Http1Pool` by default); these tests hold what
the transport itself must do: answer 1,024 concurrent calls with no errors, retries or
more connections than asked, reuse connections, read every way a server frames a body,
and turn a broken or silent server into the error kinds the client counts.
"""

from __future__ import annotations

import asyncio
import gzip
import resource
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

import pytest

from whileai_core.models import ModelCallError, ModelClient, parse_model_spec
from whileai_core.models.transport import (
    Http1Pool,
    HttpxTransport,
    Response,
    TransportError,
    ensure_fd_room,
    open_transport,
)
from whileai_core.settings import proxy_for
from whileai_core.testing import OpenAIStub, answer, free_port, http_error, start_fleet

MSGS = [{"role": "user", "content": "hi"}]
OK_BODY = b'{"choices": [{"message": {"role": "assistant", "content": "ok"}}]}'


def test_1024_concurrent_calls_without_errors_retries_or_extra_connections() -> None:
    async def go() -> tuple[ModelClient, Any, list[Any]]:
        stub = await start_fleet(answer("fine"), latency=0.3)
        client = ModelClient(parse_model_spec(stub.base_url, model="m"), concurrency=1024)
        try:
            results = await asyncio.gather(*(client.chat(MSGS) for _ in range(2048)))
            assert client._http is not None
            open_now = client._http.connections  # type: ignore[union-attr]
        finally:
            await client.aclose()
            await stub.aclose()
        assert open_now <= 1024
        return client, stub, results

    client, stub, results = asyncio.run(go())
    assert [r.text for r in results] == ["fine"] * 2048
    stats = client.stats
    assert stats.ok == 2048 and stats.failed == 0 and stats.retries == 0 and not stats.errors
    assert stats.requests == 2048 and stub.calls == 2048
    # Every call was in flight with 1,023 others at some point, each on its own
    # connection; the second wave of 1,024 reused them.
    assert 1024 >= stub.peak_connections > 512
    assert stub.accepted <= 1024


def test_ensure_fd_room_raises_the_soft_limit_for_the_pool() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 2048:
        pytest.skip("the hard open-file limit is below what the test needs")
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard))
        ensure_fd_room(1024)
        assert resource.getrlimit(resource.RLIMIT_NOFILE)[0] >= 1024 + 256
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_sequential_calls_reuse_one_connection() -> None:
    async def go() -> Any:
        stub = await start_fleet(answer("again"))
        client = ModelClient(parse_model_spec(stub.base_url, model="m"), concurrency=8)
        try:
            for _ in range(20):
                assert (await client.chat(MSGS)).text == "again"
        finally:
            await client.aclose()
            await stub.aclose()
        return stub

    stub = asyncio.run(go())
    assert stub.calls == 20 and stub.accepted == 1


def test_requests_carry_the_headers_and_body_the_server_expects() -> None:
    with OpenAIStub([answer("hello")]) as stub:
        spec = replace(parse_model_spec(stub.base_url, model="m"), api_key="sk-test")
        client = ModelClient(spec)
        port = stub.port

        async def go() -> Any:
            try:
                return await client.chat(MSGS, temperature=0.5)
            finally:
                await client.aclose()

        assert asyncio.run(go()).text == "hello"
        request = stub.requests[0]
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer sk-test"
    assert request.headers["content-type"] == "application/json"
    assert request.headers["host"] == f"127.0.0.1:{port}"
    assert request.body == {"model": "m", "messages": MSGS, "temperature": 0.5}


# -- a raw server, for the ways a response can be framed or broken --------------------


async def _raw_server(
    respond: Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]],
) -> tuple[asyncio.AbstractServer, str, list[int]]:
    """A loopback server whose handler writes bytes by hand; counts connections."""
    accepted: list[int] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.append(1)
        try:
            await respond(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    return server, f"http://127.0.0.1:{port}/v1", accepted


async def _read_request(reader: asyncio.StreamReader) -> bytes:
    head = await reader.readuntil(b"\r\n\r\n")
    length = 0
    for line in head.decode("latin-1").split("\r\n"):
        if line.lower().startswith("content-length:"):
            length = int(line.split(":", 1)[1])
    return await reader.readexactly(length)


def _pool(url: str, **kwargs: Any) -> Http1Pool:
    kwargs.setdefault("limit", 4)
    kwargs.setdefault("connect_timeout", 2.0)
    kwargs.setdefault("read_timeout", 2.0)
    return Http1Pool(url, {"Content-Type": "application/json"}, **kwargs)


def _serve_each(
    responses: list[bytes], *, keep_open: bool = True
) -> Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]:
    """Answer each request on a connection with the next canned response."""

    async def respond(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while responses:
            await _read_request(reader)
            payload = responses.pop(0)
            for i in range(0, len(payload), 7):  # in small pieces, as a slow network would
                writer.write(payload[i : i + 7])
                await writer.drain()
            if not keep_open:
                return

    return respond


def _post_all(url_respond: Any, calls: int, **pool_kwargs: Any) -> tuple[list[Any], int]:
    async def go() -> tuple[list[Any], int]:
        server, url, accepted = await _raw_server(url_respond)
        pool = _pool(url, **pool_kwargs)
        out: list[Any] = []
        try:
            for _ in range(calls):
                try:
                    out.append(await pool.post("/chat/completions", b"{}"))
                except TransportError as exc:
                    out.append(exc)
        finally:
            await pool.aclose()
            server.close()
        return out, len(accepted)

    return asyncio.run(go())


def test_chunked_gzip_and_content_length_bodies_on_one_connection() -> None:
    packed = gzip.compress(OK_BODY)
    chunked = b"".join(
        b"%x\r\n%s\r\n" % (len(OK_BODY[i : i + 10]), OK_BODY[i : i + 10])
        for i in range(0, len(OK_BODY), 10)
    )
    responses = [
        b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(OK_BODY), OK_BODY),
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n%s0\r\nX-Trailer: 1\r\n\r\n"
        % chunked,
        b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n%s"
        % (len(packed), packed),
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 429 Too Many\r\nRetry-After: 3\r\n"
        b"Content-Length: 2\r\n\r\n{}",
    ]
    out, connections = _post_all(_serve_each(responses), 4)
    assert all(isinstance(r, Response) for r in out)
    assert [r.body for r in out[:3]] == [OK_BODY] * 3
    assert (out[3].status, out[3].header("Retry-After"), out[3].reason) == (429, "3", "Too Many")
    assert connections == 1


def test_connection_close_and_read_until_close_are_not_reused() -> None:
    responses = [
        b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s"
        % (len(OK_BODY), OK_BODY),
        b"HTTP/1.0 200 OK\r\n\r\n%s" % OK_BODY,  # no length: the body ends when it closes
    ]
    out, connections = _post_all(_serve_each(responses, keep_open=False), 2)
    assert [r.body for r in out] == [OK_BODY, OK_BODY]
    assert connections == 2


@pytest.mark.parametrize(
    "payload",
    [
        b"NOT HTTP AT ALL\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"cut\":",  # then the server closes
    ],
)
def test_a_malformed_or_cut_response_is_a_connect_error(payload: bytes) -> None:
    out, _ = _post_all(_serve_each([payload], keep_open=False), 1)
    assert isinstance(out[0], TransportError) and out[0].kind == "connect"


def test_a_silent_server_is_a_read_timeout_and_a_trickle_is_not() -> None:
    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _read_request(reader)
        await asyncio.sleep(2)

    async def trickle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _read_request(reader)
        payload = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(OK_BODY), OK_BODY)
        for i in range(0, len(payload), 16):  # 0.1 s between pieces, 0.5 s in all
            writer.write(payload[i : i + 16])
            await writer.drain()
            await asyncio.sleep(0.1)

    out, _ = _post_all(silent, 1, read_timeout=0.3)
    assert isinstance(out[0], TransportError) and out[0].kind == "timeout"
    out, _ = _post_all(trickle, 1, read_timeout=0.3)
    assert isinstance(out[0], Response) and out[0].body == OK_BODY


def test_nothing_listening_is_a_connect_error_after_the_retries() -> None:
    client = ModelClient(
        parse_model_spec(f"http://127.0.0.1:{free_port()}/v1", model="m"), retries=2, backoff=0.01
    )

    async def go() -> Any:
        try:
            return await client.chat(MSGS)
        finally:
            await client.aclose()

    with pytest.raises(ModelCallError) as caught:
        asyncio.run(go())
    assert caught.value.kind == "connect"
    assert client.stats.errors["connect"] == 3 and client.stats.retries == 2


def test_the_pool_never_opens_more_than_its_limit() -> None:
    async def go() -> tuple[int, int]:
        stub = await start_fleet(answer("x"), latency=0.1)
        pool = Http1Pool(stub.base_url, {}, limit=3, connect_timeout=2, read_timeout=5)
        try:
            done = await asyncio.gather(*(pool.post("/chat/completions", b"{}") for _ in range(12)))
            assert all(r.status == 200 for r in done)
            return stub.peak_connections, stub.accepted
        finally:
            await pool.aclose()
            await stub.aclose()

    peak, accepted = asyncio.run(go())
    assert peak == 3 and accepted == 3


# -- a proxy in the environment goes through httpx -------------------------------------


def test_proxy_for_reads_the_environment_and_no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    assert proxy_for("https://api.example.com/v1") is None
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.internal:3128")
    assert proxy_for("https://api.example.com/v1") == "http://proxy.internal:3128"
    assert proxy_for("http://10.0.0.5:8000/v1") is None  # only https is proxied
    monkeypatch.setenv("NO_PROXY", "api.example.com")
    assert proxy_for("https://api.example.com/v1") is None
    limits = {"limit": 4, "connect_timeout": 1.0, "read_timeout": 1.0}
    assert isinstance(open_transport("http://127.0.0.1:9/v1", {}, **limits), Http1Pool)
    monkeypatch.setenv("ALL_PROXY", "http://proxy.internal:3128")
    proxied = open_transport("http://127.0.0.1:9/v1", {}, **limits)
    assert isinstance(proxied, HttpxTransport) and proxied.proxy == "http://proxy.internal:3128"


def test_the_httpx_transport_answers_like_the_pool() -> None:
    with OpenAIStub([answer("one"), http_error(503, retry_after=1)]) as stub:

        async def go() -> list[Response]:
            transport = HttpxTransport(
                stub.base_url, {}, proxy=None, limit=2, connect_timeout=2, read_timeout=2
            )
            try:
                return [await transport.post("/chat/completions", b"{}") for _ in range(2)]
            finally:
                await transport.aclose()

        first, second = asyncio.run(go())
    assert first.status == 200 and b'"one"' in first.body
    assert second.status == 503 and second.header("retry-after") == "1"


def test_the_client_runs_on_uvloop() -> None:
    uvloop = pytest.importorskip("uvloop")

    async def go() -> tuple[list[str], Any]:
        stub = await start_fleet(answer("looped"), latency=0.05)
        client = ModelClient(parse_model_spec(stub.base_url, model="m"), concurrency=64)
        try:
            results = await asyncio.gather(*(client.chat(MSGS) for _ in range(256)))
        finally:
            await client.aclose()
            await stub.aclose()
        assert "uvloop" in type(asyncio.get_running_loop()).__module__
        return [r.text for r in results], stub

    texts, stub = uvloop.run(go())
    assert texts == ["looped"] * 256 and stub.accepted <= 64
