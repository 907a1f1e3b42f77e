"""Dashboard sign-in: a session per browser, opened with one of the account's keys.

The cookie holds a random token; the database holds only its sha256, the account and the
expiry, so signing out (or the expiry) ends the session on the server, not just in the
browser. The cookie is `HttpOnly` (no script reads it), `SameSite=Strict` (no other site's
page sends it) and `Secure` behind https. Every form a signed-in page posts carries a CSRF
token derived from the session token with the server's secret, and is also refused when
its `Origin` is another site's.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time

from starlette.requests import Request
from starlette.responses import Response

from whileai_core.store.base import Forbidden
from whileai_core.store.local import Storage

SESSION_COOKIE = "whileai_session"
COOKIE_PATH = "/ui"


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class Sessions:
    def __init__(self, storage: Storage, secret: bytes) -> None:
        self.storage = storage
        self.secret = secret

    def open(self, account: str, ttl: float, ends_by: float | None = None) -> str:
        """A new session for `account`; it ends after `ttl` seconds, or at `ends_by` (the
        expiry of the delegated credential it was opened with) if that is sooner."""
        token = secrets.token_urlsafe(32)
        now = time.time()
        expires = min(now + ttl, ends_by) if ends_by is not None else now + ttl
        with self.storage.tx() as db:
            db.execute("DELETE FROM web_sessions WHERE expires_at < ?", (now,))
            db.execute(
                "INSERT INTO web_sessions (hash, account, created_at, expires_at) VALUES (?,?,?,?)",
                (_hash(token), account, now, expires),
            )
        return token

    def account(self, token: str | None) -> str | None:
        """The account a live session token opens, or None."""
        if not token:
            return None
        found = self.storage.query(
            "SELECT account FROM web_sessions WHERE hash = ? AND expires_at >= ?",
            (_hash(token), time.time()),
        )
        return str(found[0]["account"]) if found else None

    def close(self, token: str | None) -> None:
        if token:
            with self.storage.tx() as db:
                db.execute("DELETE FROM web_sessions WHERE hash = ?", (_hash(token),))

    def csrf(self, token: str) -> str:
        return hmac.new(self.secret, f"session-csrf {token}".encode(), hashlib.sha256).hexdigest()

    def check_form(self, request: Request, form_token: str) -> None:
        """A signed-in form: from this site, carrying this session's token."""
        session = request.cookies.get(SESSION_COOKIE, "")
        expected = self.csrf(session) if session else ""
        if not expected or not hmac.compare_digest(expected, form_token):
            raise Forbidden("this form has expired: reload the page and try again")


def set_session_cookie(request: Request, response: Response, token: str, ttl: float) -> None:
    response.set_cookie(
        SESSION_COOKIE,
        token,
        max_age=int(ttl),
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
        path=COOKIE_PATH,
    )


def clear_session_cookie(response: Response) -> None:
    response.delete_cookie(SESSION_COOKIE, path=COOKIE_PATH, httponly=True, samesite="strict")
