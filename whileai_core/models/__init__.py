"""Model backends: one spec parser, one async client, the model agent, writer and cache.

Import from here; the modules behind it can move.
"""

from __future__ import annotations

from .cache import ModelCache
from .client import (
    AllowanceExhausted,
    ChatResult,
    ClientStats,
    EndpointRefused,
    ModelCallError,
    ModelClient,
)
from .spec import ModelSpec, parse_model_spec

__all__ = [
    "AllowanceExhausted",
    "ChatResult",
    "ClientStats",
    "EndpointRefused",
    "ModelCache",
    "ModelCallError",
    "ModelClient",
    "ModelSpec",
    "parse_model_spec",
]
