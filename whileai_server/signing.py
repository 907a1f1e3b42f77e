"""Signed, expiring links: what lets a client PUT or GET a dataset body without its key.

The original SDK uploads to the URL `POST /datasets` hands back and downloads from the
URLs `/download` lists, without sending `X-Api-Key` (they are object-store URLs on the
hosted platform). Here the server signs `METHOD path account expiry` with HMAC-SHA256
under a secret only it holds; changing any of the four breaks the signature. The link
names the account it was issued to, so the route opens that account's store and nothing
else, without a lookup by dataset id.

The same secret signs the approval form's CSRF token (`csrf_token`).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import secrets
import time
from pathlib import Path
from urllib.parse import urlencode

from whileai_core.errors import ConfigError

SECRET_FILE = "server-secret"


def token_hash(token: str) -> str:
    """How a key, a delegated credential, an invite or a session token is kept at rest:
    its sha256, so a copy of the database holds nothing usable."""
    return hashlib.sha256(token.encode()).hexdigest()


def load_secret(data_dir: Path, path: Path | None = None) -> bytes:
    """The server's signing secret: the file at `path` (`serve --secret-file`, which
    replicas behind one address share), else one made once per data directory. A new
    file is mode 0600 and appears whole, and two servers starting at once on one data
    directory agree on it (the first to link its file into place wins)."""
    path = path or data_dir / SECRET_FILE
    if not path.exists():
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(fd, "w") as fh:
                fh.write(secrets.token_hex(32))
            with contextlib.suppress(FileExistsError):
                os.link(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)
    try:
        return bytes.fromhex(path.read_text().strip())
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "not a hex secret"
        raise ConfigError(f"{path}: cannot read the signing secret ({reason})") from None


def signature(secret: bytes, method: str, path: str, expires: int, account: str = "") -> str:
    message = f"{method.upper()} {path} {account} {expires}".encode()
    return hmac.new(secret, message, hashlib.sha256).hexdigest()


def signed_query(secret: bytes, method: str, path: str, ttl: float, account: str) -> str:
    expires = int(time.time() + ttl)
    sig = signature(secret, method, path, expires, account)
    return urlencode({"acct": account, "expires": expires, "sig": sig})


def check(
    secret: bytes,
    method: str,
    path: str,
    expires: str | None,
    sig: str | None,
    account: str | None = "",
) -> str | None:
    """None when the link is good, else why it is refused ("expired" or "bad signature")."""
    # isascii: str.isdigit also takes '²', which int() refuses (a 500, not a 403).
    if not expires or not sig or not (expires.isascii() and expires.isdigit()):
        return "bad signature"
    if len(expires) > 12 or account is None:
        return "bad signature"
    expected = signature(secret, method, path, int(expires), account)
    if not hmac.compare_digest(expected, sig):
        return "bad signature"
    if int(expires) < time.time():
        return "expired"
    return None


def csrf_token(secret: bytes, cookie: str) -> str:
    """The form's half of the approval page's CSRF pair: only the server can compute it
    from the cookie's half, so a site that plants a cookie still cannot forge the form."""
    return hmac.new(secret, f"csrf {cookie}".encode(), hashlib.sha256).hexdigest()
