"""The platform commands this issue added, on the embedded store and a live server: update,
preview, agents register, push --spec, publish/unpublish/catalog, pull without a key,
delegated credentials, and the legacy ZEROPROOF_ names."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import orjson
import pytest

from whileai_core.store import credentials

from ..helpers import ORDERS_SPEC, SDK_ROWS
from ..platform_fixtures import Backend, LiveServer, cli, ok, stdout_json


def _push(*extra: str) -> str:
    return ok("push", str(SDK_ROWS), "--name", "orders", "--no-gate", *extra).stdout.strip()


def test_update_moves_a_set_between_purposes(store_env: str) -> None:
    dataset_id = _push()
    ok("update", dataset_id, "--purpose", "holdout", "--description", "kept aside")
    record = stdout_json(ok("datasets", "--json"))["datasets"][0]
    assert (record["purpose"], record["description"]) == ("holdout", "kept aside")
    nothing = cli("update", dataset_id)
    assert nothing.exit_code == 1 and "needs something to change" in str(nothing.exception)
    assert cli("update", dataset_id, "--purpose", "raw").exit_code == 2


def test_preview_prints_rows_on_stdout_and_the_profile_on_stderr(store_env: str) -> None:
    dataset_id = _push()
    shown = ok("preview", dataset_id, "-n", "2")
    rows = [orjson.loads(line) for line in shown.stdout.splitlines()]
    first = orjson.loads(SDK_ROWS.read_bytes().splitlines()[0])
    first.pop("privileged", None)
    assert len(rows) == 2 and rows[0] == first
    assert f"{dataset_id}: 40 rows" in shown.stderr
    report = stdout_json(ok("preview", dataset_id, "--json"))
    assert len(report["rows"]) == 3 and report["profile"]["rows"] == 40
    graded = [t for t in report["profile"]["perTask"] if t["graded"]]
    assert sum(report["profile"]["passRateHistogram"]["counts"]) == len(graded)


def test_agents_register_and_push_with_a_spec(store_env: str) -> None:
    ok("agents", "register", "orders-bot", "--description", "Looks up orders")
    listed = stdout_json(ok("agents", "--json"))["agents"]
    assert [(a["slug"], a["description"]) for a in listed] == [("orders-bot", "Looks up orders")]
    assert "tools" not in listed[0]
    _push("--agent", "orders-bot", "--spec", str(ORDERS_SPEC))
    agent = stdout_json(ok("agents", "--json"))["agents"][0]
    spec = orjson.loads(ORDERS_SPEC.read_bytes())
    assert agent["description"] == "Looks up orders"  # kept: the push only knows the spec
    names = [t["function"]["name"] for t in spec["tools"]]
    assert [t["function"]["name"] for t in agent["tools"]] == names
    assert agent["system_prompt"]
    assert agent["datasets"] == {"train": 1}
    assert "orders-bot: 0 traces; train 1; " in ok("agents").stdout
    lonely = cli("push", str(SDK_ROWS), "--name", "x", "--spec", str(ORDERS_SPEC))
    assert lonely.exit_code == 1 and "give --agent too" in str(lonely.exception)


def test_publish_catalog_unpublish(store_env: str, tmp_path: Path) -> None:
    dataset_id = _push()
    card = stdout_json(
        ok("publish", dataset_id, "--agent", "orders-bot", "--description", "40 SDK rows", "--json")
    )
    assert card["agent"] == "orders-bot" and card["rows"] == 40
    assert card["profile"]["tasks"] > 0 and "perTask" not in card["profile"]
    catalog = stdout_json(ok("catalog", "--json"))
    assert [c["datasetId"] for c in catalog["datasets"]] == [dataset_id]
    assert catalog["agents"][0]["agent"] == "orders-bot"
    assert "orders-bot: 1 sets, 40 rows" in ok("catalog").stdout
    assert stdout_json(ok("datasets", "--json"))["datasets"][0]["public"] is True
    ok("unpublish", dataset_id)
    assert stdout_json(ok("catalog", "--json"))["datasets"] == []
    assert ok("catalog").stdout.strip() == "no public datasets"


def test_only_a_finalized_set_with_rows_publishes(tmp_path: Path, backend: Backend) -> None:
    from whileai_core.store import NewDataset
    from whileai_core.store.bound import BoundStore

    storage = backend.storage(tmp_path)
    store = BoundStore(storage, "acct")
    pending = store.create_dataset(NewDataset(name="half"))
    with pytest.raises(Exception, match="not finalized"):
        store.publish(pending["datasetId"], "bot")
    store.upload(pending["datasetId"], [b"\n"])
    store.finalize(pending["datasetId"])
    with pytest.raises(Exception, match="holds no rows"):
        store.publish(pending["datasetId"], "bot")
    with pytest.raises(Exception, match="needs an agent"):
        store.publish(pending["datasetId"], " ")
    storage.close()


def test_a_public_set_pulls_without_a_key_and_a_private_one_does_not(
    server: LiveServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("WHILEAI_API_URL", server.url)
    monkeypatch.setenv("WHILEAI_API_KEY", server.signup())
    public, private = _push(), _push("--description", "second")
    ok("publish", public, "--agent", "orders-bot")
    monkeypatch.delenv("WHILEAI_API_KEY")
    ok("pull", public, "-o", str(tmp_path / "public.jsonl"))
    assert len((tmp_path / "public.jsonl").read_bytes().splitlines()) == 40
    refused = cli("pull", private)
    assert refused.exit_code == 1 and "not found" in str(refused.exception)
    assert stdout_json(ok("catalog", "--json"))["datasets"][0]["datasetId"] == public
    # Another account, with its own key, pulls the public one too.
    monkeypatch.setenv("WHILEAI_API_KEY", server.signup())
    assert len(ok("pull", public).stdout_bytes.splitlines()) == 40
    # The original SDK's public route answers the grant shape it reads.
    grant = httpx.get(f"{server.url}/catalog/{public}/download").json()
    assert httpx.get(grant["parts"][0]).status_code == 200
    assert httpx.get(f"{server.url}/catalog/{private}/download").status_code == 404


def test_delegated_credentials_mint_expire_and_revoke(
    server: LiveServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = server.signup()
    monkeypatch.setenv("WHILEAI_API_URL", server.url)
    monkeypatch.setenv("WHILEAI_API_KEY", key)
    dataset_id = _push()
    credential = ok("token", "--ttl", "3600", "--name", "ci").stdout.strip()
    assert credential.startswith("zp_dc_")
    # It ranks before WHILEAI_API_KEY: a wrong key beside it is never sent.
    monkeypatch.setenv("WHILEAI_API_KEY", "wai_wrong")
    monkeypatch.setenv("WHILEAI_DELEGATED_CREDENTIAL", credential)
    assert [d["datasetId"] for d in stdout_json(ok("datasets", "--json"))["datasets"]] == [
        dataset_id
    ]
    status = stdout_json(ok("status", "--json"))
    assert status["keySource"] == "WHILEAI_DELEGATED_CREDENTIAL"
    assert status["account"]["credential"]["delegated"] is True
    assert credential not in ok("status").stdout  # shown masked
    # A credential cannot mint another (a leaked one dies on schedule).
    again = cli("token")
    assert again.exit_code == 1 and "cannot mint another" in str(again.exception)
    # Stored hashed, with its expiry.
    with server.storage() as storage:
        rows = storage.query("SELECT hash, expires_at FROM delegated_credentials")
        assert credential not in {r["hash"] for r in rows}
        assert all(r["expires_at"] > time.time() + 3000 for r in rows)
    monkeypatch.setenv("WHILEAI_API_KEY", key)
    monkeypatch.delenv("WHILEAI_DELEGATED_CREDENTIAL")
    ok("token", "--revoke", credential)
    with server.client(credential) as client:
        refused = client.get("/datasets")
        assert refused.status_code == 401 and "revoked" in refused.json()["error"]
    with server.client(key) as client:
        too_long = client.post("/auth/issue-credential", json={"ttlSeconds": 10**9})
        assert too_long.status_code == 400


def test_an_expired_credential_is_refused(server: LiveServer) -> None:
    key = server.signup()
    with server.client(key) as client:
        issued = client.post("/auth/issue-credential", json={"ttlSeconds": 60}).json()
    with server.storage() as storage, storage.tx() as db:
        db.execute("UPDATE delegated_credentials SET expires_at = ?", (time.time() - 1,))
    with server.client(issued["credential"]) as client:
        refused = client.get("/me")
    assert refused.status_code == 401 and "expired" in refused.json()["error"]


def test_legacy_zeroproof_names_are_read_and_new_names_win(
    server: LiveServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    key = server.signup()
    monkeypatch.setenv("ZEROPROOF_API_URL", server.url)
    monkeypatch.setenv("ZEROPROOF_API_KEY", key)
    status = stdout_json(ok("status", "--json"))
    assert status["location"] == server.url and status["keySource"] == "ZEROPROOF_API_KEY"
    monkeypatch.setenv("WHILEAI_API_KEY", "wai_new")
    assert credentials.resolve(None, server.url).source == "WHILEAI_API_KEY"  # type: ignore[union-attr]
    monkeypatch.delenv("WHILEAI_API_KEY")
    monkeypatch.delenv("ZEROPROOF_API_KEY")
    # The original SDK's saved login, under its old home, is read last.
    legacy = credentials.legacy_credentials_path()
    credentials.write_private(legacy, {"api_key": key, "api_url": server.url})
    resolved = credentials.resolve(None, server.url)
    assert resolved is not None and resolved.key == key and resolved.source == str(legacy)
    assert stdout_json(ok("status", "--json"))["account"]["user_id"].startswith("usr_")
    # A saved key of our own wins over the legacy file.
    credentials.save("wai_mine", api_url=server.url, name=None, user_id=None)
    assert credentials.resolve(None, server.url).key == "wai_mine"  # type: ignore[union-attr]
