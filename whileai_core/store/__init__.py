"""The platform's storage: one `Store` protocol, the embedded store and the HTTP client.

`open_store()` picks the implementation: the server at WHILEAI_API_URL when it is set
(with the key `credentials.resolve` finds), the embedded store under WHILEAI_HOME when
it is not. Callers never branch on which one they got.
"""

from __future__ import annotations

from typing import Any

from ..errors import ConfigError
from .base import (
    BadRequest,
    Conflict,
    Gone,
    NewDataset,
    NotFound,
    Store,
    StoreError,
    Unauthorized,
    iter_all_traces,
)

__all__ = [
    "BadRequest",
    "Conflict",
    "Gone",
    "NewDataset",
    "NotFound",
    "Store",
    "StoreError",
    "Unauthorized",
    "api_url",
    "describe",
    "iter_all_traces",
    "open_store",
]


def api_url() -> str | None:
    """WHILEAI_API_URL (or the legacy ZEROPROOF_API_URL)."""
    from ..settings import env_setting

    found = env_setting("API_URL")
    if found is None:
        return None
    return found[0].rstrip("/") or None


def _other_server(url: str) -> str:
    from . import credentials

    other = credentials.saved_issuer()
    return f" (the saved key is for {other})" if other and other != url else ""


def describe(api_key: str | None = None) -> dict[str, Any]:
    """What `whileai status` reports: the store in use and, for a server, the key (masked),
    where it came from and the account it opens. A refused or unreachable server is
    reported under `error`, not raised: status is what you run when something is wrong."""
    url = api_url()
    if url is None:
        from .bound import LocalStore

        local = LocalStore()
        try:
            return {"store": "embedded", "location": local.location, "account": local.usage()}
        finally:
            local.close()
    from . import credentials
    from .http import HttpStore

    resolved = credentials.resolve(api_key, url)
    info: dict[str, Any] = {"store": "server", "location": url, "key": None, "keySource": None}
    if resolved is None:
        info["error"] = f"no API key for {url}{_other_server(url)}"
        return info
    info["key"], info["keySource"] = credentials.mask(resolved.key), resolved.source
    store = HttpStore(url, resolved.key, resolved.source)
    try:
        info["account"] = store.me()
    except StoreError as exc:
        info["account"], info["error"] = None, str(exc)
    finally:
        store.close()
    return info


def open_store(api_key: str | None = None, *, public: bool = False) -> Store:
    """The store in use; `public` allows a server without a key, for what it gives anyone
    (the catalog and public datasets)."""
    url = api_url()
    if url is None:
        from .bound import LocalStore

        return LocalStore()
    from . import credentials
    from .http import HttpStore

    resolved = credentials.resolve(api_key, url)
    if resolved is None and public:
        return HttpStore(url, None)
    if resolved is None:
        hint = _other_server(url)
        raise ConfigError(
            f"no API key for {url}{hint}: run `whileai login` (or `whileai signup --email "
            "...`), or set WHILEAI_API_KEY"
        )
    return HttpStore(url, resolved.key, resolved.source)
