"""The embedded store and the pieces the CLI builds on: storage, push, credentials."""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import orjson
import pytest

from whileai_core.errors import BadRowError, ConfigError, NoRows
from whileai_core.platform.push import holdout_side, push_rows
from whileai_core.store import BadRequest, NewDataset, NotFound, credentials, open_store
from whileai_core.store.bound import BoundStore, LocalStore
from whileai_core.store.local import Storage

from ..helpers import SDK_ROWS
from ..platform_fixtures import FIFTY_SETS, Backend, fifty_concurrent_pushes

ROW = orjson.dumps({"prompt": "hi"}) + b"\n"


def test_open_store_is_embedded_without_api_url_and_needs_a_key_with_one(monkeypatch) -> None:
    store = open_store()
    assert store.kind == "embedded" and store.location == os.environ["WHILEAI_HOME"]
    store.close()
    monkeypatch.setenv("WHILEAI_API_URL", "http://127.0.0.1:9")
    with pytest.raises(ConfigError, match="whileai login"):
        open_store()


def test_sqlite_runs_in_wal_mode(tmp_path: Path) -> None:
    storage = Storage(tmp_path)
    assert storage.query("PRAGMA journal_mode")[0][0] == "wal"


def test_finalize_refuses_a_bad_line_by_number_and_leaves_nothing(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    created = store.create_dataset(NewDataset(name="x", idempotency_key="k"))
    store.upload(created["datasetId"], [ROW, b"\n", ROW, b"[1, 2]\n"])
    with pytest.raises(BadRequest, match="line 4: not a JSON object"):
        store.finalize(created["datasetId"])
    # A refused upload leaves no pending dataset behind (a client that does not clean up,
    # like the original SDK, would otherwise leave one per refusal).
    assert store.list_datasets() == [] and store.list_datasets(status="pending") == []
    with pytest.raises(NotFound):
        store.get_dataset(created["datasetId"])
    assert not list(tmp_path.rglob(f"{created['datasetId']}.*"))
    retry = store.create_dataset(NewDataset(name="x", idempotency_key="k"))  # a corrected retry
    assert retry["datasetId"] != created["datasetId"] and not retry["existing"]
    store.upload(retry["datasetId"], [ROW, ROW])
    assert store.finalize(retry["datasetId"])["rows"] == 2


def test_finalize_before_any_upload_keeps_the_dataset_pending(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    created = store.create_dataset(NewDataset(name="x"))
    with pytest.raises(BadRequest, match="nothing uploaded yet"):
        store.finalize(created["datasetId"])
    assert store.get_dataset(created["datasetId"])["status"] == "pending"
    store.upload(created["datasetId"], [ROW])
    assert store.finalize(created["datasetId"])["rows"] == 1


def test_same_idempotency_key_returns_the_first_dataset(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    spec = NewDataset(name="x", idempotency_key="k1")
    first = store.create_dataset(spec)
    assert store.create_dataset(spec)["datasetId"] == first["datasetId"]
    store.upload(first["datasetId"], [ROW])
    store.finalize(first["datasetId"])
    assert store.create_dataset(spec)["existing"] is True
    with pytest.raises(BadRequest, match="already finalized"):
        store.upload(first["datasetId"], [ROW])


def test_accounts_do_not_see_each_others_data(tmp_path: Path, backend: Backend) -> None:
    storage = backend.storage(tmp_path)
    a, b = BoundStore(storage, "acct-a"), BoundStore(storage, "acct-b")
    created = a.create_dataset(NewDataset(name="private", agent="bot"))
    a.upload(created["datasetId"], [ROW])
    a.finalize(created["datasetId"])
    with pytest.raises(NotFound):
        b.get_dataset(created["datasetId"])
    with pytest.raises(NotFound):
        b.delete_dataset(created["datasetId"])
    with pytest.raises(NotFound):
        b.delete_agent("bot")
    assert b.list_datasets() == [] and b.list_agents() == []


def test_parent_must_exist_and_purpose_must_be_known(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    with pytest.raises(NotFound, match="parent"):
        store.create_dataset(NewDataset(name="x", parent="ds_0000000000000000"))
    with pytest.raises(BadRequest, match="purpose"):
        store.create_dataset(NewDataset(name="x", purpose="test"))


def test_holdout_side_is_a_fixed_function_of_the_task() -> None:
    tasks = [f"sc-{i}" for i in range(1000)]
    sides = [holdout_side(t, 0.2) for t in tasks]
    assert sides == [holdout_side(t, 0.2) for t in tasks]
    assert 150 < sum(sides) < 250
    assert not any(holdout_side(t, 0.0) for t in tasks)


def test_fifty_concurrent_pushes_to_the_embedded_store(tmp_path: Path) -> None:
    root = tmp_path / "home"
    fifty_concurrent_pushes(tmp_path, lambda: LocalStore(root))
    assert {d["name"]: d["rows"] for d in LocalStore(root).list_datasets()} == FIFTY_SETS


def test_fifty_first_openers_of_a_new_store_all_get_in(tmp_path: Path) -> None:
    """Fifty processes' worth of openers on a file nobody has opened: the switch to WAL
    once answered "database is locked" at once (no busy wait) to the losers of the race."""

    def open_and_list(root: Path) -> list[dict]:  # type: ignore[type-arg]
        store = LocalStore(root)
        try:
            return store.list_datasets()
        finally:
            store.close()

    for trial in range(8):
        root = tmp_path / f"home{trial}"
        with ThreadPoolExecutor(max_workers=50) as pool:
            assert list(pool.map(open_and_list, [root] * 50)) == [[]] * 50


def test_push_of_nothing_stores_nothing(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    # NoRows (the CLI's exit 3: nothing to do), not a ConfigError (bad input, exit 1).
    with pytest.raises(NoRows, match="no rows"):
        push_rows(LocalStore(tmp_path / "h"), [str(empty)], name="x", gate=False)


def test_push_refuses_a_bad_line_by_file_and_line_or_skips_and_counts_it(tmp_path: Path) -> None:
    source = tmp_path / "rows.jsonl"
    deep = b'{"prompt": "deep", "x": ' + b"[" * 300 + b"]" * 300 + b"}\n"
    source.write_bytes(ROW + b'{"prompt": "x", "reward": true}\n' + deep + ROW)
    store = LocalStore(tmp_path / "h")
    with pytest.raises(BadRowError, match=rf"{source}:2: field 'reward' must be a number"):
        push_rows(store, [str(source)], name="x", gate=False)
    assert store.list_datasets() == []
    pushed = push_rows(store, [str(source)], name="x", gate=False, on_error="skip")
    assert pushed["train"]["rows"] == 2 and pushed["skipped_lines"] == 2
    assert pushed["first_error"].startswith(f"{source}:2: ")
    everything_bad = tmp_path / "bad.jsonl"
    everything_bad.write_bytes(deep)
    with pytest.raises(ConfigError, match=r"no rows .*1 bad lines skipped; first: .*:1: nests"):
        push_rows(store, [str(everything_bad)], name="y", gate=False, on_error="skip")


def test_a_row_too_long_for_the_store_is_named_by_file_and_line_not_a_refused_dataset(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The calibration stamp push adds repeats the task id, so the limit is checked on the
    # row as it will be stored, and reported against the line it came from.
    monkeypatch.setenv("WHILEAI_MAX_LINE_BYTES", "2k")
    graded = {"prompt": "hi", "reward": 1.0, "judge_status": "ok"}
    long = {**graded, "prompt": "p" * 1_700}  # its task id (the prompt) is stamped on it
    source = tmp_path / "rows.jsonl"
    source.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in (graded, long, graded)))
    store = LocalStore(tmp_path / "h")
    with pytest.raises(BadRowError, match=rf"{source}:2: row is 3,\d+ bytes as pushed .*2 KiB"):
        push_rows(store, [str(source)], name="x", gate=False)
    pushed = push_rows(store, [str(source)], name="x", gate=False, on_error="skip")
    assert pushed["train"]["rows"] == 2 and pushed["skipped_lines"] == 1


def test_credentials_resolve_flag_then_env_then_file(monkeypatch) -> None:
    assert credentials.resolve() is None
    path = credentials.save("wai_saved_key_0123456789", api_url="http://x", name=None, user_id="u")
    assert path.stat().st_mode & 0o777 == 0o600
    assert credentials.resolve() == credentials.ResolvedKey("wai_saved_key_0123456789", str(path))
    monkeypatch.setenv("WHILEAI_API_KEY", "wai_env_key_0123456789")
    assert credentials.resolve().source == "WHILEAI_API_KEY"  # type: ignore[union-attr]
    assert credentials.resolve("wai_flag").source == "--api-key"  # type: ignore[union-attr]


def test_mask_never_shows_the_whole_key() -> None:
    key = "wai_abcdefghijklmnopqrstuvwxyz0123"
    masked = credentials.mask(key)
    assert masked == "wai_ab…0123" and key not in masked
    assert credentials.mask("short") == "*****"


def test_a_corrupt_credentials_file_is_a_clear_error() -> None:
    credentials.credentials_path().parent.mkdir(parents=True, exist_ok=True)
    credentials.credentials_path().write_text("{oops")
    with pytest.raises(ConfigError, match=r"credentials\.json: not valid JSON"):
        credentials.resolve()


def test_a_saved_key_is_never_sent_to_another_server() -> None:
    credentials.save("wai_saved_key_0123456789", api_url="http://a:1", name=None, user_id="u")
    assert credentials.resolve(api_url="http://a:1/") is not None
    assert credentials.resolve(api_url="http://b:1") is None
    assert credentials.saved_issuer() == "http://a:1"


def _age(storage: Storage, dataset_id: str, seconds: float) -> None:
    with storage.tx() as db:
        db.execute(
            "UPDATE datasets SET created_at = created_at - ? WHERE id = ?", (seconds, dataset_id)
        )


def test_stale_unfinished_upload_is_planned_by_purge_and_a_fresh_one_is_left(
    tmp_path: Path,
) -> None:
    from whileai_core.platform.purge import plan_agent, plan_empty, run
    from whileai_core.store.base import STALE_UPLOAD_SECONDS

    store = LocalStore(tmp_path)
    stale = store.create_dataset(NewDataset(name="killed", agent="a"))["datasetId"]
    store.upload(stale, [ROW])  # uploaded, never finalized
    fresh = store.create_dataset(NewDataset(name="in-flight"))["datasetId"]
    _age(store.storage, stale, STALE_UPLOAD_SECONDS + 60)
    assert [d["datasetId"] for d in store.list_datasets(status="pending")] == [stale, fresh]
    assert plan_agent(store, "a").unfinished == [stale]
    plan = plan_empty(store, max_rows=0)
    assert plan.unfinished == [stale] and plan.datasets == []
    assert run(store, plan)["unfinished"] == 1
    assert [d["datasetId"] for d in store.list_datasets(status="pending")] == [fresh]
    assert list(store.storage.blobs.names(f"{stale}.")) == []


def test_sweep_removes_abandoned_upload_files_and_files_of_deleted_datasets(
    tmp_path: Path, backend: Backend
) -> None:
    storage = backend.storage(tmp_path)
    store = BoundStore(storage)
    kept = store.create_dataset(NewDataset(name="x"))["datasetId"]
    files = tmp_path / "datasets"
    killed = files / f"{kept}.part.1234abcd.upload"  # what a SIGKILLed upload leaves
    killed.write_bytes(ROW)
    older = files / f"{kept}.1234abcd.upload"  # and what an older whileai's upload left
    older.write_bytes(ROW)
    orphan = files / "ds_00000000deadbeef.part"
    orphan.write_bytes(ROW)
    live = files / f"{kept}.part"
    live.write_bytes(ROW)
    assert storage.sweep() == 0  # all recent: an upload may still be running
    assert storage.sweep(now=time.time() + 2 * 3600) == 3
    assert not killed.exists() and not older.exists() and not orphan.exists() and live.exists()
    storage.close()


def test_store_directories_are_private(tmp_path: Path) -> None:
    storage = Storage(tmp_path / "home")
    assert (storage.root.stat().st_mode & 0o777) == 0o700
    assert ((tmp_path / "home" / "datasets").stat().st_mode & 0o777) == 0o700
    assert ((tmp_path / "home" / "locks").stat().st_mode & 0o777) == 0o700


def test_push_stamps_graded_rows_with_optimizes_calibration(tmp_path: Path) -> None:
    from whileai_core.select.calibration import calibration_stamp

    rows = [
        {
            "scenario_id": "t1",
            "prompt": "a",
            "reward": r,
            "judge_status": "ok",
            "policy_version": "p1",
        }
        for r in (1.0, 0.0, 1.0)
    ]
    carried = {"task_id": "t2", "k": 8, "pass_rate": 0.5, "ci95": [0.2, 0.8], "policy": "old"}
    rows += [
        {"scenario_id": "t2", "prompt": "b", "reward": 1.0, "calibration": carried},
        {"scenario_id": "t3", "prompt": "ungraded"},
        {"scenario_id": "t4", "prompt": "c", "reward": 0.0, "judge_status": "error"},
        {"scenario_id": "t1", "prompt": "a", "reward": 0.0, "calibration": None},
    ]
    source = tmp_path / "rows.jsonl"
    source.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    store = LocalStore(tmp_path / "home")
    pushed = push_rows(store, [str(source)], name="stamped", gate=False)
    stored = [
        orjson.loads(line)
        for line in b"".join(store.download(pushed["train"]["datasetId"])).splitlines()
    ]
    expected = calibration_stamp("t1", [*rows[:3], rows[-1]])
    assert expected["k"] == 4 and expected["policy"] == "p1"
    assert [r.get("calibration") for r in stored] == [expected] * 3 + [carried, None, None] + [
        expected
    ]
    assert b'"calibration":null' not in b"".join(store.download(pushed["train"]["datasetId"]))
    assert [{k: v for k, v in r.items() if k != "calibration"} for r in stored] == [
        {k: v for k, v in r.items() if k != "calibration"} for r in rows
    ]
    again = push_rows(store, [str(source)], name="stamped", gate=False)
    assert again["train"]["existing"] is True  # the stamp is deterministic: no duplicate


def test_a_new_home_made_for_the_credentials_is_private(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("WHILEAI_HOME", str(tmp_path / "fresh"))
    path = credentials.save("wai_0123456789abcdef", api_url=None, name=None, user_id=None)
    assert (path.stat().st_mode & 0o777) == 0o600
    assert (path.parent.stat().st_mode & 0o777) == 0o700


def test_a_server_that_ignores_the_pending_filter_loses_nothing_to_purge(tmp_path: Path) -> None:
    from whileai_core.platform.purge import plan_empty

    store = LocalStore(tmp_path)
    pushed = push_rows(store, [str(SDK_ROWS)], name="ready", gate=False)["train"]["datasetId"]
    _age(store.storage, pushed, 10 * 3600)
    ignoring = store.list_datasets  # answers finalized datasets whatever status is asked
    store.list_datasets = lambda status="ready": ignoring()  # type: ignore[method-assign]
    assert plan_empty(store, max_rows=0).unfinished == []


def test_preview_gives_exactly_n_rows_and_refuses_a_download_sized_n(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    dataset_id = push_rows(store, [str(SDK_ROWS)], name="p", gate=False)["train"]["datasetId"]
    assert [len(store.preview(dataset_id, n)["rows"]) for n in (0, 1, 3)] == [0, 1, 3]
    for n in (-1, 101):
        with pytest.raises(BadRequest, match="n must be between 0 and 100"):
            store.preview(dataset_id, n)


def test_a_store_db_that_is_not_a_database_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "store.db").write_bytes(b"this is not sqlite" * 8)
    with pytest.raises(ConfigError, match=r"store\.db: not a whileai store"):
        Storage(tmp_path)


def test_concurrent_finalizes_of_one_upload_both_answer_the_dataset(
    tmp_path: Path, backend: Backend
) -> None:
    import threading

    storage = backend.storage(tmp_path)
    for attempt in range(10):
        store = BoundStore(storage)
        dataset_id = store.create_dataset(NewDataset(name=f"race-{attempt}"))["datasetId"]
        store.upload(dataset_id, [ROW] * 2000)
        start = threading.Barrier(2)

        def finalize(dataset_id: str, start: threading.Barrier = start) -> object:
            start.wait()
            try:
                return BoundStore(storage).finalize(dataset_id)["rows"]
            except BadRequest as exc:
                return exc

        with ThreadPoolExecutor(max_workers=2) as pool:
            results = list(pool.map(finalize, [dataset_id] * 2))
        assert results == [2000, 2000]
    storage.close()


def test_a_raw_upload_carrying_the_answer_key_is_stored_without_it(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    created = store.create_dataset(NewDataset(name="x"))
    leaky = orjson.dumps(
        {"prompt": "p", "messages": [{"role": "tool", "content": '{"\\u0070rivileged": 1}'}]}
    )
    residue = orjson.dumps({"prompt": "p", "final_text": "notes: {'privileged': 'key'}"})
    store.upload(created["datasetId"], [ROW, leaky + b"\n", residue + b"\n", ROW])
    record = store.finalize(created["datasetId"])
    assert record["rows"] == 3 and record["privilegedRemoved"] == 1
    assert record["leftOut"] == {"privileged_residue": 1}
    assert record["leftOutLines"] == {"privileged_residue": [3]}
    assert any("removed the privileged block from 1 rows" in w for w in record["warnings"])
    body = b"".join(store.download(created["datasetId"]))
    assert body.splitlines()[1] == orjson.dumps({"prompt": "p", "messages": [
        {"role": "tool", "content": "{}"}]})  # fmt: skip
    assert b"rivileged" not in b"".join(p.read_bytes() for p in tmp_path.rglob("*.jsonl"))


def test_an_upload_with_no_row_left_to_store_is_refused_and_dropped(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    created = store.create_dataset(NewDataset(name="x"))
    residue = orjson.dumps({"prompt": "p", "final_text": 'x {"Privileged": 1, "n": 1e999}'})
    store.upload(created["datasetId"], [residue + b"\n"])
    with pytest.raises(BadRequest, match="every row was left out"):
        store.finalize(created["datasetId"])
    assert store.list_datasets(status="pending") == [] and store.list_datasets() == []


def test_push_leaves_out_a_row_that_repeats_its_answer_key(tmp_path: Path) -> None:
    reference = "Look the order up first, then refund it exactly once."
    good = {"prompt": "refund", "final_text": "Done.", "privileged": {"reference": reference}}
    leak = {**good, "final_text": f"My notes say: {reference}"}
    rows = tmp_path / "rows.jsonl"
    rows.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in (good, leak, good)))
    store = LocalStore(tmp_path / "store")
    result = push_rows(store, [str(rows)], name="x", gate=False)
    assert result["left_out_leaks"] == 1 and result["train"]["rows"] == 2
    stored = b"".join(store.download(result["train"]["datasetId"]))
    assert reference.lower().encode() not in stored.lower()
