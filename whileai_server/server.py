"""What every route shares: the storage, the accounts, the signing secret, the limits and
the rate limiters, and the one way a route gets a store.

A route never calls the storage directly: it authenticates the key to an account and
talks to that account's `Store` (`whileai_core.store.base`), opened per request over the
shared storage and closed when the request ends (which leaves the shared storage open).
Store calls run in worker threads, so the database and the blob store never block the
event loop. A dataset upload holds its thread while the body arrives, so uploads run on a
thread pool of their own (`upload_thread`), at most a few per account and per address at
once (`uploads_of`): however slowly they trickle, the threads reads answer on stay free.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import anyio.to_thread
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request

from whileai_core.store.base import Forbidden, Gone, Store, Unauthorized
from whileai_core.store.blobs import open_blobs
from whileai_core.store.bound import BoundStore
from whileai_core.store.local import Storage

from . import signing
from .accounts import Account, Accounts
from .config import ServerConfig
from .ratelimit import Concurrency, RateLimiter

T = TypeVar("T")


class Server:
    def __init__(self, data_dir: Path, config: ServerConfig) -> None:
        self.config = config
        self.limits = config.limits
        self.storage = Storage(
            data_dir,
            config.limits,
            config.quotas,
            database=config.database,
            blobs=open_blobs(config.blobs, data_dir, config.blobs_endpoint),
        )
        self.storage.sweep()
        self.accounts = Accounts(
            self.storage,
            device_ttl=config.device_ttl,
            interval=config.device_interval,
            signup=config.signup,
        )
        secret_file = Path(config.secret_file).expanduser() if config.secret_file else None
        self.secret = signing.load_secret(self.storage.root, secret_file)
        self.signups = RateLimiter(config.signup_rate, "too many signups from this address")
        self.bad_keys = RateLimiter(
            config.bad_key_rate, "too many wrong API keys from this address"
        )
        self.approvals = RateLimiter(config.approve_rate, "too many approval attempts from here")
        self.device_codes = RateLimiter(
            config.device_code_rate, "too many login codes asked for from this address"
        )
        slots = config.uploads
        self.account_uploads = Concurrency(
            slots.per_account, "too many uploads for this account", slots.wait
        )
        self.address_uploads = Concurrency(
            slots.per_address, "too many uploads from this address", slots.wait
        )
        self.upload_threads = anyio.CapacityLimiter(slots.total)
        # One export request decodes at a time (decoding holds the GIL, so no throughput is
        # lost); the others wait here, on the event loop, holding no worker thread.
        self.ingest_gate = asyncio.Semaphore(1)

    @staticmethod
    async def thread(fn: Callable[..., T], *args: Any) -> T:
        return await run_in_threadpool(fn, *args)

    async def upload_thread(self, fn: Callable[..., T], *args: Any) -> T:
        """`fn` on one of the upload threads (`ServerConfig.uploads.total`), never on the
        pool every other route shares."""
        return await anyio.to_thread.run_sync(partial(fn, *args), limiter=self.upload_threads)

    @asynccontextmanager
    async def uploads_of(self, account: str, request: Request) -> AsyncIterator[None]:
        """A slot for one upload of `account` from this request's address, waited for while
        either has its most in flight (429 when none frees up in time)."""
        async with (
            self.account_uploads.hold(account),
            self.address_uploads.hold(self.client(request)),
        ):
            yield

    @staticmethod
    def client(request: Request) -> str:
        return request.client.host if request.client else "unknown"

    async def account(self, request: Request) -> Account:
        """The key's account. A client that sent too many wrong keys is refused before its
        key is even looked at, so trying keys costs it the wait, not the server a lookup."""
        key = request.headers.get("x-api-key")
        auth = request.headers.get("authorization", "")
        if not key and auth.lower().startswith("bearer "):
            key = auth[7:].strip()
        client = self.client(request)
        self.bad_keys.check(client)
        try:
            return await self.thread(self.accounts.authenticate, key)
        except Unauthorized:
            if key:
                self.bad_keys.spend(client)
            raise

    def open_store(self, account: str) -> Store:
        return BoundStore(self.storage, account)

    @asynccontextmanager
    async def store(self, request: Request, account: str | None = None) -> AsyncIterator[Store]:
        """The store of the key's account (or of `account`, named by a signed link)."""
        if account is None:
            account = (await self.account(request)).id
        store = self.open_store(account)
        try:
            yield store
        finally:
            store.close()

    @contextmanager
    def public_store(self) -> Iterator[Store]:
        """A store of no account: what it can answer is public (the catalog) and nothing
        else, since every other record belongs to an account."""
        store = self.open_store("")
        try:
            yield store
        finally:
            store.close()

    def signed(self, request: Request, method: str, path: str, account: str) -> str:
        base = str(request.base_url).rstrip("/")
        query = signing.signed_query(self.secret, method, path, self.config.url_ttl, account)
        return f"{base}{path}?{query}"

    def download_link(self, request: Request, account: str, dataset_id: str) -> str:
        """Where a finalized body downloads from without a key: straight from the blob
        store when it signs its own links (S3), else a link this server signs."""
        ttl = self.config.url_ttl
        direct = self.storage.direct_link(account, dataset_id, ttl)
        return direct or self.signed(request, "GET", f"/files/{dataset_id}", account)

    def link_account(self, request: Request, method: str) -> str:
        """The account a signed link was issued to, once its signature checks out."""
        account = request.query_params.get("acct")
        problem = signing.check(
            self.secret,
            method,
            request.url.path,
            request.query_params.get("expires"),
            request.query_params.get("sig"),
            account,
        )
        if problem == "expired":
            raise Gone("this link has expired: ask for a new one")
        if problem is not None or not account:
            raise Forbidden("this link's signature does not match")
        return account
