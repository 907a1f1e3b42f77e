"""The platform's storage: one `Store` protocol, the embedded store and the HTTP client.

`open_store()` picks the implementation: the server at WHILEAI_API_URL when it is set
(with the key `credentials.resolve` finds), the embedded store under WHILEAI_HOME when
it is not. Callers never branch on which one they got.
"""

from __future__ import annotations

import os

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
    "iter_all_traces",
    "open_store",
]


def api_url() -> str | None:
    url = os.environ.get("WHILEAI_API_URL", "").strip()
    return url.rstrip("/") or None


def open_store(api_key: str | None = None) -> Store:
    url = api_url()
    if url is None:
        from .local import LocalStore

        return LocalStore()
    from . import credentials
    from .http import HttpStore

    resolved = credentials.resolve(api_key, url)
    if resolved is None:
        other = credentials.saved_issuer()
        hint = f" (the saved key is for {other})" if other and other != url else ""
        raise ConfigError(
            f"no API key for {url}{hint}: run `whileai login` (or `whileai signup --email "
            "...`), or set WHILEAI_API_KEY"
        )
    return HttpStore(url, resolved.key, resolved.source)
