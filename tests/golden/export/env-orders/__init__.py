"""An RL environment exported by whileai: tasks, the world and the reward, by name.

This file is copied verbatim into every package `whileai export --env` writes. Reading
the tasks needs nothing but the standard library; building the environment needs
`verifiers` (the package's `[rl]` extra).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SPLITS = ("train", "holdout")


def load_spec() -> dict[str, Any]:
    """System prompt, tool schemas, turn cap, and the reward and world references."""
    spec: dict[str, Any] = json.loads((HERE / "spec.json").read_text(encoding="utf-8"))
    return spec


def load_tasks(split: str = "train") -> list[dict[str, Any]]:
    """The split's tasks: `question`, `answer`, `task` and `info` (never privileged)."""
    if split not in SPLITS:
        raise ValueError(f"split {split!r}: expected one of {', '.join(SPLITS)}")
    path = HERE / "data" / f"{split}.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def load_environment(split: str = "train", **kwargs: Any) -> Any:
    """The `verifiers` environment over `split`; the holdout split is its eval set."""
    try:
        import verifiers  # noqa: F401
    except ImportError as exc:
        raise ImportError(
            f"building this environment needs `verifiers`: pip install '{HERE.name}[rl]' "
            "(load_tasks() works without it)"
        ) from exc
    from .environment import build_environment

    return build_environment(split=split, **kwargs)
