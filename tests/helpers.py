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
