"""Shared fixtures: the original SDK's rows and an isolated WHILEAI_HOME for every test."""

from __future__ import annotations

import orjson
import pytest

from .helpers import SDK_ROWS


@pytest.fixture
def sdk_rows() -> list[dict]:
    return [orjson.loads(line) for line in SDK_ROWS.read_bytes().splitlines() if line.strip()]


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    """No test reads or writes the user's real ~/.whileai or talks to a configured server."""
    monkeypatch.setenv("WHILEAI_HOME", str(tmp_path_factory.mktemp("whileai-home")))
    monkeypatch.delenv("WHILEAI_API_URL", raising=False)
    monkeypatch.delenv("WHILEAI_API_KEY", raising=False)
    monkeypatch.delenv("WHILEAI_DEBUG", raising=False)
