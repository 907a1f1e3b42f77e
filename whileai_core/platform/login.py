"""The device login, client side: ask for a code, show it, poll until it is approved.

The pending code is kept under WHILEAI_HOME (mode 0600) until it is used or expires, so
a login interrupted before the person approved resumes the same code: the link they may
already have open stays the right one.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from ..errors import WhileaiError
from ..store import credentials
from ..store import http as wire


def start_or_resume(api_url: str, name: str | None) -> tuple[dict[str, Any], bool]:
    """The pending code for `api_url` (resumed when still valid) and whether it was resumed."""
    path = credentials.pending_login_path()
    pending = credentials.read_json(path)
    now = time.time()
    if pending and pending.get("api_url") == api_url and pending.get("expires_at", 0) > now + 5:
        return pending, True
    code = wire.device_code(api_url, name)
    pending = {
        "api_url": api_url,
        "device_code": code["device_code"],
        "user_code": code["user_code"],
        "verification_uri_complete": code["verification_uri_complete"],
        "interval": float(code.get("interval", 5)),
        "expires_at": now + float(code.get("expires_in", 900)),
    }
    credentials.write_private(path, pending)
    return pending, False


def wait_for_key(
    pending: dict[str, Any],
    *,
    sleep: Callable[[float], None] = time.sleep,
    on_wait: Callable[[], None] | None = None,
) -> dict[str, Any]:
    """Poll until approved; save the key (0600) and forget the pending code."""
    interval = float(pending["interval"])
    while True:
        if time.time() > pending["expires_at"]:
            credentials.pending_login_path().unlink(missing_ok=True)
            raise WhileaiError("the login code expired before it was approved: run it again")
        state, record = wire.device_token(
            pending["api_url"], pending["device_code"], pending["user_code"]
        )
        if state == "ok":
            break
        if state == "expired_token":
            credentials.pending_login_path().unlink(missing_ok=True)
            raise WhileaiError("the login code expired or was used: run `whileai login` again")
        if state == "slow_down":
            interval *= 2
        if on_wait is not None:
            on_wait()
        sleep(interval)
    credentials.save(
        record["api_key"],
        api_url=pending["api_url"],
        name=record.get("name"),
        user_id=record.get("user_id"),
    )
    credentials.pending_login_path().unlink(missing_ok=True)
    return record
