"""Model backends, a leaf: model references and their registered providers (`spec.py`,
`providers.py`), one async client, its cache, and the per-run clients (`factory.py`).
The roles that call a model live with their kind: the model agent in `agents/model.py`,
the model writer in `people/model.py`, the LLM judge in `judges/llm.py`.

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
