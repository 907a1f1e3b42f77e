"""How the model client talks HTTP: keep-alive HTTP/1.1 connections to one origin.

`ModelClient` (client.py) owns retries, the cache, usage and every decision about a
response; this module only moves bytes. `open_transport` returns one of two transports
with the same two methods (`post(path, body) -> Response`, `aclose()`):

- `Http1Pool`, the default: asyncio protocols, one `write` per request (head and body
  together), a response parsed straight from the socket's bytes, idle connections kept
  on a stack. It exists because httpx/httpcore/anyio spent about 1 ms of CPU per call on
  request/response objects, cancel scopes, cookie jars and a scan of the pool per
  request: at fleet scale (hundreds of calls in flight against vLLM) that capped one
  process near 800 calls/s whatever the endpoint could do. This one costs a few tens of
  microseconds a call.
- `HttpxTransport`, when the environment routes the endpoint through a proxy
  (`settings.proxy_for`): httpx already speaks to every kind of proxy, and a run through
  a corporate proxy is not the one that needs 2,000 calls a second.

Failures come back as `TransportError` with the `kind` the client counts: `connect`
(refused, reset, closed without an answer, malformed response), `connect_timeout`, and
`timeout` (no byte of the answer for `read_timeout` seconds, httpx's read-timeout rule).
"""

from __future__ import annotations

import asyncio
import contextlib
import resource
import ssl
import zlib
from dataclasses import dataclass
from typing import cast
from urllib.parse import urlsplit

from ..errors import WhileaiError
from ..settings import proxy_for

KEEPALIVE_EXPIRY = 5.0  # seconds an idle connection is reused for (httpx's and uvicorn's 5 s)
_MAX_HEAD = 64 * 1024  # a response head longer than this is not an answer from a model server
_MAX_HEADERS = 200
_FD_HEADROOM = 256  # descriptors kept free beyond the pool's connections (files, the cache)


class TransportError(WhileaiError):
    """One HTTP attempt failed before a complete response; `kind` is what the client counts."""

    def __init__(self, kind: str, detail: str) -> None:
        self.kind = kind
        super().__init__(detail)


@dataclass
class Response:
    """A complete HTTP response: status, headers (names lower-cased) and the decoded body."""

    status: int
    reason: str
    headers: dict[str, str]
    body: bytes

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")


@dataclass(frozen=True)
class Origin:
    """Where requests go: scheme, host, port, and the URL path prefix (`/v1`)."""

    scheme: str
    host: str
    port: int
    prefix: str

    @classmethod
    def of(cls, base_url: str) -> Origin:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {base_url}")
        port = parts.port or (443 if parts.scheme == "https" else 80)
        return cls(parts.scheme, parts.hostname, port, parts.path.rstrip("/"))

    @property
    def host_header(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        default = 443 if self.scheme == "https" else 80
        return host if self.port == default else f"{host}:{self.port}"


def open_transport(
    base_url: str,
    headers: dict[str, str],
    *,
    limit: int,
    connect_timeout: float,
    read_timeout: float,
) -> Http1Pool | HttpxTransport:
    """The transport for this endpoint: httpx through a configured proxy, else `Http1Pool`."""
    context = tls_context() if base_url.startswith("https://") else None
    proxy = proxy_for(base_url)
    if proxy is not None:
        return HttpxTransport(
            base_url, headers, proxy=proxy, limit=limit, connect_timeout=connect_timeout,
            read_timeout=read_timeout, tls=context,
        )  # fmt: skip
    return Http1Pool(
        base_url, headers, limit=limit, connect_timeout=connect_timeout,
        read_timeout=read_timeout, tls=context,
    )  # fmt: skip


def tls_context() -> ssl.SSLContext:
    """One verifying TLS context (certifi's CA bundle) per client: loading it costs ~20 ms."""
    import certifi

    return ssl.create_default_context(cafile=certifi.where())


def ensure_fd_room(connections: int) -> None:
    """Raise this process's soft open-file limit (never past the hard one) so `connections`
    sockets fit beside the files a run keeps open: many systems start at a soft 1,024."""
    want = connections + _FD_HEADROOM
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < want:
        new = want if hard == resource.RLIM_INFINITY else min(want, hard)
        if new > soft:
            with contextlib.suppress(ValueError, OSError):
                resource.setrlimit(resource.RLIMIT_NOFILE, (new, hard))


class Http1Pool:
    """Keep-alive HTTP/1.1 connections to one origin, at most `limit` open at once.

    A request takes the most recently used idle connection (or opens one), writes the
    whole request in one `write`, and waits for the protocol to hand back the complete
    response. A connection goes back on the stack only if the response left it reusable
    (complete, not `Connection: close`); an idle one older than `KEEPALIVE_EXPIRY` is
    closed instead of reused, as servers drop theirs after about that long.
    """

    def __init__(
        self,
        base_url: str,
        headers: dict[str, str],
        *,
        limit: int,
        connect_timeout: float,
        read_timeout: float,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self.origin = Origin.of(base_url)
        self.limit = max(1, limit)
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        self.tls = tls
        fixed = {
            "Host": self.origin.host_header,
            "Accept": "*/*",
            "Accept-Encoding": "gzip, deflate",
            "Connection": "keep-alive",
            **headers,
        }
        self._head_fields = "".join(f"{k}: {v}\r\n" for k, v in fixed.items()).encode("latin-1")
        self._starts: dict[str, bytes] = {}
        self._idle: list[_Connection] = []
        self._open = 0  # connections open or opening
        self._waiting: list[asyncio.Future[None]] = []
        self._closed = False
        ensure_fd_room(self.limit)

    @property
    def connections(self) -> int:
        """Connections open now (in use or idle)."""
        return self._open

    def _start(self, path: str) -> bytes:
        start = self._starts.get(path)
        if start is None:
            line = f"POST {self.origin.prefix}{path} HTTP/1.1\r\n".encode("latin-1")
            start = self._starts[path] = line + self._head_fields + b"Content-Length: "
        return start

    async def post(self, path: str, body: bytes) -> Response:
        """POST `body` to the origin's prefix + `path`; the complete response, or raise
        `TransportError`."""
        conn = await self._acquire()
        try:
            data = b"".join((self._start(path), str(len(body)).encode(), b"\r\n\r\n", body))
            response = await conn.exchange(data, self.read_timeout)
        except BaseException:
            conn.close()
            self._release(conn)
            raise
        self._release(conn)
        return response

    async def _acquire(self) -> _Connection:
        if self._closed:
            raise TransportError("connect", "the client is closed")
        loop = asyncio.get_running_loop()
        now = loop.time()
        idle = self._idle
        while idle:
            conn = idle.pop()
            if conn.reusable and now - conn.idle_since < KEEPALIVE_EXPIRY:
                return conn
            conn.close()
            self._open -= 1
        while self._open >= self.limit:  # every connection busy: wait for one to come back
            waiter: asyncio.Future[None] = loop.create_future()
            self._waiting.append(waiter)
            try:
                await waiter
            except BaseException:
                with contextlib.suppress(ValueError):
                    self._waiting.remove(waiter)
                raise
            if idle:
                return idle.pop()
        self._open += 1
        try:
            return await self._connect(loop)
        except BaseException:
            self._open -= 1
            self._wake()
            raise

    async def _connect(self, loop: asyncio.AbstractEventLoop) -> _Connection:
        origin = self.origin
        try:
            opening = loop.create_connection(
                _Connection, origin.host, origin.port, ssl=self.tls,
                server_hostname=origin.host if self.tls else None,
            )  # fmt: skip
            _, conn = await asyncio.wait_for(opening, self.connect_timeout)
        except asyncio.TimeoutError:
            raise TransportError("connect_timeout", "connect timeout") from None
        except (OSError, ssl.SSLError) as exc:
            raise TransportError("connect", f"{type(exc).__name__}: {exc}") from None
        return conn

    def _release(self, conn: _Connection) -> None:
        if conn.reusable and not self._closed:
            conn.idle_since = conn.loop.time()
            self._idle.append(conn)
        else:
            conn.close()
            self._open -= 1
        self._wake()

    def _wake(self) -> None:
        while self._waiting:
            waiter = self._waiting.pop(0)
            if not waiter.done():
                waiter.set_result(None)
                return

    async def aclose(self) -> None:
        self._closed = True
        idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()
            self._open -= 1
        for waiter in self._waiting:
            if not waiter.done():
                waiter.set_exception(TransportError("connect", "the client is closed"))
        self._waiting.clear()


# Response parsing states.
_HEAD, _LENGTH, _CHUNK_SIZE, _CHUNK_DATA, _CHUNK_END, _TRAILER, _UNTIL_CLOSE, _DONE = range(8)


class _Connection(asyncio.Protocol):
    """One socket; parses one response at a time out of `data_received`."""

    def __init__(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.transport: asyncio.Transport | None = None
        self.reusable = True
        self.idle_since = 0.0
        self._waiter: asyncio.Future[Response] | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._timeout = 0.0
        self._last_read = 0.0
        self._buffer = bytearray()
        self._state = _DONE
        self._status = 0
        self._reason = ""
        self._headers: dict[str, str] = {}
        self._body: list[bytes] = []
        self._remaining = 0
        self._close_after = False

    # -- asyncio.Protocol --------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # Not an isinstance check: another loop's transports (uvloop's) are not subclasses.
        self.transport = cast(asyncio.Transport, transport)

    def connection_lost(self, exc: Exception | None) -> None:
        self.reusable = False
        self.transport = None
        if self._state == _UNTIL_CLOSE:  # a body delimited by the server closing
            self._finish()
            return
        if self._waiter is not None and not self._waiter.done():
            what = "the server closed the connection without an answer"
            if self._state != _HEAD or self._buffer:
                what = "the server closed the connection mid-response"
            detail = f"{what}: {exc}" if exc else what
            self._fail(TransportError("connect", detail))

    def data_received(self, data: bytes) -> None:
        if self._waiter is None or self._waiter.done():
            self.reusable = False  # bytes nobody asked for: never reuse this connection
            return
        self._last_read = self.loop.time()
        self._buffer += data
        try:
            self._parse()
        except _Malformed as exc:
            self._fail(TransportError("connect", f"malformed HTTP response: {exc}"))
            self.close()

    def eof_received(self) -> bool | None:
        return None  # close the transport; connection_lost settles any pending response

    # -- one exchange ------------------------------------------------------------------

    async def exchange(self, data: bytes, timeout: float) -> Response:
        transport = self.transport
        if transport is None or transport.is_closing():
            raise TransportError("connect", "the connection was closed")
        waiter: asyncio.Future[Response] = self.loop.create_future()
        self._waiter = waiter
        self._state = _HEAD
        self._buffer.clear()
        self._body = []
        self._headers = {}
        self._close_after = False
        self._timeout = timeout
        self._last_read = self.loop.time()
        self._timer = self.loop.call_at(self._last_read + timeout, self._check_timeout)
        transport.write(data)
        try:
            return await waiter
        finally:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            self._waiter = None

    def _check_timeout(self) -> None:
        """Fire `timeout` when nothing arrived for `_timeout` seconds (a read timeout, as
        httpx counts it: between reads, not over the whole response)."""
        self._timer = None
        if self._waiter is None or self._waiter.done():
            return
        due = self._last_read + self._timeout
        if self.loop.time() < due:
            self._timer = self.loop.call_at(due, self._check_timeout)
            return
        self._fail(TransportError("timeout", "read timeout"))
        self.close()

    def _fail(self, error: TransportError) -> None:
        self.reusable = False
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_exception(error)

    def _finish(self) -> None:
        body = b"".join(self._body)
        self._body = []
        encoding = self._headers.get("content-encoding", "").strip().lower()
        try:
            if encoding in ("gzip", "x-gzip"):
                body = zlib.decompress(body, 16 + zlib.MAX_WBITS)
            elif encoding == "deflate":
                try:
                    body = zlib.decompress(body)
                except zlib.error:
                    body = zlib.decompress(body, -zlib.MAX_WBITS)
        except zlib.error as exc:
            self._fail(TransportError("connect", f"undecodable {encoding} body: {exc}"))
            return
        self._state = _DONE
        if self._close_after or self._buffer:
            self.reusable = False
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(Response(self._status, self._reason, self._headers, body))

    def close(self) -> None:
        self.reusable = False
        if self.transport is not None:
            self.transport.close()

    # -- parsing -----------------------------------------------------------------------

    def _parse(self) -> None:
        buf = self._buffer
        while True:
            state = self._state
            if state == _HEAD:
                end = buf.find(b"\r\n\r\n")
                if end < 0:
                    if len(buf) > _MAX_HEAD:
                        raise _Malformed("response head too long")
                    return
                head = bytes(buf[:end])
                del buf[: end + 4]
                self._head(head)
            elif state == _LENGTH:
                take = min(self._remaining, len(buf))
                if take:
                    self._body.append(bytes(buf[:take]))
                    del buf[:take]
                    self._remaining -= take
                if self._remaining:
                    return
                self._finish()
                return
            elif state == _CHUNK_SIZE:
                end = buf.find(b"\r\n")
                if end < 0:
                    if len(buf) > 1024:
                        raise _Malformed("chunk size line too long")
                    return
                size_text = bytes(buf[:end]).split(b";", 1)[0].strip()
                del buf[: end + 2]
                try:
                    size = int(size_text, 16)
                except ValueError:
                    raise _Malformed(f"bad chunk size {size_text[:20]!r}") from None
                if size < 0:
                    raise _Malformed("negative chunk size")
                self._remaining = size
                self._state = _CHUNK_DATA if size else _TRAILER
            elif state == _CHUNK_DATA:
                take = min(self._remaining, len(buf))
                if take:
                    self._body.append(bytes(buf[:take]))
                    del buf[:take]
                    self._remaining -= take
                if self._remaining:
                    return
                self._state = _CHUNK_END
            elif state == _CHUNK_END:
                if len(buf) < 2:
                    return
                if buf[:2] != b"\r\n":
                    raise _Malformed("chunk not followed by CRLF")
                del buf[:2]
                self._state = _CHUNK_SIZE
            elif state == _TRAILER:
                end = buf.find(b"\r\n")
                if end < 0:
                    if len(buf) > _MAX_HEAD:
                        raise _Malformed("trailer too long")
                    return
                del buf[: end + 2]
                if end == 0:  # the empty line that ends the trailer
                    self._finish()
                    return
            elif state == _UNTIL_CLOSE:
                if buf:
                    self._body.append(bytes(buf))
                    buf.clear()
                return
            else:
                return

    def _head(self, head: bytes) -> None:
        lines = head.decode("latin-1").split("\r\n")
        version, _, rest = lines[0].partition(" ")
        code, _, reason = rest.partition(" ")
        if not version.startswith("HTTP/1.") or len(code) != 3 or not code.isdigit():
            raise _Malformed(f"bad status line {lines[0][:60]!r}")
        if len(lines) > _MAX_HEADERS:
            raise _Malformed("too many headers")
        status = int(code)
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            if not sep:
                raise _Malformed(f"bad header line {line[:60]!r}")
            name = name.strip().lower()
            value = value.strip()
            headers[name] = f"{headers[name]}, {value}" if name in headers else value
        if status < 200:  # 100 Continue and friends: the real head follows
            return
        self._status, self._reason, self._headers = status, reason, headers
        connection = headers.get("connection", "").lower()
        self._close_after = "close" in connection or (
            version == "HTTP/1.0" and "keep-alive" not in connection
        )
        if status in (204, 304):
            self._finish()
            return
        if "chunked" in headers.get("transfer-encoding", "").lower():
            self._state = _CHUNK_SIZE
            return
        length = headers.get("content-length")
        if length is not None:
            try:
                self._remaining = int(length.split(",")[0])
            except ValueError:
                raise _Malformed(f"bad Content-Length {length[:20]!r}") from None
            if self._remaining < 0:
                raise _Malformed("negative Content-Length")
            self._state = _LENGTH
            if not self._remaining:
                self._finish()
            return
        self._close_after = True
        self._state = _UNTIL_CLOSE


class _Malformed(Exception):
    pass


class HttpxTransport:
    """The same interface over httpx, for an endpoint the environment proxies (`proxy`;
    None goes direct, which is how the tests hold it to `Http1Pool`'s behaviour)."""

    def __init__(
        self,
        base_url: str,
        headers: dict[str, str],
        *,
        proxy: str | None,
        limit: int,
        connect_timeout: float,
        read_timeout: float,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        import httpx

        self._base = base_url.rstrip("/")
        self.proxy = proxy
        timeout = httpx.Timeout(connect=connect_timeout, read=read_timeout, write=30.0, pool=None)
        limits = httpx.Limits(max_connections=limit, max_keepalive_connections=limit)
        self._client = httpx.AsyncClient(
            headers=headers, limits=limits, timeout=timeout, verify=tls or False, proxy=proxy,
            trust_env=False,
        )  # fmt: skip

    async def post(self, path: str, body: bytes) -> Response:
        import httpx

        try:
            answer = await self._client.post(self._base + path, content=body)
        except httpx.TimeoutException as exc:
            kind = "connect_timeout" if isinstance(exc, httpx.ConnectTimeout) else "timeout"
            raise TransportError(kind, kind.replace("_", " ")) from None
        except httpx.TransportError as exc:
            raise TransportError("connect", f"{type(exc).__name__}: {exc}".rstrip(": ")) from None
        headers = {k.lower(): v for k, v in answer.headers.items()}
        return Response(answer.status_code, answer.reason_phrase, headers, answer.content)

    async def aclose(self) -> None:
        await self._client.aclose()
