"""The platform's storage: one `Store` protocol, the embedded store and the HTTP client.

`open_store()` picks the implementation: the server at WHILEAI_API_URL when it is set
(with the key `credentials.resolve` finds), the embedded store under WHILEAI_HOME when
it is not. Callers never branch on which one they got.

    base         the `Store` protocol, its records and errors, paging traces (`--since`)
    bound        `Storage` seen as one account: the `Store` the CLI and a request use
    local        the storage itself: metadata in SQL, dataset bodies in a blob store
    sql          the one SQL layer, SQLite and PostgreSQL; migrations: its schema
    blobs        where dataset bodies live (a directory, or S3 in blobs_s3)
    files        the bodies of datasets: uploads in flight, parts, published sets
    agents, runs, traces, catalog
                 the store's tables: agents, training runs, traces, public cards
    profile      what a dataset holds, measured once when it is finalized
    quotas       what one account may hold and push (per tier, per day)
    limits       what one request may cost (the row's own caps are `row.limits`)
    http         the `Store` over HTTP, a `whileai serve` at WHILEAI_API_URL
    credentials  which API key that client sends, and where it is kept on disk
    source       rows from a JSONL path, stdin or a dataset id, for any stage

What stays here, and why: the server's policy (quotas, limits, the catalog) is enforced
inside the storage's own transactions (a push and the quota it spends commit together),
so it lives with the tables it guards; `credentials` is part of opening the HTTP
backend (`open_store` asks it for the key), while the device login that writes the key
is an operation, in `platform/`. The store imports nothing above `metrics`, so every
stage can read rows from it; the operations over a store (push, pull, cut, purge,
login) are `platform/`'s, and OTLP decoding is `otlp/`'s.
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
