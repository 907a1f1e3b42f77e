"""Where `--writer` strings become writers: one place, one error message.

Names (`template`, a plug-in's) are looked up in the one registry's WRITERS; a model
reference (`openai:`, `vllm:`, `ollama:`, `http(s)://`, a plug-in provider's) makes a
`ModelWriter` (`model.py`), imported only then, so an offline run never loads an
HTTP client.
"""

from __future__ import annotations

from ..agents.base import Writer
from ..errors import ConfigError
from ..models.options import ModelOptions
from ..registry import WRITERS, is_model_ref
from ..spec import Spec


def resolve_writer(
    ref: str | None, spec: Spec, options: ModelOptions | None = None, *, avg_turns: int = 12
) -> Writer:
    """The writer `--writer REF` names (default: the template writer)."""
    options = options or ModelOptions()
    ref = (ref or "template").strip()
    entry = WRITERS.get(ref)
    if entry is not None:
        made: Writer = entry.factory(spec, options, avg_turns=avg_turns)
        return made
    if is_model_ref(ref):
        try:
            from .model import make_writer
        except ImportError as exc:
            raise ConfigError(f"model backends are unavailable ({exc})") from None
        return make_writer(ref, spec, options, avg_turns=avg_turns)
    names = ", ".join(WRITERS.names())
    raise ConfigError(
        f"unknown writer {ref!r}: expected {names}, openai:MODEL, vllm:MODEL@URL, "
        "ollama:MODEL or an http(s) URL"
    )
