"""A scripted OpenAI-compatible chat-completions server on a loopback port.

Standard library only, so it starts in milliseconds inside a test and needs nothing the
toolkit does not already depend on. HTTP/1.1 with keep-alive, one thread per connection,
so a client holding 64 pooled connections sees 64 calls served at once.

    with OpenAIStub(script=[tool_call("get_order", {"order_id": "A1"}), answer("Shipped.")]) as s:
        spec = parse_model_spec(s.base_url, model="m")
        ...
        assert s.calls == 2

Each POST to `.../chat/completions` takes the next item of `script`; once the script is
used up, `default` answers (a plain "ok." unless given). A script item is a `Reply`, a
string (a plain answer), a dict (the assistant message itself), or a callable that gets
the `Request` and returns any of those — that is how a reply is chosen from the request.
Every request is recorded (`stub.requests`, `stub.bodies`) and counted (`stub.calls`),
including the ones answered with an error, so a test can prove a cache hit paid nothing.

The stub also scores text as a reference model does (`scoring.py`): `/completions` with
`echo` + `logprobs` or vLLM's `prompt_logprobs`, and `prompt_logprobs` on chat
completions, under a tokenizer and a per-token logprob rule (`token_logprob=`) a test can
apply by hand. `/completions` calls are counted in `stub.completions`, not `stub.calls`.

POST `.../embeddings` answers like the OpenAI embeddings API: one vector per input, from
`embed` when given (a callable text -> list of floats), else `hashed_embedding`, a
deterministic 256-dimensional bag of words and word pairs, so texts with the same words
get the same vector and near copies a cosine near 1. `stub.embedding_calls` counts them;
`embed_error` (a `Reply` with a non-200 status) makes every embeddings call fail.

`adversarial_person(mode)` plays a whole simulated run whose person misbehaves (parrots
its input, answers as the assistant, or stops at once): the voice check's test bench.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Union, cast

from .scoring import TokenLogprob, chat_prompt_fields, completion_body, default_token_logprob


@dataclass
class Request:
    """One request the stub received, as the test wants to look at it."""

    index: int
    method: str
    path: str
    headers: dict[str, str]
    body: Any  # the parsed JSON body, or None when it was not JSON


@dataclass
class Reply:
    """One scripted response.

    `status` other than 200 sends an OpenAI-style error body (`error_message`,
    `error_code`) unless `raw` is given; `headers` adds response headers (e.g.
    Retry-After); `delay` sleeps before answering (on top of the stub's `latency`), which
    is how a read timeout is provoked; `raw` sends these exact bytes as the body (a
    malformed response); `close` drops the connection without answering (a connection
    error). `logprobs` gives the per-token logprobs of the content; when left None and the
    request asked for logprobs, the stub makes one token per word at -0.25 each.
    """

    message: dict[str, Any] = field(default_factory=lambda: {"role": "assistant", "content": ""})
    finish_reason: str = "stop"
    status: int = 200
    usage: tuple[int, int] | None = (10, 5)
    delay: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)
    raw: bytes | None = None
    close: bool = False
    logprobs: list[float] | None = None
    error_message: str = "scripted error"
    error_code: str | None = None


ScriptItem = Union[Reply, str, dict[str, Any], Callable[[Request], Any]]  # noqa: UP007


def answer(
    text: str,
    *,
    finish_reason: str = "stop",
    usage: tuple[int, int] | None = (10, 5),
    delay: float = 0.0,
    logprobs: list[float] | None = None,
) -> Reply:
    """A plain assistant answer with no tool calls."""
    return Reply(
        message={"role": "assistant", "content": text},
        finish_reason=finish_reason,
        usage=usage,
        delay=delay,
        logprobs=logprobs,
    )


def tool_calls(
    calls: Iterable[tuple[str, dict[str, Any] | str]],
    *,
    content: str | None = None,
    finish_reason: str = "tool_calls",
    usage: tuple[int, int] | None = (10, 5),
    delay: float = 0.0,
) -> Reply:
    """One assistant turn calling several tools at once (parallel tool calls).

    Arguments given as a string are sent verbatim, so a test can send malformed JSON.
    """
    wire = []
    for i, (name, args) in enumerate(calls):
        arguments = args if isinstance(args, str) else json.dumps(args)
        wire.append(
            {
                "id": f"call_{i}",
                "type": "function",
                "function": {"name": name, "arguments": arguments},
            }
        )
    return Reply(
        message={"role": "assistant", "content": content, "tool_calls": wire},
        finish_reason=finish_reason,
        usage=usage,
        delay=delay,
    )


def tool_call(name: str, arguments: dict[str, Any], **kwargs: Any) -> Reply:
    """One assistant turn calling one tool."""
    return tool_calls([(name, arguments)], **kwargs)


def raw_tool_call(name: str, arguments: str, **kwargs: Any) -> Reply:
    """A tool call whose `arguments` string is sent exactly as given (e.g. broken JSON)."""
    return tool_calls([(name, arguments)], **kwargs)


def http_error(
    status: int,
    *,
    retry_after: float | str | None = None,
    message: str = "scripted error",
    code: str | None = None,
    delay: float = 0.0,
) -> Reply:
    """An HTTP error with an OpenAI-style error body and an optional Retry-After header."""
    headers = {} if retry_after is None else {"Retry-After": str(retry_after)}
    return Reply(
        status=status,
        headers=headers,
        error_message=message,
        error_code=code,
        delay=delay,
        usage=None,
    )


def disconnect(*, delay: float = 0.0) -> Reply:
    """Close the connection without a response: the client sees a connection error."""
    return Reply(close=True, delay=delay)


class _Server(ThreadingHTTPServer):
    # The listen backlog is fixed when the socket binds; the default (5) resets connections
    # when 64 clients open theirs at once.
    request_queue_size = 512
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that gave up (a read timeout under test) closes its end mid-reply;
        # that is the scenario working, not a stub failure worth a traceback.
        import sys

        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)


class OpenAIStub:
    """The server. Use as a context manager (or `start()`/`stop()`); `base_url` ends in /v1."""

    def __init__(
        self,
        script: Iterable[ScriptItem] = (),
        *,
        default: ScriptItem | None = None,
        latency: float = 0.0,
        model: str = "stub-model",
        host: str = "127.0.0.1",
        token_logprob: TokenLogprob | None = None,
        embed: Callable[[str], list[float]] | None = None,
        embed_error: Reply | None = None,
    ) -> None:
        self._script: list[ScriptItem] = list(script)
        self._default: ScriptItem = default if default is not None else answer("ok.")
        self.latency = latency
        self.model = model
        self._host = host
        self._lock = threading.Lock()
        self.requests: list[Request] = []
        self.calls = 0
        self.completions = 0
        self.token_logprob: TokenLogprob = token_logprob or default_token_logprob
        self.embed = embed or hashed_embedding
        self.embed_error = embed_error
        self.embedding_calls = 0
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------

    def start(self) -> OpenAIStub:
        stub = self

        class _Handler(_StubHandler):
            owner = stub

        server = _Server((self._host, 0), _Handler)
        self._server = server
        # A short poll interval: `stop()` waits up to one interval, and tests stop a lot.
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> OpenAIStub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("the stub is not running; use it as a context manager")
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://{self._host}:{self.port}/v1"

    # -- script ----------------------------------------------------------------------

    def push(self, *items: ScriptItem) -> None:
        """Append replies to the script while the server runs."""
        with self._lock:
            self._script.extend(items)

    @property
    def bodies(self) -> list[Any]:
        """The JSON bodies of the chat-completion requests received, in order."""
        with self._lock:
            return [r.body for r in self.requests if r.path.endswith("/chat/completions")]

    def _next(self, request: Request) -> Reply:
        with self._lock:
            item = self._script.pop(0) if self._script else self._default
        return _as_reply(item, request)


def _as_reply(item: Any, request: Request) -> Reply:
    if callable(item) and not isinstance(item, Reply):
        item = item(request)
    if isinstance(item, Reply):
        return item
    if isinstance(item, str):
        return answer(item)
    if isinstance(item, dict):
        finish = "tool_calls" if item.get("tool_calls") else "stop"
        return Reply(message={"role": "assistant", **item}, finish_reason=finish)
    if item is None:
        return answer("ok.")
    raise TypeError(f"stub script item of unsupported type {type(item).__name__}")


def _completion(
    reply: Reply, request: Request, model: str, rule: TokenLogprob = default_token_logprob
) -> dict[str, Any]:
    choice: dict[str, Any] = {
        "index": 0,
        "message": reply.message,
        "finish_reason": reply.finish_reason,
    }
    body = request.body if isinstance(request.body, dict) else {}
    if body.get("logprobs"):
        content = reply.message.get("content") or ""
        words = content.split()
        values = reply.logprobs if reply.logprobs is not None else [-0.25] * len(words)
        tokens = [words[i] if i < len(words) else f"t{i}" for i in range(len(values))]
        choice["logprobs"] = {
            "content": [
                {"token": t, "logprob": lp, "bytes": list(t.encode()), "top_logprobs": []}
                for t, lp in zip(tokens, values, strict=True)
            ]
        }
    out: dict[str, Any] = {
        "id": f"chatcmpl-stub-{request.index}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model") or model,
        "choices": [choice],
    }
    if reply.usage is not None:
        prompt, completion = reply.usage
        out["usage"] = {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }
    if "prompt_logprobs" in body or "add_generation_prompt" in body:  # vLLM's chat extras
        fields = chat_prompt_fields(body, rule)
        out.setdefault("usage", {"completion_tokens": 0})["prompt_tokens"] = fields.pop(
            "prompt_tokens"
        )
        out.update(fields)
    return out


class _StubHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in separate writes; with Nagle on, the body waits for the
    # client's delayed ACK (~40 ms on Linux) and every call looks 40 ms slower than it is.
    disable_nagle_algorithm = True
    owner: OpenAIStub

    def log_message(self, format: str, *args: Any) -> None:  # quiet: tests read stderr
        return

    def _read_body(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        data = self.rfile.read(length) if length else b""
        try:
            return json.loads(data) if data else None
        except ValueError:
            return None

    def _send(self, status: int, payload: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(payload)

    def _record(self, method: str) -> Request:
        stub = self.owner
        body = self._read_body() if method == "POST" else None
        with stub._lock:
            request = Request(
                index=len(stub.requests),
                method=method,
                path=self.path,
                headers={k.lower(): v for k, v in self.headers.items()},
                body=body,
            )
            stub.requests.append(request)
        return request

    def do_GET(self) -> None:
        request = self._record("GET")
        if request.path.rstrip("/").endswith("/models"):
            data = {"object": "list", "data": [{"id": self.owner.model, "object": "model"}]}
            self._send(200, json.dumps(data).encode())
        else:
            self._send(404, b'{"error": {"message": "no such route"}}')

    def _embeddings(self, request: Request) -> None:
        stub = self.owner
        with stub._lock:
            stub.embedding_calls += 1
        error = stub.embed_error
        if error is not None:
            body = {"error": {"message": error.error_message, "type": "stub_error"}}
            self._send(error.status, json.dumps(body).encode(), error.headers)
            return
        body = request.body if isinstance(request.body, dict) else {}
        texts = body.get("input")
        texts = [texts] if isinstance(texts, str) else texts
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            self._send(400, b'{"error": {"message": "input must be a string or strings"}}')
            return
        data = [{"object": "embedding", "index": i, "embedding": stub.embed(t)}
                for i, t in enumerate(texts)]  # fmt: skip
        words = sum(len(t.split()) for t in texts)
        payload = {"object": "list", "data": data, "model": body.get("model") or stub.model,
                   "usage": {"prompt_tokens": words, "total_tokens": words}}  # fmt: skip
        self._send(200, json.dumps(payload).encode())

    def do_POST(self) -> None:
        stub = self.owner
        request = self._record("POST")
        path = request.path.rstrip("/")
        if path.endswith("/embeddings"):
            self._embeddings(request)
            return
        if path.endswith("/completions") and not path.endswith("/chat/completions"):
            with stub._lock:
                stub.completions += 1
            body = request.body if isinstance(request.body, dict) else {}
            if stub.latency > 0:
                time.sleep(stub.latency)
            scored = completion_body(body, stub.model, stub.token_logprob)
            self._send(200, json.dumps(scored).encode())
            return
        if not path.endswith("/chat/completions"):
            self._send(404, b'{"error": {"message": "no such route"}}')
            return
        with stub._lock:
            stub.calls += 1
        try:
            reply = stub._next(request)
        except Exception as exc:  # a broken script callable: say so in the response
            self._send(500, json.dumps({"error": {"message": f"stub script: {exc}"}}).encode())
            return
        wait = stub.latency + reply.delay
        if wait > 0:
            time.sleep(wait)
        if reply.close:
            self.close_connection = True
            self.connection.close()
            return
        if reply.raw is not None:
            self._send(reply.status, reply.raw, reply.headers)
        elif reply.status != 200:
            error = {
                "error": {
                    "message": reply.error_message,
                    "type": "stub_error",
                    "code": reply.error_code,
                }
            }
            self._send(reply.status, json.dumps(error).encode(), reply.headers)
        else:
            payload = json.dumps(
                _completion(reply, request, stub.model, stub.token_logprob)
            ).encode()
            self._send(200, payload, reply.headers)


def hashed_embedding(text: str, dim: int = 256) -> list[float]:
    """A deterministic unit vector from a text's words and word pairs (signed hashing)."""
    import itertools
    import re
    import zlib

    words = re.findall(r"[a-z0-9]+", text.lower())
    vector = [0.0] * dim
    for gram in [*words, *(" ".join(p) for p in itertools.pairwise(words))]:
        h = zlib.crc32(gram.encode())
        vector[h % dim] += 1.0 if (h >> 16) & 1 else -1.0
    norm = sum(v * v for v in vector) ** 0.5 or 1.0
    return [v / norm for v in vector]


def tool_then_answer(
    tool: str, arguments: dict[str, Any], *, user_line: str = "Can you check order A1 for me?"
) -> Callable[[Request], Reply]:
    """A reply chooser for a whole simulated run on one stub.

    A request that offers tools is the agent: it calls `tool` unless the last message is
    a tool result, then answers. A request without tools is the writer or the simulated
    user: it gets `user_line`, or DONE when the conversation already has a person's reply
    in it, so every rollout ends. Every agent rollout costs exactly two calls.
    """

    def choose(request: Request) -> Reply:
        body = request.body if isinstance(request.body, dict) else {}
        messages = body.get("messages") or [{}]
        if not body.get("tools"):
            spoken = sum(1 for m in messages if m.get("role") == "assistant")
            return answer("DONE" if spoken else user_line)
        if messages[-1].get("role") == "tool":
            return answer("Done: the tool answered.")
        return tool_call(tool, arguments)

    return choose


ADVERSARIAL_MODES = ("parrot", "assistant", "stop")
# What an assistant-voiced "person" says: the openers and follow-ups small models wrote.
AS_ASSISTANT = (
    "I'm sorry, but I'm not sure what you're asking for. Could you please provide me with "
    "more information or context?",
    "Sure, what do you need assistance with?",
)
AGENT_ASKS = "Which order is this about? Please give me the order id."
AGENT_DONE = "Done: I found it and it is all sorted."
_DETAILS = re.compile(r"Details the person has at hand[^\n{]{0,80}(\{[^\n]{0,2000}\})")


def adversarial_person(mode: str, *, openers: bool = False) -> Callable[[Request], Reply]:
    """A whole simulated run on one stub whose person misbehaves, for the voice check.

    Requests without tools are the writer. `mode` says how it misbehaves: `parrot` sends
    back its input (the last message it was given: the agent's turn, a redraw note, or
    for an opener the brief itself), `assistant` answers as the assistant would, `stop`
    ends at once (the stop marker, nothing else). With `openers=True` the openers are a
    person's (an ask naming the first detail of the brief; none for a vague ask), so
    what misbehaves is every follow-up.

    Requests with tools are the agent: on its first turn it asks for the order id in
    about half the conversations (by a hash of the opener) and reports success at once
    in the others; once the person has answered, it reports success.
    """
    if mode not in ADVERSARIAL_MODES:
        raise ValueError(f"mode must be one of {ADVERSARIAL_MODES}")

    def choose(request: Request) -> Reply:
        import zlib

        body = request.body if isinstance(request.body, dict) else {}
        messages: list[dict[str, Any]] = body.get("messages") or [{}]
        if body.get("tools"):
            said = [m for m in messages if m.get("role") == "user"]
            opener = str(said[0].get("content") or "") if said else ""
            if len(said) == 1 and zlib.crc32(opener.encode()) % 2:
                return answer(AGENT_ASKS)
            return answer(AGENT_DONE)
        brief = str(messages[0].get("content") or "")
        is_opener = any(m.get("content") == "Write the first message now." for m in messages)
        if is_opener and openers:
            return answer(_person_opener(brief))
        if mode == "stop":
            return answer("###STOP###")
        if mode == "assistant":
            return answer(AS_ASSISTANT[len(messages) % 2])
        last = messages[-1].get("content") or ""
        return answer(brief if is_opener and last == "Write the first message now." else last)

    return choose


def _person_opener(brief: str) -> str:
    """A plain person's first message from a writer brief: the first detail it holds,
    left out for a vague ask."""
    if "leaves out the record" in brief:
        return "Hi, something is wrong with a purchase of mine, can you help me?"
    found = _DETAILS.search(brief)
    values = list(json.loads(found.group(1)).values()) if found else []
    if not values:
        return "Hi, I have a question about my account, can you help me?"
    return f"Hi, can you help me with my order? It is {values[0]}."


class _FleetProtocol(asyncio.Protocol):
    """One connection of `serve_fleet`: HTTP/1.1 keep-alive, chat completions only, each
    answered `latency` seconds later by a timer (no thread sleeps), so one process holds
    thousands of calls in flight at a few tens of microseconds of CPU each, as a vLLM
    server would look to the client."""

    def __init__(self, owner: _Fleet) -> None:
        self.owner = owner
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's are not subclasses
        self.owner.connections += 1
        self.owner.accepted += 1
        self.owner.peak = max(self.owner.peak, self.owner.connections)

    def connection_lost(self, exc: Exception | None) -> None:
        self.owner.connections -= 1
        self.transport = None

    def data_received(self, data: bytes) -> None:
        buf = self.buffer
        buf += data
        while True:
            end = buf.find(b"\r\n\r\n")
            if end < 0:
                if len(buf) > 65536 and self.transport is not None:
                    self.transport.close()
                return
            head = bytes(buf[:end]).decode("latin-1")
            length = 0
            for line in head.split("\r\n")[1:]:
                name, _, value = line.partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value.strip() or 0)
            if len(buf) < end + 4 + length:
                return
            body = bytes(buf[end + 4 : end + 4 + length])
            del buf[: end + 4 + length]
            self.owner.answer(self, head.split(" ", 2)[1] if " " in head else "", body)

    def send(self, payload: bytes) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(payload)


class _Fleet:
    def __init__(self, default: ScriptItem, latency: float, model: str) -> None:
        self.default = default
        self.latency = latency
        self.model = model
        self.calls = 0
        self.connections = 0
        self.peak = 0
        self.accepted = 0

    def answer(self, conn: _FleetProtocol, path: str, data: bytes) -> None:
        import orjson

        index = self.calls
        self.calls += 1
        try:
            body = orjson.loads(data) if data else None
        except orjson.JSONDecodeError:
            body = None
        request = Request(index=index, method="POST", path=path, headers={}, body=body)
        if not path.rstrip("/").endswith("/chat/completions"):
            status, payload = 404, b'{"error": {"message": "no such route"}}'
        else:
            reply = _as_reply(self.default, request)
            status, payload = 200, orjson.dumps(_completion(reply, request, self.model))
        head = (
            f"HTTP/1.1 {status} {'OK' if status == 200 else 'Not Found'}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\n\r\n"
        ).encode()
        message = head + payload
        if self.latency > 0:
            asyncio.get_running_loop().call_later(self.latency, conn.send, message)
        else:
            conn.send(message)


@dataclass
class FleetStub:
    """A running `start_fleet` server: its base URL and counts (calls answered, connections
    open now, the most open at once, connections accepted in all)."""

    base_url: str
    server: asyncio.AbstractServer
    fleet: _Fleet

    @property
    def calls(self) -> int:
        return self.fleet.calls

    @property
    def peak_connections(self) -> int:
        return self.fleet.peak

    @property
    def accepted(self) -> int:
        return self.fleet.accepted

    async def aclose(self) -> None:
        self.server.close()
        await self.server.wait_closed()


async def start_fleet(
    default: ScriptItem | None = None,
    *,
    latency: float = 0.0,
    host: str = "127.0.0.1",
    model: str = "stub-model",
) -> FleetStub:
    """Serve `default` (a plain "ok." unless given) on every chat completion, in the
    running loop, from this one thread.

    What `python -m whileai_core.testing` runs for the benchmarks: unlike `OpenAIStub`
    (a thread per connection, every request recorded, scripts and errors for tests), it
    answers thousands of concurrent calls on timers, so at fleet-scale concurrency the
    stub is not what a benchmark of the client measures."""
    from ..models.transport import ensure_fd_room

    ensure_fd_room(8192)
    fleet = _Fleet(default if default is not None else answer("ok."), latency, model)
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: _FleetProtocol(fleet), host, 0, backlog=4096)
    port = server.sockets[0].getsockname()[1]
    return FleetStub(f"http://{host}:{port}/v1", server, fleet)


async def serve_fleet(default: ScriptItem, *, latency: float) -> None:
    """`start_fleet` until cancelled; prints the base URL first."""
    stub = await start_fleet(default, latency=latency)
    print(stub.base_url, flush=True)
    async with stub.server:
        await stub.server.serve_forever()


def serve_main(argv: list[str] | None = None) -> None:
    """`python -m whileai_core.testing`: serve until killed; the first stdout line is the URL.

    `--threaded` serves with `OpenAIStub` (a thread per connection) instead of the
    single-threaded fleet server."""
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds per call")
    parser.add_argument("--tool", help="call this tool first, answer after its result")
    parser.add_argument("--arguments", default="{}", help="JSON arguments for --tool")
    parser.add_argument("--threaded", action="store_true", help="serve with OpenAIStub")
    args = parser.parse_args(argv)
    default: ScriptItem = answer("ok.")
    if args.tool:
        default = tool_then_answer(args.tool, json.loads(args.arguments))
    if not args.threaded:
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(serve_fleet(default, latency=args.latency))
        return
    stub = OpenAIStub(default=default, latency=args.latency).start()
    print(stub.base_url, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        stub.stop()
