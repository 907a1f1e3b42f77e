"""Routes that need no key: signup and the device login flow; and `/me` and the delegated
credentials, which do.

These are the routes anyone can reach, so each is rate limited per client
(`ratelimit.py`), every field is capped before anything reads it (`wire.text_field`), and
the approval form is guarded against other sites (`security.py`). A delegated credential
is refused wherever something lasting would be made: another credential, a device
approval (`delegated.refuse_if_delegated`).
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response

from whileai_core.store.base import BadRequest, Forbidden, StoreError, TooManyRequests, Unauthorized

from . import device_page, security
from .accounts import MAX_EMAIL, DeviceError, SignupError
from .delegated import refuse_if_delegated
from .server import Server
from .wire import MAX_NAME, Handler, error, form_body, json_body, store_error, text_field


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
        if len(email) > MAX_EMAIL:
            too_long = f"an email address is at most {MAX_EMAIL} characters"
            raise SignupError("invalid_email", too_long)
        name = text_field(body, "name")
        invite = text_field(body, "invite")
        record = await self.s.thread(self.s.accounts.signup, email, name, invite)
        return JSONResponse(record, status_code=201)

    async def device_code(self, request: Request) -> Response:
        self.s.device_codes.spend(self.s.client(request))
        body = await json_body(request, self.s.limits)
        code = await self.s.thread(self.s.accounts.device_code, text_field(body, "name"))
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
        code = request.query_params.get("code", "")
        return self._form(request, code if len(code) <= MAX_NAME else "", None, 200)

    async def device_approve(self, request: Request) -> Response:
        client = self.s.client(request)
        try:
            self.s.approvals.spend(client)
            form = await form_body(request)
            security.check_form_origin(self.s.secret, request, form.get("csrf", ""))
            key = text_field(form, "api_key") or None
            code = text_field(form, "user_code") or ""
            email = text_field(form, "email", MAX_EMAIL) or ""
            invite = text_field(form, "invite") or None
            if key:
                self.s.bad_keys.check(client)
        except BadRequest as exc:
            return _page_headers(HTMLResponse(device_page.refused(str(exc)), status_code=400))
        except (Forbidden, TooManyRequests) as exc:
            page = HTMLResponse(device_page.refused(str(exc)), status_code=exc.status)
            if isinstance(exc, TooManyRequests):
                page.headers["Retry-After"] = str(max(1, int(exc.retry_after)))
            return _page_headers(page)
        try:
            account = await self.s.thread(self.s.accounts.approve, code, email, key, invite)
        except StoreError as exc:
            if isinstance(exc, Unauthorized) and key:
                self.s.bad_keys.spend(client)
            return self._form(request, code, str(exc), exc.status)
        return _page_headers(HTMLResponse(device_page.approved(account.email or account.id)))

    async def device_token(self, request: Request) -> Response:
        body = await json_body(request, self.s.limits)
        device = text_field(body, "device_code")
        if not device:
            raise BadRequest("device_code is required")
        user = text_field(body, "user_code")
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
        refuse_if_delegated(account.expires_at, "mint another credential")
        body = await json_body(request, self.s.limits)
        ttl = body.get("ttlSeconds", body.get("ttl_seconds", 3600))
        issued = await self.s.thread(
            self.s.accounts.delegated.issue,
            account.id,
            ttl,
            text_field(body, "name"),
            self.s.config.max_credential_ttl,
        )
        return JSONResponse(issued, status_code=201)

    async def revoke_credential(self, request: Request) -> Response:
        account = await self.s.account(request)
        body = await json_body(request, self.s.limits)
        revoke = self.s.accounts.delegated.revoke
        credential = text_field(body, "credential")
        return JSONResponse(await self.s.thread(revoke, account.id, credential))


def _page_headers(response: Response) -> Response:
    return security.form_page(response, device_page.CSP)
