"""Where things live and which environment variables a run reads: the one module that
reads the environment.

Every option a cron job would set also reads `WHILEAI_<NAME>`; the CLI declares those
on its flags (click reads them), and the ones the library reads itself are declared in
`VARIABLES` below. Code anywhere else asks `read(NAME)` (or one of the helpers here)
instead of `os.environ`: `tests/test_layers.py` fails on an `os.environ` / `os.getenv`
outside this module, except where a child process's environment is built.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from .errors import ConfigError


def read(name: str, env: Mapping[str, str] | None = None) -> str | None:
    """The value of variable `name`, stripped; None when unset or empty (an empty variable
    counts as unset everywhere). `env` stands in for the process environment (tests, a
    server configured from a dict)."""
    value = (os.environ if env is None else env).get(name, "").strip()
    return value or None


# The simulated person's turns are a few sentences: a writer completion is capped here
# unless --writer-max-tokens or WHILEAI_WRITER_MAX_TOKENS says otherwise, so a model that
# rambles (or never stops) costs a bounded amount per turn.
WRITER_MAX_TOKENS = 400
# Seconds a writer or agent model call may wait for its reply (--writer-timeout,
# WHILEAI_WRITER_TIMEOUT; --agent-timeout, WHILEAI_AGENT_TIMEOUT).
WRITER_TIMEOUT = 60.0


def home() -> Path:
    """WHILEAI_HOME, default ~/.whileai: the embedded store, credentials and the model cache."""
    return Path(read("WHILEAI_HOME") or Path.home() / ".whileai").expanduser()


LEGACY_PREFIX = "ZEROPROOF_"


def env_setting(name: str) -> tuple[str, str] | None:
    """(value, variable) of `WHILEAI_<name>`, else of the legacy `ZEROPROOF_<name>` the
    original SDK's users may still export; the new name wins. Empty counts as unset."""
    for variable in ("WHILEAI_" + name, LEGACY_PREFIX + name):
        value = read(variable)
        if value:
            return value, variable
    return None


def forwarded_allow_ips() -> str | None:
    """WHILEAI_FORWARDED_ALLOW_IPS: the proxies whose X-Forwarded-For `whileai serve`
    believes (comma-separated addresses, or `*`); unset believes no one's. uvicorn's own
    FORWARDED_ALLOW_IPS is not read: trusting a header is the admin's explicit choice."""
    return read("WHILEAI_FORWARDED_ALLOW_IPS")


def legacy_home() -> Path:
    """Where the original SDK kept its files under its old name (ZEROPROOF_HOME, default
    ~/.zeroproof); only its saved credentials are read from there."""
    return Path(read(LEGACY_PREFIX + "HOME") or Path.home() / ".zeroproof").expanduser()


def env_number(name: str, kind: type[float] | type[int]) -> float | int | None:
    """`WHILEAI_<name>` as a number, None when unset; a value that is not one is a
    ConfigError naming the variable."""
    found = env_setting(name)
    if found is None:
        return None
    raw, variable = found
    try:
        return kind(raw)
    except ValueError:
        raise ConfigError(f"{variable}={raw!r} is not a {kind.__name__}") from None


def writer_max_tokens(flag: int | None = None) -> int:
    """The token cap on one writer completion: the flag, WHILEAI_WRITER_MAX_TOKENS, 400."""
    value = flag if flag is not None else env_number("WRITER_MAX_TOKENS", int)
    value = WRITER_MAX_TOKENS if value is None else int(value)
    if value < 1:
        raise ConfigError(f"writer max tokens {value} must be at least 1")
    return value


def writer_timeout(flag: float | None = None) -> float:
    """Seconds a writer call waits for its reply: the flag, WHILEAI_WRITER_TIMEOUT, 60."""
    return _timeout(flag, "WRITER_TIMEOUT", "writer")


# How a model writer voices the person: `plan` (the template decides what the person says,
# the model words it, and a rewording that strays is drawn again or the plan's own line is
# kept) or `free` (the model writes each turn from the person's brief; a turn that fails the
# voice check is redrawn, then the rollout dropped). A 1.5B model writing freely broke role
# in about a fifth of conversations; worded from a plan it keeps the role the plan holds.
PERSON_MODES = ("plan", "free")


def person_mode(flag: str | None = None) -> str:
    """How a model writer voices the person: the flag, WHILEAI_PERSON_MODE, `plan`."""
    env = read("WHILEAI_PERSON_MODE")  # a new option: no legacy ZEROPROOF_ name
    value = (flag or env or "plan").strip().lower()
    if value not in PERSON_MODES:
        where = "--person-mode" if flag else "WHILEAI_PERSON_MODE"
        raise ConfigError(f"{where}={value!r}: expected one of {', '.join(PERSON_MODES)}")
    return value


def agent_timeout(flag: float | None = None) -> float:
    """Seconds a model agent's call waits for its reply: the flag, WHILEAI_AGENT_TIMEOUT,
    60. A small model on a CPU server can take minutes per reply; a fleet answers in one."""
    return _timeout(flag, "AGENT_TIMEOUT", "agent")


MODEL_RETRIES = 5


def model_retries(flag: int | None = None) -> int:
    """How often a failed agent or writer call (timeout, 5xx, 429, a dropped connection) is
    tried again: the flag, WHILEAI_MODEL_RETRIES, 5. Against a CPU server whose replies take
    minutes, a timed-out call retried five times holds a rollout for many more minutes; 0
    counts the first failure."""
    value = flag if flag is not None else env_number("MODEL_RETRIES", int)
    value = MODEL_RETRIES if value is None else int(value)
    if value < 0:
        raise ConfigError(f"model retries {value} must be 0 or more")
    return value


def _timeout(flag: float | None, name: str, role: str) -> float:
    value = flag if flag is not None else env_number(name, float)
    value = WRITER_TIMEOUT if value is None else float(value)
    if value <= 0:
        raise ConfigError(f"{role} timeout {value:g}s must be more than 0")
    return value


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


def single_blas_thread() -> None:
    """Ask numpy's BLAS (OpenBLAS) for one thread unless OPENBLAS_NUM_THREADS says
    otherwise; effective only before numpy is first imported. The scans a selection runs
    multiply a few columns by a few dozen: a second BLAS thread speeds nothing up, and its
    spin-wait after every product costs CPU (a quarter of `optimize`'s on a busy 2-core
    machine, and the same answer: each output cell is summed the same way)."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def debug_enabled() -> bool:
    return (read("WHILEAI_DEBUG") or "").lower() in ("1", "true", "yes", "on")


def enable_debug() -> None:
    """`--debug`: set WHILEAI_DEBUG for the rest of the process and the processes it
    starts (agents, judges, workers), so every layer shows tracebacks alike."""
    os.environ["WHILEAI_DEBUG"] = "1"


def proxy_for(url: str) -> str | None:
    """The proxy the environment routes `url` through (HTTPS_PROXY, HTTP_PROXY, ALL_PROXY,
    lower or upper case, minus NO_PROXY), as curl and httpx read them; None to go direct."""
    import urllib.request
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    proxies = urllib.request.getproxies_environment()
    proxy = proxies.get(parts.scheme) or proxies.get("all")
    if not proxy or not parts.hostname:
        return None
    if urllib.request.proxy_bypass(parts.hostname):  # NO_PROXY (the environment's, on POSIX)
        return None
    return proxy


def event_loop() -> str:
    """WHILEAI_EVENT_LOOP: `uvloop` (the default, when it is installed) or `asyncio` (the
    standard library's loop, e.g. to rule the loop out while debugging)."""
    value = os.environ.get("WHILEAI_EVENT_LOOP", "").strip().lower()
    return "asyncio" if value == "asyncio" else "uvloop"


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
    Variable("WHILEAI_FORWARDED_ALLOW_IPS", "unset: no proxy is believed",
             "The reverse proxies whose X-Forwarded-For `whileai serve` believes "
             "(comma-separated addresses, or *); --forwarded-allow-ips wins."),
    Variable("WHILEAI_WRITER_MAX_TOKENS", "400",
             "Token cap on one completion of a model writer (--writer-max-tokens wins)."),
    Variable("WHILEAI_AGENT_TIMEOUT", "60",
             "Seconds a model agent's call waits for its reply (--agent-timeout wins)."),
    Variable("WHILEAI_WRITER_TIMEOUT", "60",
             "Seconds a model writer's call waits for its reply (--writer-timeout wins)."),
    Variable("WHILEAI_PERSON_MODE", "plan",
             "How a model writer voices the person: plan (the model words a planned "
             "line) or free (the model writes each turn); --person-mode wins."),
    Variable("WHILEAI_MODEL_RETRIES", "5",
             "Retries of a failed agent or writer call, with backoff (--model-retries wins)."),
    Variable("WHILEAI_ENV_ROWS", "unset",
             "An exported RL environment appends every graded rollout to this file as a row."),
    Variable("WHILEAI_RUN_STALE_SECONDS", "120",
             "A running run silent this long (no point, no heartbeat) reads as stale."),
    Variable("WHILEAI_RUN_CRASHED_SECONDS", "900",
             "A running run silent this long reads as crashed."),
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
    Variable("WHILEAI_EVENT_LOOP", "uvloop",
             "The event loop of model-backed runs: uvloop when installed, or asyncio."),
    Variable("HTTPS_PROXY", "unset",
             "Model calls to https endpoints go through this proxy (also HTTP_PROXY for http, "
             "ALL_PROXY for both; lower case too)."),
    Variable("NO_PROXY", "unset", "Hosts model calls reach directly despite a proxy."),
)  # fmt: skip
