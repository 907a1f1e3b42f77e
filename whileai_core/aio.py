"""Running a model-backed run's event loop: uvloop's when it is installed, else asyncio's.

At hundreds of model calls in flight the loop itself (transports, timers, task steps) is a
large share of a call's client CPU; uvloop (libuv, in C) does the same work for about
40% less of it per call, with the same asyncio API, so nothing that runs on it changes.
It is a dependency on Linux and macOS; without it (Windows, PyPy) or with
WHILEAI_EVENT_LOOP=asyncio the standard loop runs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

from .settings import event_loop

T = TypeVar("T")


def run(main: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(main)` on the chosen loop."""
    if event_loop() == "uvloop":
        try:
            import uvloop
        except ImportError:
            pass
        else:
            return uvloop.run(main)
    return asyncio.run(main)


def loop_name() -> str:
    """The loop `run` would use: `uvloop` or `asyncio`."""
    if event_loop() == "uvloop":
        try:
            import uvloop  # noqa: F401
        except ImportError:
            return "asyncio"
        return "uvloop"
    return "asyncio"
