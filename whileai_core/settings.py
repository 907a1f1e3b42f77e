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


def debug_enabled() -> bool:
    return os.environ.get("WHILEAI_DEBUG", "").lower() in ("1", "true", "yes", "on")
