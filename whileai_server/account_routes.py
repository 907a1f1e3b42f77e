"""Routes that need no key: signup and the device login flow; and `/me` and the delegated
credentials, which do.

These are the routes anyone can reach, so each is rate limited per client
(`ratelimit.py`) and the approval form is guarded against other sites (`security.py`).
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response

from whileai_core.store.base import BadRequest, Forbidden, StoreError, TooManyRequests, Unauthorized

from . import device_page, security
from .accounts import DeviceError, SignupError
from .server import Server
from .wire import Handler, error, form_body, json_body, store_error


class AccountRoutes:
    def __init__(self, server: Server) -> None:
        self.s = server

    def table(self) -> list[tuple[str, Handler, list[str]]]:
        return [
            ("/signup", self.signup, ["POST"]),
            ("/device/code", self.device_code, ["POST"]),
            ("/device", self.device_page, ["GET"]),
            ("/device/approve", self.device_approve, ["POST"]),
            ("/device/token", self.device_token, ["POST"]),
            ("/me", self.me, ["GET"]),
            ("/auth/issue-credential", self.issue_credential, ["POST"]),
            ("/auth/revoke-credential", self.revoke_credential, ["POST"]),
        ]

    async def signup(self, request: Request) -> Response:
        try:
            self.s.signups.spend(self.s.client(request))
        except TooManyRequests as exc:  # the original SDK's CLI knows this code
            response = store_error(SignupError("too_many_signups", str(exc), status=429))
            response.headers["Retry-After"] = str(max(1, int(exc.retry_after)))
            return response
        body = await json_body(request, self.s.limits)
        email = body.get("email")
        if not isinstance(email, str) or not email:
            raise SignupError("invalid_email", "signup needs an email address")
        name = _text(body, "name")
        invite = _text(body, "invite")
        record = await self.s.thread(self.s.accounts.signup, email, name, invite)
        return JSONResponse(record, status_code=201)

    async def device_code(self, request: Request) -> Response:
        body = await json_body(request, self.s.limits)
        code = await self.s.thread(self.s.accounts.device_code, _text(body, "name"))
        base = str(request.base_url).rstrip("/")
        code["verification_uri"] = f"{base}/device"
        code["verification_uri_complete"] = f"{base}/device?code={code['user_code']}"
        return JSONResponse(code)

    def _form(self, request: Request, code: str, problem: str | None, status: int) -> Response:
        cookie, csrf = security.csrf_pair(self.s.secret, request)
        page = device_page.approval_form(code, csrf, self.s.config.signup, problem)
        response = HTMLResponse(page, status_code=status)
        security.set_csrf_cookie(request, response, cookie)
        return _page_headers(response)

    async def device_page(self, request: Request) -> Response:
        return self._form(request, request.query_params.get("code", ""), None, 200)

    async def device_approve(self, request: Request) -> Response:
        client = self.s.client(request)
        try:
            self.s.approvals.spend(client)
            form = await form_body(request)
            security.check_form_origin(self.s.secret, request, form.get("csrf", ""))
            key = form.get("api_key") or None
            if key:
                self.s.bad_keys.check(client)
        except (Forbidden, TooManyRequests) as exc:
            page = HTMLResponse(device_page.refused(str(exc)), status_code=exc.status)
            if isinstance(exc, TooManyRequests):
                page.headers["Retry-After"] = str(max(1, int(exc.retry_after)))
            return _page_headers(page)
        code = form.get("user_code", "")
        try:
            account = await self.s.thread(
                self.s.accounts.approve,
                code,
                form.get("email", ""),
                key,
                form.get("invite") or None,
            )
        except StoreError as exc:
            if isinstance(exc, Unauthorized) and key:
                self.s.bad_keys.spend(client)
            return self._form(request, code, str(exc), exc.status)
        return _page_headers(HTMLResponse(device_page.approved(account.email or account.id)))

    async def device_token(self, request: Request) -> Response:
        body = await json_body(request, self.s.limits)
        device = body.get("device_code")
        if not isinstance(device, str):
            raise BadRequest("device_code is required")
        user = _text(body, "user_code")
        try:
            return JSONResponse(await self.s.thread(self.s.accounts.device_token, device, user))
        except DeviceError as exc:
            return error(400, str(exc))

    async def me(self, request: Request) -> Response:
        account = await self.s.account(request)
        return JSONResponse(await self.s.thread(self.s.accounts.me, account))

    async def issue_credential(self, request: Request) -> Response:
        """A delegated credential minted from a key (never from another credential, so one
        that leaks cannot outlive its expiry)."""
        account = await self.s.account(request)
        if account.expires_at is not None:
            raise Forbidden("a delegated credential cannot mint another: use the account's key")
        body = await json_body(request, self.s.limits)
        ttl = body.get("ttlSeconds", body.get("ttl_seconds", 3600))
        issued = await self.s.thread(
            self.s.accounts.delegated.issue,
            account.id,
            ttl,
            body.get("name"),
            self.s.config.max_credential_ttl,
        )
        return JSONResponse(issued, status_code=201)

    async def revoke_credential(self, request: Request) -> Response:
        account = await self.s.account(request)
        body = await json_body(request, self.s.limits)
        revoke = self.s.accounts.delegated.revoke
        return JSONResponse(await self.s.thread(revoke, account.id, body.get("credential")))


def _text(body: dict[str, Any], key: str) -> str | None:
    value = body.get(key)
    return value if isinstance(value, str) else None


def _page_headers(response: Response) -> Response:
    return security.form_page(response, device_page.CSP)
