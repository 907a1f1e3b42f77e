"""Where `--agent` and `--writer` strings become objects: one place, one error message.

Names (`seeded`, `template`, a plug-in's) are looked up in the one registry
(`whileai_core.registry`); model references (`openai:`, `vllm:`, `ollama:`, `http(s)://`)
are handed to `whileai_core.models.factory`, imported only when such a reference is used,
so the offline paths never load an HTTP client.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..models.options import ModelOptions
from ..registry import AGENTS, WRITERS, is_model_ref
from ..settings import read
from ..spec import Spec
from .base import Agent, Writer

AGENT_FORMS = (
    "module:function, path/file.py:function, 'cmd:COMMAND', openai:MODEL, "
    "vllm:MODEL@URL, ollama:MODEL or an http(s) URL"
)


def _factory() -> Any:
    try:
        from ..models import factory
    except ImportError as exc:
        raise ConfigError(f"model backends are unavailable ({exc})") from None
    return factory


def pick_agent_ref(ref: str | None, spec: Spec) -> tuple[str, str]:
    """(reference, where it came from): the flag, the spec's `agent`, WHILEAI_AGENT, default."""
    if ref:
        return ref, "flag"
    if spec.agent:
        return spec.agent, "spec"
    env = read("WHILEAI_AGENT")
    if env:
        return env, "env"
    return "seeded", "default"


def resolve_agent(ref: str, spec: Spec, options: ModelOptions | None = None) -> Agent:
    options = options or ModelOptions()
    ref = ref.strip()
    entry = AGENTS.get(ref)
    if entry is not None:
        made: Agent = entry.factory(spec, options)
        return made
    if ref.startswith("cmd:"):
        from .command import CommandAgent

        return CommandAgent(ref[4:], spec, processes=min(options.concurrency, 8))
    if is_model_ref(ref):
        agent: Agent = _factory().make_agent(ref, spec, options)
        return agent
    if ":" in ref:
        from ..plugins import load_callable
        from .callable import CallableAgent

        module, _, attr = ref.rpartition(":")
        label = f"{Path(module).stem if module.endswith('.py') else module}:{attr}"
        return CallableAgent(load_callable(ref, what="agent"), name=label)
    names = ", ".join(AGENTS.names())
    raise ConfigError(f"unknown agent {ref!r}: expected {names}, {AGENT_FORMS}")


def resolve_writer(
    ref: str | None, spec: Spec, options: ModelOptions | None = None, *, avg_turns: int = 12
) -> Writer:
    options = options or ModelOptions()
    ref = (ref or "template").strip()
    entry = WRITERS.get(ref)
    if entry is not None:
        made: Writer = entry.factory(spec, options, avg_turns=avg_turns)
        return made
    if is_model_ref(ref):
        writer: Writer = _factory().make_writer(ref, spec, options, avg_turns=avg_turns)
        return writer
    names = ", ".join(WRITERS.names())
    raise ConfigError(
        f"unknown writer {ref!r}: expected {names}, openai:MODEL, vllm:MODEL@URL, "
        "ollama:MODEL or an http(s) URL"
    )


def load_world(ref: str) -> Any:
    """`--execute module:function`: the user's world answers tool calls instead of the mock."""
    from ..simulate.execute import load_execute

    return load_execute(ref)
