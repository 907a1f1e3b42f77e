"""The run's model clients, and the sampling every model call sends.

Everything model-backed in one run that talks to the same endpoint and model (the agent,
`agents/model.py`; the writer, `simulate/model_writer.py`; an LLM judge) shares one
`ModelClient` (kept on `options.clients`), so the concurrency bound, the retry budget and
the failure counts are per run, not per role. Callers import this lazily, only when a
reference is a model spec, so an offline run never imports httpx.

Sampling defaults: a flag wins, then WHILEAI_TEMPERATURE / WHILEAI_MAX_TOKENS /
WHILEAI_TOP_P, then the server's own default (the key is left out of the request).
"""

from __future__ import annotations

from typing import Any

from ..errors import ConfigError
from ..settings import read
from .cache import ModelCache
from .client import ModelClient
from .options import ModelOptions
from .spec import parse_model_spec

__all__ = [
    "client_for",
    "model_stats",
    "sampling_from",
]


def _env_number(name: str, kind: type[float] | type[int]) -> float | int | None:
    raw = read(name)
    if raw is None:
        return None
    try:
        return kind(raw)
    except ValueError:
        raise ConfigError(f"{name}={raw!r} is not a {kind.__name__}") from None


def sampling_from(options: ModelOptions) -> dict[str, Any]:
    """The sampling keys to send: options first, then the WHILEAI_* variables."""
    temperature = options.temperature
    if temperature is None:
        temperature = _env_number("WHILEAI_TEMPERATURE", float)
    max_tokens = options.max_tokens
    if max_tokens is None:
        max_tokens = _env_number("WHILEAI_MAX_TOKENS", int)  # type: ignore[assignment]
    top_p = options.top_p
    if top_p is None:
        top_p = _env_number("WHILEAI_TOP_P", float)
    if temperature is not None and not 0 <= temperature <= 2:
        raise ConfigError(f"temperature {temperature} is outside 0..2")
    if max_tokens is not None and max_tokens < 1:
        raise ConfigError(f"max tokens {max_tokens} must be at least 1")
    if top_p is not None and not 0 < top_p <= 1:
        raise ConfigError(f"top_p {top_p} is outside (0, 1]")
    sampling = {"temperature": temperature, "max_tokens": max_tokens, "top_p": top_p}
    return {k: v for k, v in sampling.items() if v is not None}


def client_for(ref: str, options: ModelOptions) -> ModelClient:
    """The run's client for this endpoint and model, created on first use."""
    spec = parse_model_spec(ref, model=options.model)
    key = f"{spec.base_url}|{spec.model}"
    client = options.clients.get(key)
    if isinstance(client, ModelClient):
        return client
    cache = None
    if options.cache:
        shared = options.clients.get("__cache__")
        cache = shared if isinstance(shared, ModelCache) else ModelCache()
        options.clients["__cache__"] = cache
    client = ModelClient(
        spec,
        concurrency=max(1, options.concurrency),
        read_timeout=options.timeout,
        retries=options.retries,
        backoff=options.backoff,
        cache=cache,
    )
    options.clients[key] = client
    return client


def model_stats(options: ModelOptions) -> dict[str, dict[str, Any]]:
    """Traffic and failure counts of every model client the run used, by model label."""
    return {
        c.spec.label: c.stats.as_dict()
        for c in options.clients.values()
        if isinstance(c, ModelClient)
    }
