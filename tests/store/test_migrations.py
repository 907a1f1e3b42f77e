"""Versioned schema migrations: a fresh store, a store made before migrations existed, two
openers at once, a failing migration, and a store from a newer whileai."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

from whileai_core.errors import ConfigError
from whileai_core.store.bound import LocalStore
from whileai_core.store.local import Storage
from whileai_core.store.migrations import (
    LATEST,
    MIGRATIONS,
    POSTGRESQL,
    SQLITE,
    Migration,
    current_version,
    migrate,
)

# The schema as whileai created it before migrations (issue 16's store), with a row in it.
_OLD = """
CREATE TABLE datasets (id TEXT PRIMARY KEY, account TEXT NOT NULL, name TEXT NOT NULL,
    purpose TEXT NOT NULL DEFAULT 'train', mode TEXT, agent TEXT, description TEXT,
    parent_id TEXT, status TEXT NOT NULL DEFAULT 'pending', rows INTEGER NOT NULL DEFAULT 0,
    bytes INTEGER NOT NULL DEFAULT 0, idem_key TEXT, created_at REAL NOT NULL,
    finalized_at REAL);
CREATE TABLE agents (account TEXT NOT NULL, slug TEXT NOT NULL, description TEXT, spec TEXT,
    created_at REAL NOT NULL, PRIMARY KEY (account, slug));
CREATE TABLE traces (account TEXT NOT NULL, trace_id TEXT NOT NULL, agent TEXT,
    scenario_id TEXT, started_at REAL NOT NULL, spans TEXT NOT NULL,
    scores TEXT NOT NULL DEFAULT '{}', row TEXT NOT NULL, PRIMARY KEY (account, trace_id));
CREATE TABLE accounts (id TEXT PRIMARY KEY, email TEXT UNIQUE, name TEXT,
    created_at REAL NOT NULL);
CREATE TABLE api_keys (hash TEXT PRIMARY KEY, account TEXT NOT NULL, name TEXT,
    created_at REAL NOT NULL);
CREATE TABLE invites (hash TEXT PRIMARY KEY, note TEXT, created_at REAL NOT NULL,
    expires_at REAL NOT NULL, used_by TEXT, used_at REAL);
INSERT INTO datasets (id, account, name, status, rows, bytes, created_at)
    VALUES ('ds_0123456789abcdef', 'local', 'kept', 'ready', 3, 30, 1700000000);
"""


def _versions(path: Path) -> list[int]:
    with sqlite3.connect(path) as db:
        return [r[0] for r in db.execute("SELECT version FROM schema_version ORDER BY version")]


def test_a_fresh_store_gets_every_migration_once(tmp_path: Path) -> None:
    Storage(tmp_path).close()
    assert _versions(tmp_path / "store.db") == [m.version for m in MIGRATIONS]
    Storage(tmp_path).close()  # opening again applies nothing
    assert _versions(tmp_path / "store.db") == list(range(1, LATEST + 1))


def test_a_store_from_before_migrations_is_adopted_with_its_rows(tmp_path: Path) -> None:
    with sqlite3.connect(tmp_path / "store.db") as db:
        db.executescript(_OLD)
    store = LocalStore(tmp_path)
    try:
        assert [d["name"] for d in store.list_datasets()] == ["kept"]
        assert store.list_datasets()[0]["public"] is False  # a column migration 3 added
        assert store.list_runs() == []
    finally:
        store.close()
    assert _versions(tmp_path / "store.db") == list(range(1, LATEST + 1))


def _eight_openers_at_once(root: Path, database: str | None = None) -> None:
    errors: list[BaseException] = []

    def open_one() -> None:
        try:
            Storage(root, database=database).close()
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=open_one) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_two_openers_at_once_apply_each_migration_exactly_once(tmp_path: Path) -> None:
    _eight_openers_at_once(tmp_path)
    assert _versions(tmp_path / "store.db") == list(range(1, LATEST + 1))


def test_a_failing_migration_leaves_the_version_before_it(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "x.db", isolation_level=None)
    good = Migration(1, "a table", ("CREATE TABLE a (x $BIGINT, t $FLOAT)",))
    bad = Migration(2, "a typo", ("CREATE TABLE b (x INTEGER)", "CREATE TABLEE c (x INTEGER)"))
    with pytest.raises(sqlite3.OperationalError):
        migrate(conn, SQLITE, (good, bad))
    assert current_version(conn) == 1
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert "a" in tables and "b" not in tables  # the failed migration left nothing
    conn.close()


def test_a_store_from_a_newer_whileai_is_refused(tmp_path: Path) -> None:
    Storage(tmp_path).close()
    with sqlite3.connect(tmp_path / "store.db") as db:
        db.execute("INSERT INTO schema_version VALUES (?, 'from the future', 0)", (LATEST + 1,))
    with pytest.raises(ConfigError, match=f"schema version {LATEST + 1}, newer than"):
        Storage(tmp_path)


def test_the_same_migrations_render_for_postgresql() -> None:
    """The PostgreSQL store will run these very statements: the placeholders become its
    8-byte types, and nothing SQLite-only is left in the DDL."""
    for migration in MIGRATIONS:
        for statement in migration.statements:
            rendered = POSTGRESQL.render(statement)
            assert "$" not in rendered
            assert "REAL" not in rendered.replace("DOUBLE PRECISION", "")
            for sqlite_only in ("AUTOINCREMENT", "INSERT OR", "PRAGMA", "WITHOUT ROWID"):
                assert sqlite_only not in rendered
    assert "DOUBLE PRECISION" in POSTGRESQL.render("x $FLOAT")
    assert POSTGRESQL.render("x $BIGINT") == "x BIGINT"


# --- the same migrations on PostgreSQL ------------------------------------------------


def _pg_versions(url: str) -> list[int]:
    import psycopg

    with psycopg.connect(url) as conn:
        return [r[0] for r in conn.execute("SELECT version FROM schema_version ORDER BY version")]


def test_postgresql_gets_every_migration_once_even_with_eight_openers_at_once(
    tmp_path: Path, postgres: Any
) -> None:
    url = postgres.new_database(empty=True)
    _eight_openers_at_once(tmp_path, url)
    assert _pg_versions(url) == [m.version for m in MIGRATIONS]


def test_a_failing_migration_on_postgresql_leaves_the_version_before_it(postgres: Any) -> None:
    import psycopg

    url = postgres.new_database(empty=True)
    good = Migration(1, "a table", ("CREATE TABLE a (x $BIGINT, t $FLOAT)",))
    bad = Migration(2, "a typo", ("CREATE TABLE b (x INTEGER)", "CREATE TABLEE c (x INTEGER)"))
    with psycopg.connect(url, autocommit=True) as conn:
        with pytest.raises(psycopg.errors.SyntaxError):
            migrate(conn, POSTGRESQL, (good, bad))
        assert current_version(conn) == 1
        tables = {
            r[0]
            for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
        }
        assert "a" in tables and "b" not in tables  # PostgreSQL's DDL is transactional too
        kinds = conn.execute(
            "SELECT data_type FROM information_schema.columns WHERE table_name = 'a'"
            " ORDER BY ordinal_position"
        ).fetchall()
        assert [k[0] for k in kinds] == ["bigint", "double precision"]


def test_a_postgresql_store_from_a_newer_whileai_is_refused(tmp_path: Path, postgres: Any) -> None:
    import psycopg

    url = postgres.new_database()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("INSERT INTO schema_version VALUES (%s, 'from the future', 0)", (LATEST + 1,))
    with pytest.raises(ConfigError, match=f"schema version {LATEST + 1}, newer than"):
        Storage(tmp_path, database=url)
