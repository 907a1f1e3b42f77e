"""`whileai serve`: the platform for a team, over the same storage code as the embedded store.

`create_app` is loaded on first use, so the CLI can read this package's defaults
(`whileai_server.config`) without importing the web stack.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from whileai_core._lazy import lazy_exports

__all__ = ["create_app"]
__getattr__, __dir__ = lazy_exports(__name__, {"create_app": ".app"})

if TYPE_CHECKING:
    from .app import create_app
