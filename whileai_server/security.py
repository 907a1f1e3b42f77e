"""What every response carries against a browser being turned on the server, and the
approval form's defences against being submitted from another site.

Every response gets `X-Content-Type-Options: nosniff`, `X-Frame-Options: DENY`, a
`Content-Security-Policy` that allows nothing (the approval page sets its own, which
allows its inline style by hash and a form posting here), and `Referrer-Policy:
no-referrer` (the approval link carries the user code); pages with a form use
`same-origin` instead (`FORM_REFERRER_POLICY`).

The approval form is guarded twice: a browser's `Origin` must be this server's own host,
and the form must carry the CSRF token that the page's cookie pairs with
(`signing.csrf_token`); a cookie set `SameSite=Strict` is not sent on a cross-site post.
"""

from __future__ import annotations

import hmac
import secrets
from typing import TypeVar
from urllib.parse import urlsplit

from starlette.datastructures import MutableHeaders
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from whileai_core.store.base import Forbidden

from . import signing

R = TypeVar("R", bound=Response)
CSRF_COOKIE = "whileai_csrf"
# Pages with a form: under `no-referrer` a browser posts the form with `Origin: null`,
# which the origin check must refuse; `same-origin` keeps the Origin on posts to this
# server and still sends nothing (no user code in a URL) to any other site.
FORM_REFERRER_POLICY = "same-origin"
_HEADERS = {
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "content-security-policy": "default-src 'none'; frame-ancestors 'none'",
    "referrer-policy": "no-referrer",
}


class SecurityHeaders:
    """ASGI middleware: the headers above on every response that does not set its own."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in _HEADERS.items():
                    headers.setdefault(name, value)
            await send(message)

        await self.app(scope, receive, send_with_headers)


def form_page(response: R, csp: str) -> R:
    """The headers of an HTML page with a form (the device approval page, the dashboard):
    its own CSP, never cached (it carries a CSRF token), and the referrer policy under
    which a browser posts the form with this site's `Origin`."""
    response.headers["content-security-policy"] = csp
    response.headers["cache-control"] = "no-store"
    response.headers["referrer-policy"] = FORM_REFERRER_POLICY
    return response


def csrf_pair(secret: bytes, request: Request) -> tuple[str, str]:
    """(cookie half, form half); a cookie the browser already has is reused, so two open
    tabs both work."""
    cookie = request.cookies.get(CSRF_COOKIE) or secrets.token_urlsafe(32)
    return cookie, signing.csrf_token(secret, cookie)


def set_csrf_cookie(
    request: Request, response: Response, cookie: str, path: str = "/device"
) -> None:
    response.set_cookie(
        CSRF_COOKIE,
        cookie,
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
        path=path,
    )


def check_origin(request: Request) -> None:
    """Refuse a post a browser sent from another site's page."""
    origin = request.headers.get("origin")
    if origin is not None:
        host = request.headers.get("host", "")
        if origin == "null" or urlsplit(origin).netloc.lower() != host.lower():
            raise Forbidden("this form was sent from another site: open this server's own page")


def check_form_origin(secret: bytes, request: Request, form_token: str) -> None:
    """Refuse a post from another site, or one without the page's token."""
    check_origin(request)
    cookie = request.cookies.get(CSRF_COOKIE, "")
    expected = signing.csrf_token(secret, cookie) if cookie else ""
    if not expected or not hmac.compare_digest(expected, form_token):
        raise Forbidden("this form has expired: reload the page and approve again")
