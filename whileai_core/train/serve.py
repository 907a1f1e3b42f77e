"""A model behind an OpenAI-compatible `/v1/chat/completions`, on this machine.

`whileai serve-model RUN` puts a run's adapter here, and `whileai train` puts the policy
here for the length of a holdout evaluation, so the policy plays the holdout's tasks
through the same agent, world and judge `simulate --agent URL` uses with any endpoint:
one way a rollout is played, whatever serves the model.

Standard library HTTP (a thread per connection; generation itself is one at a time per
process, see `model.chat`). The request is read under a byte cap and checked before any
token is generated; a bad one is an OpenAI-style 400. Tool calls the model writes as text
come back as `tool_calls` with `finish_reason` "tool_calls".
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from ..errors import WhileaiError

MAX_BODY_BYTES = 4 * 1024 * 1024
MAX_NEW_TOKENS = 4096
MAX_CHOICES = 8


class BadChatRequest(WhileaiError, ValueError):
    """A request the server answers with 400 (the message says what is wrong)."""


def check_request(body: Any, cap: int) -> dict[str, Any]:
    """The generation a chat-completions body asks for, or BadChatRequest."""
    if not isinstance(body, dict):
        raise BadChatRequest("the body must be a JSON object")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise BadChatRequest("messages must be a non-empty list")
    for i, m in enumerate(messages):
        if not isinstance(m, dict) or m.get("role") not in ("system", "user", "assistant", "tool"):
            raise BadChatRequest(f"messages[{i}] needs a role of system, user, assistant or tool")
    tools = body.get("tools")
    if tools is not None and not isinstance(tools, list):
        raise BadChatRequest("tools must be a list")
    limit = body.get("max_completion_tokens", body.get("max_tokens"))
    if limit is None:
        limit = cap
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise BadChatRequest("max_tokens must be a whole number >= 1")
    n = body.get("n", 1)
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_CHOICES:
        raise BadChatRequest(f"n must be 1 to {MAX_CHOICES}")
    temperature = body.get("temperature", 0.0)
    top_p = body.get("top_p", 1.0)
    for key, value in (("temperature", temperature), ("top_p", top_p)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise BadChatRequest(f"{key} must be a number >= 0")
    seed = body.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise BadChatRequest("seed must be a whole number")
    return {
        "messages": messages,
        "tools": tools,
        "max_new_tokens": min(limit, cap),
        "n": n,
        "temperature": float(temperature),
        "top_p": float(top_p) or 1.0,
        "seed": seed,
    }


class ModelServer:
    """One model on `host:port` (port 0 picks a free one); a context manager."""

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        *,
        name: str = "whileai-policy",
        host: str = "127.0.0.1",
        port: int = 0,
        max_new_tokens: int = MAX_NEW_TOKENS,
    ) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.name = name
        self.max_new_tokens = max(1, int(max_new_tokens))
        self.requests = 0
        server = self

        class Handler(_Handler):
            owner = server

        self.httpd = ThreadingHTTPServer((host, port), Handler)
        self.httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self.httpd.server_address[1])

    @property
    def base_url(self) -> str:
        host = self.httpd.server_address[0]
        host = host.decode() if isinstance(host, bytes) else str(host)
        return f"http://{host}:{self.port}/v1"

    def complete(self, request: dict[str, Any]) -> dict[str, Any]:
        """The chat.completion object for one checked request."""
        from .model import chat

        self.requests += 1
        replies = chat(
            self.model,
            self.tokenizer,
            request["messages"],
            tools=request["tools"],
            max_new_tokens=request["max_new_tokens"],
            n=request["n"],
            temperature=request["temperature"],
            top_p=request["top_p"],
            seed=request["seed"],
        )
        prompt = replies[0]["prompt_tokens"] if replies else 0
        made = sum(r["completion_tokens"] for r in replies)
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": self.name,
            "choices": [
                {
                    "index": i,
                    "message": r["message"],
                    "finish_reason": r["finish_reason"],
                    "logprobs": None,
                }
                for i, r in enumerate(replies)
            ],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": made,
                "total_tokens": prompt + made,
            },
        }

    def start(self) -> ModelServer:
        self._thread = threading.Thread(
            target=self.httpd.serve_forever, name=f"whileai-serve-{self.name}", daemon=True
        )
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        self.httpd.serve_forever()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def __enter__(self) -> ModelServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.close()


class _Handler(BaseHTTPRequestHandler):
    owner: ModelServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        return  # requests are not logged to stderr: the client's own report counts them

    def _send(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: int, message: str, kind: str = "invalid_request_error") -> None:
        self._send(status, {"error": {"message": message, "type": kind, "code": None}})

    def do_GET(self) -> None:
        if self.path.rstrip("/") in ("/v1/models", "/models"):
            self._send(
                200,
                {
                    "object": "list",
                    "data": [{"id": self.owner.name, "object": "model", "owned_by": "whileai"}],
                },
            )
            return
        self._error(404, f"no route {self.path}", "not_found")

    def do_POST(self) -> None:
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._error(404, f"no route {self.path}", "not_found")
            return
        try:
            size = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            size = -1
        if not 0 < size <= MAX_BODY_BYTES:
            self.close_connection = True
            self._error(
                413 if size > MAX_BODY_BYTES else 400,
                f"the body must be 1 to {MAX_BODY_BYTES} bytes with a Content-Length",
            )
            return
        raw = self.rfile.read(size)
        try:
            request = check_request(json.loads(raw), self.owner.max_new_tokens)
        except (json.JSONDecodeError, UnicodeDecodeError):
            self._error(400, "the body is not JSON")
            return
        except BadChatRequest as exc:
            self._error(400, str(exc))
            return
        try:
            answer = self.owner.complete(request)
        except Exception as exc:  # a template or generation error: the client's call fails
            self._error(500, f"{type(exc).__name__}: {exc}", "server_error")
            return
        self._send(200, answer)


def serve_run(
    ref: str,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    name: str | None = None,
    max_new_tokens: int = 512,
    ready: Any = None,
) -> None:
    """Serve the adapter `ref` names (a run id or its folder) until interrupted; the
    record `whileai models` lists exists while it listens. `ready(server)` is called once
    it does."""
    from .adapters import adapter_folder, run_file
    from .model import load_served
    from .options import require_extra
    from .served import register, unregister

    require_extra("whileai serve-model")
    folder = adapter_folder(ref)
    about = run_file(folder)
    if about.get("method") == "rm":
        from ..errors import ConfigError

        raise ConfigError(f"{ref}: a reward model scores, it does not chat; use --judge rm:{ref}")
    model, tokenizer = load_served(str(about["base_model"]), str(folder))
    label = name or str(about.get("run_id") or folder.name)
    server = ModelServer(
        model, tokenizer, name=label, host=host, port=port, max_new_tokens=max_new_tokens
    )
    record = register(
        {
            "name": label,
            "run": about.get("run_id"),
            "adapter": str(folder.resolve()),
            "base_model": about["base_model"],
            "method": about.get("method"),
            "url": server.base_url,
            "port": server.port,
        }
    )
    try:
        if ready is not None:
            ready(server)
        server.serve_forever()
    finally:
        unregister(record)
        server.httpd.server_close()
