"""The ASGI app behind `whileai serve`: the original SDK's wire format over `Storage`.

Every handler authenticates the key (`X-Api-Key`, or `Authorization: Bearer`) to an
account and runs the store call for that account in a worker thread, so SQLite and disk
never block the event loop. Another account's dataset, trace or agent answers 404, the
same as one that does not exist. Dataset bodies travel over signed, expiring links that
need no key and are streamed to and from disk in chunks: a body is never held in memory.
Errors are `{"error": "..."}` with the status of the `StoreError` that caused them.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import parse_qs

import orjson
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from whileai_core.errors import ConfigError
from whileai_core.store.base import (
    STALE_UPLOAD_SECONDS,
    TRACE_PAGE_SIZE,
    BadRequest,
    Gone,
    NewDataset,
    StoreError,
)
from whileai_core.store.cut import parse_since
from whileai_core.store.local import BoundStore, Storage

from . import device_page, signing
from .accounts import Account, Accounts, DeviceError, SignupError

log = logging.getLogger("whileai.server")
T = TypeVar("T")
MAX_OTLP_BODY = 64 * 1024 * 1024
MAX_JSON_BODY = 1024 * 1024


class _Forbidden(StoreError):
    status = 403


def _error(status: int, message: str, code: str | None = None) -> JSONResponse:
    """`{"error": ...}`; where the original SDK branches on a code (`account_exists`), the
    code is the error and the sentence rides along as `message`."""
    body = {"error": code, "message": message} if code else {"error": message}
    return JSONResponse(body, status_code=status)


class Server:
    def __init__(
        self,
        data_dir: Path,
        *,
        url_ttl: float = STALE_UPLOAD_SECONDS,
        device_interval: float = 5.0,
        device_ttl: float = 900,
    ) -> None:
        self.storage = Storage(data_dir)
        self.storage.sweep()
        self.accounts = Accounts(self.storage, device_ttl=device_ttl, interval=device_interval)
        self.secret = signing.load_secret(self.storage.root)
        self.url_ttl = url_ttl

    # --- plumbing ------------------------------------------------------------------

    @staticmethod
    async def _thread(fn: Callable[..., T], *args: Any) -> T:
        return await run_in_threadpool(fn, *args)

    async def _account(self, request: Request) -> Account:
        key = request.headers.get("x-api-key")
        auth = request.headers.get("authorization", "")
        if not key and auth.lower().startswith("bearer "):
            key = auth[7:].strip()
        return await self._thread(self.accounts.authenticate, key)

    async def _store(self, request: Request) -> BoundStore:
        account = await self._account(request)
        return BoundStore(self.storage, account.id)

    @staticmethod
    async def _json(request: Request) -> dict[str, Any]:
        body = await _capped_body(request, MAX_JSON_BODY)
        if not body.strip():
            return {}
        try:
            data = orjson.loads(body)
        except orjson.JSONDecodeError as exc:
            raise BadRequest(f"body is not valid JSON ({exc.msg})") from None
        if not isinstance(data, dict):
            raise BadRequest("body must be a JSON object")
        return data

    def _signed(self, request: Request, method: str, path: str) -> str:
        base = str(request.base_url).rstrip("/")
        return f"{base}{path}?{signing.signed_query(self.secret, method, path, self.url_ttl)}"

    def _check_link(self, request: Request, method: str) -> None:
        problem = signing.check(
            self.secret,
            method,
            request.url.path,
            request.query_params.get("expires"),
            request.query_params.get("sig"),
        )
        if problem == "expired":
            raise Gone("this link has expired: ask for a new one")
        if problem is not None:
            raise _Forbidden("this link's signature does not match")

    # --- accounts ------------------------------------------------------------------

    async def signup(self, request: Request) -> Response:
        body = await self._json(request)
        email = body.get("email")
        if not isinstance(email, str) or not email:
            raise SignupError("invalid_email", "signup needs an email address")
        name = body.get("name") if isinstance(body.get("name"), str) else None
        return JSONResponse(await self._thread(self.accounts.signup, email, name), status_code=201)

    async def device_code(self, request: Request) -> Response:
        body = await self._json(request)
        name = body.get("name") if isinstance(body.get("name"), str) else None
        code = await self._thread(self.accounts.device_code, name)
        base = str(request.base_url).rstrip("/")
        code["verification_uri"] = f"{base}/device"
        code["verification_uri_complete"] = f"{base}/device?code={code['user_code']}"
        return JSONResponse(code)

    async def device_page(self, request: Request) -> Response:
        return HTMLResponse(device_page.approval_form(request.query_params.get("code", "")))

    async def device_approve(self, request: Request) -> Response:
        raw = await _capped_body(request, MAX_JSON_BODY)
        form = {k: v[0] for k, v in parse_qs(raw.decode(errors="replace")).items()}
        code, email = form.get("user_code", ""), form.get("email", "")
        try:
            await self._thread(self.accounts.approve, code, email, form.get("api_key") or None)
        except StoreError as exc:
            page = device_page.approval_form(code, str(exc))
            return HTMLResponse(page, status_code=exc.status)
        return HTMLResponse(device_page.approved(email))

    async def device_token(self, request: Request) -> Response:
        body = await self._json(request)
        device = body.get("device_code")
        if not isinstance(device, str):
            raise BadRequest("device_code is required")
        user = body.get("user_code") if isinstance(body.get("user_code"), str) else None
        try:
            return JSONResponse(await self._thread(self.accounts.device_token, device, user))
        except DeviceError as exc:
            return _error(400, str(exc))

    async def me(self, request: Request) -> Response:
        account = await self._account(request)
        return JSONResponse(await self._thread(self.accounts.me, account))

    # --- datasets ------------------------------------------------------------------

    async def create_dataset(self, request: Request) -> Response:
        store = await self._store(request)
        body = await self._json(request)

        def text(key: str) -> str | None:
            value = body.get(key)
            if value is not None and not isinstance(value, str):
                raise BadRequest(f"{key} must be a string")
            return value

        spec = NewDataset(
            name=text("name") or "",
            purpose=text("purpose") or "train",
            mode=text("mode"),
            agent=text("agent"),
            description=text("description"),
            parent=text("parentDatasetId"),
            idempotency_key=text("idempotencyKey"),
        )
        record = await self._thread(store.create_dataset, spec)
        if not record.get("existing"):
            record["uploadUrl"] = self._signed(request, "PUT", f"/upload/{record['datasetId']}")
        return JSONResponse(record, status_code=200 if record.get("existing") else 201)

    async def upload(self, request: Request) -> Response:
        self._check_link(request, "PUT")
        dataset_id = request.path_params["id"]
        account = await self._thread(self.storage.account_of, dataset_id)
        tmp = await self._thread(self.storage.upload_target, account, dataset_id)
        size = 0
        try:
            with tmp.open("wb") as fh:
                async for chunk in request.stream():
                    fh.write(chunk)
                    size += len(chunk)
            await self._thread(self.storage.commit_upload, dataset_id, tmp)
        finally:
            tmp.unlink(missing_ok=True)
        return JSONResponse({"datasetId": dataset_id, "bytes": size})

    async def finalize(self, request: Request) -> Response:
        store = await self._store(request)
        return JSONResponse(await self._thread(store.finalize, request.path_params["id"]))

    async def list_datasets(self, request: Request) -> Response:
        store = await self._store(request)
        status = request.query_params.get("status", "ready")
        records = await self._thread(store.list_datasets, status)
        used = sum(int(d["sizeBytes"]) for d in records)
        return JSONResponse({"datasets": records, "storageBytes": used})

    async def get_dataset(self, request: Request) -> Response:
        store = await self._store(request)
        return JSONResponse(await self._thread(store.get_dataset, request.path_params["id"]))

    async def delete_dataset(self, request: Request) -> Response:
        store = await self._store(request)
        await self._thread(store.delete_dataset, request.path_params["id"])
        return JSONResponse({"deleted": request.path_params["id"]})

    async def download(self, request: Request) -> Response:
        store = await self._store(request)
        dataset_id = request.path_params["id"]
        await self._thread(self.storage.ready_file, store.account, dataset_id)
        url = self._signed(request, "GET", f"/files/{dataset_id}")
        return JSONResponse({"downloadUrl": url, "parts": [url], "expiresIn": int(self.url_ttl)})

    async def file(self, request: Request) -> Response:
        self._check_link(request, "GET")
        dataset_id = request.path_params["id"]
        account = await self._thread(self.storage.account_of, dataset_id)
        path = await self._thread(self.storage.ready_file, account, dataset_id)
        return FileResponse(path, media_type="application/x-ndjson", filename=f"{dataset_id}.jsonl")

    async def meta(self, request: Request) -> Response:
        store = await self._store(request)
        body = await self._json(request)
        fields = {k: v for k, v in body.items() if k != "datasetId"}
        return JSONResponse(
            await self._thread(store.update_meta, request.path_params["id"], fields)
        )

    async def preview(self, request: Request) -> Response:
        store = await self._store(request)
        n = _int_param(request, "n", 3)
        return JSONResponse(await self._thread(store.preview, request.path_params["id"], n))

    async def profile(self, request: Request) -> Response:
        store = await self._store(request)
        report = await self._thread(store.profile, request.path_params["id"])
        return JSONResponse({"profile": report})

    # --- agents --------------------------------------------------------------------

    async def list_agents(self, request: Request) -> Response:
        store = await self._store(request)
        return JSONResponse({"agents": await self._thread(store.list_agents)})

    async def create_agent(self, request: Request) -> Response:
        store = await self._store(request)
        body = await self._json(request)
        slug = body.get("slug") or body.get("name")
        if not isinstance(slug, str) or not slug:
            raise BadRequest("an agent needs a slug")
        description = body.get("description")
        if description is not None and not isinstance(description, str):
            raise BadRequest("description must be a string")
        spec: dict[str, Any] = {}
        if body.get("tools") is not None:
            if not isinstance(body["tools"], list):
                raise BadRequest("tools must be a list of tool schemas")
            spec["tools"] = body["tools"]
        if body.get("system_prompt") is not None:
            if not isinstance(body["system_prompt"], str):
                raise BadRequest("system_prompt must be a string")
            spec["system_prompt"] = body["system_prompt"]
        agent = await self._thread(
            self.storage.create_agent, store.account, slug, description, spec or None
        )
        return JSONResponse(agent, status_code=201)

    async def delete_agent(self, request: Request) -> Response:
        store = await self._store(request)
        await self._thread(store.delete_agent, request.path_params["slug"])
        return JSONResponse({"deleted": request.path_params["slug"]})

    # --- traces --------------------------------------------------------------------

    async def ingest(self, request: Request) -> Response:
        store = await self._store(request)
        chunks: list[bytes] = []
        size = 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > MAX_OTLP_BODY:
                raise BadRequest("export request too large")
            chunks.append(chunk)
        content_type = request.headers.get("content-type", "application/json")
        result = await self._thread(
            store.ingest_otlp,
            b"".join(chunks),
            content_type,
            request.headers.get("content-encoding"),
        )
        if content_type.split(";")[0].strip().lower() == "application/x-protobuf":
            from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
                ExportTraceServiceResponse,
            )

            return Response(
                ExportTraceServiceResponse().SerializeToString(),
                media_type="application/x-protobuf",
            )
        return JSONResponse({"partialSuccess": {}, **result})

    async def list_traces(self, request: Request) -> Response:
        store = await self._store(request)
        since = _since_param(request)
        page = await self._thread(
            self.storage.list_traces,
            store.account,
            request.query_params.get("agent"),
            _int_param(request, "page", 1),
            since,
            _int_param(request, "limit", TRACE_PAGE_SIZE),
        )
        return JSONResponse(page)

    async def delete_trace(self, request: Request) -> Response:
        store = await self._store(request)
        await self._thread(store.delete_trace, request.path_params["id"])
        return JSONResponse({"deleted": request.path_params["id"]})

    async def score(self, request: Request) -> Response:
        store = await self._store(request)
        body = await self._json(request)
        value = body.get("value", body.get("score"))
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise BadRequest("value must be a number")
        name = body.get("name") or "score"
        if not isinstance(name, str):
            raise BadRequest("name must be a string")
        result = await self._thread(store.score_trace, request.path_params["id"], value, name)
        return JSONResponse(result)

    async def health(self, request: Request) -> Response:
        return JSONResponse({"ok": True, "time": time.time()})


async def _capped_body(request: Request, limit: int) -> bytes:
    """The body, refused as soon as it passes `limit`: read whole first, a client streaming
    gigabytes at a small-JSON route would be held in memory before the size was checked."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise BadRequest("request body too large")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise BadRequest("request body too large")
        chunks.append(chunk)
    return b"".join(chunks)


def _since_param(request: Request) -> float | None:
    """`since` (unix seconds) or the original SDK's `from` (`all`, or a span like `7d`)."""
    since = request.query_params.get("since")
    if since:
        try:
            return float(since)
        except ValueError:
            raise BadRequest("since must be a unix timestamp") from None
    window = request.query_params.get("from")
    if not window or window == "all":
        return None
    try:
        return parse_since(window)
    except ConfigError as exc:
        raise BadRequest(str(exc).replace("--since", "from")) from None


def _int_param(request: Request, name: str, default: int) -> int:
    raw = request.query_params.get(name)
    if raw is None:
        return default
    try:
        return int(raw)
    except ValueError:
        raise BadRequest(f"{name} must be an integer") from None


def _handled(
    handler: Callable[[Request], Awaitable[Response]],
) -> Callable[[Request], Awaitable[Response]]:
    async def wrapped(request: Request) -> Response:
        try:
            return await handler(request)
        except StoreError as exc:
            return _error(exc.status, str(exc), getattr(exc, "code", None))
        except Exception:
            log.exception("unhandled error on %s %s", request.method, request.url.path)
            return _error(500, "internal server error")

    return wrapped


async def _http_error(request: Request, exc: Exception) -> Response:
    if isinstance(exc, HTTPException):
        if exc.status_code == 404:  # no route: say which path, not a bare "Not Found"
            return _error(404, f"{request.method} {request.url.path}: not found")
        return _error(exc.status_code, str(exc.detail))
    return _error(500, "internal server error")


def create_app(
    data_dir: Path | str,
    *,
    url_ttl: float = STALE_UPLOAD_SECONDS,
    device_interval: float = 5.0,
    device_ttl: float = 900,
) -> Starlette:
    """The platform app over the store at `data_dir` (created if missing)."""
    path = Path(data_dir).expanduser()
    if path.exists() and not path.is_dir():
        raise ConfigError(f"{path}: not a directory (the server's store is a directory)")
    path.mkdir(parents=True, exist_ok=True)
    os.chmod(path, 0o700)
    s = Server(path, url_ttl=url_ttl, device_interval=device_interval, device_ttl=device_ttl)
    table: list[tuple[str, Callable[[Request], Awaitable[Response]], list[str]]] = [
        ("/health", s.health, ["GET"]),
        ("/signup", s.signup, ["POST"]),
        ("/device/code", s.device_code, ["POST"]),
        ("/device", s.device_page, ["GET"]),
        ("/device/approve", s.device_approve, ["POST"]),
        ("/device/token", s.device_token, ["POST"]),
        ("/me", s.me, ["GET"]),
        ("/datasets", s.list_datasets, ["GET"]),
        ("/datasets", s.create_dataset, ["POST"]),
        ("/datasets/{id}", s.get_dataset, ["GET"]),
        ("/datasets/{id}", s.delete_dataset, ["DELETE"]),
        ("/datasets/{id}/finalize", s.finalize, ["POST"]),
        ("/datasets/{id}/download", s.download, ["GET"]),
        ("/datasets/{id}/meta", s.meta, ["POST"]),
        ("/datasets/{id}/preview", s.preview, ["GET"]),
        ("/datasets/{id}/profile", s.profile, ["GET"]),
        ("/upload/{id}", s.upload, ["PUT"]),
        ("/files/{id}", s.file, ["GET"]),
        ("/agents", s.list_agents, ["GET"]),
        ("/agents", s.create_agent, ["POST"]),
        ("/agents/{slug}", s.delete_agent, ["DELETE"]),
        ("/v1/traces", s.ingest, ["POST"]),
        ("/traces", s.list_traces, ["GET"]),
        ("/traces/{id}", s.delete_trace, ["DELETE"]),
        ("/traces/{id}/score", s.score, ["POST"]),
    ]
    routes = [Route(p, _handled(h), methods=m) for p, h, m in table]
    app = Starlette(routes=routes, exception_handlers={HTTPException: _http_error})
    app.state.server = s
    return app
