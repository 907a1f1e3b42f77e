"""A real `whileai serve` app on a free loopback port, and an in-process CLI runner, for
the platform tests (test_server, test_platform_cli, test_traces, test_store_local)."""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
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
from whileai_core.store import Store
from whileai_core.store.push import push_rows
from whileai_core.testing import free_port
from whileai_server import create_app
from whileai_server.config import ServerConfig

from .helpers import SDK_ROWS

_emails = itertools.count()


@dataclass
class LiveServer:
    url: str
    data: Path

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
    settings = uvicorn.Config(application, host="127.0.0.1", port=port, log_level="warning")
    uv = uvicorn.Server(settings)
    thread = threading.Thread(target=uv.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 15
    while not uv.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("test server did not start")
        time.sleep(0.02)
    try:
        yield LiveServer(f"http://127.0.0.1:{port}", data)
    finally:
        uv.should_exit = True
        thread.join(timeout=10)


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """One platform server for the whole session."""
    with live_server(tmp_path_factory.mktemp("server-data"), url_ttl=60, device_interval=0.2) as s:
        yield s


@pytest.fixture(params=["embedded", "server"])
def store_env(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each CLI test runs twice: on the embedded store and on a fresh server account."""
    if request.param == "server":
        live: LiveServer = request.getfixturevalue("server")
        monkeypatch.setenv("WHILEAI_API_URL", live.url)
        monkeypatch.setenv("WHILEAI_API_KEY", live.signup())
    return str(request.param)


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
