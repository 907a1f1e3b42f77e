"""Whether a process id names a live process: the one test every "is its owner still
running?" question asks (a partial output file's writer, a sandbox's cgroup, a served
model's record)."""

from __future__ import annotations

import os
from typing import Any


def pid_alive(pid: Any) -> bool:
    """True when `pid` is a live process (this one included). A process of another user
    answers `kill(pid, 0)` with EPERM: it is alive, only not ours to signal. Anything
    that is not a positive int is no process."""
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return False
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
