"""Short-lived delegated credentials (`zp_dc_...`): a key's account, for a while.

A job that should not hold the account's key (a CI runner, a notebook on a shared box)
gets a credential minted from the key with an expiry (`whileai token --ttl 3600`, `POST
/auth/issue-credential`). It opens the same account as the key until it expires or is
revoked, and it never makes anything that would outlive it: not another credential, not
an API key, not an approved device login (which would turn into a key). A leaked
credential dies on schedule. Like keys, it is shown once and stored as its sha256, with
its expiry. What it can do: everything the key's account does with its data (push, pull,
traces, runs, agents, the dashboard, until it ends), and revoke credentials of its account.
"""

from __future__ import annotations

import secrets
import time
from typing import Any

from whileai_core.store.agents import iso
from whileai_core.store.base import BadRequest, Forbidden, NotFound, Unauthorized
from whileai_core.store.local import Storage

from .signing import token_hash

DELEGATED_PREFIX = "zp_dc_"
MIN_TTL = 60


def refuse_if_delegated(expires_at: float | None, what: str) -> None:
    """The one rule for every route that makes something lasting: a caller that came with a
    delegated credential (`Account.expires_at` set) is refused, whatever it asked for."""
    if expires_at is not None:
        raise Forbidden(
            f"a delegated credential cannot {what}: it never makes anything that outlives"
            " it; use one of the account's API keys"
        )


class Delegated:
    def __init__(self, storage: Storage) -> None:
        self.storage = storage

    def issue(self, account: str, ttl: Any, name: Any, max_ttl: float) -> dict[str, Any]:
        if isinstance(ttl, bool) or not isinstance(ttl, (int, float)):
            raise BadRequest("ttlSeconds must be a number of seconds")
        if not MIN_TTL <= ttl <= max_ttl:
            raise BadRequest(
                f"ttlSeconds must be between {MIN_TTL} and {int(max_ttl)} (this server's"
                " longest delegated credential)"
            )
        if name is not None and not isinstance(name, str):
            raise BadRequest("name must be a string")
        credential = DELEGATED_PREFIX + secrets.token_urlsafe(32)
        now = time.time()
        with self.storage.tx() as db:
            # Expired ones are of no use to anyone: forget them as new ones are made.
            db.execute("DELETE FROM delegated_credentials WHERE expires_at < ?", (now,))
            db.execute(
                "INSERT INTO delegated_credentials (hash, account, name, created_at, expires_at)"
                " VALUES (?,?,?,?,?)",
                (token_hash(credential), account, name, now, now + ttl),
            )
        return {
            "credential": credential,
            "name": name,
            "expiresIn": int(ttl),
            "expiresAt": iso(now + ttl),
        }

    def check(self, credential: str) -> tuple[str, float]:
        """(account, expiry) of a live credential; refused once expired or revoked."""
        found = self.storage.query(
            "SELECT account, expires_at, revoked_at FROM delegated_credentials WHERE hash = ?",
            (token_hash(credential),),
        )
        if not found:
            raise Unauthorized("unknown API key")
        row = found[0]
        if row["revoked_at"] is not None:
            raise Unauthorized("this delegated credential was revoked: mint a new one")
        if row["expires_at"] < time.time():
            raise Unauthorized(
                "this delegated credential has expired: mint a new one with `whileai token`"
            )
        return str(row["account"]), float(row["expires_at"])

    def revoke(self, account: str, credential: Any) -> dict[str, Any]:
        if not isinstance(credential, str) or not credential.startswith(DELEGATED_PREFIX):
            raise BadRequest(f"credential must be a delegated credential ({DELEGATED_PREFIX}...)")
        with self.storage.tx() as db:
            row = db.execute(
                "SELECT account FROM delegated_credentials WHERE hash = ?",
                (token_hash(credential),),
            ).fetchone()
            if row is None or row["account"] != account:  # another account's reads the same
                raise NotFound("no such delegated credential on this account")
            db.execute(
                "UPDATE delegated_credentials SET revoked_at = COALESCE(revoked_at, ?)"
                " WHERE hash = ?",
                (time.time(), token_hash(credential)),
            )
        return {"revoked": True}
