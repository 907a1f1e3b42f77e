"""The server over HTTP: accounts, signed links, finalize validation, isolation, errors."""

from __future__ import annotations

import time
from urllib.parse import parse_qs, urlsplit

import httpx
import orjson

from whileai_core.store.http import HttpStore
from whileai_server.signing import load_secret, signature

from ..helpers import SDK_ROWS
from ..platform_fixtures import FIFTY_SETS, LiveServer, fifty_concurrent_pushes, table_text

ROW = orjson.dumps({"prompt": "hi", "scenario_id": "s1"}) + b"\n"


def _create(client: httpx.Client, name: str = "set") -> dict:
    response = client.post("/datasets", json={"name": name})
    assert response.status_code == 201, response.text
    return response.json()


def _upload_and_finalize(client: httpx.Client, body: bytes, name: str = "set") -> dict:
    created = _create(client, name)
    assert httpx.put(created["uploadUrl"], content=body).status_code == 200
    response = client.post(f"/datasets/{created['datasetId']}/finalize")
    assert response.status_code == 200, response.text
    return response.json()


def test_signup_returns_a_key_that_me_accepts(server: LiveServer) -> None:
    response = httpx.post(f"{server.url}/signup", json={"email": "Me@Example.com", "name": "me"})
    body = response.json()
    assert body["api_key"].startswith("wai_") and body["user_id"].startswith("usr_")
    me = server.client(body["api_key"]).get("/me").json()
    assert me["email"] == "me@example.com" and me["user_id"] == body["user_id"]
    assert response.status_code == 201
    # The original SDK's CLI branches on these error codes.
    again = httpx.post(f"{server.url}/signup", json={"email": "me@example.com"})
    assert again.status_code == 409 and again.json()["error"] == "account_exists"
    bad = httpx.post(f"{server.url}/signup", json={"email": "not-an-email"})
    assert bad.status_code == 400 and bad.json()["error"] == "invalid_email"


def test_keys_are_stored_only_as_sha256_hashes(server: LiveServer) -> None:
    key = server.signup()
    with server.storage() as storage:
        dump = table_text(storage)
    assert key not in dump
    import hashlib

    assert hashlib.sha256(key.encode()).hexdigest() in dump


def test_errors_are_json_with_the_right_status(server: LiveServer) -> None:
    anonymous = server.client(None)
    assert anonymous.get("/datasets").status_code == 401
    assert "error" in anonymous.get("/datasets").json()
    assert server.client("wai_wrong").get("/me").status_code == 401
    client = server.client(server.signup())
    missing = client.get("/datasets/ds_0000000000000000")
    assert missing.status_code == 404 and missing.json() == {
        "error": "dataset ds_0000000000000000 not found"
    }
    assert client.get("/no/such/route").status_code == 404
    assert client.get("/no/such/route").json()["error"]
    bad = client.post("/datasets", content=b"[1]", headers={"Content-Type": "application/json"})
    assert bad.status_code == 400 and "JSON object" in bad.json()["error"]
    assert client.post("/datasets", json={"name": "x", "purpose": "other"}).status_code == 400


def test_account_isolation_datasets_traces_agents_are_404(server: LiveServer) -> None:
    a, b = server.client(server.signup()), server.client(server.signup())
    dataset = _upload_and_finalize(a, ROW)
    assert a.post("/agents", json={"slug": "a-bot"}).status_code == 201
    span = {
        "resourceSpans": [
            {
                "scopeSpans": [
                    {
                        "spans": [
                            {
                                "traceId": "aa" * 16,
                                "spanId": "bb" * 8,
                                "name": "run",
                                "attributes": [
                                    {"key": "gen_ai.agent.name", "value": {"stringValue": "a-bot"}}
                                ],
                            }
                        ]
                    }
                ]
            }
        ]
    }
    assert a.post("/v1/traces", json=span).status_code == 200
    did = dataset["datasetId"]
    for method, path in [
        ("GET", f"/datasets/{did}"),
        ("GET", f"/datasets/{did}/download"),
        ("GET", f"/datasets/{did}/preview"),
        ("GET", f"/datasets/{did}/profile"),
        ("POST", f"/datasets/{did}/finalize"),
        ("POST", f"/datasets/{did}/meta"),
        ("DELETE", f"/datasets/{did}"),
        ("DELETE", "/agents/a-bot"),
        ("DELETE", f"/traces/{'aa' * 16}"),
        ("POST", f"/traces/{'aa' * 16}/score"),
    ]:
        kwargs = {"json": {"value": 1.0}} if path.endswith("score") else {}
        assert b.request(method, path, **kwargs).status_code == 404, (method, path)
    assert b.get("/datasets").json()["datasets"] == []
    assert b.get("/agents").json() == {"agents": []}
    assert b.get("/traces").json()["traces"] == []
    assert a.get(f"/datasets/{did}").status_code == 200
    assert len(a.get("/traces").json()["traces"]) == 1


def test_upload_url_needs_no_key_but_a_tampered_one_is_refused(server: LiveServer) -> None:
    client = server.client(server.signup())
    created = _create(client)
    url = created["uploadUrl"]
    parts = urlsplit(url)
    query = parse_qs(parts.query)
    later = int(query["expires"][0]) + 3600
    account, sig = query["acct"][0], query["sig"][0]
    longer = f"{server.url}{parts.path}?acct={account}&expires={later}&sig={sig}"
    other = _create(client, "other")["datasetId"]
    elsewhere = url.replace(created["datasetId"], other)
    for bad in (longer, elsewhere, url.replace("sig=", "sig=0"), f"{server.url}{parts.path}"):
        response = httpx.put(bad, content=ROW)
        assert response.status_code == 403 and "signature" in response.json()["error"], bad
    assert httpx.put(url, content=ROW).status_code == 200


def test_expired_upload_url_is_refused(server: LiveServer) -> None:
    client = server.client(server.signup())
    created = _create(client)
    parts = urlsplit(created["uploadUrl"])
    account = parse_qs(parts.query)["acct"][0]
    past = int(time.time()) - 1
    sig = signature(load_secret(server.data), "PUT", parts.path, past, account)
    link = f"{server.url}{parts.path}?acct={account}&expires={past}&sig={sig}"
    response = httpx.put(link, content=ROW)
    assert response.status_code == 410 and "expired" in response.json()["error"]


def test_download_links_need_no_key_and_serve_the_rows(server: LiveServer) -> None:
    client = server.client(server.signup())
    body = SDK_ROWS.read_bytes()
    record = _upload_and_finalize(client, body)
    assert record["rows"] == 40 and record["sizeBytes"] == len(body)
    links = client.get(f"/datasets/{record['datasetId']}/download").json()
    assert links["parts"] == [links["downloadUrl"]]
    assert httpx.get(links["downloadUrl"]).content == body
    tampered = links["downloadUrl"].replace("/files/", "/upload/")
    assert httpx.get(tampered).status_code in (403, 405)


def test_bad_line_fails_finalize_with_its_line_number(server: LiveServer) -> None:
    client = server.client(server.signup())
    created = _create(client)
    body = ROW + ROW + b'{"prompt": 5}\n' + ROW
    httpx.put(created["uploadUrl"], content=body)
    response = client.post(f"/datasets/{created['datasetId']}/finalize")
    assert response.status_code == 400 and "line 3" in response.json()["error"]
    assert client.get("/datasets").json()["datasets"] == []
    # A refused upload leaves no pending dataset behind.
    assert client.get(f"/datasets/{created['datasetId']}").status_code == 404
    assert client.get("/datasets", params={"status": "pending"}).json()["datasets"] == []


def test_meta_preview_profile_and_delete(server: LiveServer) -> None:
    client = server.client(server.signup())
    did = _upload_and_finalize(client, SDK_ROWS.read_bytes())["datasetId"]
    updated = client.post(f"/datasets/{did}/meta", json={"purpose": "holdout", "agent": "x"})
    assert updated.json()["purpose"] == "holdout"
    assert client.post(f"/datasets/{did}/meta", json={"rows": 1}).status_code == 400
    preview = client.get(f"/datasets/{did}/preview").json()
    assert len(preview["rows"]) == 3 and preview["profile"]["rows"] == 40
    assert client.get(f"/datasets/{did}/profile").json()["profile"]["tasks"] == 35
    assert [a["slug"] for a in client.get("/agents").json()["agents"]] == ["x"]
    assert client.delete(f"/datasets/{did}").status_code == 200
    assert client.get(f"/datasets/{did}").status_code == 404


def test_fifty_concurrent_pushes_are_all_listed_with_their_row_counts(
    server: LiveServer, tmp_path
) -> None:
    key = server.signup()
    records = fifty_concurrent_pushes(tmp_path, lambda: HttpStore(server.url, key))
    listed = server.client(key).get("/datasets").json()["datasets"]
    assert {d["name"]: d["rows"] for d in listed} == FIFTY_SETS
    assert {r["datasetId"] for r in records} == {d["datasetId"] for d in listed}


def test_device_flow_pending_slow_down_then_key_once(server: LiveServer) -> None:
    anonymous = server.client(None)
    code = anonymous.post("/device/code", json={"name": "ci"}).json()
    assert set(code) >= {"device_code", "user_code", "verification_uri_complete", "interval"}
    poll = {"device_code": code["device_code"], "user_code": code["user_code"]}
    first = anonymous.post("/device/token", json=poll)
    assert first.status_code == 400 and first.json()["error"] == "authorization_pending"
    assert anonymous.post("/device/token", json=poll).json()["error"] == "slow_down"
    email = f"dev-{time.monotonic_ns()}@example.com"
    assert server.approve(code["user_code"], email=email).status_code == 200
    time.sleep(0.25)
    granted = anonymous.post("/device/token", json=poll).json()
    assert granted["name"] == "ci" and granted["api_key"].startswith("wai_")
    assert anonymous.post("/device/token", json=poll).json()["error"] == "expired_token"
    # An existing account cannot be approved onto a new code without one of its keys.
    other = anonymous.post("/device/code", json={}).json()
    takeover = server.approve(other["user_code"], email=email)
    assert takeover.status_code == 401
    assert server.approve(other["user_code"], api_key=granted["api_key"]).status_code == 200


def test_trace_listing_speaks_the_sdk_paging_shape(server: LiveServer) -> None:
    client = server.client(server.signup())
    spans = [
        {
            "traceId": f"{i:032x}",
            "spanId": f"{i:016x}",
            "name": "run",
            "startTimeUnixNano": str(1_700_000_000_000_000_000 + i * 1_000_000_000),
            "attributes": [{"key": "gen_ai.agent.name", "value": {"stringValue": "pager"}}],
        }
        for i in range(1, 6)
    ]
    body = {"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}
    assert client.post("/v1/traces", json=body).status_code == 200
    first = client.get("/traces", params={"agent": "pager", "from": "all", "limit": 2}).json()
    assert first["pages"] == 3 and first["total"] == 5 and first["nextPage"] == 2
    assert [t["traceId"] for t in first["traces"]] == [f"{i:032x}" for i in (5, 4)]
    last = client.get("/traces", params={"agent": "pager", "limit": 2, "page": 3}).json()
    assert [t["traceId"] for t in last["traces"]] == [f"{1:032x}"] and last["nextPage"] is None
    assert client.get("/traces", params={"from": "soon"}).status_code == 400
    assert client.get("/traces", params={"limit": 0}).status_code == 400


def test_register_agent_keeps_tools_and_system_prompt(server: LiveServer) -> None:
    client = server.client(server.signup())
    tools = [{"type": "function", "function": {"name": "get_order", "parameters": {}}}]
    body = {"name": "airline", "description": "Refunds", "tools": tools, "system_prompt": "Be kind"}
    created = client.post("/agents", json=body)
    assert created.status_code == 201
    agent = client.get("/agents").json()["agents"][0]
    assert (agent["slug"], agent["description"]) == ("airline", "Refunds")
    assert agent["tools"] == tools and agent["system_prompt"] == "Be kind"
    assert client.post("/agents", json={"name": "x", "tools": "nope"}).status_code == 400


def test_meta_refuses_an_empty_name_and_values_that_are_not_text(server: LiveServer) -> None:
    client = server.client(server.signup())
    created = client.post("/datasets", json={"name": "m"}).json()
    httpx.put(created["uploadUrl"], content=b'{"prompt": "hi"}\n').raise_for_status()
    dataset_id = client.post(f"/datasets/{created['datasetId']}/finalize").json()["datasetId"]
    for body, problem in (
        ({"name": ""}, "needs a name"),
        ({"name": None}, "needs a name"),
        ({"mode": 5}, "mode must be a string"),
    ):
        refused = client.post(f"/datasets/{dataset_id}/meta", json=body)
        assert refused.status_code == 400 and problem in refused.json()["error"]
    assert client.get(f"/datasets/{dataset_id}").json()["name"] == "m"


def test_a_small_json_route_stops_reading_a_huge_body_at_its_cap(tmp_path) -> None:
    import asyncio

    from whileai_server.app import MAX_JSON_BODY, create_app

    app = create_app(tmp_path / "srv")
    chunk, sent, replies = b" " * (256 * 1024), [0], []
    total = 64  # 16 MB offered, with no content-length: a client that streams

    async def receive() -> dict:
        sent[0] += 1
        return {"type": "http.request", "body": chunk, "more_body": sent[0] < total}

    async def send(message: dict) -> None:
        replies.append(message)

    for path in ("/signup", "/device/approve"):
        sent[0], replies[:] = 0, []
        scope = {
            "type": "http",
            "method": "POST",
            "path": path,
            "raw_path": path.encode(),
            "query_string": b"",
            "headers": [],
            "server": ("127.0.0.1", 80),
            "scheme": "http",
            "root_path": "",
            "http_version": "1.1",
        }
        asyncio.run(app(scope, receive, send))
        assert replies[0]["status"] == 413, path
        assert sent[0] * len(chunk) <= MAX_JSON_BODY + len(chunk), path


def test_a_link_with_a_non_ascii_digit_expiry_is_refused_not_a_crash() -> None:
    from whileai_server.signing import check

    assert check(b"k" * 32, "GET", "/files/ds_1", "\u00b2", "00") == "bad signature"
