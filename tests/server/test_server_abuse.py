"""Abuse of the routes anyone can reach, and the server's housekeeping: rate limits (429
with Retry-After, the SDK's wire codes kept), signup modes and invites, the approval
form's defences, response headers, expired device codes, agent names with `/`, a
finalize killed with SIGKILL, and the per-request store."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from whileai_core.store.bound import BoundStore
from whileai_core.store.http import HttpStore
from whileai_core.store.local import Storage
from whileai_server.config import ServerConfig
from whileai_server.ratelimit import Rate, RateLimiter, parse_rate

from ..platform_fixtures import Backend, LiveServer, approve, cli, live_server

REPO = Path(__file__).resolve().parents[2]


def _email() -> str:
    return f"abuse-{time.monotonic_ns()}@example.com"


# --- rate limits ---------------------------------------------------------------------


def test_signups_past_the_rate_answer_429_too_many_signups(
    tmp_path: Path, backend: Backend
) -> None:
    config = ServerConfig.relaxed(signup_rate=Rate(2, 3600))
    with live_server(tmp_path / "srv", config, database=backend.database()) as live:
        for _ in range(2):
            assert httpx.post(f"{live.url}/signup", json={"email": _email()}).status_code == 201
        refused = httpx.post(f"{live.url}/signup", json={"email": _email()})
        assert refused.status_code == 429
        # The original SDK's CLI branches on this code ("Too many sign-ups...").
        assert refused.json()["error"] == "too_many_signups"
        assert 1000 < int(refused.headers["retry-after"]) <= 1800
    # Within the rate, an existing email is answered as the SDK expects.
    config = ServerConfig.relaxed(signup_rate=Rate(5, 3600))
    with live_server(tmp_path / "srv2", config, database=backend.database()) as live:
        email = _email()
        httpx.post(f"{live.url}/signup", json={"email": email}).raise_for_status()
        again = httpx.post(f"{live.url}/signup", json={"email": email})
        assert again.status_code == 409 and again.json()["error"] == "account_exists"


def test_wrong_keys_past_the_rate_lock_the_client_out_even_with_a_right_key(
    tmp_path: Path, backend: Backend
) -> None:
    config = ServerConfig.relaxed(bad_key_rate=Rate(3, 60))
    with live_server(tmp_path / "srv", config, database=backend.database()) as live:
        key = live.signup()
        for i in range(3):
            assert live.client(f"wai_wrong{i}").get("/me").status_code == 401
        locked = live.client("wai_wrong9").get("/datasets")
        assert locked.status_code == 429 and "wrong API keys" in locked.json()["error"]
        assert int(locked.headers["retry-after"]) >= 1
        # Not even the right key gets through: trying keys costs the wait, not a lookup.
        assert live.client(key).get("/me").status_code == 429


def test_approvals_past_the_rate_answer_429(tmp_path: Path, backend: Backend) -> None:
    config = ServerConfig.relaxed(approve_rate=Rate(2, 60))
    with live_server(tmp_path / "srv", config, database=backend.database()) as live:
        code = httpx.post(f"{live.url}/device/code", json={}).json()["user_code"]
        for _ in range(2):
            assert approve(live.url, "BCDF-GHJK", email=_email()).status_code == 404
        refused = approve(live.url, code, email=_email())
        assert refused.status_code == 429 and "retry-after" in refused.headers


def test_rate_parsing_and_the_bucket_refill() -> None:
    assert parse_rate("10/h") == Rate(10, 3600) and parse_rate("5/10min") == Rate(5, 600)
    assert parse_rate("off") is None and str(Rate(20, 60)) == "20/min"
    now = [0.0]
    limiter = RateLimiter(Rate(2, 60), "slow down", clock=lambda: now[0])
    limiter.spend("a")
    limiter.spend("a")
    with pytest.raises(Exception, match="try again in 30 s"):
        limiter.spend("a")
    limiter.spend("b")  # per client
    now[0] = 30.0
    limiter.spend("a")  # one token back after half the period


# --- signup modes and invites --------------------------------------------------------


def test_closed_server_takes_no_new_accounts_by_signup_or_approval(
    tmp_path: Path, backend: Backend
) -> None:
    config = ServerConfig.relaxed(signup="closed")
    with live_server(tmp_path / "srv", config, database=backend.database()) as live:
        refused = httpx.post(f"{live.url}/signup", json={"email": _email()})
        assert refused.status_code == 403 and refused.json()["error"] == "signups_closed"
        code = httpx.post(f"{live.url}/device/code", json={}).json()["user_code"]
        page = approve(live.url, code, email=_email())
        assert page.status_code == 403 and "no new accounts" in page.text
        with live.storage() as storage:
            assert storage.query("SELECT COUNT(*) FROM accounts")[0][0] == 0


def test_invite_mode_needs_a_code_whileai_invite_minted_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, backend: Backend
) -> None:
    data = tmp_path / "srv"
    config = ServerConfig.relaxed(signup="invite")
    with live_server(data, config, database=backend.database()) as live:
        bare = httpx.post(f"{live.url}/signup", json={"email": _email()})
        assert bare.status_code == 403 and bare.json()["error"] == "invite_required"
        where = ["--database", live.database] if live.database else []
        minted = cli("invite", "--count", "2", "--data", str(data), *where, "--note", "team")
        assert minted.exit_code == 0, minted.output
        codes = minted.stdout.split()
        assert len(codes) == 2 and all(c.startswith("inv_") for c in codes)
        # The CLI's signup sends the invite; the key works.
        monkeypatch.setenv("WHILEAI_API_URL", live.url)
        signed_up = cli("signup", "--email", _email(), "--invite", codes[0])
        assert signed_up.exit_code == 0, signed_up.output
        reused = httpx.post(f"{live.url}/signup", json={"email": _email(), "invite": codes[0]})
        assert reused.status_code == 403 and "used" in reused.json()["message"]
        # The approval form takes the other code for a new account.
        code = httpx.post(f"{live.url}/device/code", json={}).json()["user_code"]
        page = httpx.get(f"{live.url}/device", params={"code": code})
        assert "name='invite'" in page.text
        assert approve(live.url, code, email=_email(), invite=codes[1]).status_code == 200
        with live.storage() as storage:
            hashes = [r[0] for r in storage.query("SELECT hash FROM invites")]
        assert all(c not in hashes for c in codes)  # stored hashed, like keys


# --- the approval form ---------------------------------------------------------------


def test_the_approval_form_does_not_say_which_emails_have_accounts(server: LiveServer) -> None:
    email = _email()
    httpx.post(f"{server.url}/signup", json={"email": email}).raise_for_status()
    code = httpx.post(f"{server.url}/device/code", json={}).json()["user_code"]
    existing = approve(server.url, code, email=email)
    wrong_key = approve(server.url, code, api_key="wai_not_a_key")
    key_for_another = approve(server.url, code, email=_email(), api_key=server.signup())
    pages = [existing, wrong_key, key_for_another]
    assert {p.status_code for p in pages} == {401}
    errors = {p.text.split("class='err'>")[1].split("<")[0] for p in pages}
    assert len(errors) == 1 and email not in errors.pop()


def test_the_approval_form_refuses_other_sites_and_missing_tokens(server: LiveServer) -> None:
    code = httpx.post(f"{server.url}/device/code", json={}).json()["user_code"]
    form = {"user_code": code, "email": _email()}
    assert httpx.post(f"{server.url}/device/approve", data=form).status_code == 403
    with httpx.Client(base_url=server.url) as browser:
        page = browser.get("/device", params={"code": code})
        csrf = page.text.split("name='csrf' value='")[1].split("'")[0]
        cookie = page.cookies["whileai_csrf"]
        assert "httponly" in page.headers["set-cookie"].lower()
        assert "samesite=strict" in page.headers["set-cookie"].lower()
        evil = browser.post(
            "/device/approve",
            data={**form, "csrf": csrf},
            headers={"Origin": "https://evil.example"},
        )
        assert evil.status_code == 403 and "another site" in evil.text
        forged = browser.post("/device/approve", data={**form, "csrf": cookie})
        assert forged.status_code == 403  # the cookie's half is not the form's
    with httpx.Client(base_url=server.url) as other:  # another browser's token
        assert other.post("/device/approve", data={**form, "csrf": csrf}).status_code == 403
    host = server.url.split("//")[1]
    with httpx.Client(base_url=server.url) as browser:
        page = browser.get("/device", params={"code": code})
        csrf = page.text.split("name='csrf' value='")[1].split("'")[0]
        same = browser.post(
            "/device/approve", data={**form, "csrf": csrf}, headers={"Origin": f"http://{host}"}
        )
        assert same.status_code == 200 and "Approved" in same.text


def test_every_response_carries_the_security_headers(server: LiveServer) -> None:
    key = server.signup()
    responses = [
        httpx.get(f"{server.url}/health"),
        httpx.get(f"{server.url}/me", headers={"X-Api-Key": key}),
        httpx.get(f"{server.url}/no/such/route"),
        httpx.get(f"{server.url}/device", params={"code": "ABCD-EFGH"}),
    ]
    for response in responses:
        assert response.headers["x-content-type-options"] == "nosniff"
        assert response.headers["x-frame-options"] == "DENY"
        assert "frame-ancestors 'none'" in response.headers["content-security-policy"]
    page_policy = responses[-1].headers["content-security-policy"]
    assert "script-src" not in page_policy and "default-src 'none'" in page_policy
    assert "style-src 'sha256-" in page_policy and "form-action 'self'" in page_policy
    assert responses[-1].headers["cache-control"] == "no-store"


def test_expired_and_spent_device_codes_are_deleted(tmp_path: Path, backend: Backend) -> None:
    database = backend.database()
    with live_server(
        tmp_path / "srv", database=database, device_ttl=0.2, device_interval=0.01
    ) as live:
        first = httpx.post(f"{live.url}/device/code", json={}).json()
        time.sleep(0.4)
        poll = {"device_code": first["device_code"], "user_code": first["user_code"]}
        assert httpx.post(f"{live.url}/device/token", json=poll).json()["error"] == (
            "expired_token"
        )
        httpx.post(f"{live.url}/device/code", json={}).raise_for_status()
        with live.storage() as storage:
            codes = [r[0] for r in storage.query("SELECT device_code FROM device_codes")]
        assert first["device_code"] not in codes and len(codes) == 1


# --- names, kills and stores ---------------------------------------------------------


def test_an_agent_named_with_a_slash_can_be_deleted(server: LiveServer) -> None:
    key = server.signup()
    store = HttpStore(server.url, key)
    try:
        for slug in ("team/bot", "plain-bot", "a b%c"):
            store.create_agent(slug, "x")
        assert {a["slug"] for a in store.list_agents()} == {"team/bot", "plain-bot", "a b%c"}
        for slug in ("team/bot", "plain-bot", "a b%c"):
            store.delete_agent(slug)
        assert store.list_agents() == []
    finally:
        store.close()


_FINALIZE = textwrap.dedent(
    """
    import sys
    from whileai_core.store.bound import BoundStore
    from whileai_core.store.local import Storage
    database = sys.argv[3] if len(sys.argv) > 3 else None
    BoundStore(Storage(sys.argv[1], database=database), "acct").finalize(sys.argv[2])
    """
)


def test_a_finalize_killed_mid_check_is_recovered_by_the_next(
    tmp_path: Path, backend: Backend
) -> None:
    database = backend.database()
    storage = Storage(tmp_path / "store", database=database)
    store = BoundStore(storage, "acct")
    created = store.create_dataset(_spec("killed"))
    row = orjson.dumps({"prompt": "p" * 200, "scenario_id": "s"}) + b"\n"
    store.upload(created["datasetId"], iter([row * 15_000] * 4))  # ~14 MB to check
    checking = storage.blobs.dir / f"{created['datasetId']}.checking"  # type: ignore[attr-defined]
    args = [str(tmp_path / "store"), created["datasetId"], *([database] if database else [])]
    proc = subprocess.Popen([sys.executable, "-c", _FINALIZE, *args], cwd=REPO)
    deadline = time.monotonic() + 30
    while not checking.exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.005)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert checking.exists(), "the finalize ended before it could be killed mid-check"
    assert not storage.blobs.exists(f"{created['datasetId']}.part")
    # Its lock died with it (a flock, or PostgreSQL's advisory lock on its connection).
    record = store.finalize(created["datasetId"])
    assert record["status"] == "ready" and record["rows"] == 60_000
    assert not checking.exists()
    storage.close()


def test_the_sweep_gives_a_stranded_check_back_as_the_part(
    tmp_path: Path, backend: Backend
) -> None:
    storage = backend.storage(tmp_path / "store")
    store = BoundStore(storage, "acct")
    created = store.create_dataset(_spec("stranded"))
    store.upload(created["datasetId"], iter([b'{"prompt": "x"}\n']))
    part = f"{created['datasetId']}.part"
    storage.blobs.move(part, f"{created['datasetId']}.checking")  # as SIGKILL leaves it
    storage.sweep()
    assert storage.blobs.exists(part)
    assert store.finalize(created["datasetId"])["rows"] == 1
    storage.close()


def _spec(name: str) -> Any:
    from whileai_core.store.base import NewDataset

    return NewDataset(name=name)


def test_closing_a_per_request_store_leaves_the_shared_storage_open(
    tmp_path: Path, backend: Backend
) -> None:
    storage = backend.storage(tmp_path / "store")
    first, second = BoundStore(storage, "a"), BoundStore(storage, "b")
    with storage.tx() as db:  # the shared connection, mid-transaction
        first.close()
        db.execute("INSERT INTO agents (account, slug, created_at) VALUES ('b', 'kept', 0)")
    assert [a["slug"] for a in second.list_agents()] == ["kept"]
    storage.close()


def test_server_routes_reach_storage_only_through_the_store_interface() -> None:
    for module in ("store_routes.py", "account_routes.py"):
        source = (REPO / "whileai_server" / module).read_text()
        assert ".storage." not in source and "Storage" not in source, module
