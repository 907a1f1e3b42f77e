"""The tiny model every training test starts from, built once a session in the side venv."""

from __future__ import annotations

from pathlib import Path

import pytest

from .side import ROWS, SPEC, build_tiny


@pytest.fixture(scope="session")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 2-layer Qwen2 (hidden 32) with a tokenizer trained on the orders rows' and spec's
    own text."""
    return build_tiny(tmp_path_factory.mktemp("tiny") / "model", ROWS, SPEC / "spec.json")
