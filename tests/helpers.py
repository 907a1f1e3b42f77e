"""Helpers tests import: fixture paths and a real-subprocess CLI runner."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).parent / "fixtures"
SDK_ROWS = FIXTURES / "sdk-rows-orders-explore.jsonl"
ORDERS_SPEC = FIXTURES / "orders-spec.json"
REPO = Path(__file__).resolve().parent.parent
# The original SDK (whileai 0.131 from PyPI) in its own venv: `make sdk-venv` builds it.
SDK_PYTHON = Path(os.environ.get("WHILEAI_SDK_PYTHON", REPO / ".venv-sdk" / "bin" / "python"))

_SEEDED = """
import json, sys
import whileai as wai
spec = json.load(open(sys.argv[1]))
agent = wai.seeded_agent(spec["tools"], seed=int(sys.argv[3]), rate=float(sys.argv[4]))
data = wai.simulate(agent, tools=spec["tools"], system_prompt=spec["system_prompt"],
                    simulator=False, budget=int(sys.argv[2]), seed=int(sys.argv[3]))
with open(sys.argv[5], "w") as out:
    for row in data.trajectories:
        out.write(json.dumps(row) + "\\n")
"""


def sdk_seeded_rows(path: Path, *, budget: int = 120, seed: int = 11, rate: float = 0.5) -> Path:
    """Rows the original SDK writes with its own seeded agent (`seeded_agent`: on `rate` of
    rollouts one planted mistake, `leak` among them) for the orders spec, privileged block
    and all, written to `path`. Skips the test when the SDK's venv is missing."""
    import pytest

    if not SDK_PYTHON.exists():
        pytest.skip(
            f"the original SDK's venv ({SDK_PYTHON}) is missing: `make sdk-venv` installs "
            "whileai==0.131 from PyPI, which this machine could not reach"
        )
    args = [str(ORDERS_SPEC), str(budget), str(seed), str(rate), str(path)]
    done = subprocess.run(
        [str(SDK_PYTHON), "-c", _SEEDED, *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={"PATH": os.environ.get("PATH", ""), "HOME": str(path.parent)},
    )
    assert done.returncode == 0, done.stderr
    return path


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


def hears_sigint() -> None:
    """`preexec_fn` for a child a test interrupts with SIGINT: a shell that starts a job in
    the background (`cmd &`, as some CI runners and `nohup` scripts do) hands it SIGINT
    ignored, every process below inherits that, and Python installs its KeyboardInterrupt
    handler only where SIGINT is at its default. The child gets the default back, as a
    terminal's foreground job has it."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
