"""The SQL layer both databases go through: one spelling of every query, rendered for
each; the locks; connections that follow the server's worker threads; a PostgreSQL
connection the server dropped; and settings that cannot work, in one line."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from whileai_core.errors import ConfigError
from whileai_core.store.local import Storage
from whileai_core.store.sql import POSTGRESQL, SQLITE, open_database, redact
from whileai_core.testing import free_port

from ..platform_fixtures import Backend


def test_one_spelling_of_a_query_renders_for_each_database() -> None:
    sql = "SELECT spec FROM agents WHERE slug LIKE ? AND account = ? FOR UPDATE"
    assert SQLITE.query(sql) == "SELECT spec FROM agents WHERE slug LIKE ? AND account = ?"
    assert POSTGRESQL.query(sql) == (
        "SELECT spec FROM agents WHERE slug LIKE %s AND account = %s FOR UPDATE"
    )
    assert POSTGRESQL.query("SELECT '100%' WHERE x = ?") == "SELECT '100%%' WHERE x = %s"
    assert POSTGRESQL.query(sql) is POSTGRESQL.query(sql)  # rendered once, then cached


def test_a_database_url_is_shown_without_its_password() -> None:
    assert (
        redact("postgresql://app:s3cret@db:5432/whileai") == "postgresql://app:***@db:5432/whileai"
    )
    assert redact("postgresql://app@db/whileai") == "postgresql://app@db/whileai"


def test_database_settings_that_cannot_work_are_one_line_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="expected a postgresql://"):
        open_database("mysql://x@y/z", tmp_path)
    nobody = f"postgresql://app:s3cret@127.0.0.1:{free_port()}/whileai"
    with pytest.raises(ConfigError, match=r"app:\*\*\*@127\.0\.0\.1.*cannot connect") as refused:
        Storage(tmp_path, database=nobody)
    assert "s3cret" not in str(refused.value) and "\n" not in str(refused.value)


def test_the_schema_of_a_postgresql_database_that_is_not_ours_is_refused(
    tmp_path: Path, postgres: Any
) -> None:
    import psycopg

    url = postgres.new_database(empty=True)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE TABLE datasets (id INTEGER PRIMARY KEY)")  # someone else's
    with pytest.raises(ConfigError, match="not a whileai store"):
        Storage(tmp_path, database=url)


def test_a_lock_is_held_across_threads_until_released(tmp_path: Path, backend: Backend) -> None:
    storage = backend.storage(tmp_path)
    held, release, answers = threading.Event(), threading.Event(), []

    def holder() -> None:
        with storage.db.lock("finalize ds_1") as got:
            answers.append(got)
            held.set()
            release.wait(10)

    thread = threading.Thread(target=holder)
    thread.start()
    held.wait(10)
    with storage.db.lock("finalize ds_1", wait=False) as got:
        answers.append(got)
    release.set()
    thread.join()
    with storage.db.lock("finalize ds_1", wait=False) as got:
        answers.append(got)
    assert answers == [True, False, True]
    storage.close()


def test_the_connections_of_finished_threads_are_closed(tmp_path: Path, backend: Backend) -> None:
    storage = backend.storage(tmp_path)  # this thread has one (the migrations used it)

    def in_threads(n: int) -> None:
        workers = [threading.Thread(target=storage.query, args=("SELECT 1",)) for _ in range(n)]
        for worker in workers:
            worker.start()
            worker.join()

    in_threads(8)
    # Each new connection closes those of threads that are gone: what is left is this
    # thread's and the last worker's, not one per thread that ever ran.
    assert len(storage.db._conns) == 2
    in_threads(1)
    assert len(storage.db._conns) == 2
    if backend.name == "postgresql":
        count = "SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database()"
        deadline = time.monotonic() + 5
        while storage.query(count)[0][0] > 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert storage.query(count)[0][0] == 2
    storage.close()


def test_a_connection_postgresql_dropped_is_opened_again(tmp_path: Path, postgres: Any) -> None:
    import psycopg

    storage = Storage(tmp_path, database=postgres.new_database())
    pid = storage.query("SELECT pg_backend_pid()")[0][0]
    with psycopg.connect(postgres.url(), autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
    time.sleep(0.1)
    assert storage.query("SELECT COUNT(*) FROM datasets")[0][0] == 0  # the read, retried
    assert storage.query("SELECT pg_backend_pid()")[0][0] != pid
    with storage.tx() as db:  # and writes go on
        db.execute("INSERT INTO agents (account, slug, created_at) VALUES ('a', 'b', 0)")
    assert len(storage.query("SELECT slug FROM agents")) == 1
    storage.close()
