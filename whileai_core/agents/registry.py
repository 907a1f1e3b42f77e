"""Where `--agent` strings become agents: one place, one error message.

Names (`seeded`, a plug-in's) are looked up in the one registry (`whileai_core.registry`);
model references (`openai:`, `vllm:`, `ollama:`, `http(s)://`, a plug-in provider's) make
a `ModelAgent` (`agents/model.py`), imported only when such a reference is used, so the
offline paths never load an HTTP client. `--writer` strings are resolved beside the
writers, in `people/resolve.py`.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import ConfigError
from ..models.options import ModelOptions
from ..registry import AGENTS, is_model_ref
from ..settings import read
from ..spec import Spec
from .base import Agent

AGENT_FORMS = (
    "module:function, path/file.py:function, 'cmd:COMMAND', openai:MODEL, "
    "vllm:MODEL@URL, ollama:MODEL or an http(s) URL"
)


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
        try:
            from .model import make_agent
        except ImportError as exc:
            raise ConfigError(f"model backends are unavailable ({exc})") from None
        return make_agent(ref, spec, options)
    if ":" in ref:
        from ..plugins import load_callable
        from .callable import CallableAgent

        module, _, attr = ref.rpartition(":")
        label = f"{Path(module).stem if module.endswith('.py') else module}:{attr}"
        return CallableAgent(load_callable(ref, what="agent"), name=label)
    names = ", ".join(AGENTS.names())
    raise ConfigError(f"unknown agent {ref!r}: expected {names}, {AGENT_FORMS}")
