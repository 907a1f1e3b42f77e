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
    for name in ("API_URL", "API_KEY", "DELEGATED_CREDENTIAL"):
        monkeypatch.delenv(f"WHILEAI_{name}", raising=False)
        monkeypatch.delenv(f"ZEROPROOF_{name}", raising=False)
    # The original SDK's old home (its saved credentials are read as a last resort).
    monkeypatch.setenv("ZEROPROOF_HOME", str(tmp_path_factory.mktemp("zeroproof-home")))
    monkeypatch.delenv("WHILEAI_DEBUG", raising=False)


# The platform fixtures (a PostgreSQL server, the backend each server test runs on, the
# session's live servers), registered once here so every package shares one of each.
from .platform_fixtures import backend, postgres, server, servers, store_env  # noqa: E402, F401
