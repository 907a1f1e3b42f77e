"""Dataset bodies in a directory and in an S3 bucket: the blob-store contract, the store's
rules on top of it (limits while streaming, finalize's checks, the sweep), and a server
whose bodies live in a bucket, its download links presigned.

No S3-compatible server is installable on this machine, so the bucket is moto's S3
server (`moto[server]`), run in a thread over real HTTP on a loopback port: boto3 talks
to it exactly as it would to AWS or MinIO, through `--blobs-endpoint`.
"""

from __future__ import annotations

import itertools
import logging
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import httpx
import orjson
import pytest

from whileai_core.errors import ConfigError
from whileai_core.platform.push import push_rows
from whileai_core.store import BadRequest, NewDataset
from whileai_core.store.base import TooLarge
from whileai_core.store.blobs import BlobStore, LocalBlobs, open_blobs
from whileai_core.store.blobs_s3 import PART_BYTES, S3Blobs
from whileai_core.store.bound import BoundStore
from whileai_core.store.http import HttpStore
from whileai_core.store.limits import Limits
from whileai_core.store.local import Storage
from whileai_core.testing import free_port, serve_process

from ..helpers import SDK_ROWS
from ..platform_fixtures import Backend, live_server

ROW = orjson.dumps({"prompt": "hi"}) + b"\n"
_buckets = itertools.count(1)


@pytest.fixture(scope="session")
def s3_endpoint() -> Iterator[str]:
    """moto's S3 server on a loopback port, for the session."""
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # no line per request
    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.stop()


@pytest.fixture
def bucket(s3_endpoint: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """A fresh, empty bucket; its URL with a prefix (`s3://NAME/sets`)."""
    for name, value in (
        ("AWS_ACCESS_KEY_ID", "test-key"),
        ("AWS_SECRET_ACCESS_KEY", "test-secret"),
        ("AWS_DEFAULT_REGION", "us-east-1"),
    ):
        monkeypatch.setenv(name, value)
    name = f"whileai-test-{next(_buckets)}"
    boto3.client("s3", endpoint_url=s3_endpoint).create_bucket(Bucket=name)
    return f"s3://{name}/sets"


def _objects(bucket: str, endpoint: str) -> list[str]:
    name = bucket.removeprefix("s3://").split("/")[0]
    listed = boto3.client("s3", endpoint_url=endpoint).list_objects_v2(Bucket=name)
    return sorted(o["Key"] for o in listed.get("Contents", []))


def _ids(body: bytes) -> list[tuple[Any, Any]]:
    rows = [orjson.loads(line) for line in body.splitlines() if line.strip()]
    return [(r.get("scenario_id"), r.get("rollout_index")) for r in rows]


def _uploads(bucket: str, endpoint: str) -> list[Any]:
    name = bucket.removeprefix("s3://").split("/")[0]
    listed = boto3.client("s3", endpoint_url=endpoint).list_multipart_uploads(Bucket=name)
    return list(listed.get("Uploads", []))


@pytest.fixture(params=["directory", "s3"])
def blobs(request: pytest.FixtureRequest, tmp_path: Path) -> BlobStore:
    if request.param == "directory":
        return LocalBlobs(tmp_path / "blobs")
    endpoint = request.getfixturevalue("s3_endpoint")
    return S3Blobs(request.getfixturevalue("bucket"), endpoint)


# --- the contract ---------------------------------------------------------------------


def test_a_write_is_published_whole_on_commit_and_not_at_all_on_abort(blobs: BlobStore) -> None:
    writer = blobs.writer("a.part")
    writer.write(ROW)
    assert not blobs.exists("a.part") and list(blobs.names()) == []  # not yet
    writer.commit()
    writer.abort()  # after a commit: nothing to undo
    assert blobs.exists("a.part") and blobs.size("a.part") == len(ROW)
    dropped = blobs.writer("b.part")
    dropped.write(ROW * 3)
    dropped.abort()
    assert not blobs.exists("b.part")
    assert [name for name, _ in blobs.names()] == ["a.part"]


def test_a_body_of_several_parts_reads_back_line_by_line(blobs: BlobStore) -> None:
    line = b'{"prompt": "' + b"x" * 1000 + b'"}\n'
    count = (2 * PART_BYTES) // len(line) + 7  # past two S3 parts, not on a part boundary
    writer = blobs.writer("big.jsonl")
    for _ in range(count):
        writer.write(line)
    writer.commit()
    assert blobs.size("big.jsonl") == count * len(line)
    with blobs.open("big.jsonl") as fh:
        assert fh.readline() == line
        assert sum(1 for _ in fh) == count - 1


def test_move_names_delete_and_what_is_missing(blobs: BlobStore) -> None:
    for name in ("ds_1.part", "ds_2.part", "ds_10.jsonl"):
        writer = blobs.writer(name)
        writer.write(ROW)
        writer.commit()
    before = time.time()
    blobs.move("ds_1.part", "ds_1.checking")
    listed = dict(blobs.names())
    assert sorted(listed) == ["ds_1.checking", "ds_10.jsonl", "ds_2.part"]
    assert listed["ds_1.checking"] >= before - 2  # a moved blob counts as just written
    assert [n for n, _ in blobs.names("ds_1.")] == ["ds_1.checking"]
    with pytest.raises(FileNotFoundError):
        blobs.move("ds_1.part", "ds_1.jsonl")
    with pytest.raises(FileNotFoundError):
        blobs.open("ds_3.jsonl")
    with pytest.raises(FileNotFoundError):
        blobs.size("ds_3.jsonl")
    blobs.delete("ds_2.part")
    blobs.delete("ds_2.part")  # gone already: fine
    assert not blobs.exists("ds_2.part")


def test_abandoned_writes_are_removed_once_old(blobs: BlobStore) -> None:
    writer = blobs.writer("killed.part")
    writer.write(b"x" * (PART_BYTES + 1))  # on S3, a multipart upload has begun
    if isinstance(blobs, LocalBlobs):  # moto dates every multipart upload 2010-11-10
        assert blobs.abandoned(time.time() - 3600) == 0  # recent: it may still be running
    assert blobs.abandoned(time.time() + 3600) == 1
    assert list(blobs.names()) == [] and not blobs.exists("killed.part")


def test_only_a_bucket_signs_its_own_links(blobs: BlobStore) -> None:
    writer = blobs.writer("ds_1.jsonl")
    writer.write(ROW)
    writer.commit()
    link = blobs.link("ds_1.jsonl", 60, "ds_1.jsonl")
    if isinstance(blobs, LocalBlobs):
        assert link is None  # the server signs a link to itself instead
        return
    assert link is not None and "X-Amz-Signature" in link
    fetched = httpx.get(link)
    assert fetched.status_code == 200 and fetched.content == ROW
    assert fetched.headers["content-disposition"] == 'attachment; filename="ds_1.jsonl"'
    # The bucket checks the signature and the expiry (moto, by default, checks neither).
    assert "X-Amz-Expires=60" in link


def test_blob_settings_that_cannot_work_are_one_line_errors(
    s3_endpoint: str, bucket: str, tmp_path: Path
) -> None:
    with pytest.raises(ConfigError, match="cannot use the bucket"):
        S3Blobs("s3://no-such-bucket-here/x", s3_endpoint)
    with pytest.raises(ConfigError, match="expected s3://bucket/prefix"):
        open_blobs("gs://bucket/x", tmp_path)
    with pytest.raises(ConfigError, match="--blobs-endpoint is for an s3://"):
        open_blobs(str(tmp_path / "bodies"), tmp_path, s3_endpoint)
    assert isinstance(open_blobs(None, tmp_path), LocalBlobs)
    assert open_blobs(bucket, tmp_path, s3_endpoint).location == bucket


# --- the store's rules on a bucket ----------------------------------------------------


def test_a_store_on_a_bucket_streams_within_limits_and_checks_every_line(
    tmp_path: Path, backend: Backend, bucket: str, s3_endpoint: str
) -> None:
    limits = Limits(max_upload_bytes=64 * 1024, max_line_bytes=4 * 1024)
    storage = backend.storage(tmp_path, limits=limits, blobs=S3Blobs(bucket, s3_endpoint))
    store = BoundStore(storage, "acct")
    try:
        dataset_id = store.create_dataset(NewDataset(name="s3"))["datasetId"]
        # Past the cap as the bytes arrive: refused, and nothing of it in the bucket.
        with pytest.raises(TooLarge, match="max_upload_bytes"):
            store.upload(dataset_id, iter([ROW * 1000] * 10))
        with pytest.raises(TooLarge, match="line 2"):
            store.upload(dataset_id, iter([ROW, b'{"p": "' + b"y" * 5000 + b'"}\n']))
        assert _objects(bucket, s3_endpoint) == [] and _uploads(bucket, s3_endpoint) == []
        # A bad line fails finalize by number and takes the dataset with it: nothing of a
        # refused upload stays, in the bucket or pending.
        store.upload(dataset_id, iter([ROW, b"[1]\n"]))
        with pytest.raises(BadRequest, match="line 2: not a JSON object"):
            store.finalize(dataset_id)
        assert _objects(bucket, s3_endpoint) == []
        assert store.list_datasets(status="pending") == []
        dataset_id = store.create_dataset(NewDataset(name="s3"))["datasetId"]
        store.upload(dataset_id, iter([ROW] * 3))
        assert store.finalize(dataset_id)["rows"] == 3
        assert b"".join(store.download(dataset_id)) == ROW * 3
        link = storage.direct_link("acct", dataset_id, 60)
        assert link is not None and httpx.get(link).content == ROW * 3
        # A finalize that died mid-check is given back by the sweep.
        other = store.create_dataset(NewDataset(name="stranded"))["datasetId"]
        store.upload(other, iter([ROW]))
        storage.blobs.move(f"{other}.part", f"{other}.checking")
        storage.sweep()
        assert store.finalize(other)["rows"] == 1
        store.delete_dataset(dataset_id)
        assert _objects(bucket, s3_endpoint) == [f"sets/{other}.jsonl"]
    finally:
        storage.close()


def test_a_server_on_a_bucket_presigns_downloads_and_serves_the_cli(
    tmp_path: Path,
    backend: Backend,
    bucket: str,
    s3_endpoint: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from ..platform_fixtures import ok, stdout_json

    database = backend.database()
    with live_server(
        tmp_path / "srv", database=database, blobs=bucket, blobs_endpoint=s3_endpoint, url_ttl=60
    ) as live:
        key = live.signup()
        pushed = push_rows(HttpStore(live.url, key), [str(SDK_ROWS)], name="sdk", gate=False)
        dataset_id = pushed["train"]["datasetId"]
        assert _objects(bucket, s3_endpoint) == [f"sets/{dataset_id}.jsonl"]
        assert not (tmp_path / "srv" / "datasets").exists() or not any(
            (tmp_path / "srv" / "datasets").iterdir()
        )
        with live.client(key) as client:
            links = client.get(f"/datasets/{dataset_id}/download").json()
        assert links["downloadUrl"].startswith(s3_endpoint)  # straight from the bucket
        body = httpx.get(links["downloadUrl"]).content
        assert _ids(body) == _ids(SDK_ROWS.read_bytes())
        monkeypatch.setenv("WHILEAI_API_URL", live.url)
        monkeypatch.setenv("WHILEAI_API_KEY", key)
        pulled = ok("pull", dataset_id, "-o", str(tmp_path / "pulled.jsonl"))
        assert pulled.exit_code == 0
        assert (tmp_path / "pulled.jsonl").read_bytes() == body
        profile = stdout_json(ok("profile", dataset_id, "--json"))
        assert profile["rows"] == 40
        ok("publish", dataset_id, "--agent", "orders-bot")
        public = httpx.get(f"{live.url}/catalog/{dataset_id}/rows")
        assert public.content == body
        ok("delete", dataset_id)
        assert _objects(bucket, s3_endpoint) == []


def test_serve_takes_the_database_and_the_bucket_from_flags_and_environment(
    tmp_path: Path, postgres: Any, bucket: str, s3_endpoint: str
) -> None:
    import os

    database = postgres.new_database()
    env = {**os.environ, "WHILEAI_BLOBS_ENDPOINT": s3_endpoint, "WHILEAI_DATABASE": database}
    with serve_process(tmp_path / "srv", env=env, args=["--blobs", bucket]) as (_, url):
        key = httpx.post(f"{url}/signup", json={"email": "s3@example.com"}).json()["api_key"]
        pushed = push_rows(HttpStore(url, key), [str(SDK_ROWS)], name="flags", gate=False)
    dataset_id = pushed["train"]["datasetId"]
    assert _objects(bucket, s3_endpoint) == [f"sets/{dataset_id}.jsonl"]
    assert not (tmp_path / "srv" / "store.db").exists()  # the metadata is in PostgreSQL
    storage = Storage(tmp_path / "srv", database=database)
    try:
        assert [r["name"] for r in storage.query("SELECT name FROM datasets")] == ["flags"]
    finally:
        storage.close()
