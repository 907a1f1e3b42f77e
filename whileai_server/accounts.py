"""Accounts, API keys and the device login flow, in the store's own database.

Keys are shown once, when they are minted, and stored only as their sha256: a copy of the
database does not leak a usable key. The device flow follows RFC 8628: the CLI asks for
a code, a person approves it on the HTML page, the CLI's polls answer
`authorization_pending`, `slow_down` or `expired_token` until the approval turns into a
key (handed out exactly once).

Who may approve: one of an account's keys approves for that account (a delegated
credential never does: the approval would turn into a key that outlives it); without a
key, a new email makes a new account (as `POST /signup` does, and only where the signup
mode lets it). Every refusal that concerns an account reads the same, whichever detail was
wrong, so the page cannot be used to learn which emails have accounts. Under `--signup
invite` or `closed` the mode is checked before the email is looked up, so the approval
page and `/signup` answer an unknown email and a known one alike; only a holder of a
valid invite (or anyone, under `open`) hears `account_exists`, as the original SDK's CLI
expects (rate limited, and the invite is not spent by it).

Invites: under `serve --signup invite` a new account needs a code that `whileai invite`
minted into the server's database: one use each, stored as its sha256 like keys, with an
expiry.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass
from typing import Any

from whileai_core.store.agents import iso
from whileai_core.store.base import (
    BadRequest,
    Conflict,
    Gone,
    NotFound,
    TooManyRequests,
    Unauthorized,
)
from whileai_core.store.local import Storage, new_id

from .delegated import DELEGATED_PREFIX, Delegated, refuse_if_delegated
from .signing import token_hash

KEY_PREFIX = "wai_"
INVITE_PREFIX = "inv_"
NOT_APPROVED = (
    "not approved: to sign in to an account you have, paste one of its API keys; "
    "to make a new account, give an email that has none"
)
USER_CODE_ALPHABET = "BCDFGHJKLMNPQRSTVWXZ"  # no vowels, no look-alikes
MAX_EMAIL = 254  # the longest address SMTP carries (RFC 5321)
# Login codes waiting at once, server-wide: each is a row anyone can make without a key,
# so past this a new one waits for old ones to expire (rate limits are per address).
MAX_PENDING_CODES = 10_000


def valid_email(text: str) -> bool:
    """One `@` with something before it, a domain with a dot inside it, no whitespace, at
    most 254 characters. Checked with plain string operations, not a pattern: the cost is
    one pass over at most 254 characters, whatever a client sends."""
    if len(text) > MAX_EMAIL or any(c.isspace() for c in text):
        return False
    local, _, domain = text.partition("@")
    return bool(local) and "@" not in domain and "." in domain[1:-1]


class SignupError(BadRequest):
    """A refused signup; `code` is the error code the original SDK's CLI branches on."""

    def __init__(self, code: str, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.code = code
        self.status = status


class DeviceError(BadRequest):
    """An RFC 8628 token-endpoint error; the message is the error code itself."""


key_hash = token_hash


def _invite_refusal(invite: str | None) -> SignupError:
    return SignupError(
        "invite_required",
        "this server takes new accounts by invite: ask its admin for a code"
        if not invite
        else "that invite code is unknown, used or expired",
        status=403,
    )


def mint_invites(
    storage: Storage, count: int, ttl: float, note: str | None = None, tier: str | None = None
) -> list[str]:
    """`count` one-use invite codes valid for `ttl` seconds (shown once, stored hashed); an
    account made with one gets `tier`."""
    now = time.time()
    codes = [INVITE_PREFIX + secrets.token_urlsafe(16) for _ in range(count)]
    with storage.tx() as db:
        db.executemany(
            "INSERT INTO invites (hash, note, created_at, expires_at, tier) VALUES (?,?,?,?,?)",
            [(key_hash(c), note, now, now + ttl, tier) for c in codes],
        )
    return codes


@dataclass(frozen=True)
class Account:
    id: str
    email: str | None
    name: str | None
    # Set when the request came with a delegated credential: when that credential ends.
    expires_at: float | None = None


class Accounts:
    def __init__(
        self,
        storage: Storage,
        *,
        device_ttl: float = 900,
        interval: float = 5,
        signup: str = "open",
    ) -> None:
        self.storage = storage
        self.device_ttl = device_ttl
        self.interval = interval
        self.mode = signup
        self.delegated = Delegated(storage)
        self.forget_device_codes()

    def wire(self, account: Account) -> dict[str, Any]:
        """The account as `/signup` and `/me` answer it (the original SDK's field names)."""
        tier, _ = self.storage.quotas_for(account.id)
        return {"user_id": account.id, "email": account.email, "name": account.name, "tier": tier}

    # --- accounts and keys ---------------------------------------------------------

    def _mint_key(self, account: str, name: str | None) -> str:
        key = KEY_PREFIX + secrets.token_urlsafe(32)
        with self.storage.tx() as db:
            db.execute(
                "INSERT INTO api_keys (hash, account, name, created_at) VALUES (?,?,?,?)",
                (key_hash(key), account, name, time.time()),
            )
        return key

    def by_email(self, email: str) -> Account | None:
        found = self.storage.query(
            "SELECT id, email, name FROM accounts WHERE email = ?", (email.lower(),)
        )
        return Account(*found[0]) if found else None

    def by_id(self, account_id: str) -> Account | None:
        found = self.storage.query(
            "SELECT id, email, name FROM accounts WHERE id = ?", (account_id,)
        )
        return Account(*found[0]) if found else None

    def _create(self, email: str, name: str | None, invite: str | None) -> Account:
        """A new account, if the signup mode allows one; an invite is spent in the same
        transaction, so a refused signup never uses it up."""
        self._may_create(invite)
        email = email.strip().lower()
        if not valid_email(email):
            raise SignupError("invalid_email", f"not an email address: {email[:MAX_EMAIL]!r}")
        account = Account(new_id("usr"), email, name or email.split("@")[0])
        now = time.time()
        with self.storage.tx() as db:
            db.serialize(f"account for {email}")  # two signups of one email: one account
            tier = None
            # The invite first: whether the email has an account is said only to someone
            # who could make one (a conflict rolls the spent invite back).
            if self.mode == "invite":
                spent = db.execute(
                    "UPDATE invites SET used_by = ?, used_at = ? WHERE hash = ?"
                    " AND used_by IS NULL AND expires_at >= ?",
                    (account.id, now, key_hash(invite or ""), now),
                ).rowcount
                if not spent:
                    raise _invite_refusal(invite)
                tier = db.execute(
                    "SELECT tier FROM invites WHERE hash = ?", (key_hash(invite or ""),)
                ).fetchone()["tier"]
            if db.execute("SELECT 1 FROM accounts WHERE email = ?", (email,)).fetchone():
                raise SignupError(
                    "account_exists",
                    f"an account for {email} exists: sign in with `whileai login`",
                    status=409,
                )
            db.execute(
                "INSERT INTO accounts (id, email, name, created_at, tier) VALUES (?,?,?,?,?)",
                (account.id, account.email, account.name, now, tier),
            )
        return account

    def _may_create(self, invite: str | None) -> None:
        """Refuse, before any email is looked up, when no new account could be made: signups
        closed, or an invite-only server and no usable invite (checked again, and spent,
        by `_create`'s transaction)."""
        if self.mode == "closed":
            raise SignupError(
                "signups_closed",
                "this server takes no new accounts: ask its admin for one",
                status=403,
            )
        if self.mode == "invite":
            usable = self.storage.query(
                "SELECT 1 FROM invites WHERE hash = ? AND used_by IS NULL AND expires_at >= ?",
                (key_hash(invite or ""), time.time()),
            )
            if not usable:
                raise _invite_refusal(invite)

    def signup(self, email: str, name: str | None, invite: str | None = None) -> dict[str, Any]:
        account = self._create(email, name, invite)
        return {"api_key": self._mint_key(account.id, "signup"), **self.wire(account)}

    def authenticate(self, key: str | None) -> Account:
        if not key:
            raise Unauthorized("missing API key: send it as X-Api-Key")
        if key.startswith(DELEGATED_PREFIX):
            account_id, expires_at = self.delegated.check(key)
            found = self.storage.query(
                "SELECT id, email, name FROM accounts WHERE id = ?", (account_id,)
            )
            if not found:
                raise Unauthorized("unknown API key")
            return Account(found[0]["id"], found[0]["email"], found[0]["name"], expires_at)
        found = self.storage.query(
            "SELECT a.id, a.email, a.name FROM api_keys k JOIN accounts a ON a.id = k.account"
            " WHERE k.hash = ?",
            (key_hash(key),),
        )
        if not found:
            raise Unauthorized("unknown API key")
        return Account(*found[0])

    def me(self, account: Account) -> dict[str, Any]:
        """Who the key is, the tier's quotas and today's usage (what `whileai status` and
        the original SDK's `account()` show); `datasets` and `bytes` stay at the top level
        for the clients that read them there."""
        usage = self.storage.usage(account.id)
        record = {
            **self.wire(account),
            "datasets": usage["usage"]["datasets"],
            "bytes": usage["usage"]["storedBytes"],
            "limits": usage["limits"],
            "usage": usage["usage"],
        }
        if account.expires_at is not None:
            record["credential"] = {"delegated": True, "expiresAt": iso(account.expires_at)}
        return record

    # --- device flow ---------------------------------------------------------------

    def forget_device_codes(self) -> int:
        """Delete expired codes and those whose key was handed out (a poll for one answers
        `expired_token` either way); returns how many went."""
        with self.storage.tx() as db:
            gone = db.execute(
                "DELETE FROM device_codes WHERE expires_at < ? OR done = 1", (time.time(),)
            ).rowcount
        return int(gone)

    def device_code(self, name: str | None) -> dict[str, Any]:
        self.forget_device_codes()
        waiting = self.storage.query("SELECT COUNT(*) FROM device_codes")[0][0]
        if waiting >= MAX_PENDING_CODES:
            raise TooManyRequests(
                f"{waiting:,} logins are waiting for approval on this server: try again"
                " in a few minutes",
                60,
            )
        device = secrets.token_urlsafe(32)
        letters = "".join(secrets.choice(USER_CODE_ALPHABET) for _ in range(8))
        user = f"{letters[:4]}-{letters[4:]}"
        now = time.time()
        with self.storage.tx() as db:
            db.execute(
                "INSERT INTO device_codes (device_code, user_code, name, created_at, expires_at,"
                " interval) VALUES (?,?,?,?,?,?)",
                (device, user, name, now, now + self.device_ttl, self.interval),
            )
        return {
            "device_code": device,
            "user_code": user,
            "expires_in": int(self.device_ttl),
            "interval": self.interval,
        }

    def pending(self, user_code: str) -> dict[str, Any]:
        found = self.storage.query(
            "SELECT * FROM device_codes WHERE user_code = ?", (user_code.strip().upper(),)
        )
        if not found:
            raise NotFound("unknown code: check it against the one your terminal shows")
        row = dict(found[0])
        if row["expires_at"] < time.time():
            raise Gone("this code has expired: run `whileai login` again")
        if row["account"] is not None:
            raise Conflict("this code was already approved")
        return row

    def approve(
        self, user_code: str, email: str, key: str | None, invite: str | None = None
    ) -> Account:
        """Bind a pending code to an account: the key's, or a new one for `email`."""
        row = self.pending(user_code)
        email = email.strip().lower()
        if key:
            try:
                account = self.authenticate(key)
            except Unauthorized:
                raise Unauthorized(NOT_APPROVED) from None
            refuse_if_delegated(account.expires_at, "approve a login")
            if email and email != (account.email or ""):
                raise Unauthorized(NOT_APPROVED)
        elif not email:
            raise BadRequest("give the email for a new account, or an API key for yours")
        else:
            self._may_create(invite)  # known or not, a refused mode answers the same
            if self.by_email(email) is not None:
                raise Unauthorized(NOT_APPROVED)
            account = self._create(email, None, invite)
        with self.storage.tx() as db:
            db.execute(
                "UPDATE device_codes SET account = ? WHERE device_code = ?",
                (account.id, row["device_code"]),
            )
        return account

    def device_token(self, device_code: str, user_code: str | None) -> dict[str, Any]:
        now = time.time()
        error: str | None = None
        # The poll time must be committed even when the answer is an error, so decide
        # inside the transaction and raise after it.
        with self.storage.tx() as db:
            # Locked: two polls at once must not both turn one approval into a key.
            row = db.execute(
                "SELECT * FROM device_codes WHERE device_code = ? FOR UPDATE", (device_code,)
            ).fetchone()
            if (
                row is None
                or (user_code and row["user_code"] != user_code.strip().upper())
                or row["done"]
                or row["expires_at"] < now
            ):
                error = "expired_token"
            elif row["account"] is None:
                last = row["last_poll"]
                db.execute(
                    "UPDATE device_codes SET last_poll = ? WHERE device_code = ?",
                    (now, device_code),
                )
                too_fast = last is not None and now - last < row["interval"] * 0.8
                error = "slow_down" if too_fast else "authorization_pending"
            else:
                db.execute("UPDATE device_codes SET done = 1 WHERE device_code = ?", (device_code,))
                account, name = row["account"], row["name"]
        if error is not None:
            raise DeviceError(error)
        key = self._mint_key(account, name)
        return {"api_key": key, "name": name, "user_id": account}
