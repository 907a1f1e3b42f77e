"""The dashboard's routes, under /ui: sign in and out, the pages, the static assets.

Every page is one account's: the session's account opens its `Store`, as a key does for
the API, so another account's dataset or run answers 404 here too. A page that is not
signed in redirects to the sign-in form; the forms (sign in, sign out) are refused from
another site (`Origin`) and without their CSRF token.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from importlib import resources
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from whileai_core.store.base import (
    BadRequest,
    Forbidden,
    NotFound,
    Store,
    StoreError,
    TooManyRequests,
    Unauthorized,
)

from .. import security
from ..server import Server
from ..wire import Handler, form_body, text_field
from . import data_pages, html, run_pages
from .session import SESSION_COOKIE, Sessions, clear_session_cookie, set_session_cookie

STATIC_TYPES = {".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}
STATIC_FILES = ("chart.umd.min.js", "dashboard.js", "dashboard.css")
Page = Callable[[Request, Store, "Viewer"], Awaitable[tuple[str, str, str, dict[str, Any]]]]


class Viewer:
    """Who is looking: the account, how the header names it, the sign-out form's token."""

    def __init__(self, account: str, who: str, csrf: str) -> None:
        self.account, self.who, self.csrf = account, who, csrf
        self.refresh: int | None = None  # a page showing live work sets its reload period


def _html(body: str, status: int = 200) -> HTMLResponse:
    return security.form_page(HTMLResponse(body, status_code=status), html.CSP)


def _static(name: str) -> bytes:
    return (resources.files(__package__) / "static" / name).read_bytes()


class DashboardRoutes:
    def __init__(self, server: Server) -> None:
        self.s = server
        self.sessions = Sessions(server.storage, server.secret)
        self.assets = {name: _static(name) for name in STATIC_FILES}

    def table(self) -> list[tuple[str, Handler, list[str]]]:
        return [
            ("/ui", self.home, ["GET"]),
            ("/ui/signin", self.signin_form, ["GET"]),
            ("/ui/signin", self.signin, ["POST"]),
            ("/ui/signout", self.signout, ["POST"]),
            ("/ui/datasets", self._page(self.datasets), ["GET"]),
            ("/ui/datasets/{id}", self._page(self.dataset), ["GET"]),
            ("/ui/runs", self._page(self.runs), ["GET"]),
            ("/ui/runs/overlay", self._page(self.overlay), ["GET"]),
            ("/ui/runs/{id}", self._page(self.run), ["GET"]),
            ("/ui/traces", self._page(self.traces), ["GET"]),
            ("/ui/traces/{id}", self._page(self.trace), ["GET"]),
            ("/ui/agents", self._page(self.agents), ["GET"]),
            ("/ui/static/{name}", self.static, ["GET"]),
        ]

    # --- signing in and out ------------------------------------------------------------

    async def home(self, request: Request) -> Response:
        return RedirectResponse("/ui/datasets", status_code=303)

    def _form(self, request: Request, problem: str | None = None, status: int = 200) -> Response:
        cookie, csrf = security.csrf_pair(self.s.secret, request)
        response = _html(html.signin(csrf, problem), status)
        security.set_csrf_cookie(request, response, cookie, path="/ui")
        return response

    async def signin_form(self, request: Request) -> Response:
        return self._form(request)

    async def signin(self, request: Request) -> Response:
        client = self.s.client(request)
        try:
            form = await form_body(request)
            security.check_form_origin(self.s.secret, request, form.get("csrf", ""))
            self.s.bad_keys.check(client)
            key = text_field(form, "api_key")
            account = await self.s.thread(self.s.accounts.authenticate, key)
        except Unauthorized as exc:
            if form.get("api_key"):
                self.s.bad_keys.spend(client)
            return self._form(request, f"not signed in: {exc}", 401)
        except (Forbidden, TooManyRequests, BadRequest) as exc:
            return self._form(request, str(exc), exc.status)
        ttl = self.s.config.session_ttl
        delegated = key if account.expires_at is not None else None
        token = await self.s.thread(
            self.sessions.open, account.id, ttl, account.expires_at, delegated
        )
        response = RedirectResponse("/ui/datasets", status_code=303)
        set_session_cookie(request, response, token, ttl)
        return response

    async def signout(self, request: Request) -> Response:
        form = await form_body(request)
        try:
            security.check_origin(request)
            self.sessions.check_form(request, form.get("csrf", ""))
        except Forbidden as exc:
            return _html(html.refused(str(exc)), 403)
        await self.s.thread(self.sessions.close, request.cookies.get(SESSION_COOKIE))
        response = RedirectResponse("/ui/signin", status_code=303)
        clear_session_cookie(response)
        return response

    # --- pages ---------------------------------------------------------------------------

    def _page(self, build: Page) -> Handler:
        async def handler(request: Request) -> Response:
            token = request.cookies.get(SESSION_COOKIE)
            account = await self.s.thread(self.sessions.account, token)
            if account is None or token is None:
                return RedirectResponse("/ui/signin", status_code=303)
            found = await self.s.thread(self.s.accounts.by_id, account)
            who = (found.email or found.id) if found else account
            viewer = Viewer(account, who, self.sessions.csrf(token))
            store = self.s.open_store(account)
            try:
                title, section, body, charts = await build(request, store, viewer)
            except StoreError as exc:
                status = exc.status if isinstance(exc, NotFound) else 400
                problem = f"<p class='err'>{html.e(exc)}</p>"
                return _html(html.page("Not here", problem, who=who, csrf=viewer.csrf), status)
            finally:
                store.close()
            return _html(
                html.page(
                    title,
                    body,
                    section=section,
                    who=who,
                    csrf=viewer.csrf,
                    charts=charts,
                    refresh=viewer.refresh,
                )
            )

        return handler

    async def datasets(
        self, request: Request, store: Store, viewer: Viewer
    ) -> tuple[str, str, str, dict[str, Any]]:
        records = await self.s.thread(store.list_datasets)
        return "Datasets", "datasets", data_pages.datasets_body(records), {}

    async def dataset(
        self, request: Request, store: Store, viewer: Viewer
    ) -> tuple[str, str, str, dict[str, Any]]:
        dataset_id = request.path_params["id"]
        preview = await self.s.thread(store.preview, dataset_id, data_pages.PREVIEW_ROWS)
        parent_id = preview["dataset"].get("parentDatasetId")
        parent = None
        if parent_id:
            try:
                parent = await self.s.thread(store.get_dataset, parent_id)
            except NotFound:
                parent = None
        body, charts = data_pages.dataset_body(preview, parent)
        return preview["dataset"]["name"], "datasets", body, charts

    async def runs(
        self, request: Request, store: Store, viewer: Viewer
    ) -> tuple[str, str, str, dict[str, Any]]:
        records = await self.s.thread(store.list_runs)
        if any(run_pages.is_live(r) for r in records):
            viewer.refresh = run_pages.REFRESH_SECONDS
        return "Training runs", "runs", run_pages.runs_body(records), {}

    async def run(
        self, request: Request, store: Store, viewer: Viewer
    ) -> tuple[str, str, str, dict[str, Any]]:
        record = await self.s.thread(store.get_run, request.path_params["id"])
        if run_pages.is_live(record):
            viewer.refresh = run_pages.REFRESH_SECONDS
        body, charts = run_pages.run_body(record)
        return record["name"], "runs", body, charts

    async def overlay(
        self, request: Request, store: Store, viewer: Viewer
    ) -> tuple[str, str, str, dict[str, Any]]:
        ids = list(dict.fromkeys(request.query_params.getlist("id")))
        if not 2 <= len(ids) <= run_pages.MAX_OVERLAY:
            raise BadRequest(f"check 2 to {run_pages.MAX_OVERLAY} runs to overlay")
        records = [await self.s.thread(store.get_run, run_id) for run_id in ids]
        if any(run_pages.is_live(r) for r in records):
            viewer.refresh = run_pages.REFRESH_SECONDS
        body, charts = run_pages.overlay_body(records)
        return f"{len(records)} runs overlaid", "runs", body, charts

    async def trace(
        self, request: Request, store: Store, viewer: Viewer
    ) -> tuple[str, str, str, dict[str, Any]]:
        found = await self.s.thread(store.get_trace, request.path_params["id"])
        return f"Trace {str(found['traceId'])[:16]}", "traces", run_pages.trace_body(found), {}

    async def traces(
        self, request: Request, store: Store, viewer: Viewer
    ) -> tuple[str, str, str, dict[str, Any]]:
        result = await self.s.thread(store.list_traces)
        return "Traces", "traces", run_pages.traces_body(result), {}

    async def agents(
        self, request: Request, store: Store, viewer: Viewer
    ) -> tuple[str, str, str, dict[str, Any]]:
        records = await self.s.thread(store.list_agents)
        return "Agents", "agents", run_pages.agents_body(records), {}

    # --- assets ----------------------------------------------------------------------------

    async def static(self, request: Request) -> Response:
        name = request.path_params["name"]
        body = self.assets.get(name)
        if body is None:
            return _html(html.page("Not found", "<p>No such file.</p>"), 404)
        kind = STATIC_TYPES[name[name.rfind(".") :]]
        return Response(body, media_type=kind, headers={"cache-control": "public, max-age=3600"})
