"""`whileai serve` as a real process on a free loopback port, for tests and benches.

Starting the server the way a user does (a subprocess running the CLI) is what proves
the command works; this is the one place that knows how to start it and wait for it.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import httpx


def free_port() -> int:
    """A loopback port nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def serve_process(
    data: Path,
    *,
    env: Mapping[str, str] | None = None,
    args: Sequence[str] = (),
    stderr: int | IO[Any] | None = subprocess.DEVNULL,
    timeout: float = 20.0,
) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """Run `whileai serve --data DATA [ARGS]` until the block ends; yields (process, base
    URL) once `/health` answers, and raises if the server dies or stays silent first."""
    port = free_port()
    command = ["serve", "--port", str(port), "--data", str(data), *args]
    proc = subprocess.Popen(
        [sys.executable, "-m", "whileai_cli", *command],
        env=dict(env) if env is not None else None,
        stdout=subprocess.DEVNULL,
        stderr=stderr,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise
                time.sleep(0.05)
        yield proc, url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
