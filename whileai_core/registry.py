"""One registry: how a name on the command line becomes a judge, an agent, a writer or a
model endpoint.

Four kinds of plug-in, one mechanism:

    JUDGES     `--judge NAME(...)`       factory(opts, *positional, **options) -> Judge
    AGENTS     `--agent NAME`            factory(spec, model_options) -> Agent
    WRITERS    `--writer NAME`           factory(spec, model_options, avg_turns=...) -> Writer
    PROVIDERS  `NAME:MODEL` anywhere a model is named (agent, writer, judge)
                                         factory(ref: models.spec.ModelRef) -> ModelSpec

Built-ins register with a decorator in the module that defines them::

    @JUDGES.register("exact-match", options=("field",))
    def exact_match(*, ignore_case: bool = True, field: str | None = None) -> Judge: ...

and a third-party package adds its own without a fork, through an entry point of the
group `whileai.judges` / `whileai.agents` / `whileai.writers` / `whileai.providers`
naming the same kind of factory
(`[project.entry-points."whileai.providers"] together = "my_pkg.models:together"`).
Lookups are lazy: the built-in modules are imported the first time their kind is asked
for, entry points only when a name is not a built-in, so `whileai --help` imports none.

A model reference is `PROVIDER:REST` (`openai:gpt-4.1-mini`, `vllm:MODEL@URL`), or a
bare `http(s)://` URL, which is the `url` provider's. Two forms are syntax rather than
names and stay with their parsers: `cmd:COMMAND` co-processes and the quick
`module:function` / `path.py:function` path (a `module:` that is no provider's name).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

__all__ = [
    "AGENTS",
    "JUDGES",
    "PROVIDERS",
    "WRITERS",
    "Entry",
    "Registry",
    "is_model_ref",
    "model_provider",
]

# A provider's name: what may stand before the first ':' of a model reference. A dotted
# module or a file path (`pkg.mod:fn`, `./x.py:fn`) never names one, nor do the prefixes
# that are other syntax: `cmd:` co-processes, the judges' `all:` / `any:` / `weighted:`.
_PROVIDER_NAME = re.compile(r"[a-z][a-z0-9_-]{0,63}")
URL_PROVIDER = "url"
_NOT_PROVIDERS = frozenset({"cmd", "all", "any", "weighted", URL_PROVIDER})


def model_provider(ref: str | None) -> tuple[str, str] | None:
    """(provider name, the rest of the reference) when `ref` names a model endpoint: a
    registered provider's `NAME:REST`, or a bare http(s) URL (the `url` provider's, the
    whole URL its rest); else None. Looking a name up may read the installed entry points."""
    text = (ref or "").strip()
    head, sep, rest = text.partition(":")
    name = head.lower()
    if not sep:
        return None
    if name in ("http", "https"):
        found = rest.startswith("//") and PROVIDERS.get(URL_PROVIDER) is not None
        return (URL_PROVIDER, text) if found else None
    if name in _NOT_PROVIDERS or not _PROVIDER_NAME.fullmatch(name):
        return None
    return (name, rest.strip()) if PROVIDERS.get(name) is not None else None


def is_model_ref(ref: str | None) -> bool:
    """True when `ref` names a model endpoint (openai:, vllm:, ollama:, http(s)://, or a
    provider a plug-in registered)."""
    return model_provider(ref) is not None


@dataclass(frozen=True)
class Entry:
    """A registered factory. For judges, `main` is the parameter a bare positional value
    fills (`regex(^\\d+$)`) and `options` the shared JudgeOptions fields it accepts."""

    name: str
    factory: Callable[..., Any]
    main: str | None = None
    options: tuple[str, ...] = ()
    help: str = ""
    source: str = "builtin"


class Registry:
    """Names of one kind of plug-in, filled by decorators and entry points."""

    def __init__(self, kind: str, *, builtins: tuple[str, ...], group: str) -> None:
        self.kind = kind
        self.group = group
        self._builtins = builtins
        self._entries: dict[str, Entry] = {}
        self._loaded = False
        self._plugins: dict[str, metadata.EntryPoint] | None = None

    def register(
        self, name: str, *, main: str | None = None, options: tuple[str, ...] = (), help: str = ""
    ) -> Callable[[F], F]:
        """Decorator: register `factory` under `name` (the name users type)."""

        def decorate(factory: F) -> F:
            doc = help or (factory.__doc__ or "").strip().split("\n")[0]
            self._entries[name] = Entry(name, factory, main, options, doc)
            return factory

        return decorate

    def get(self, name: str) -> Entry | None:
        self._load_builtins()
        entry = self._entries.get(name)
        if entry is not None:
            return entry
        point = self._entry_points().get(name)
        if point is None:
            return None
        try:
            factory = point.load()
        except Exception as exc:
            from .errors import ConfigError

            raise ConfigError(
                f"{self.kind} {name!r} from entry point {point.value}: cannot load ({exc})"
            ) from None
        entry = Entry(name, factory, help=f"from {point.value}", source=point.value)
        self._entries[name] = entry
        return entry

    def names(self) -> list[str]:
        """Every registered name, built-ins and installed plug-ins alike."""
        self._load_builtins()
        return sorted({*self._entries, *self._entry_points()})

    def entries(self) -> list[Entry]:
        found = [self.get(name) for name in self.names()]
        return [e for e in found if e is not None]

    def _load_builtins(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        for module in self._builtins:
            importlib.import_module(module)

    def _entry_points(self) -> dict[str, metadata.EntryPoint]:
        if self._plugins is None:
            self._plugins = {ep.name: ep for ep in metadata.entry_points(group=self.group)}
        return self._plugins


# Built-ins by this package's own name, so the copy an exported environment carries (as
# `<env>._whileai_core`) registers its own modules rather than looking for an install.
_PKG = __name__.rpartition(".")[0]
JUDGES = Registry(
    "judge",
    builtins=(
        f"{_PKG}.judges.verifiers",
        f"{_PKG}.judges.conduct",
        f"{_PKG}.judges.checklist",
        f"{_PKG}.judges.registry",
        f"{_PKG}.trust.rubrics",
    ),
    group="whileai.judges",
)
AGENTS = Registry("agent", builtins=(f"{_PKG}.agents.seeded",), group="whileai.agents")
WRITERS = Registry("writer", builtins=(f"{_PKG}.people.template",), group="whileai.writers")
PROVIDERS = Registry(
    "model provider", builtins=(f"{_PKG}.models.providers",), group="whileai.providers"
)
