"""Where things live and which environment variables a run reads.

Every option a cron job would set also reads `WHILEAI_<NAME>`; the CLI declares those
on its flags, and the few the library itself reads are here.
"""

from __future__ import annotations

import os
from pathlib import Path

from .errors import ConfigError

# The simulated person's turns are a few sentences: a writer completion is capped here
# unless --writer-max-tokens or WHILEAI_WRITER_MAX_TOKENS says otherwise, so a model that
# rambles (or never stops) costs a bounded amount per turn.
WRITER_MAX_TOKENS = 400
# Seconds a writer call may wait for its reply (--writer-timeout, WHILEAI_WRITER_TIMEOUT).
WRITER_TIMEOUT = 60.0


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


def legacy_home() -> Path:
    """Where the original SDK kept its files under its old name (ZEROPROOF_HOME, default
    ~/.zeroproof); only its saved credentials are read from there."""
    return Path(os.environ.get(LEGACY_PREFIX + "HOME") or Path.home() / ".zeroproof").expanduser()


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
    value = flag if flag is not None else env_number("WRITER_TIMEOUT", float)
    value = WRITER_TIMEOUT if value is None else float(value)
    if value <= 0:
        raise ConfigError(f"writer timeout {value:g}s must be more than 0")
    return value


def debug_enabled() -> bool:
    return os.environ.get("WHILEAI_DEBUG", "").lower() in ("1", "true", "yes", "on")
