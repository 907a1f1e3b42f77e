"""Shared by the benchmarks: run a command as a child and read its own peak RSS; the
loopback model stub and the `whileai simulate` command line the model benchmarks run.

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
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

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


@contextmanager
def loopback_stub(latency: float, order_id: str = "ORD-1234") -> Iterator[tuple[str, Any]]:
    """The OpenAI-compatible stub (`python -m whileai_core.testing`, this tree's: it runs
    in the repository root, which `-m` puts first on the path), answering each call after
    `latency` seconds with a `get_order` call: yields (base URL, its process). A
    benchmark that reaps the process itself (to read its CPU) sets `returncode` first."""
    stub = subprocess.Popen(
        [sys.executable, "-m", "whileai_core.testing", "--latency", str(latency),
         "--tool", "get_order", "--arguments", json.dumps({"order_id": order_id})],
        stdout=subprocess.PIPE, text=True, cwd=ROOT,
    )  # fmt: skip
    try:
        assert stub.stdout is not None
        yield stub.stdout.readline().strip(), stub
    finally:
        if stub.returncode is None:
            stub.terminate()
            stub.wait()


def simulate_command(
    spec: str, base_url: str, rollouts: int, concurrency: int, out: Path, report: Path
) -> list[str]:
    """`whileai simulate` with the model agent at `base_url`, rows to `out`, report to
    `report`: the run the model benchmarks time. Run as `python -m whileai_cli` under this
    interpreter, so PYTHONPATH picks the tree whose code runs (a worktree, or a checkout
    of the code before a change)."""
    return [
        sys.executable, "-m", "whileai_cli", "simulate", spec, "--agent", base_url,
        "--model", "bench", "--budget", str(rollouts), "--concurrency", str(concurrency),
        "-o", str(out), "--report", str(report),
    ]  # fmt: skip


def model_calls(report: dict[str, Any]) -> int:
    """Model calls a simulate report counts (a Ray run's, summed over its shards)."""
    reports = report["by_shard"].values() if "by_shard" in report else [report]
    return sum(m["calls"] for r in reports for m in r["models"].values())
