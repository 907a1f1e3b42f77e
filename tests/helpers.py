"""Helpers tests import: fixture paths and a real-subprocess CLI runner."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).parent / "fixtures"
SDK_ROWS = FIXTURES / "sdk-rows-orders-explore.jsonl"
ORDERS_SPEC = FIXTURES / "orders-spec.json"
REPO = Path(__file__).resolve().parent.parent


def _sdk_python() -> Path:
    """The original SDK's interpreter (whileai 0.131, `make sdk-venv`): WHILEAI_SDK_PYTHON,
    else this checkout's .venv-sdk, else (in a git worktree) the main checkout's."""
    named = os.environ.get("WHILEAI_SDK_PYTHON")
    if named:
        return Path(named)
    here = REPO / ".venv-sdk" / "bin" / "python"
    dot_git = REPO / ".git"
    if not here.exists() and dot_git.is_file():
        gitdir = Path(dot_git.read_text().partition("gitdir:")[2].strip())
        main = gitdir.parent.parent.parent / ".venv-sdk" / "bin" / "python"
        if main.exists():
            return main
    return here


SDK_PYTHON = _sdk_python()


def run_sdk(script: str, payload: Any, timeout: float = 120) -> Any:
    """Run `script` under the original SDK with `payload` as JSON on stdin; its last stdout
    line, parsed. Skips (saying why) when the SDK's venv could not be built here."""
    import json

    import pytest

    if not SDK_PYTHON.exists():
        pytest.skip(f"the original SDK's venv ({SDK_PYTHON}) is missing: `make sdk-venv`")
    done = subprocess.run(
        [str(SDK_PYTHON), "-c", script],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=timeout,
        env={"PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", "/tmp")},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def run_cli(
    *args: str, input: bytes | None = None, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[bytes]:
    """Run `whileai` as a real subprocess (exit codes and stderr exactly as a user sees them)."""
    full_env = {**os.environ, "NO_COLOR": "1", **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "whileai_cli", *args],
        input=input,
        capture_output=True,
        env=full_env,
        timeout=timeout,
        cwd=REPO,
    )


def play(agent: Any, episode: Any) -> Any:
    """One rollout of an Agent, closing it after, from sync test code."""

    async def go() -> Any:
        try:
            return await agent.run(episode)
        finally:
            await agent.aclose()

    return asyncio.run(go())
