"""How the server reads requests and writes errors: bodies read against a cap as they
arrive, query parameters checked before they reach the store, and `StoreError`s turned
into the original SDK's error shape.
"""

from __future__ import annotations

import math
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import IO, Any
from urllib.parse import parse_qs

import anyio.from_thread
import orjson
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from whileai_core.errors import ConfigError
from whileai_core.store.base import BadRequest, StoreError, TooLarge, TooManyRequests
from whileai_core.store.cut import parse_since
from whileai_core.store.limits import Limits, check_json_depth, format_size, refuse

MAX_JSON_BODY = 1024 * 1024  # the small JSON routes (signup, meta, scores, ...)
SPOOL_IN_MEMORY = 1024 * 1024  # an export request past this waits for decoding on disk
_MAX_INT_DIGITS = 18


def error(status: int, message: str, code: str | None = None, **extra: Any) -> JSONResponse:
    """`{"error": ...}`; where the original SDK branches on a code (`account_exists`), the
    code is the error and the sentence rides along as `message`."""
    body: dict[str, Any] = {"error": code, "message": message} if code else {"error": message}
    return JSONResponse({**body, **extra}, status_code=status)


def store_error(exc: StoreError) -> JSONResponse:
    """The response for a refusal: 413s name their limit, 429s say when to come back."""
    extra: dict[str, Any] = {}
    if isinstance(exc, (TooLarge, TooManyRequests)) and exc.limit:
        extra["limit"] = exc.limit
    response = error(exc.status, str(exc), getattr(exc, "code", None), **extra)
    if isinstance(exc, TooManyRequests):
        response.headers["Retry-After"] = str(max(1, math.ceil(exc.retry_after)))
    return response


def declared_length(request: Request) -> int | None:
    declared = request.headers.get("content-length", "")
    return int(declared) if declared.isascii() and declared.isdigit() else None


async def capped_body(request: Request, limit: int = MAX_JSON_BODY) -> bytes:
    """The body, refused as soon as it passes `limit`: read whole first, a client streaming
    gigabytes at a small-JSON route would be held in memory before the size was checked."""
    too_large = TooLarge(f"the request body is over {format_size(limit)}", "json_body")
    declared = declared_length(request)
    if declared is not None and declared > limit:
        raise too_large
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise too_large
        chunks.append(chunk)
    return b"".join(chunks)


async def form_body(request: Request) -> dict[str, str]:
    """A posted HTML form (url-encoded, capped like a small JSON body), each field's first
    value: what the sign-in, sign-out and device-approval pages read."""
    raw = await capped_body(request)
    return {k: v[0] for k, v in parse_qs(raw.decode(errors="replace")).items()}


async def json_body(request: Request, limits: Limits) -> dict[str, Any]:
    body = await capped_body(request)
    if not body.strip():
        return {}
    check_json_depth(body, limits, "the request body")
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise BadRequest(f"body is not valid JSON ({exc.msg})") from None
    if not isinstance(data, dict):
        raise BadRequest("body must be a JSON object")
    return data


async def spooled_body(request: Request, limit: int, name: str) -> IO[bytes]:
    """The body in a temporary file (in memory up to SPOOL_IN_MEMORY, then on disk), so a
    request waiting its turn holds a megabyte, not its body; refused past `limit`."""
    declared = declared_length(request)
    if declared is not None and declared > limit:
        raise refuse(name, "the request body is too large", limit)
    spool = tempfile.SpooledTemporaryFile(max_size=SPOOL_IN_MEMORY)  # noqa: SIM115
    try:
        size = 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise refuse(name, "the request body is too large", limit)
            spool.write(chunk)
        spool.seek(0)
    except BaseException:
        spool.close()
        raise
    return spool


def body_chunks(request: Request) -> Iterator[bytes]:
    """The body as a plain iterator, for a store call running in a worker thread: each
    chunk is awaited on the event loop, so the body streams through without a copy."""
    stream: AsyncIterator[bytes] = request.stream().__aiter__()

    async def next_chunk() -> bytes | None:
        try:
            return await stream.__anext__()
        except StopAsyncIteration:
            return None

    while (chunk := anyio.from_thread.run(next_chunk)) is not None:
        if chunk:
            yield chunk


def int_param(request: Request, name: str, default: int) -> int:
    raw = request.query_params.get(name)
    if raw is None:
        return default
    digits = raw.strip().removeprefix("-")
    if not (digits.isascii() and digits.isdigit()) or len(digits) > _MAX_INT_DIGITS:
        raise BadRequest(f"{name} must be a whole number of at most {_MAX_INT_DIGITS} digits")
    return int(raw)


def since_param(request: Request) -> float | None:
    """`since` (unix seconds) or the original SDK's `from` (`all`, or a span like `7d`)."""
    since = request.query_params.get("since")
    if since:
        try:
            value = float(since)
        except ValueError:
            raise BadRequest("since must be a unix timestamp") from None
        if not math.isfinite(value):
            raise BadRequest("since must be a unix timestamp")
        return value
    window = request.query_params.get("from")
    if not window or window == "all":
        return None
    try:
        return parse_since(window)
    except ConfigError as exc:
        raise BadRequest(str(exc).replace("--since", "from")) from None


Handler = Callable[[Request], Awaitable[Response]]
