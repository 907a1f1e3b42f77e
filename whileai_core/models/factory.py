"""The run's model clients, and the sampling every model call sends.

Clients are kept on `options.clients`, one per role and endpoint: the agent's
(`agents/model.py`) and the writer's (`people/model.py`) traffic (calls, retries,
tokens, failures) are reported apart, and the writer has its own token cap and read
timeout (`--writer-max-tokens`, `--writer-timeout`, or `settings.writer_max_tokens` /
`writer_timeout`); a judge or any other caller that names no role shares one client per
endpoint. All of them share the run's cache. Callers import this lazily, only when a
reference is a model spec, so an offline run never imports httpx.

Sampling defaults: a flag wins, then WHILEAI_TEMPERATURE / WHILEAI_MAX_TOKENS /
WHILEAI_TOP_P, then the server's own default (the key is left out of the request).
"""

from __future__ import annotations

from typing import Any

from ..errors import ConfigError
from ..settings import env_number
from .cache import ModelCache
from .client import ModelClient
from .options import ModelOptions
from .spec import parse_model_spec

__all__ = [
    "client_for",
    "model_stats",
    "sampling_from",
]


def sampling_from(options: ModelOptions) -> dict[str, Any]:
    """The sampling keys to send: options first, then the WHILEAI_* variables."""
    temperature = options.temperature
    if temperature is None:
        temperature = env_number("TEMPERATURE", float)
    max_tokens = options.max_tokens
    if max_tokens is None:
        max_tokens = env_number("MAX_TOKENS", int)  # type: ignore[assignment]
    top_p = options.top_p
    if top_p is None:
        top_p = env_number("TOP_P", float)
    if temperature is not None and not 0 <= temperature <= 2:
        raise ConfigError(f"temperature {temperature} is outside 0..2")
    if max_tokens is not None and max_tokens < 1:
        raise ConfigError(f"max tokens {max_tokens} must be at least 1")
    if top_p is not None and not 0 < top_p <= 1:
        raise ConfigError(f"top_p {top_p} is outside (0, 1]")
    sampling = {"temperature": temperature, "max_tokens": max_tokens, "top_p": top_p}
    return {k: v for k, v in sampling.items() if v is not None}


def client_for(
    ref: str,
    options: ModelOptions,
    *,
    role: str | None = None,
    read_timeout: float | None = None,
) -> ModelClient:
    """The run's client for this endpoint and model (and `role`), created on first use."""
    spec = parse_model_spec(ref, model=options.model)
    key = f"{role or ''}|{spec.base_url}|{spec.model}"
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
        read_timeout=options.timeout if read_timeout is None else read_timeout,
        retries=options.retries,
        backoff=options.backoff,
        cache=cache,
    )
    client.role = role
    options.clients[key] = client
    return client


def model_stats(options: ModelOptions) -> dict[str, dict[str, Any]]:
    """Traffic and failure counts of every model client the run used, by role and model
    label ("agent m", "writer m"; a client without a role by its label alone)."""
    return {
        (f"{c.role} {c.spec.label}" if c.role else c.spec.label): c.stats.as_dict()
        for c in options.clients.values()
        if isinstance(c, ModelClient)
    }
