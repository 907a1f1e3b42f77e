"""Per-client rate limits for the routes anyone can reach without a key, and the bound on
how many slow requests one client may have in flight.

Signup, device codes, the device approval form and key checking cost the server a
database write or lookup each, and need no account: without a limit one client can create
accounts in a loop, fill the database with login codes, enumerate emails through the
approval form, or try keys as fast as the server answers. Each limit is a token bucket per
client address (`N/PERIOD`: N at once, then N per PERIOD), refused with 429 and a
`Retry-After` that says when the next try is allowed.

The client address is the connection's peer. An `X-Forwarded-For` header is believed only
from the proxies the admin names (`serve --forwarded-allow-ips`, `ServerConfig.
forwarded_allow_ips`); from anyone else it is ignored, so rotating it buys nothing.

`Concurrency` bounds requests that hold a thread for as long as their client takes (a
dataset upload): one over the bound waits its turn, a while, then is refused with 429.
"""

from __future__ import annotations

import asyncio
import math
import re
import threading
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass

from whileai_core.errors import ConfigError
from whileai_core.store.base import TooManyRequests

_UNITS = {"s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600, "hour": 3600, "d": 86400, "day": 86400}
_RATE = re.compile(r"^\s*(\d+)\s*/\s*(\d*)\s*([a-z]+)\s*$", re.IGNORECASE)
MAX_CLIENTS = 10_000  # buckets kept before full ones are dropped


@dataclass(frozen=True)
class Rate:
    count: int
    per: float  # seconds

    def __str__(self) -> str:
        for unit, seconds in (("d", 86400), ("h", 3600), ("min", 60)):
            if self.per % seconds == 0:
                n = int(self.per // seconds)
                return f"{self.count}/{n if n != 1 else ''}{unit}"
        return f"{self.count}/{self.per:g}s"


def parse_rate(text: str, what: str = "rate") -> Rate | None:
    """`10/h`, `30/min`, `5/10min`, `100/d`; `off` (or `0`) for no limit."""
    if text.strip().lower() in ("off", "none", "0", "unlimited"):
        return None
    match = _RATE.match(text)
    unit = _UNITS.get(match.group(3).lower()) if match else None
    if not match or unit is None or int(match.group(1)) < 1:
        raise ConfigError(f"{what}: expected N/PERIOD like 10/h or 30/min (or off), got {text!r}")
    return Rate(int(match.group(1)), int(match.group(2) or 1) * unit)


class RateLimiter:
    """One token bucket per client; thread-safe, since the key check runs in workers."""

    def __init__(
        self, rate: Rate | None, refusal: str, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.rate = rate
        self.refusal = refusal
        self.clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}  # client -> (tokens, at)
        self._lock = threading.Lock()

    def _tokens(self, client: str, now: float) -> float:
        assert self.rate is not None
        tokens, at = self._buckets.get(client, (float(self.rate.count), now))
        return min(float(self.rate.count), tokens + (now - at) * self.rate.count / self.rate.per)

    def _refuse(self, tokens: float) -> TooManyRequests:
        assert self.rate is not None
        wait = math.ceil((1 - tokens) * self.rate.per / self.rate.count)
        return TooManyRequests(
            f"{self.refusal} (limit {self.rate} per client): try again in {wait} s", wait
        )

    def check(self, client: str) -> None:
        """Refuse a client with nothing left, without spending anything."""
        if self.rate is None:
            return
        with self._lock:
            tokens = self._tokens(client, self.clock())
        if tokens < 1:
            raise self._refuse(tokens)

    def spend(self, client: str) -> None:
        """Spend one; refuse when there was none to spend."""
        if self.rate is None:
            return
        with self._lock:
            now = self.clock()
            tokens = self._tokens(client, now)
            if tokens < 1:
                raise self._refuse(tokens)
            self._buckets[client] = (tokens - 1, now)
            if len(self._buckets) > MAX_CLIENTS:
                self._forget_full(now)

    def _forget_full(self, now: float) -> None:
        """Drop the buckets that have refilled: they hold nothing a new bucket would not."""
        full = [c for c in self._buckets if self._tokens(c, now) >= self.rate.count]  # type: ignore[union-attr]
        for client in full:
            del self._buckets[client]


class Concurrency:
    """How many requests of one kind each key (an account, a client address) has in flight.
    One past `limit` waits its turn on the event loop, holding no thread, for up to `wait`
    seconds, then is refused with 429: a burst of honest pushes goes through in turn, and
    a client that keeps its slots busy (trickling bodies) gets refusals, not a queue that
    grows forever. Used from the event loop only."""

    def __init__(self, limit: int, refusal: str, wait: float = 30.0) -> None:
        self.limit = limit
        self.refusal = refusal
        self.wait = wait
        self._slots: dict[str, tuple[asyncio.Semaphore, int]] = {}  # key -> (slots, users)

    @asynccontextmanager
    async def hold(self, key: str) -> AsyncIterator[None]:
        slots, users = self._slots.get(key) or (asyncio.Semaphore(self.limit), 0)
        self._slots[key] = (slots, users + 1)
        try:
            try:
                await asyncio.wait_for(slots.acquire(), self.wait)
            except TimeoutError:
                raise TooManyRequests(
                    f"{self.refusal} ({self.limit} at once, and none finished in"
                    f" {self.wait:g} s): try again later",
                    self.wait,
                ) from None
            try:
                yield
            finally:
                slots.release()
        finally:
            slots, users = self._slots[key]
            if users > 1:
                self._slots[key] = (slots, users - 1)
            else:
                del self._slots[key]
