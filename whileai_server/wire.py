"""How the server reads requests and writes errors: bodies read against a cap and a pace
as they arrive, fields and query parameters checked before they reach a pattern or the
store, and `StoreError`s turned into the original SDK's error shape.

Every body is read through `paced_stream`: a client that stops sending, or sends slower
than `ServerConfig.body_pace` allows, is refused with 408 instead of holding its request
open. Every string a client sends that is kept or matched is capped first (`text_field`):
an email at 254 characters (`accounts.MAX_EMAIL`), a name, slug or code at 200, a
description at 10,000, so no field fills the database and no pattern ever runs on a
megabyte.
"""

from __future__ import annotations

import math
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from typing import IO, Any
from urllib.parse import parse_qs

import anyio
import anyio.from_thread
import orjson
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from whileai_core.errors import ConfigError
from whileai_core.row.limits import format_size
from whileai_core.store.base import (
    BadRequest,
    StoreError,
    TooLarge,
    TooManyRequests,
    TooSlow,
    parse_since,
)
from whileai_core.store.limits import Limits, check_json_depth, refuse

from .config import BodyPace

MAX_JSON_BODY = 1024 * 1024  # the small JSON routes (signup, meta, scores, ...)
SPOOL_IN_MEMORY = 1024 * 1024  # an export request past this waits for decoding on disk
_MAX_INT_DIGITS = 18
MAX_NAME = 200  # a name, slug, code, key or id a client sends
MAX_TEXT = 10_000  # a description
_MAX_SINCE = 32  # `since` / `from` query parameters


def error(status: int, message: str, code: str | None = None, **extra: Any) -> JSONResponse:
    """`{"error": ...}`; where the original SDK branches on a code (`account_exists`), the
    code is the error and the sentence rides along as `message`."""
    body: dict[str, Any] = {"error": code, "message": message} if code else {"error": message}
    return JSONResponse({**body, **extra}, status_code=status)


def store_error(exc: StoreError) -> JSONResponse:
    """The response for a refusal: 413s name their limit, 429s say when to come back."""
    extra: dict[str, Any] = {}
    if isinstance(exc, (TooLarge, TooManyRequests, TooSlow)) and exc.limit:
        extra["limit"] = exc.limit
    response = error(exc.status, str(exc), getattr(exc, "code", None), **extra)
    if isinstance(exc, TooManyRequests):
        response.headers["Retry-After"] = str(max(1, math.ceil(exc.retry_after)))
    return response


def _pace(request: Request) -> BodyPace:
    server = getattr(request.app.state, "server", None)
    return server.config.body_pace if server is not None else BodyPace()


async def paced_stream(request: Request) -> AsyncIterator[bytes]:
    """The body's chunks as they arrive, refused (`TooSlow`, 408) once no byte has come for
    `pace.idle` seconds, or once, past `pace.grace`, fewer bytes have come than
    `pace.min_rate` a second would have brought. Each wait is bounded by whichever rule
    would end it first, so a trickling client is cut off on time, not at its next byte."""
    pace = _pace(request)
    stream = request.stream().__aiter__()
    start = last = time.monotonic()
    received = 0
    while True:
        idle_at = last + pace.idle
        slow_at = (
            start + max(pace.grace, received / pace.min_rate) if pace.min_rate > 0 else math.inf
        )
        try:
            with anyio.fail_after(max(0.0, min(idle_at, slow_at) - time.monotonic())):
                chunk = await stream.__anext__()
        except StopAsyncIteration:
            return
        except TimeoutError:
            if idle_at <= slow_at:
                raise TooSlow(
                    f"the request body stalled: nothing arrived for {pace.idle:g} s",
                    "body_idle_timeout",
                ) from None
            raise TooSlow(
                f"the request body arrived at under {format_size(int(pace.min_rate))}/s"
                f" ({received:,} bytes in {time.monotonic() - start:.0f} s)",
                "body_min_rate",
            ) from None
        last = time.monotonic()
        received += len(chunk)
        yield chunk


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
    async for chunk in paced_stream(request):
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
        async for chunk in paced_stream(request):
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
    chunk is awaited on the event loop (at the body's pace), so the body streams through
    without a copy."""
    stream: AsyncIterator[bytes] = paced_stream(request).__aiter__()

    async def next_chunk() -> bytes | None:
        try:
            return await stream.__anext__()
        except StopAsyncIteration:
            return None

    while (chunk := anyio.from_thread.run(next_chunk)) is not None:
        if chunk:
            yield chunk


def text_field(body: Mapping[str, Any], key: str, limit: int = MAX_NAME) -> str | None:
    """A string field of a JSON body or a form, None when absent or null; refused when it is
    not a string or is longer than `limit` characters, before any pattern, hash or table
    sees it."""
    value = body.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise BadRequest(f"{key} must be a string")
    if len(value) > limit:
        raise BadRequest(f"{key} is longer than {limit:,} characters")
    return value


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
    window = request.query_params.get("from")
    if len(since or "") > _MAX_SINCE or len(window or "") > _MAX_SINCE:
        raise BadRequest("since and from must be a timestamp or a span like 7d")
    if since:
        try:
            value = float(since)
        except ValueError:
            raise BadRequest("since must be a unix timestamp") from None
        if not math.isfinite(value):
            raise BadRequest("since must be a unix timestamp")
        return value
    if not window or window == "all":
        return None
    try:
        return parse_since(window)
    except ConfigError as exc:
        raise BadRequest(str(exc).replace("--since", "from")) from None


Handler = Callable[[Request], Awaitable[Response]]
