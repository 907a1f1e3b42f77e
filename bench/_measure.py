"""Shared by the benchmarks: run a command as a child and read its own peak RSS.

The command runs under a fresh, small interpreter that waits for it with `os.wait4`, so
the figure is that one command's peak: a child forked straight from a benchmark holding a
100 MB file would start with the benchmark's pages counted in its high-water mark.
(Files starting with `_` are not run by `run_all.py`.)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Sequence

_WAIT = (
    "import json, os, subprocess, sys\n"
    "p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
    "_, status, u = os.wait4(p.pid, 0)\n"
    "print(json.dumps([os.waitstatus_to_exitcode(status), u.ru_utime + u.ru_stime,"
    " u.ru_maxrss / 1024]))\n"
)


def measure(cmd: Sequence[str]) -> tuple[float, float, float]:
    """(wall seconds, CPU seconds, peak RSS in MB) of one run of `cmd`; exits on failure."""
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _WAIT, *cmd], capture_output=True, check=True, env=os.environ
    )
    wall = time.perf_counter() - start
    code, cpu, rss = json.loads(done.stdout)
    if code != 0:
        raise SystemExit(f"benchmark command failed: {' '.join(cmd)}")
    return wall, cpu, rss
