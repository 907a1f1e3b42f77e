"""The ASGI app behind `whileai serve`: the original SDK's wire format over the `Store`.

Routes live in `account_routes.py` (signup, device login, `/me`, delegated credentials),
`store_routes.py` (datasets, public cards, agents, traces), `run_routes.py` (training
runs) and `dashboard/` (the web pages); `server.py` holds what they share. Errors are
`{"error": "..."}` with the status of the `StoreError` that caused them: 413 names the
limit (`"limit": "max_spans"`), 429 carries `Retry-After`. What one request may cost is
bounded by `ServerConfig.limits`, and every response carries the headers in `security.py`.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
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

log = logging.getLogger("whileai.server")
__all__ = ["MAX_JSON_BODY", "create_app"]


def _handled(handler: Handler) -> Handler:
    async def wrapped(request: Request) -> Response:
        try:
            return await handler(request)
        except StoreError as exc:
            return store_error(exc)
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

    app = Starlette(
        routes=[Route(p, _handled(h), methods=m) for p, h, m in table],
        exception_handlers={HTTPException: _http_error},
        middleware=[Middleware(SecurityHeaders)],
        lifespan=lifespan,
    )
    app.state.server = server
    return app
