"""A real `whileai serve` app on a free loopback port, and an in-process CLI runner, for
the platform tests (test_server, test_platform_cli, test_traces, test_store_local).

Every server test runs on both databases the server speaks: the `backend` fixture is
parametrized over SQLite and PostgreSQL (a real server, `pg_cluster.py`), and `server`,
the per-session platform server, is the one of the test's backend. A test that starts a
server of its own passes `database=backend.database()` (None for SQLite, a fresh
PostgreSQL database otherwise); one that opens the storage directly passes it to
`Storage` the same way.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
import uvicorn
from click.testing import Result
from typer.testing import CliRunner

from whileai_cli.app import app
from whileai_core.platform.push import push_rows
from whileai_core.store import Store
from whileai_core.store.local import Storage
from whileai_core.testing import free_port
from whileai_server import create_app
from whileai_server.app import uvicorn_config
from whileai_server.config import ServerConfig

from .helpers import SDK_ROWS
from .pg_cluster import PostgresCluster, pg_bin

_emails = itertools.count()
BACKENDS = ("sqlite", "postgresql")


@dataclass(frozen=True)
class Backend:
    """The database a test's server or storage keeps its metadata in."""

    name: str
    cluster: PostgresCluster | None = None

    def database(self) -> str | None:
        """What `--database` is for a new store: None (SQLite under its directory), or
        the URL of a fresh PostgreSQL database."""
        return self.cluster.new_database() if self.cluster is not None else None

    def storage(self, root: Path, **kwargs: Any) -> Storage:
        return Storage(root, database=self.database(), **kwargs)


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresCluster]:
    """One PostgreSQL server for the session."""
    bin_dir = pg_bin()
    if bin_dir is None:
        pytest.skip("PostgreSQL's server is missing (.ci/run installs Debian's postgresql)")
    cluster = PostgresCluster(bin_dir).start()
    try:
        yield cluster
    finally:
        cluster.stop()


def backend_named(request: pytest.FixtureRequest, name: str) -> Backend:
    cluster = request.getfixturevalue("postgres") if name == "postgresql" else None
    return Backend(name, cluster)


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> Backend:
    return backend_named(request, str(request.param))


@dataclass
class LiveServer:
    url: str
    data: Path
    database: str | None = None

    @contextmanager
    def storage(self) -> Iterator[Storage]:
        """The server's storage opened beside it, as `whileai invite` opens it."""
        storage = Storage(self.data, database=self.database)
        try:
            yield storage
        finally:
            storage.close()

    def signup(self) -> str:
        email = f"user{next(_emails)}-{time.monotonic_ns()}@example.com"
        response = httpx.post(f"{self.url}/signup", json={"email": email})
        response.raise_for_status()
        return str(response.json()["api_key"])

    def client(self, key: str | None) -> httpx.Client:
        headers = {"X-Api-Key": key} if key else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=30)

    def approve(self, user_code: str, **form: str) -> httpx.Response:
        """Approve a device code the way a browser does: open the page (which sets the CSRF
        cookie and puts its pair in the form), then post the form with both."""
        return approve(self.url, user_code, **form)


def approve(url: str, user_code: str, **form: str) -> httpx.Response:
    with httpx.Client(base_url=url, timeout=30) as browser:
        page = browser.get("/device", params={"code": user_code})
        page.raise_for_status()
        csrf = page.text.split("name='csrf' value='")[1].split("'")[0]
        return browser.post("/device/approve", data={"user_code": user_code, "csrf": csrf, **form})


@contextmanager
def live_server(
    data: Path, config: ServerConfig | None = None, **changes: Any
) -> Iterator[LiveServer]:
    """uvicorn serving the platform app in a background thread until the block ends.
    Every request comes from 127.0.0.1, so the rate limits are off unless `config` sets
    them (the tests of the limits do)."""
    port = free_port()
    application = create_app(data, config or ServerConfig.relaxed(), **changes)
    database = application.state.server.config.database
    settings = uvicorn_config(application, host="127.0.0.1", port=port)
    uv = uvicorn.Server(settings)
    thread = threading.Thread(target=uv.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 15
    while not uv.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("test server did not start")
        time.sleep(0.02)
    live = LiveServer(f"http://127.0.0.1:{port}", data, database)
    SERVING[live.url] = live
    try:
        yield live
    finally:
        uv.should_exit = True
        thread.join(timeout=10)
        SERVING.pop(live.url, None)


# The live servers by URL: what a test that only has WHILEAI_API_URL opens storage by.
SERVING: dict[str, LiveServer] = {}


class ServerPool:
    """The session's platform servers, one per backend, started when first asked for."""

    def __init__(self, tmp_path_factory: pytest.TempPathFactory) -> None:
        self.tmp = tmp_path_factory
        self.live: dict[str, LiveServer] = {}
        self.stack = ExitStack()

    def get(self, backend: Backend) -> LiveServer:
        if backend.name not in self.live:
            data = self.tmp.mktemp(f"server-{backend.name}")
            started = live_server(
                data, database=backend.database(), url_ttl=60, device_interval=0.2
            )
            self.live[backend.name] = self.stack.enter_context(started)
        return self.live[backend.name]


@pytest.fixture(scope="session")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerPool]:
    pool = ServerPool(tmp_path_factory)
    with pool.stack:
        yield pool


@pytest.fixture
def server(backend: Backend, servers: ServerPool) -> LiveServer:
    """The session's platform server on the test's backend (so each test runs on both)."""
    return servers.get(backend)


@pytest.fixture(params=["embedded", "server-sqlite", "server-postgresql"])
def store_env(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, servers: ServerPool
) -> str:
    """Each CLI test runs three times: on the embedded store, and on a fresh account of a
    server on each backend."""
    kind = str(request.param)
    if kind.startswith("server-"):
        live = servers.get(backend_named(request, kind.removeprefix("server-")))
        monkeypatch.setenv("WHILEAI_API_URL", live.url)
        monkeypatch.setenv("WHILEAI_API_KEY", live.signup())
    return kind


def table_text(storage: Storage) -> str:
    """Every value in every table of the store's database, as text (to prove a secret is
    nowhere in it)."""
    if storage.db.dialect.name == "sqlite":
        listed = "SELECT name FROM sqlite_master WHERE type = 'table'"
    else:
        listed = "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
    tables = [str(r[0]) for r in storage.query(listed)]
    return "\n".join(
        repr(tuple(row)) for table in tables for row in storage.query(f"SELECT * FROM {table}")
    )


def cli(*args: str, input: bytes | str | None = None) -> Result:
    """`whileai ARGS` in process (the env is the test's own, via monkeypatch)."""
    return CliRunner().invoke(app, list(args), input=input)


def ok(*args: str, input: bytes | str | None = None) -> Result:
    result = cli(*args, input=input)
    assert result.exit_code == 0, (result.output, result.exception)
    return result


def stdout_json(result: Result) -> dict:  # type: ignore[type-arg]
    return orjson.loads(result.stdout_bytes)


FIFTY_SETS = {f"set-{i}": 1 + i % 40 for i in range(50)}  # name -> rows


def fifty_concurrent_pushes(tmp_path: Path, open_store: Callable[[], Store]) -> list[dict]:  # type: ignore[type-arg]
    """Push the FIFTY_SETS (1 to 40 SDK rows each) at once, each worker with its own store as
    separate processes would have; returns the train records."""
    lines = SDK_ROWS.read_bytes().splitlines(keepends=True)
    paths = []
    for i in range(50):
        path = tmp_path / f"in{i}.jsonl"
        path.write_bytes(b"".join(lines[: FIFTY_SETS[f"set-{i}"]]))
        paths.append(path)

    def push(i: int) -> dict:  # type: ignore[type-arg]
        store = open_store()
        try:
            return dict(push_rows(store, [str(paths[i])], name=f"set-{i}", gate=False)["train"])
        finally:
            store.close()

    with ThreadPoolExecutor(max_workers=50) as pool:
        return list(pool.map(push, range(50)))


def jsonl(path: Path) -> list[dict]:  # type: ignore[type-arg]
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


# --- OTLP JSON for trace tests ---------------------------------------------------

_ids = itertools.count(1)


def otlp_attr(key: str, value: object) -> dict:
    if isinstance(value, bool):
        return {"key": key, "value": {"boolValue": value}}
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    if isinstance(value, float):
        return {"key": key, "value": {"doubleValue": value}}
    return {"key": key, "value": {"stringValue": str(value)}}


def otlp_run(
    agent: str, scenario: str, prompt: str, reward: float | None = None
) -> tuple[str, list]:
    """One agent run as OTLP JSON spans: a root span and one tool span."""
    n = next(_ids)
    trace_id = f"{n:032x}"
    root_attrs = [
        otlp_attr("gen_ai.agent.name", agent),
        otlp_attr("gen_ai.request.model", "m-small"),
        otlp_attr("gen_ai.usage.input_tokens", 100),
        otlp_attr("gen_ai.usage.output_tokens", 20),
        otlp_attr("zeroproof.scenario_id", scenario),
        otlp_attr("gen_ai.prompt", prompt),
        otlp_attr("gen_ai.completion", "done"),
    ]
    if reward is not None:
        root_attrs.append(otlp_attr("whileai.reward", reward))
    start = 1_700_000_000_000_000_000 + n * 1_000_000
    spans = [
        {
            "traceId": trace_id,
            "spanId": f"{n:016x}",
            "name": "invoke_agent",
            "startTimeUnixNano": str(start),
            "endTimeUnixNano": str(start + 5000),
            "attributes": root_attrs,
        },
        {
            "traceId": trace_id,
            "spanId": f"{n + 10**6:016x}",
            "parentSpanId": f"{n:016x}",
            "name": "execute_tool get_order",
            "startTimeUnixNano": str(start + 10),
            "endTimeUnixNano": str(start + 20),
            "attributes": [
                otlp_attr("gen_ai.operation.name", "execute_tool"),
                otlp_attr("gen_ai.tool.name", "get_order"),
                otlp_attr("gen_ai.tool.call.arguments", '{"order_id": "A1"}'),
                otlp_attr("gen_ai.tool.call.result", '{"status": "ok"}'),
            ],
        },
    ]
    return trace_id, spans


def otlp_export(spans: list) -> bytes:
    doc = {
        "resourceSpans": [
            {
                "resource": {"attributes": [otlp_attr("service.name", "svc")]},
                "scopeSpans": [{"scope": {"name": "test"}, "spans": spans}],
            }
        ]
    }
    return orjson.dumps(doc)
