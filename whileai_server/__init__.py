"""`whileai serve`: the platform for a team, over the same storage code as the embedded store.

`create_app` is loaded on first use, so the CLI can read this package's defaults
(`whileai_server.config`) without importing the web stack.
"""

from __future__ import annotations

from typing import Any

__all__ = ["create_app"]


def __getattr__(name: str) -> Any:
    if name == "create_app":
        from .app import create_app

        return create_app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
