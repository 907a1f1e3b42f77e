"""The store's schema as ordered, numbered migrations, applied once each on start.

A database records what it has in `schema_version` (one row per applied migration). On
open, every migration above the highest recorded version runs, in order, each in its own
transaction together with its `schema_version` row, under the database's write lock: two
processes opening one store at once (a server and `whileai invite`) apply each migration
exactly once, and a migration that fails leaves the database at the version before it.
A database whose version is above the last one this code knows was written by a newer
whileai and is refused rather than misread.

The statements are written once for SQLite and PostgreSQL alike: plain DDL, with two type
names spelled as placeholders because the two databases disagree on them (`$FLOAT`: an
8-byte float, `REAL` in SQLite but `DOUBLE PRECISION` in PostgreSQL, whose `REAL` is 4
bytes and would round a timestamp; `$BIGINT`: a 64-bit count, which SQLite's INTEGER
already is and PostgreSQL's is not). `Dialect` (`sql.py`) renders them and says how to
take the lock.

Migration 1 is the schema from before migrations existed, written with IF NOT EXISTS, so
a store created by an older whileai adopts version 1 without a change.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Protocol

from ..errors import ConfigError
from .sql import POSTGRESQL, SQLITE, Dialect

__all__ = [
    "LATEST",
    "MIGRATIONS",
    "POSTGRESQL",
    "SQLITE",
    "Dialect",
    "Migration",
    "current_version",
    "migrate",
]


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    statements: tuple[str, ...]


_BASELINE = (
    """CREATE TABLE IF NOT EXISTS datasets (
        id TEXT PRIMARY KEY,
        account TEXT NOT NULL,
        name TEXT NOT NULL,
        purpose TEXT NOT NULL DEFAULT 'train',
        mode TEXT,
        agent TEXT,
        description TEXT,
        parent_id TEXT,
        status TEXT NOT NULL DEFAULT 'pending',
        rows $BIGINT NOT NULL DEFAULT 0,
        bytes $BIGINT NOT NULL DEFAULT 0,
        idem_key TEXT,
        created_at $FLOAT NOT NULL,
        finalized_at $FLOAT
    )""",
    "CREATE INDEX IF NOT EXISTS datasets_account ON datasets(account, created_at)",
    """CREATE UNIQUE INDEX IF NOT EXISTS datasets_idem ON datasets(account, idem_key)
        WHERE idem_key IS NOT NULL""",
    """CREATE TABLE IF NOT EXISTS agents (
        account TEXT NOT NULL,
        slug TEXT NOT NULL,
        description TEXT,
        spec TEXT,
        created_at $FLOAT NOT NULL,
        PRIMARY KEY (account, slug)
    )""",
    """CREATE TABLE IF NOT EXISTS traces (
        account TEXT NOT NULL,
        trace_id TEXT NOT NULL,
        agent TEXT,
        scenario_id TEXT,
        started_at $FLOAT NOT NULL,
        spans TEXT NOT NULL,
        scores TEXT NOT NULL DEFAULT '{}',
        row TEXT NOT NULL,
        PRIMARY KEY (account, trace_id)
    )""",
    "CREATE INDEX IF NOT EXISTS traces_agent ON traces(account, agent, started_at)",
    """CREATE TABLE IF NOT EXISTS accounts (
        id TEXT PRIMARY KEY,
        email TEXT UNIQUE,
        name TEXT,
        created_at $FLOAT NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS api_keys (
        hash TEXT PRIMARY KEY,
        account TEXT NOT NULL,
        name TEXT,
        created_at $FLOAT NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS device_codes (
        device_code TEXT PRIMARY KEY,
        user_code TEXT NOT NULL UNIQUE,
        name TEXT,
        created_at $FLOAT NOT NULL,
        expires_at $FLOAT NOT NULL,
        interval $FLOAT NOT NULL,
        last_poll $FLOAT,
        account TEXT,
        done INTEGER NOT NULL DEFAULT 0
    )""",
    """CREATE TABLE IF NOT EXISTS invites (
        hash TEXT PRIMARY KEY,
        note TEXT,
        created_at $FLOAT NOT NULL,
        expires_at $FLOAT NOT NULL,
        used_by TEXT,
        used_at $FLOAT
    )""",
)

_RUNS = (
    """CREATE TABLE runs (
        id TEXT PRIMARY KEY,
        account TEXT NOT NULL,
        name TEXT NOT NULL,
        dataset_id TEXT,
        after_dataset_id TEXT,
        base_model TEXT,
        trainer TEXT,
        status TEXT NOT NULL DEFAULT 'running',
        total_steps $BIGINT,
        step $BIGINT NOT NULL DEFAULT 0,
        points $BIGINT NOT NULL DEFAULT 0,
        config TEXT,
        summary TEXT NOT NULL DEFAULT '{}',
        adapter TEXT,
        error TEXT,
        created_at $FLOAT NOT NULL,
        updated_at $FLOAT NOT NULL,
        finished_at $FLOAT
    )""",
    "CREATE INDEX runs_account ON runs(account, created_at)",
    # `seq` is the arrival order within a run: the series reads back oldest first even
    # when a trainer logs the same step twice (a resumed run) or out of order.
    """CREATE TABLE run_points (
        run_id TEXT NOT NULL,
        seq $BIGINT NOT NULL,
        step $BIGINT NOT NULL,
        ts $FLOAT,
        metrics TEXT NOT NULL,
        PRIMARY KEY (run_id, seq)
    )""",
)

_CATALOG_AND_QUOTAS = (
    "ALTER TABLE datasets ADD COLUMN published_at $FLOAT",
    "ALTER TABLE datasets ADD COLUMN card TEXT",
    "CREATE INDEX datasets_public ON datasets(published_at) WHERE published_at IS NOT NULL",
    "ALTER TABLE accounts ADD COLUMN tier TEXT",
    "ALTER TABLE invites ADD COLUMN tier TEXT",
    """CREATE TABLE usage_daily (
        account TEXT NOT NULL,
        day TEXT NOT NULL,
        rows_pushed $BIGINT NOT NULL DEFAULT 0,
        bytes_pushed $BIGINT NOT NULL DEFAULT 0,
        traces $BIGINT NOT NULL DEFAULT 0,
        tokens $BIGINT NOT NULL DEFAULT 0,
        PRIMARY KEY (account, day)
    )""",
)

_CREDENTIALS_AND_SESSIONS = (
    """CREATE TABLE delegated_credentials (
        hash TEXT PRIMARY KEY,
        account TEXT NOT NULL,
        name TEXT,
        created_at $FLOAT NOT NULL,
        expires_at $FLOAT NOT NULL,
        revoked_at $FLOAT
    )""",
    "CREATE INDEX delegated_credentials_account ON delegated_credentials(account)",
    # `credential`: the hash of the delegated credential a session was opened with, if
    # one was, so revoking the credential ends the session too.
    """CREATE TABLE web_sessions (
        hash TEXT PRIMARY KEY,
        account TEXT NOT NULL,
        credential TEXT,
        created_at $FLOAT NOT NULL,
        expires_at $FLOAT NOT NULL
    )""",
)

# What a trace holds, kept beside its spans so the per-trace caps (`max_trace_spans`,
# `max_trace_bytes`) are checked without reading them; NULL for a trace stored before.
_TRACE_SIZES = (
    "ALTER TABLE traces ADD COLUMN span_count $BIGINT",
    "ALTER TABLE traces ADD COLUMN span_bytes $BIGINT",
)

MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "baseline: datasets, agents, traces, accounts, keys, device codes", _BASELINE),
    Migration(2, "training runs and their points", _RUNS),
    Migration(3, "public cards, account tiers and daily usage", _CATALOG_AND_QUOTAS),
    Migration(4, "delegated credentials and dashboard sessions", _CREDENTIALS_AND_SESSIONS),
    Migration(5, "how many spans each trace holds, and their size", _TRACE_SIZES),
)
LATEST = MIGRATIONS[-1].version

_VERSION_TABLE = """CREATE TABLE IF NOT EXISTS schema_version (
    version INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    applied_at $FLOAT NOT NULL
)"""


class Connection(Protocol):
    """A DB-API connection in autocommit mode (transactions are opened explicitly)."""

    def execute(self, sql: str, parameters: Any = ...) -> Any: ...


def current_version(conn: Connection) -> int:
    row = conn.execute("SELECT MAX(version) FROM schema_version").fetchone()
    return int(row[0] or 0)


def migrate(
    conn: Connection,
    dialect: Dialect = SQLITE,
    migrations: tuple[Migration, ...] = MIGRATIONS,
    where: str = "the store",
) -> list[int]:
    """Apply every migration the database lacks; returns the versions applied now."""
    known = migrations[-1].version if migrations else 0
    applied: list[int] = []
    while True:
        for statement in dialect.begin:
            conn.execute(statement)
        try:
            # Under the lock: PostgreSQL's CREATE ... IF NOT EXISTS is not safe against a
            # concurrent one (two openers would both try to create the table).
            conn.execute(dialect.render(_VERSION_TABLE))
            version = current_version(conn)
            if version > known:
                raise ConfigError(
                    f"{where} is at schema version {version}, newer than this whileai knows"
                    f" ({known}): upgrade whileai to open it"
                )
            pending = [m for m in migrations if m.version > version]
            if not pending:
                conn.execute("COMMIT")
                return applied
            step = pending[0]
            for statement in step.statements:
                conn.execute(dialect.render(statement))
            conn.execute(
                dialect.query(
                    "INSERT INTO schema_version (version, name, applied_at) VALUES (?, ?, ?)"
                ),
                (step.version, step.name, time.time()),
            )
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        applied.append(step.version)
