"""Model specs: one string names an endpoint and a model, for the agent, writer and judge.

    openai:gpt-4.1-mini              OPENAI_BASE_URL (default api.openai.com), OPENAI_API_KEY
    vllm:Qwen/Qwen3-4B@http://h:8000/v1   VLLM_API_KEY when set
    ollama:llama3.1                  OLLAMA_BASE_URL, default http://localhost:11434/v1
    http://localhost:8080/v1         any OpenAI-compatible server; the model comes from
                                     `model=` (the CLI's --model), else OPENAI_MODEL;
                                     the key from WHILEAI_MODEL_API_KEY

Each form is a provider registered in the one registry (`registry.PROVIDERS`; the
built-ins are in `models/providers.py`), so a package adds `together:MODEL` through the
`whileai.providers` entry-point group and every role that names a model takes it.

A bare URL is taken as the API root (what `/chat/completions` is appended to), so give
the `/v1` part when the server has one. OPENAI_API_KEY is never sent to a bare URL: a
local server rarely wants it, and a typo'd host must not receive it. Keys are read when
the spec is parsed, so a missing OPENAI_API_KEY for `openai:` fails before the run
starts, not on row 1.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..errors import ConfigError
from ..registry import PROVIDERS, URL_PROVIDER, model_provider

OPENAI_DEFAULT_URL = "https://api.openai.com/v1"
OLLAMA_DEFAULT_URL = "http://localhost:11434/v1"


@dataclass(frozen=True)
class ModelSpec:
    """Where to send chat completions and which model to ask for.

    `ref` is the string the user gave (it goes on rows as `model_version` /
    `writer_model`); `api_key` is never printed (see `__repr__`).
    """

    ref: str
    provider: str  # openai | vllm | ollama | url | a plug-in's name
    model: str
    base_url: str
    api_key: str | None = None

    @property
    def chat_url(self) -> str:
        return f"{self.base_url}/chat/completions"

    @property
    def label(self) -> str:
        """What rows record: the provider-qualified model name (no key, no URL)."""
        return self.model if self.provider == URL_PROVIDER else f"{self.provider}:{self.model}"

    def __repr__(self) -> str:
        key = "set" if self.api_key else "none"
        return (
            f"ModelSpec(provider={self.provider!r}, model={self.model!r}, "
            f"base_url={self.base_url!r}, api_key={key})"
        )


@dataclass(frozen=True)
class ModelRef:
    """A model reference split for its provider: what a provider's factory receives.

    `text` is the whole reference as given (stripped); `rest` what follows `provider:`
    (for the `url` provider, the whole URL); `model` the --model flag, if any.
    """

    text: str
    provider: str
    rest: str
    model: str | None = None

    def name(self, example: str) -> str:
        """The model name: `rest`, else --model; a one-line error naming `example` if neither."""
        name = self.rest or (self.model or "")
        if not name:
            raise ConfigError(f"model {self.text!r}: give a model name, e.g. {example}")
        return name


def clean_url(url: str, ref: str) -> str:
    """An API root from a URL the user gave: http(s) only, no trailing `/` or
    `/chat/completions`. A provider calls this on every URL it builds a spec from."""
    url = url.strip().rstrip("/")
    if not url.startswith(("http://", "https://")):
        raise ConfigError(f"model {ref!r}: {url!r} is not an http(s) URL")
    if url.endswith("/chat/completions"):
        url = url[: -len("/chat/completions")]
    return url


def parse_model_spec(ref: str, model: str | None = None) -> ModelSpec:
    """Parse a model reference; `model` is the --model flag (required for a bare URL).

    Raises ConfigError naming what is missing (the model name, the URL, OPENAI_API_KEY),
    or the forms there are when `ref` names no provider.
    """
    found = model_provider(ref)
    if found is None:
        plugins = sorted(set(PROVIDERS.names()) - {"openai", "vllm", "ollama", URL_PROVIDER})
        more = f", or a plug-in's {', '.join(p + ':MODEL' for p in plugins)}" if plugins else ""
        raise ConfigError(
            f"model {ref!r}: expected openai:MODEL, vllm:MODEL@URL, ollama:MODEL "
            f"or an http(s)://.../v1 URL{more}"
        )
    name, rest = found
    entry = PROVIDERS.get(name)
    assert entry is not None  # model_provider found it
    spec = entry.factory(ModelRef(ref.strip(), name, rest, model))
    if not isinstance(spec, ModelSpec):
        raise ConfigError(
            f"model {ref!r}: provider {name!r} ({entry.source}) returned "
            f"{type(spec).__name__}, not a ModelSpec"
        )
    return spec


def model_name(ref: str) -> str:
    """The model a reference names, without provider prefix or endpoint:
    `vllm:Qwen/Qwen3-4B@http://h/v1` and the row label `vllm:Qwen/Qwen3-4B` both give
    `Qwen/Qwen3-4B`. A bare URL, or a name that is no provider reference (what a bare-URL
    model's rows record), comes back as given. Reads no key and no variable."""
    found = model_provider(ref)
    if found is None or found[0] == URL_PROVIDER:
        return ref.strip()
    return found[1].split("@", 1)[0].strip()


def same_model(a: str, b: str) -> bool:
    """Whether two references name one model, whatever provider or endpoint each went
    through (case aside: hub ids are case-insensitive). The self-judged warning and the
    off-policy staleness check both ask this."""
    return model_name(a).casefold() == model_name(b).casefold()


def bare_model(name: str) -> str:
    """A model's name as two stamps are compared: `model_name`, case folded."""
    return model_name(name).casefold()


def self_judged_versions(judge_model: str, versions: Iterable[str]) -> list[str]:
    """The row `model_version`s that name the judge's own model (`same_model`), sorted."""
    return sorted({v for v in versions if same_model(v, judge_model)})


def self_judged_warning(judge_model: str, version: str, rows: str = "these rows") -> str:
    """What grade, report and trust say when a judge grades its own model's writing (it
    tends to prefer it), worded once so the three say the same thing."""
    return (
        f"self_judged: the judge model {judge_model} also wrote {rows} (model_version "
        f"{version}); a judge grading its own model's writing tends to prefer it"
    )
