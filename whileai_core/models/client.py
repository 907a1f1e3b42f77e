"""One async client per run for an OpenAI-compatible chat-completions endpoint.

Every model call of a run (agent turns, the simulated user, the situation writer, an LLM
judge) goes through a `ModelClient`, so concurrency, retries and failure counts live in
one place and the run report can read them from `client.stats`.

What a caller can rely on:

- `await client.chat(messages, tools=None, **sampling) -> ChatResult`. Sampling keys
  with a None value are left out of the request, so the server's defaults apply.
  `logprobs=True` asks for per-token logprobs; `ChatResult.logprob` is their sum.
- `await client.complete(prompt, **params) -> dict`: the legacy `/completions` route (a
  reference model scoring a rendered text with `echo` + `logprobs`), the raw body back,
  under the same retries, concurrency bound and counts.
- 429, 5xx, connection errors, timeouts and unparseable bodies are retried with
  exponential backoff and jitter; a Retry-After header (seconds or an HTTP date) is
  honoured instead of the computed wait.
- A 429 that says the quota/allowance is spent (error code `insufficient_quota` and
  friends), a Retry-After longer than `max_retry_after`, or a 429 that outlasts every
  retry raises `AllowanceExhausted` — a `WhileaiError`, so the run stops with the
  server's reason. After that the client is tripped: every later call raises the same
  error at once, so 64 in-flight rollouts do not each spend their retries.
- 401/403/404 raise `EndpointRefused` (also a `WhileaiError`): a wrong key or model name
  will not fix itself on row 2.
- Anything else that fails after the retries raises `ModelCallError` with a `kind`
  (`timeout`, `connect`, `http_500`, `http_400`, `bad_response`, ...): one call failed,
  the caller decides (the agent drops the rollout, a judge marks the row).
- A reply's chat-template scaffolding (special tokens, the turn header, an echoed
  function-calling recipe; `scaffold.py`) is stripped from its content before anyone
  reads it, and the replies so cleaned are counted (`stats.scaffolding_stripped`).
"""

from __future__ import annotations

import asyncio
import email.utils
import random
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import orjson

from ..errors import AllowanceExhausted, EndpointRefused, ModelCallError, WhileaiError
from .scaffold import strip_scaffolding
from .spec import OPENAI_DEFAULT_URL, ModelSpec
from .transport import Http1Pool, HttpxTransport, Response, TransportError, open_transport

if TYPE_CHECKING:
    from .cache import ModelCache

_QUOTA_CODES = frozenset(
    {"insufficient_quota", "quota_exceeded", "allowance_exhausted", "billing_hard_limit_reached"}
)


@dataclass
class ClientStats:
    """What the run report prints about model traffic. Failures are counted per attempt
    (`errors`, by kind), so a call that succeeded on its third try still shows two."""

    calls: int = 0  # chat() invocations
    requests: int = 0  # HTTP attempts actually sent
    ok: int = 0
    failed: int = 0  # calls that raised after their retries
    retries: int = 0
    cache_hits: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    backoff_seconds: float = 0.0
    # Replies whose content carried a chat template's scaffolding, stripped (scaffold.py).
    scaffolding_stripped: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    stopped_because: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "requests": self.requests,
            "ok": self.ok,
            "failed": self.failed,
            "retries": self.retries,
            "cache_hits": self.cache_hits,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "backoff_seconds": round(self.backoff_seconds, 3),
            "scaffolding_stripped": self.scaffolding_stripped,
            "errors": dict(sorted(self.errors.items())),
            "stopped_because": self.stopped_because,
        }


@dataclass
class ChatResult:
    """One completion, normalised.

    `message` is the assistant message dict as the server sent it (role, content,
    tool_calls in the wire shape). `usage` is `{"input_tokens", "output_tokens"}` (0 when
    the server reports none). `logprob`/`n_tokens`/`tokens` are set only when logprobs
    were asked for and the server returned them; `tokens` is `[{"token", "logprob"}]`.
    """

    message: dict[str, Any]
    finish_reason: str
    usage: dict[str, int]
    logprob: float | None = None
    n_tokens: int | None = None
    tokens: list[dict[str, Any]] | None = None
    cached: bool = False
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def text(self) -> str:
        content = self.message.get("content")
        return content if isinstance(content, str) else ""

    @property
    def tool_calls(self) -> list[dict[str, Any]]:
        calls = self.message.get("tool_calls")
        return calls if isinstance(calls, list) else []

    @classmethod
    def from_response(cls, raw: Any, *, cached: bool = False) -> ChatResult:
        """Parse a chat.completion body; ModelCallError('bad_response') if it is not one."""
        if not isinstance(raw, dict):
            raise ModelCallError("bad_response", "response body is not a JSON object")
        choices = raw.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise ModelCallError("bad_response", "response has no choices")
        choice = choices[0]
        message = choice.get("message")
        if not isinstance(message, dict):
            raise ModelCallError("bad_response", "response choice has no message")
        usage_raw: dict[str, Any] = raw["usage"] if isinstance(raw.get("usage"), dict) else {}
        usage = {
            "input_tokens": _int(usage_raw.get("prompt_tokens")),
            "output_tokens": _int(usage_raw.get("completion_tokens")),
        }
        logprob: float | None = None
        n_tokens: int | None = None
        tokens: list[dict[str, Any]] | None = None
        lp = choice.get("logprobs")
        if isinstance(lp, dict) and isinstance(lp.get("content"), list):
            tokens = [
                {"token": t.get("token"), "logprob": float(t.get("logprob") or 0.0)}
                for t in lp["content"]
                if isinstance(t, dict)
            ]
            logprob = float(sum(t["logprob"] for t in tokens))
            n_tokens = len(tokens)
        return cls(
            message=message,
            finish_reason=str(choice.get("finish_reason") or "stop"),
            usage=usage,
            logprob=logprob,
            n_tokens=n_tokens,
            tokens=tokens,
            cached=cached,
            raw=raw,
        )


def _int(value: Any) -> int:
    return value if isinstance(value, int) and value >= 0 else 0


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def _error_detail(response: Response) -> tuple[str, str | None]:
    """The server's error message and code, from an OpenAI-style error body if present."""
    try:
        body = orjson.loads(response.body)
    except orjson.JSONDecodeError:
        text = response.text.strip()
        return (text[:200] or response.reason or f"HTTP {response.status}"), None
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        message = str(error.get("message") or response.reason or "")
        code = error.get("code") or error.get("type")
        return message[:300], str(code) if code else None
    if isinstance(error, str):
        return error[:300], None
    return (response.reason or f"HTTP {response.status}"), None


class ModelClient:
    """The run's one HTTP client for one endpoint. Create it anywhere; its connections
    (transport.py) are opened on the first call, inside the running event loop."""

    def __init__(
        self,
        spec: ModelSpec,
        *,
        concurrency: int = 32,
        connect_timeout: float = 10.0,
        read_timeout: float = 60.0,
        retries: int = 5,
        backoff: float = 0.5,
        max_backoff: float = 20.0,
        max_retry_after: float = 120.0,
        cache: ModelCache | None = None,
        stats: ClientStats | None = None,
    ) -> None:
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self.spec = spec
        self.concurrency = concurrency
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        self.retries = max(0, retries)
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.max_retry_after = max_retry_after
        self.cache = cache
        self.stats = stats if stats is not None else ClientStats()
        # Whose traffic this is ("agent", "writer"), for the run report; None: shared.
        self.role: str | None = None
        self._http: Http1Pool | HttpxTransport | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._semaphore: asyncio.Semaphore | None = None
        self._stopped: WhileaiError | None = None
        self._rng = random.Random()

    def _open(self) -> None:
        """Open the transport in the running loop (again, if the loop changed). At most
        `concurrency` connections: the semaphore lets no more calls out at once."""
        loop = asyncio.get_running_loop()
        if self._http is not None and self._loop is loop:
            return
        headers = {"Content-Type": "application/json", "User-Agent": "whileai"}
        if self.spec.api_key:
            headers["Authorization"] = f"Bearer {self.spec.api_key}"
        self._http = open_transport(
            self.spec.base_url, headers, limit=self.concurrency,
            connect_timeout=self.connect_timeout, read_timeout=self.read_timeout,
        )  # fmt: skip
        self._loop = loop
        self._semaphore = asyncio.Semaphore(self.concurrency)

    async def aclose(self) -> None:
        http, self._http = self._http, None
        if http is not None and self._loop is asyncio.get_running_loop():
            await http.aclose()
        self._semaphore = None
        self._loop = None
        if self.cache is not None:
            self.cache.close()

    def request_body(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, **sampling: Any
    ) -> dict[str, Any]:
        """The JSON body sent for these arguments (also what the cache key is made from).

        On api.openai.com `max_tokens` is sent as `max_completion_tokens`, the only name its
        reasoning models accept; other servers get `max_tokens`, the name they all know.
        """
        body: dict[str, Any] = {"model": self.spec.model, "messages": messages}
        if tools:
            body["tools"] = tools
        for key, value in sampling.items():
            if value is None or (key == "logprobs" and value is False):
                continue
            if key == "max_tokens" and self.spec.base_url == OPENAI_DEFAULT_URL:
                key = "max_completion_tokens"
            body[key] = value
        return body

    async def chat(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        *,
        cache_salt: str | None = None,
        **sampling: Any,
    ) -> ChatResult:
        """One chat completion. `cache_salt` separates calls that must not share a cached
        answer although their bodies match (repeats of one phrasing in an rl group)."""
        self.stats.calls += 1
        if self._stopped is not None:
            raise self._stopped
        body = self.request_body(messages, tools, **sampling)
        key = None
        if self.cache is not None:
            key = self.cache.key(self.spec.base_url, body, salt=cache_salt)
            stored = self.cache.get(key)
            if stored is not None:
                try:
                    result = ChatResult.from_response(stored, cached=True)
                except ModelCallError:
                    result = None
                if result is not None:
                    self.stats.cache_hits += 1
                    self.stats.ok += 1
                    return self._unscaffolded(result)
        try:
            raw = await self._post_with_retries(orjson.dumps(body))
        except (ModelCallError, WhileaiError):
            self.stats.failed += 1
            raise
        try:
            result = ChatResult.from_response(raw)
        except ModelCallError as exc:  # JSON, but not a chat completion
            self.stats.errors[exc.kind] += 1
            self.stats.failed += 1
            raise
        self.stats.ok += 1
        self.stats.input_tokens += result.usage["input_tokens"]
        self.stats.output_tokens += result.usage["output_tokens"]
        if self.cache is not None and key is not None:
            self.cache.put(key, self.spec.base_url, self.spec.model, raw)
        return self._unscaffolded(result)

    def _unscaffolded(self, result: ChatResult) -> ChatResult:
        """The reply without its chat template's scaffolding (counted when there was any);
        the raw body, and so the cache, keep what the server sent."""
        text, changed = strip_scaffolding(result.text)
        if changed:
            result.message = {**result.message, "content": text}
            self.stats.scaffolding_stripped += 1
        return result

    async def complete(self, prompt: str, **params: Any) -> dict[str, Any]:
        """One legacy text completion (`/completions`); the response body as sent."""
        self.stats.calls += 1
        if self._stopped is not None:
            raise self._stopped
        body: dict[str, Any] = {"model": self.spec.model, "prompt": prompt}
        body.update((k, v) for k, v in params.items() if v is not None)
        try:
            raw = await self._post_with_retries(orjson.dumps(body), "/completions")
        except (ModelCallError, WhileaiError):
            self.stats.failed += 1
            raise
        if not isinstance(raw, dict) or not isinstance(raw.get("choices"), list):
            self.stats.errors["bad_response"] += 1
            self.stats.failed += 1
            raise ModelCallError("bad_response", f"{self.spec.base_url}: not a completion")
        self.stats.ok += 1
        usage: dict[str, Any] = raw["usage"] if isinstance(raw.get("usage"), dict) else {}
        self.stats.input_tokens += _int(usage.get("prompt_tokens"))
        self.stats.output_tokens += _int(usage.get("completion_tokens"))
        return raw

    async def embed(self, texts: list[str], *, batch: int = 64) -> list[list[float]]:
        """Embeddings of `texts` from the endpoint's OpenAI-compatible `/embeddings` route,
        in order, `batch` inputs a request; the same retries and failure counts as chat."""
        vectors: list[list[float]] = []
        for at in range(0, len(texts), batch):
            chunk = texts[at : at + batch]
            self.stats.calls += 1
            if self._stopped is not None:
                raise self._stopped
            body = orjson.dumps({"model": self.spec.model, "input": chunk})
            try:
                raw = await self._post_with_retries(body, "/embeddings")
                vectors.extend(_embeddings_of(raw, len(chunk), self.spec.base_url))
            except (ModelCallError, WhileaiError) as exc:
                if isinstance(exc, ModelCallError) and exc.kind == "bad_response":
                    self.stats.errors[exc.kind] += 1
                self.stats.failed += 1
                raise
            self.stats.ok += 1
        return vectors

    def _trip(self, error: WhileaiError, reason: str) -> WhileaiError:
        if self._stopped is None:
            self._stopped = error
            self.stats.stopped_because = reason
        return self._stopped

    def _wait_for(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:  # a 429 asking for longer has already stopped the run
            return min(retry_after, self.max_retry_after)
        base = min(self.max_backoff, self.backoff * (2**attempt))
        return base * (0.5 + self._rng.random() / 2)

    async def _send(self, payload: bytes, path: str) -> Response | ModelCallError:
        """One HTTP attempt; transport failures come back as values."""
        assert self._http is not None
        try:
            return await self._http.post(path, payload)
        except TransportError as exc:
            return ModelCallError(exc.kind, f"{self.spec.base_url}: {exc}")

    def _classify(self, response: Response) -> tuple[ModelCallError, float | None]:
        """A non-200 answer: the retryable error it is, or raise when retrying is pointless."""
        endpoint = self.spec.base_url
        status = response.status
        message, code = _error_detail(response)
        retry_after = parse_retry_after(response.headers.get("retry-after"))
        error = ModelCallError(f"http_{status}", f"{endpoint}: {status} {message}", status)
        if status == 429:
            reason = None
            if code in _QUOTA_CODES:
                reason = f"allowance spent (429 {code}): {message}"
            elif retry_after is not None and retry_after > self.max_retry_after:
                reason = f"429, retry after {retry_after:.0f}s: {message}"
            if reason is not None:
                self.stats.errors["http_429"] += 1
                raise self._trip(AllowanceExhausted(endpoint, reason), reason)
            return error, retry_after
        if status in (401, 403, 404):
            self.stats.errors[error.kind] += 1
            reason = f"HTTP {status}: {message}"
            raise self._trip(EndpointRefused(endpoint, status, message), reason)
        if status >= 500 or status == 408:
            return error, retry_after
        self.stats.errors[error.kind] += 1
        raise error

    async def _post_with_retries(self, payload: bytes, path: str = "/chat/completions") -> Any:
        self._open()
        assert self._semaphore is not None
        last: ModelCallError | None = None
        for attempt in range(self.retries + 1):
            retry_after: float | None = None
            async with self._semaphore:
                if self._stopped is not None:  # tripped while this call queued
                    raise self._stopped
                self.stats.requests += 1
                outcome = await self._send(payload, path)
            if isinstance(outcome, ModelCallError):
                last = outcome
            elif outcome.status == 200:
                try:
                    return orjson.loads(outcome.body)
                except orjson.JSONDecodeError:
                    last = ModelCallError("bad_response", f"{self.spec.base_url}: body not JSON")
            else:
                last, retry_after = self._classify(outcome)
            self.stats.errors[last.kind] += 1
            if attempt == self.retries:
                break
            wait = self._wait_for(attempt, retry_after)
            self.stats.retries += 1
            self.stats.backoff_seconds += wait
            await asyncio.sleep(wait)
        assert last is not None
        if last.kind == "http_429":
            reason = f"429 on every one of {self.retries + 1} attempts: {last}"
            raise self._trip(AllowanceExhausted(self.spec.base_url, reason), reason)
        raise last


def _embeddings_of(raw: Any, n: int, endpoint: str) -> list[list[float]]:
    """The vectors of an embeddings response, in input order; bad_response if it is not one."""
    data = raw.get("data") if isinstance(raw, dict) else None
    if not isinstance(data, list) or len(data) != n:
        raise ModelCallError("bad_response", f"{endpoint}: embeddings response without {n} items")
    items = sorted(data, key=lambda d: d.get("index", 0) if isinstance(d, dict) else 0)
    out = []
    for item in items:
        vector = item.get("embedding") if isinstance(item, dict) else None
        if not isinstance(vector, list) or not vector or not all(
            isinstance(v, (int, float)) for v in vector
        ):
            raise ModelCallError("bad_response", f"{endpoint}: an embedding is not a number list")
        out.append([float(v) for v in vector])
    return out
