"""The ASGI app behind `whileai serve`: the original SDK's wire format over the `Store`.

Routes live in `account_routes.py` (signup, device login, `/me`, delegated credentials),
`store_routes.py` (datasets, public cards, agents, traces), `run_routes.py` (training
runs) and `dashboard/` (the web pages); `server.py` holds what they share. Errors are
`{"error": "..."}` with the status of the `StoreError` that caused them: 413 names the
limit (`"limit": "max_spans"`), 429 carries `Retry-After`. What one request may cost is
bounded by `ServerConfig.limits`, and every response carries the headers in `security.py`.
A client that hangs up mid-request is one warning line in the log, never a 500.

`X-Forwarded-For` is believed only from the proxies `ServerConfig.forwarded_allow_ips`
names, by middleware in the app itself, so the rule holds however the app is run;
`uvicorn_config` is how `whileai serve` (and the tests) run it, with uvicorn's own proxy
handling off.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from whileai_core.errors import ConfigError
from whileai_core.store.base import StoreError

from .account_routes import AccountRoutes
from .config import ServerConfig
from .dashboard.routes import DashboardRoutes
from .run_routes import RunRoutes
from .security import SecurityHeaders
from .server import Server
from .store_routes import StoreRoutes
from .wire import MAX_JSON_BODY, Handler, error, store_error

if TYPE_CHECKING:
    import uvicorn

log = logging.getLogger("whileai.server")
__all__ = ["MAX_JSON_BODY", "create_app", "uvicorn_config"]


def _handled(handler: Handler) -> Handler:
    async def wrapped(request: Request) -> Response:
        try:
            return await handler(request)
        except StoreError as exc:
            return store_error(exc)
        except ClientDisconnect:
            # Nobody is left to answer; the store call it interrupted cleaned up after itself.
            log.warning("client aborted %s %s mid-request", request.method, request.url.path)
            return Response(status_code=499)
        except Exception:
            log.exception("unhandled error on %s %s", request.method, request.url.path)
            return error(500, "internal server error")

    return wrapped


async def _http_error(request: Request, exc: Exception) -> Response:
    if isinstance(exc, HTTPException):
        if exc.status_code == 404:  # no route: say which path, not a bare "Not Found"
            return error(404, f"{request.method} {request.url.path}: not found")
        return error(exc.status_code, str(exc.detail))
    return error(500, "internal server error")


async def _health(request: Request) -> Response:
    return JSONResponse({"ok": True, "time": time.time()})


def create_app(
    data_dir: Path | str, config: ServerConfig | None = None, **changes: Any
) -> Starlette:
    """The platform app over the store at `data_dir` (created if missing); `changes`
    override fields of `config` (`url_ttl=60`, `signup="invite"`, ...)."""
    path = Path(data_dir).expanduser()
    if path.exists() and not path.is_dir():
        raise ConfigError(f"{path}: not a directory (the server's store is a directory)")
    path.mkdir(parents=True, exist_ok=True)
    os.chmod(path, 0o700)
    config = dataclasses.replace(config or ServerConfig(), **changes)
    server = Server(path, config)
    table = [
        ("/health", _health, ["GET"]),
        *AccountRoutes(server).table(),
        *StoreRoutes(server).table(),
        *RunRoutes(server).table(),
        *DashboardRoutes(server).table(),
    ]

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        server.storage.close()

    middleware = [Middleware(SecurityHeaders)]
    if config.forwarded_allow_ips:
        from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

        trusted = [ip.strip() for ip in config.forwarded_allow_ips.split(",") if ip.strip()]
        middleware.insert(0, Middleware(ProxyHeadersMiddleware, trusted_hosts=trusted))
    app = Starlette(
        routes=[Route(p, _handled(h), methods=m) for p, h, m in table],
        exception_handlers={HTTPException: _http_error},
        middleware=middleware,
        lifespan=lifespan,
    )
    app.state.server = server
    return app


def uvicorn_config(app: Starlette, **settings: Any) -> uvicorn.Config:
    """How the app is served: uvicorn's own `X-Forwarded-For` handling off (by default it
    believes any header from 127.0.0.1, so a client on the same host could pick its own
    address); the app believes only the proxies its config names."""
    import uvicorn

    return uvicorn.Config(app, proxy_headers=False, **{"log_level": "warning", **settings})
