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

from ..signing import token_hash

SESSION_COOKIE = "whileai_session"
COOKIE_PATH = "/ui"


class Sessions:
    def __init__(self, storage: Storage, secret: bytes) -> None:
        self.storage = storage
        self.secret = secret

    def open(
        self,
        account: str,
        ttl: float,
        ends_by: float | None = None,
        credential: str | None = None,
    ) -> str:
        """A new session for `account`; it ends after `ttl` seconds, or at `ends_by` (the
        expiry of the delegated credential it was opened with, `credential`) if that is
        sooner, or when that credential is revoked."""
        token = secrets.token_urlsafe(32)
        now = time.time()
        expires = min(now + ttl, ends_by) if ends_by is not None else now + ttl
        with self.storage.tx() as db:
            db.execute("DELETE FROM web_sessions WHERE expires_at < ?", (now,))
            db.execute(
                "INSERT INTO web_sessions (hash, account, credential, created_at, expires_at)"
                " VALUES (?,?,?,?,?)",
                (
                    token_hash(token),
                    account,
                    token_hash(credential) if credential else None,
                    now,
                    expires,
                ),
            )
        return token

    def account(self, token: str | None) -> str | None:
        """The account a live session token opens, or None."""
        if not token:
            return None
        found = self.storage.query(
            "SELECT s.account FROM web_sessions s LEFT JOIN delegated_credentials c"
            " ON c.hash = s.credential WHERE s.hash = ? AND s.expires_at >= ?"
            " AND (s.credential IS NULL OR (c.hash IS NOT NULL AND c.revoked_at IS NULL))",
            (token_hash(token), time.time()),
        )
        return str(found[0]["account"]) if found else None

    def close(self, token: str | None) -> None:
        if token:
            with self.storage.tx() as db:
                db.execute("DELETE FROM web_sessions WHERE hash = ?", (token_hash(token),))

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
