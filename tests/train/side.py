"""Running the toolkit inside the training side venv (side/train: the `train` extra).

The tests never install anything: where `make` has not built the venv they skip and say
how to build it. Each command runs as a real subprocess of that venv's interpreter with
this tree first on the path, offline (`HF_HUB_OFFLINE`), under the test's WHILEAI_HOME.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from ..export.side import train_python
from ..helpers import REPO

ROWS = REPO / "tests" / "golden" / "grade" / "orders-rl.jsonl"
HOLDOUT_ROWS = REPO / "tests" / "golden" / "grade" / "orders-explore.jsonl"
SPEC = REPO / "specs" / "orders"


def side_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    return {
        "PATH": os.environ["PATH"],
        "HOME": os.environ.get("WHILEAI_HOME", "/tmp"),
        "WHILEAI_HOME": os.environ.get("WHILEAI_HOME", "/tmp/whileai-train-tests"),
        "PYTHONPATH": str(REPO),
        "HF_HUB_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
        "NO_COLOR": "1",
        "OMP_NUM_THREADS": "1",
        **(extra or {}),
    }


def side_run(
    *args: str, timeout: float = 300, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    """`python ARGS...` in the training venv."""
    return subprocess.run(
        [str(train_python()), *args],
        capture_output=True,
        timeout=timeout,
        cwd=cwd or REPO,
        env=side_env(env),
    )


def side_cli(
    *args: str, timeout: float = 300, cwd: Path | None = None, home: Path | None = None
) -> subprocess.CompletedProcess[bytes]:
    """`whileai ARGS...` in the training venv (under `home` as WHILEAI_HOME when given)."""
    env = {"WHILEAI_HOME": str(home), "HOME": str(home)} if home else None
    return side_run("-m", "whileai_cli", *args, timeout=timeout, cwd=cwd, env=env)


def ok(done: subprocess.CompletedProcess[bytes]) -> subprocess.CompletedProcess[bytes]:
    assert done.returncode == 0, done.stderr.decode()[-4000:]
    return done


def build_tiny(out: Path, *sources: Path, hidden: int = 32) -> Path:
    """The tiny test model, its tokenizer trained on `sources`' text."""
    args = ["-m", "whileai_core.testing.tinymodel", str(out), *map(str, sources)]
    ok(side_run(*args, "--hidden", str(hidden), env={"WHILEAI_HOME": str(out.parent)}))
    return out


def openers(rows: Path, n: int) -> list[str]:
    """The first `n` distinct opening asks of `rows`."""
    found: list[str] = []
    for line in rows.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        ask = next(m["content"] for m in row["messages"] if m["role"] == "user")
        if ask not in found:
            found.append(ask)
    return found[:n]


def train(*args: str, timeout: float = 300, home: Path | None = None) -> dict[str, Any]:
    """`whileai train ... --json`: the finished run's record."""
    done = ok(side_cli("train", *args, "--json", timeout=timeout, home=home))
    record: dict[str, Any] = json.loads(done.stdout)
    return record


def write_jsonl(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path
