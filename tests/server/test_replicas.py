"""Two `whileai serve` processes on one database: the deployment past one machine.

Within one server process, trace ingests take turns (one decode at a time), so only
separate processes writing one database at once show whether the store's reads that
decide a write are really serialized by the database: the merge of a trace's spans
arriving at two replicas, the daily counters, a quota two replicas check at once, the
sequence numbers of one run's points logged through both. Each test runs on SQLite (two
processes on one machine, one file) and on PostgreSQL (where the replicas could be on
different machines: they share the database, and the secret that signs links).
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import httpx
import orjson
import pytest

from whileai_core.store.http import HttpStore
from whileai_core.store.local import Storage
from whileai_core.testing import serve_process

from ..platform_fixtures import (
    BACKENDS,
    FIFTY_SETS,
    Backend,
    backend_named,
    fifty_concurrent_pushes,
    otlp_export,
    otlp_run,
)


class Replicas:
    def __init__(self, urls: list[str], data: Path, database: str | None) -> None:
        self.urls, self.data, self.database = urls, data, database

    def signup(self) -> str:
        email = f"replica-{time.monotonic_ns()}@example.com"
        response = httpx.post(f"{self.urls[0]}/signup", json={"email": email}, timeout=30)
        response.raise_for_status()
        return str(response.json()["api_key"])

    def storage(self) -> Storage:
        return Storage(self.data, database=self.database)


@contextmanager
def _replicas(tmp: Path, backend: Backend, *flags: str) -> Iterator[Replicas]:
    database = backend.database()
    args = [*(["--database", database] if database else []), "--signup-rate", "off", *flags]
    data = tmp / "data"
    # The first start makes the signing secret; the second finds it (one file both use,
    # as `--secret-file` would give replicas on separate machines).
    with serve_process(data, args=args) as (_, first), serve_process(data, args=args) as (_, b):
        yield Replicas([first, b], data, database)


@pytest.fixture(scope="module", params=BACKENDS)
def pair(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Replicas]:
    backend = backend_named(request, str(request.param))
    with _replicas(tmp_path_factory.mktemp("replicas"), backend) as replicas:
        yield replicas


def test_fifty_pushes_and_fifty_otlp_posts_across_two_replicas_lose_nothing(
    pair: Replicas, tmp_path: Path
) -> None:
    key = pair.signup()
    turn = itertools.count()
    # 25 traces, each sent as two export requests (its root span, its tool span), the two
    # halves to different replicas at once: each replica must merge into what the other
    # stored, never over it.
    halves = []
    for i in range(25):
        _, spans = otlp_run("fleet-bot", f"sc-{i}", f"prompt {i}")
        halves += [(pair.urls[i % 2], spans[:1]), (pair.urls[(i + 1) % 2], spans[1:])]

    def post(half: tuple[str, list]) -> int:  # type: ignore[type-arg]
        url, spans = half
        response = httpx.post(
            f"{url}/v1/traces",
            content=otlp_export(spans),
            headers={"X-Api-Key": key, "content-type": "application/json"},
            timeout=60,
        )
        return response.status_code

    pushed: list[dict] = []  # type: ignore[type-arg]

    def pushes() -> None:
        def store() -> HttpStore:
            return HttpStore(pair.urls[next(turn) % 2], key)

        pushed.extend(fifty_concurrent_pushes(tmp_path, store))

    pusher = threading.Thread(target=pushes)
    pusher.start()
    with ThreadPoolExecutor(max_workers=50) as pool:
        statuses = list(pool.map(post, halves))
    pusher.join(timeout=300)
    assert statuses == [200] * 50

    check = HttpStore(pair.urls[1], key)
    try:
        assert {d["name"]: d["rows"] for d in check.list_datasets()} == FIFTY_SETS
        assert check.list_datasets(status="pending") == []
        assert len(pushed) == 50 and {r["datasetId"] for r in pushed} == {
            d["datasetId"] for d in check.list_datasets()
        }
        listed = check.list_traces(agent="fleet-bot", limit=100)
        assert listed["total"] == 25
        assert all(len(t["steps"]) == 1 and t["prompt"] for t in listed["traces"])
        usage = check.usage()["usage"]["today"]
        assert usage["traces"] == 25 and usage["tokens"] == 25 * 120
        assert usage["rowsPushed"] == sum(FIFTY_SETS.values())
    finally:
        check.close()
    storage = pair.storage()
    try:
        spans = storage.query("SELECT spans FROM traces WHERE agent = 'fleet-bot'")
        assert sorted(len(orjson.loads(r["spans"])) for r in spans) == [2] * 25
    finally:
        storage.close()


def test_one_run_logged_through_both_replicas_keeps_every_point_in_order(
    pair: Replicas,
) -> None:
    key = pair.signup()
    clients = [httpx.Client(base_url=u, headers={"X-Api-Key": key}, timeout=60) for u in pair.urls]
    run_id = clients[0].post("/runs", json={"name": "shared"}).json()["runId"]

    def log(i: int) -> int:
        batch = {"points": [{"step": i * 10 + k, "loss": float(i)} for k in range(10)]}
        return clients[i % 2].post(f"/runs/{run_id}/log", json=batch).status_code

    with ThreadPoolExecutor(max_workers=20) as pool:
        assert list(pool.map(log, range(40))) == [200] * 40
    got = clients[1].get(f"/runs/{run_id}").json()
    assert got["points"] == 400 and len(got["series"]) == 400
    assert sorted(p["step"] for p in got["series"]) == list(range(400))
    # Each batch arrived whole: its ten points sit together, in their order.
    steps = [p["step"] for p in got["series"]]
    assert all(steps[b * 10 : b * 10 + 10] == list(range(steps[b * 10], steps[b * 10] + 10))
               for b in range(40))  # fmt: skip
    for client in clients:
        client.close()


@pytest.mark.parametrize("name", BACKENDS)
def test_a_quota_two_replicas_check_at_once_is_never_passed(
    request: pytest.FixtureRequest, tmp_path: Path, name: str
) -> None:
    with _replicas(tmp_path, backend_named(request, name), "--max-datasets", "10") as replicas:
        key = replicas.signup()

        def create(i: int) -> int:
            response = httpx.post(
                f"{replicas.urls[i % 2]}/datasets",
                json={"name": f"race-{i}"},
                headers={"X-Api-Key": key},
                timeout=60,
            )
            return response.status_code

        with ThreadPoolExecutor(max_workers=30) as pool:
            statuses = list(pool.map(create, range(30)))
        assert sorted(statuses) == [201] * 10 + [413] * 20
        with httpx.Client(base_url=replicas.urls[0], headers={"X-Api-Key": key}) as client:
            pending = client.get("/datasets", params={"status": "pending"}).json()["datasets"]
        assert len(pending) == 10
