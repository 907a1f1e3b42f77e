"""Where things live and which environment variables a run reads.

Every option a cron job would set also reads `WHILEAI_<NAME>`; the CLI declares those
on its flags, and the few the library itself reads are here.
"""

from __future__ import annotations

import os
from pathlib import Path


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


def debug_enabled() -> bool:
    return os.environ.get("WHILEAI_DEBUG", "").lower() in ("1", "true", "yes", "on")
