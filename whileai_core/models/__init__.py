"""Model backends: one spec parser, one async client, the model agent, writer and cache.

Import from here; the modules behind it can move. Names load on first use, so importing
the package (for `ModelOptions`, say) does not import httpx.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

_NAMES = {
    "AllowanceExhausted": ".client",
    "ChatResult": ".client",
    "ClientStats": ".client",
    "EndpointRefused": ".client",
    "ModelCallError": ".client",
    "ModelClient": ".client",
    "ModelCache": ".cache",
    "ModelOptions": ".options",
    "ModelSpec": ".spec",
    "parse_model_spec": ".spec",
}
__all__ = [
    "AllowanceExhausted",
    "ChatResult",
    "ClientStats",
    "EndpointRefused",
    "ModelCache",
    "ModelCallError",
    "ModelClient",
    "ModelOptions",
    "ModelSpec",
    "parse_model_spec",
]
__getattr__, __dir__ = lazy_exports(__name__, _NAMES)

if TYPE_CHECKING:
    from .cache import ModelCache
    from .client import (
        AllowanceExhausted,
        ChatResult,
        ClientStats,
        EndpointRefused,
        ModelCallError,
        ModelClient,
    )
    from .options import ModelOptions
    from .spec import ModelSpec, parse_model_spec
