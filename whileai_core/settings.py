"""Where things live and which environment variables a run reads.

Every option a cron job would set also reads `WHILEAI_<NAME>`; the CLI declares those
on its flags, and the few the library itself reads are here.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple


def home() -> Path:
    """WHILEAI_HOME, default ~/.whileai: the embedded store, credentials and the model cache."""
    return Path(os.environ.get("WHILEAI_HOME") or Path.home() / ".whileai").expanduser()


LEGACY_PREFIX = "ZEROPROOF_"


def env_setting(name: str) -> tuple[str, str] | None:
    """(value, variable) of `WHILEAI_<name>`, else of the legacy `ZEROPROOF_<name>` the
    original SDK's users may still export; the new name wins. Empty counts as unset."""
    for variable in ("WHILEAI_" + name, LEGACY_PREFIX + name):
        value = os.environ.get(variable, "").strip()
        if value:
            return value, variable
    return None


def forwarded_allow_ips() -> str | None:
    """WHILEAI_FORWARDED_ALLOW_IPS: the proxies whose X-Forwarded-For `whileai serve`
    believes (comma-separated addresses, or `*`); unset believes no one's. uvicorn's own
    FORWARDED_ALLOW_IPS is not read: trusting a header is the admin's explicit choice."""
    value = os.environ.get("WHILEAI_FORWARDED_ALLOW_IPS", "").strip()
    return value or None


def legacy_home() -> Path:
    """Where the original SDK kept its files under its old name (ZEROPROOF_HOME, default
    ~/.zeroproof); only its saved credentials are read from there."""
    return Path(os.environ.get(LEGACY_PREFIX + "HOME") or Path.home() / ".zeroproof").expanduser()


RUN_STALE_SECONDS = 120.0
RUN_CRASHED_SECONDS = 900.0


def _seconds(name: str, default: float) -> float:
    raw = os.environ.get(name, "").strip()
    try:
        value = float(raw) if raw else default
    except ValueError:
        return default
    return value if value > 0 else default


def run_heartbeat_limits() -> tuple[float, float]:
    """(stale, crashed): seconds without a word from a running run's trainer after which
    it reads as stale, then as crashed (WHILEAI_RUN_STALE_SECONDS, WHILEAI_RUN_CRASHED_SECONDS;
    a value that is not a positive number keeps the default)."""
    stale = _seconds("WHILEAI_RUN_STALE_SECONDS", RUN_STALE_SECONDS)
    crashed = _seconds("WHILEAI_RUN_CRASHED_SECONDS", RUN_CRASHED_SECONDS)
    return stale, max(stale, crashed)


def debug_enabled() -> bool:
    return os.environ.get("WHILEAI_DEBUG", "").lower() in ("1", "true", "yes", "on")


class Variable(NamedTuple):
    """One environment variable the library reads on its own (not through a CLI flag)."""

    name: str
    default: str
    means: str


# Every variable the library reads itself, declared once: the docs' variable table is
# generated from this list and from the CLI flags' own `envvar`s (docs/hooks/), and
# tests/test_docs.py fails when a `WHILEAI_*` name in the code is in neither.
VARIABLES: tuple[Variable, ...] = (
    Variable("WHILEAI_HOME", "~/.whileai",
             "The embedded store, saved credentials, a pending login and the model cache."),
    Variable("WHILEAI_DEBUG", "off", "Tracebacks on errors (1, true, yes, on); also --debug."),
    Variable("WHILEAI_API_URL", "unset: the embedded store",
             "A `whileai serve` to talk to instead of the embedded store."),
    Variable("WHILEAI_DELEGATED_CREDENTIAL", "unset",
             "A short-lived key from `whileai token`; wins over WHILEAI_API_KEY."),
    Variable("WHILEAI_API_KEY", "unset: the saved key", "The account's API key."),
    Variable("WHILEAI_AGENT", "seeded",
             "The agent `simulate` plays when neither --agent nor the spec names one."),
    Variable("WHILEAI_MODEL_API_KEY", "unset",
             "The key sent to a bare-URL model endpoint (never OPENAI_API_KEY)."),
    Variable("WHILEAI_TEMPERATURE", "the server's", "Sampling temperature of model calls."),
    Variable("WHILEAI_MAX_TOKENS", "the server's", "Token cap of one model reply."),
    Variable("WHILEAI_TOP_P", "the server's", "Nucleus sampling of model calls."),
    Variable("WHILEAI_ENV_ROWS", "unset",
             "An exported RL environment appends every graded rollout to this file as a row."),
    Variable("WHILEAI_RUN_STALE_SECONDS", "120",
             "A running run silent this long (no point, no heartbeat) reads as stale."),
    Variable("WHILEAI_RUN_CRASHED_SECONDS", "900",
             "A running run silent this long reads as crashed."),
    Variable("WHILEAI_FORWARDED_ALLOW_IPS", "unset: no proxy is believed",
             "The proxies whose X-Forwarded-For `whileai serve` believes"
             " (also --forwarded-allow-ips)."),
    Variable("ZEROPROOF_HOME", "~/.zeroproof",
             "The original SDK's folder; only its saved credentials are read."),
    Variable("ZEROPROOF_API_URL", "unset", "Read after WHILEAI_API_URL (the SDK's old name)."),
    Variable("ZEROPROOF_DELEGATED_CREDENTIAL", "unset",
             "Read after the WHILEAI_ names (the SDK's old name)."),
    Variable("ZEROPROOF_API_KEY", "unset", "Read after the WHILEAI_ names (the SDK's old name)."),
    Variable("OPENAI_API_KEY", "unset",
             "The key for `openai:MODEL` (required for api.openai.com)."),
    Variable("OPENAI_BASE_URL", "https://api.openai.com/v1", "The endpoint of `openai:MODEL`."),
    Variable("OPENAI_MODEL", "unset", "The model name for a bare URL when --model is not given."),
    Variable("VLLM_API_KEY", "unset", "The key for `vllm:MODEL@URL`, if the server wants one."),
    Variable("OLLAMA_BASE_URL", "http://localhost:11434/v1", "The endpoint of `ollama:MODEL`."),
)  # fmt: skip
