"""Model specs: one string names an endpoint and a model, for the agent, writer and judge.

    openai:gpt-4.1-mini              OPENAI_BASE_URL (default api.openai.com), OPENAI_API_KEY
    vllm:Qwen/Qwen3-4B@http://h:8000/v1   VLLM_API_KEY when set
    ollama:llama3.1                  OLLAMA_BASE_URL, default http://localhost:11434/v1
    http://localhost:8080/v1         any OpenAI-compatible server; the model comes from
                                     `model=` (the CLI's --model), else OPENAI_MODEL;
                                     the key from WHILEAI_MODEL_API_KEY

A bare URL is taken as the API root (what `/chat/completions` is appended to), so give
the `/v1` part when the server has one. OPENAI_API_KEY is never sent to a bare URL: a
local server rarely wants it, and a typo'd host must not receive it. Keys are read when
the spec is parsed, so a missing OPENAI_API_KEY for `openai:` fails before the run
starts, not on row 1.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass

from ..errors import ConfigError

OPENAI_DEFAULT_URL = "https://api.openai.com/v1"
OLLAMA_DEFAULT_URL = "http://localhost:11434/v1"
# The one prefix table: agents, writers and judges all recognise a model by it.
MODEL_PREFIXES = ("openai:", "vllm:", "ollama:", "http://", "https://")


@dataclass(frozen=True)
class ModelSpec:
    """Where to send chat completions and which model to ask for.

    `ref` is the string the user gave (it goes on rows as `model_version` /
    `writer_model`); `api_key` is never printed (see `__repr__`).
    """

    ref: str
    provider: str  # openai | vllm | ollama | url
    model: str
    base_url: str
    api_key: str | None = None

    @property
    def chat_url(self) -> str:
        return f"{self.base_url}/chat/completions"

    @property
    def label(self) -> str:
        """What rows record: the provider-qualified model name (no key, no URL)."""
        return self.model if self.provider == "url" else f"{self.provider}:{self.model}"

    def __repr__(self) -> str:
        key = "set" if self.api_key else "none"
        return (
            f"ModelSpec(provider={self.provider!r}, model={self.model!r}, "
            f"base_url={self.base_url!r}, api_key={key})"
        )


def looks_like_model_spec(ref: str) -> bool:
    """True for strings this module parses (a prefix check; parsing may still fail)."""
    return ref.strip().lower().startswith(MODEL_PREFIXES)


def _clean_url(url: str, ref: str) -> str:
    url = url.strip().rstrip("/")
    if not url.startswith(("http://", "https://")):
        raise ConfigError(f"model {ref!r}: {url!r} is not an http(s) URL")
    if url.endswith("/chat/completions"):
        url = url[: -len("/chat/completions")]
    return url


def parse_model_spec(ref: str, model: str | None = None) -> ModelSpec:
    """Parse a model reference; `model` is the --model flag (required for a bare URL).

    Raises ConfigError naming what is missing (the model name, the URL, OPENAI_API_KEY).
    """
    text = ref.strip()
    low = text.lower()
    if low.startswith("openai:"):
        name = text[len("openai:") :].strip() or (model or "")
        if not name:
            raise ConfigError(f"model {ref!r}: give a model name, e.g. openai:gpt-4.1-mini")
        base = os.environ.get("OPENAI_BASE_URL") or OPENAI_DEFAULT_URL
        key = os.environ.get("OPENAI_API_KEY") or None
        base_url = _clean_url(base, ref)
        if key is None and base_url == OPENAI_DEFAULT_URL:
            raise ConfigError(
                f"model {ref!r}: OPENAI_API_KEY is not set (export it, or set "
                "OPENAI_BASE_URL to a server that needs no key)"
            )
        return ModelSpec(text, "openai", name, base_url, key)
    if low.startswith("vllm:"):
        rest = text[len("vllm:") :].strip()
        name, sep, url = rest.partition("@")
        name = name.strip() or (model or "")
        if not sep or not url.strip():
            raise ConfigError(
                f"model {ref!r}: expected vllm:MODEL@URL, e.g. vllm:qwen@http://h:8000/v1"
            )
        if not name:
            raise ConfigError(f"model {ref!r}: no model name before '@'")
        key = os.environ.get("VLLM_API_KEY") or None
        return ModelSpec(text, "vllm", name, _clean_url(url, ref), key)
    if low.startswith("ollama:"):
        name = text[len("ollama:") :].strip() or (model or "")
        if not name:
            raise ConfigError(f"model {ref!r}: give a model name, e.g. ollama:llama3.1")
        base = os.environ.get("OLLAMA_BASE_URL") or OLLAMA_DEFAULT_URL
        return ModelSpec(text, "ollama", name, _clean_url(base, ref), None)
    if low.startswith(("http://", "https://")):
        name = model or os.environ.get("OPENAI_MODEL") or ""
        if not name:
            raise ConfigError(f"model {ref!r}: a bare URL needs --model NAME (the served model)")
        key = os.environ.get("WHILEAI_MODEL_API_KEY") or None
        return ModelSpec(text, "url", name, _clean_url(text, ref), key)
    raise ConfigError(
        f"model {ref!r}: expected openai:MODEL, vllm:MODEL@URL, ollama:MODEL "
        "or an http(s)://.../v1 URL"
    )


def bare_model(name: str) -> str:
    """A model's name as two stamps can be compared: no provider prefix, no endpoint, case
    folded (`vllm:Qwen/Qwen3-4B@http://h:8000/v1` and `Qwen/Qwen3-4B` are one model)."""
    head, sep, rest = name.partition(":")
    if sep and head.lower() in ("openai", "vllm", "ollama"):
        name = rest
    return name.split("@http", 1)[0].strip().casefold()


def self_judged_versions(judge_model: str, versions: Iterable[str]) -> list[str]:
    """The row `model_version`s that name the judge's own model, sorted."""
    mine = bare_model(judge_model)
    return sorted({v for v in versions if bare_model(v) == mine})


def self_judged_warning(judge_model: str, version: str, rows: str = "these rows") -> str:
    """What grade, report and trust say when a judge grades its own model's writing (it
    tends to prefer it), worded once so the three say the same thing."""
    return (
        f"self_judged: the judge model {judge_model} also wrote {rows} (model_version "
        f"{version}); a judge grading its own model's writing tends to prefer it"
    )
