"""The side environment `make test` builds before pytest (side/verifiers): verifiers in a
Python >= 3.11 venv, whileai from this tree, TRL's wheel without its dependencies.

Tests never install it. Where `make` found no Python >= 3.11 it left `skip` with the
reason, and the tests that need it skip with that reason; where it was never built (a
bare `pytest` run), they skip and say how to build it.
"""

from __future__ import annotations

import functools
import subprocess
from pathlib import Path

import pytest

from ..helpers import REPO

SIDE = REPO / "side" / "verifiers"
BUILD = "run `make side/verifiers/.installed` (make test builds it)"


def _skip_reason() -> str | None:
    if (SIDE / "skip").is_file():
        return (SIDE / "skip").read_text().strip()
    if not (SIDE / ".installed").is_file() or not (SIDE / "venv" / "bin" / "python").exists():
        return f"the verifiers side environment is not built: {BUILD}"
    return None


def side_python() -> Path:
    """The side venv's interpreter, or skip."""
    reason = _skip_reason()
    if reason:
        pytest.skip(reason)
    return SIDE / "venv" / "bin" / "python"


def trl_template(name: str) -> str:
    """A chat template as TRL's wheel ships it (read as a file: trl is never imported)."""
    side_python()
    found = sorted(SIDE.glob(f"venv/lib/python3*/site-packages/trl/chat_templates/{name}.jinja"))
    if not found:
        pytest.skip(f"TRL's {name}.jinja is not in the side environment: {BUILD}")
    return found[0].read_text(encoding="utf-8")


ENV_FRESH = REPO / "side" / "envfresh"
BUILD_FRESH = "run `make side/envfresh/.installed` (make test builds it)"


def fresh_env_python() -> Path:
    """The interpreter of the fresh venv holding only the exported environment (installed
    from its folder with plain pip) and verifiers, or skip."""
    if (ENV_FRESH / "skip").is_file():
        pytest.skip((ENV_FRESH / "skip").read_text().strip())
    python = ENV_FRESH / "venv" / "bin" / "python"
    if not (ENV_FRESH / ".installed").is_file() or not python.exists():
        pytest.skip(f"the fresh-venv environment is not built: {BUILD_FRESH}")
    return python


TRAIN = REPO / "side" / "train"
BUILD_TRAIN = "run `make side/train/.installed` (make test builds it)"


def train_python(*, peft: bool = True) -> Path:
    """The interpreter of the venv with the `train` extra (TRL, PEFT, torch), or skip;
    `peft=False` for a test that trains without LoRA (a venv built before PEFT joined the
    extra still serves it)."""
    python = TRAIN / "venv" / "bin" / "python"
    if not (TRAIN / ".installed").is_file() or not python.exists():
        pytest.skip(f"the training side environment is not built: {BUILD_TRAIN}")
    missing = _missing(str(python), peft)
    if missing:
        pytest.skip(f"the training side environment lacks {missing} (built before the train "
                    f"extra named it): {BUILD_TRAIN}")  # fmt: skip
    return python


@functools.cache
def _missing(python: str, peft: bool) -> str:
    """The first module of the train extra the venv cannot find ('' when none)."""
    names = ("torch", "transformers", "trl", "datasets", *(("peft",) if peft else ()))
    probe = ("import importlib.util as u\n"
             f"print(next((m for m in {names!r} if u.find_spec(m) is None), ''))")  # fmt: skip
    done = subprocess.run([python, "-c", probe], capture_output=True, text=True, timeout=120)
    return done.stdout.strip()
