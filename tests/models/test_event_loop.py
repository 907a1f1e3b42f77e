"""Model-backed runs pick their event loop in one place (`whileai_core.aio`)."""

from __future__ import annotations

import asyncio

import pytest

from whileai_core import aio


async def _loop_module() -> str:
    return type(asyncio.get_running_loop()).__module__.split(".")[0]


def test_run_uses_the_loop_loop_name_reports(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("WHILEAI_EVENT_LOOP", raising=False)
    expected = aio.loop_name()
    assert expected in ("uvloop", "asyncio")
    assert aio.run(_loop_module()) == expected


def test_asyncio_can_be_asked_for(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WHILEAI_EVENT_LOOP", "asyncio")
    assert aio.loop_name() == "asyncio"
    assert aio.run(_loop_module()) == "asyncio"
