"""The built-in model providers, registered like any plug-in's (`registry.PROVIDERS`).

A provider turns the rest of a `NAME:REST` reference into a `ModelSpec`: the endpoint,
the model and the key. Keys and endpoints come from the environment here, through
`settings`, when the reference is parsed, so a missing key fails before the run starts.
A package adds one the same way, by entry point::

    [project.entry-points."whileai.providers"]
    together = "my_pkg.models:together"    # together(ref: ModelRef) -> ModelSpec

after which `--agent together:meta-llama/Llama-3-8b`, `--writer together:...` and
`--judge together:...` all reach it.
"""

from __future__ import annotations

from ..errors import ConfigError
from ..registry import PROVIDERS, URL_PROVIDER
from ..settings import read
from .spec import OLLAMA_DEFAULT_URL, OPENAI_DEFAULT_URL, ModelRef, ModelSpec, clean_url


@PROVIDERS.register("openai")
def openai(ref: ModelRef) -> ModelSpec:
    """openai:MODEL at OPENAI_BASE_URL (default api.openai.com) with OPENAI_API_KEY."""
    name = ref.name("openai:gpt-4.1-mini")
    base_url = clean_url(read("OPENAI_BASE_URL") or OPENAI_DEFAULT_URL, ref.text)
    key = read("OPENAI_API_KEY")
    if key is None and base_url == OPENAI_DEFAULT_URL:
        raise ConfigError(
            f"model {ref.text!r}: OPENAI_API_KEY is not set (export it, or set "
            "OPENAI_BASE_URL to a server that needs no key)"
        )
    return ModelSpec(ref.text, "openai", name, base_url, key)


@PROVIDERS.register("vllm")
def vllm(ref: ModelRef) -> ModelSpec:
    """vllm:MODEL@URL, with VLLM_API_KEY when the server wants one."""
    name, sep, url = ref.rest.partition("@")
    name = name.strip() or (ref.model or "")
    if not sep or not url.strip():
        raise ConfigError(
            f"model {ref.text!r}: expected vllm:MODEL@URL, e.g. vllm:qwen@http://h:8000/v1"
        )
    if not name:
        raise ConfigError(f"model {ref.text!r}: no model name before '@'")
    return ModelSpec(ref.text, "vllm", name, clean_url(url, ref.text), read("VLLM_API_KEY"))


@PROVIDERS.register("ollama")
def ollama(ref: ModelRef) -> ModelSpec:
    """ollama:MODEL at OLLAMA_BASE_URL (default localhost:11434), no key."""
    name = ref.name("ollama:llama3.1")
    base = read("OLLAMA_BASE_URL") or OLLAMA_DEFAULT_URL
    return ModelSpec(ref.text, "ollama", name, clean_url(base, ref.text), None)


@PROVIDERS.register(URL_PROVIDER)
def bare_url(ref: ModelRef) -> ModelSpec:
    """http(s)://HOST/v1: any OpenAI-compatible server; the model from --model, else
    OPENAI_MODEL; the key from WHILEAI_MODEL_API_KEY (never OPENAI_API_KEY)."""
    name = ref.model or read("OPENAI_MODEL") or ""
    if not name:
        raise ConfigError(f"model {ref.text!r}: a bare URL needs --model NAME (the served model)")
    key = read("WHILEAI_MODEL_API_KEY")
    return ModelSpec(ref.text, URL_PROVIDER, name, clean_url(ref.rest, ref.text), key)
