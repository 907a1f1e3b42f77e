"""Account quotas on a live server: refused with 413/429 and a clear message, and a
refused push leaves nothing behind (no dataset, no pending upload, no file)."""

from __future__ import annotations

from pathlib import Path

import httpx
import orjson
import pytest

from whileai_core.platform.push import push_rows
from whileai_core.store import StoreError
from whileai_core.store.base import TooLarge, TooManyRequests
from whileai_core.store.http import HttpStore
from whileai_core.store.quotas import QuotaPolicy, Quotas
from whileai_server.accounts import mint_invites
from whileai_server.config import ServerConfig

from ..helpers import SDK_ROWS
from ..platform_fixtures import Backend, LiveServer, cli, live_server, otlp_export, otlp_run

LINES = SDK_ROWS.read_bytes().splitlines(keepends=True)


def _rows(tmp_path: Path, n: int, name: str = "in.jsonl") -> Path:
    path = tmp_path / name
    path.write_bytes(b"".join((LINES * 3)[:n]))
    return path


def _nothing_left(live: LiveServer, store: HttpStore, keep: int = 0) -> None:
    assert len(store.list_datasets()) == keep
    assert store.list_datasets(status="pending") == []
    files = sorted(p.name for p in (live.data / "datasets").iterdir())
    assert len(files) == keep, files


@pytest.fixture
def tight(tmp_path: Path, backend: Backend):  # type: ignore[no-untyped-def]
    quotas = Quotas(
        max_datasets=3,
        max_stored_bytes=256 * 1024,
        max_push_rows=30,
        max_daily_rows=60,
        max_daily_traces=2,
        max_daily_tokens=500,
    )
    config = ServerConfig.relaxed(quotas=QuotaPolicy(default=quotas), url_ttl=60)
    with live_server(tmp_path / "data", config, database=backend.database()) as live:
        yield live


def test_rows_per_push_refused_413_at_finalize_and_nothing_stays(
    tight: LiveServer, tmp_path: Path
) -> None:
    store = HttpStore(tight.url, tight.signup())
    with pytest.raises(TooLarge) as refused:
        push_rows(store, [str(_rows(tmp_path, 31))], name="big", gate=False)
    message = str(refused.value)
    assert "more than 30 rows in one push" in message and "max_push_rows" in message
    _nothing_left(tight, store)
    # The same set, small enough, goes through.
    push_rows(store, [str(_rows(tmp_path, 30))], name="fits", gate=False)
    _nothing_left(tight, store, keep=1)


def test_bytes_stored_refused_while_the_upload_streams(tight: LiveServer, tmp_path: Path) -> None:
    key = tight.signup()
    store = HttpStore(tight.url, key)
    push_rows(store, [str(_rows(tmp_path, 30))], name="first", gate=False)  # ~60 kB
    # A raw upload without a length: refused as the bytes that pass the quota arrive.
    with tight.client(key) as client:
        created = client.post("/datasets", json={"name": "second"}).json()

        def body():  # type: ignore[no-untyped-def]
            for _ in range(200):
                yield LINES[0]

        put = httpx.put(created["uploadUrl"], content=body(), timeout=30)
        assert put.status_code == 413
        assert put.json()["limit"] == "max_stored_bytes"
        assert "would pass the bytes the account may have stored" in put.json()["error"]
    _nothing_left(tight, store, keep=1)
    # Through the client (which announces the length): refused before a byte is sent.
    with pytest.raises(TooLarge, match="max_stored_bytes"):
        push_rows(store, [str(_rows(tmp_path, 100, "more.jsonl"))], name="third", gate=False)
    _nothing_left(tight, store, keep=1)


def test_daily_rows_refused_429_until_tomorrow(tight: LiveServer, tmp_path: Path) -> None:
    key = tight.signup()
    store = HttpStore(tight.url, key)
    push_rows(store, [str(_rows(tmp_path, 25))], name="a", gate=False)
    push_rows(store, [str(_rows(tmp_path, 25, "b.jsonl"))], name="b", gate=False)
    with tight.client(key) as client:
        me = client.get("/me").json()
    assert me["usage"]["today"]["rowsPushed"] == 50
    assert me["limits"]["max_daily_rows"] == 60
    with pytest.raises(TooManyRequests, match="max_daily_rows"):
        push_rows(store, [str(_rows(tmp_path, 20, "c.jsonl"))], name="c", gate=False)
    _nothing_left(tight, store, keep=2)
    with tight.client(key) as client:
        created = client.post("/datasets", json={"name": "raw"}).json()
        httpx.put(created["uploadUrl"], content=b"".join(LINES[:20]), timeout=30)
        final = client.post(f"/datasets/{created['datasetId']}/finalize")
        assert final.status_code == 429
        assert 0 < int(final.headers["retry-after"]) <= 86400
        assert "turns over in" in final.json()["error"]
        assert client.get("/me").json()["usage"]["today"]["rowsPushed"] == 50  # none counted
    _nothing_left(tight, store, keep=2)


def test_datasets_per_account_refused_at_create(tight: LiveServer, tmp_path: Path) -> None:
    key = tight.signup()
    store = HttpStore(tight.url, key)
    for i in range(3):
        push_rows(store, [str(_rows(tmp_path, 2 + i, f"{i}.jsonl"))], name=f"s{i}", gate=False)
    with tight.client(key) as client:
        refused = client.post("/datasets", json={"name": "fourth"})
    assert refused.status_code == 413 and refused.json()["limit"] == "max_datasets"
    assert "delete one" in refused.json()["error"]
    # A retried push of a set already stored is not a new dataset: it still answers.
    again = push_rows(store, [str(_rows(tmp_path, 2, "0.jsonl"))], name="s0", gate=False)
    assert again["train"]["existing"]
    # The CLI says it in one line, with the code.
    done = cli("datasets")  # the embedded store: no quota there
    assert done.exit_code == 0


def test_a_holdout_refused_takes_its_train_half_with_it(tight: LiveServer, tmp_path: Path) -> None:
    store = HttpStore(tight.url, tight.signup())
    for i in range(2):
        push_rows(store, [str(_rows(tmp_path, 2, f"{i}.jsonl"))], name=f"s{i}", gate=False)
    # Room for one more dataset, and the push is two: the train half must not stay alone.
    with pytest.raises(StoreError, match="max_datasets"):
        push_rows(store, [str(_rows(tmp_path, 20))], name="pair", holdout=0.5, gate=False)
    _nothing_left(tight, store, keep=2)


def test_traces_and_tokens_per_day_refused_whole(tight: LiveServer) -> None:
    key = tight.signup()
    with tight.client(key) as client:
        spans = []
        for i in range(3):
            spans += otlp_run("bot", f"sc-{i}", "hi")[1]  # 120 tokens each
        refused = client.post(
            "/v1/traces", content=otlp_export(spans), headers={"content-type": "application/json"}
        )
        assert refused.status_code == 429 and refused.json()["limit"] == "max_daily_traces"
        assert client.get("/traces").json()["total"] == 0  # nothing of it kept
        ok = client.post(
            "/v1/traces",
            content=otlp_export(spans[:4]),
            headers={"content-type": "application/json"},
        )
        assert ok.status_code == 200
        usage = client.get("/me").json()["usage"]["today"]
        assert usage["traces"] == 2 and usage["tokens"] == 240


def test_tokens_quota(tmp_path: Path, backend: Backend) -> None:
    config = ServerConfig.relaxed(quotas=QuotaPolicy(default=Quotas(max_daily_tokens=200)))
    database = backend.database()
    with (
        live_server(tmp_path / "d", config, database=database) as live,
        live.client(live.signup()) as client,
    ):
        _, spans = otlp_run("bot", "sc", "hi")
        post = {"content": otlp_export(spans), "headers": {"content-type": "application/json"}}
        assert client.post("/v1/traces", **post).status_code == 200
        _, more = otlp_run("bot", "sc2", "hi")
        refused = client.post(
            "/v1/traces", content=otlp_export(more), headers={"content-type": "application/json"}
        )
        assert refused.status_code == 429 and refused.json()["limit"] == "max_daily_tokens"


def test_tiers_from_invites_and_status_shows_them(  # type: ignore[no-untyped-def]
    tmp_path: Path, monkeypatch, backend: Backend
) -> None:
    policy = QuotaPolicy(default=Quotas(max_datasets=1), tiers={"team": Quotas(max_datasets=50)})
    config = ServerConfig.relaxed(quotas=policy, signup="invite")
    with live_server(tmp_path / "d", config, database=backend.database()) as live:
        with live.storage() as storage:
            (team_code,) = mint_invites(storage, 1, 3600, tier="team")
            (plain_code,) = mint_invites(storage, 1, 3600)
        team = httpx.post(f"{live.url}/signup", json={"email": "t@x.io", "invite": team_code})
        plain = httpx.post(f"{live.url}/signup", json={"email": "p@x.io", "invite": plain_code})
        assert team.json()["tier"] == "team" and plain.json()["tier"] == "self-hosted"
        monkeypatch.setenv("WHILEAI_API_URL", live.url)
        monkeypatch.setenv("WHILEAI_API_KEY", team.json()["api_key"])
        shown = cli("status")
        assert shown.exit_code == 0, shown.output
        assert "tier team" in shown.output and "0 of 50 datasets" in shown.output
        status = orjson.loads(cli("status", "--json").stdout)
        assert status["account"]["limits"]["max_datasets"] == 50
