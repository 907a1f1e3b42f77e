"""An RL environment exported by whileai: the tasks, the world, the person and the reward.

This file is copied verbatim into every package `whileai export --env` writes. Reading the
tasks needs nothing but the standard library (`load_spec`, `load_tasks`); the environment
itself is written against verifiers 0.4 (`verifiers.v1`), which finds it through
`__all__`: the taskset, the harness (the chat loop the policy runs in) and the env (the
control flow with the offline person). Those load only when asked for, so this package
imports where verifiers is not installed. `whileai_reward` and `grpo_data` are what TRL's
GRPOTrainer trains with (`grpo.py`, no verifiers needed).

    vf-eval <this package> -m <model> --client.base-url <url> --client.api-key-var <VAR>
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SPLITS = ("train", "holdout")
_ENVIRONMENT = ("WhileaiTaskset", "WhileaiHarness", "WhileaiEnv")
_GRPO = ("grpo_data", "whileai_reward")

__all__ = ["SPLITS", "load_spec", "load_tasks", *_ENVIRONMENT, *_GRPO]


def load_spec() -> dict[str, Any]:
    """System prompt, tool schemas and kinds, turn cap, and the reward and world references."""
    spec: dict[str, Any] = json.loads((HERE / "spec.json").read_text(encoding="utf-8"))
    return spec


def load_tasks(split: str = "train") -> list[dict[str, Any]]:
    """The split's tasks: `question`, `answer`, `task` and `info` (never privileged)."""
    if split not in SPLITS:
        raise ValueError(f"split {split!r}: expected one of {', '.join(SPLITS)}")
    path = HERE / "data" / f"{split}.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def __getattr__(name: str) -> Any:
    if name in _GRPO:  # TRL's GRPO: the reward and the prompt-only files (no verifiers)
        from . import grpo

        return getattr(grpo, name)
    if name not in _ENVIRONMENT:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        from . import environment
    except ImportError as exc:
        raise ImportError(
            f"{name} needs verifiers 0.4: pip install '{HERE.name}[rl]' "
            f"(load_tasks() works without them): {exc}"
        ) from exc
    return getattr(environment, name)
