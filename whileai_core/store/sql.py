"""The one SQL layer the store talks through, for SQLite and PostgreSQL alike.

Every query of the store is written once, in the spelling both databases read: `?` for a
bound value, `ON CONFLICT ... DO NOTHING / DO UPDATE` for an upsert, and `FOR UPDATE` on a
read whose row the same transaction writes back. `Dialect.query` renders it for the
database at hand: PostgreSQL's driver wants `%s` (and a literal `%` doubled); SQLite has no
row locks and drops `FOR UPDATE`, since its write transaction (`BEGIN IMMEDIATE`) already
holds the whole database.

Concurrency, which the two databases do differently, is spelled once too:

- `Conn.serialize(key)` inside a transaction: no other transaction that serializes on
  the same key runs until this one ends (PostgreSQL: an advisory transaction lock on the
  key's hash; SQLite: nothing to do, one writer at a time is all it allows). Reads that
  decide a write (a quota check, a merge of a trace's spans) take it.
- `Database.lock(name)` across transactions, threads and processes (a finalize that
  validates a body for seconds): a `flock` for SQLite, a session advisory lock for
  PostgreSQL; either is released when its holder dies, so a SIGKILLed holder never
  leaves a lock behind.

Connections are one per thread (the server runs store calls in a pool of worker
threads), in autocommit mode with transactions opened explicitly; a thread's connection
is closed once the thread is gone (a server's idle workers come and go, and PostgreSQL's
connections are counted), and a PostgreSQL connection the server dropped is opened again
(a read it broke is retried once; a transaction it broke fails, and the next one runs).
"""

from __future__ import annotations

import fcntl
import hashlib
import re
import sqlite3
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ..errors import ConfigError

POSTGRES_SCHEMES = ("postgresql", "postgres")


@dataclass(frozen=True)
class Dialect:
    name: str
    types: dict[str, str]
    begin: tuple[str, ...]  # opens a transaction holding the lock that serializes migrators
    param: str  # the driver's placeholder for a bound value
    write_begin: str = "BEGIN"  # opens the store's write transactions
    row_locks: bool = True  # keeps `FOR UPDATE` (SQLite locks the whole database instead)
    # Holds a key until the transaction ends; None where one writer at a time is the rule.
    serialize_sql: str | None = "SELECT pg_advisory_xact_lock(hashtextextended(?, 0))"
    _rendered: dict[str, str] = field(default_factory=dict, compare=False, repr=False)

    def render(self, statement: str) -> str:
        """A DDL statement with its `$FLOAT` / `$BIGINT` type placeholders filled in."""
        return re.sub(r"\$([A-Z]+)\b", lambda m: self.types[m.group(1)], statement)

    def query(self, sql: str) -> str:
        """A query in the shared spelling, as this database's driver takes it (cached:
        the store sends the same few dozen statements over and over)."""
        done = self._rendered.get(sql)
        if done is None:
            done = sql
            if not self.row_locks:
                done = re.sub(r"\s+FOR UPDATE\b", "", done)
            if self.param != "?":
                done = done.replace("%", "%%").replace("?", self.param)
            self._rendered[sql] = done
        return done


SQLITE = Dialect(
    "sqlite",
    {"FLOAT": "REAL", "BIGINT": "INTEGER"},
    ("BEGIN IMMEDIATE",),
    "?",
    write_begin="BEGIN IMMEDIATE",
    row_locks=False,
    serialize_sql=None,
)
POSTGRESQL = Dialect(
    "postgresql",
    {"FLOAT": "DOUBLE PRECISION", "BIGINT": "BIGINT"},
    # Any constant works as the key, as long as every migrator uses the same one.
    ("BEGIN", "SELECT pg_advisory_xact_lock(727374)"),
    "%s",
)


class Row(tuple):
    """A result row read by position or by column name, as `sqlite3.Row` is (what the
    store's code reads PostgreSQL's rows as)."""

    _index: dict[str, int]

    def __new__(cls, values: Sequence[Any], index: dict[str, int]) -> Row:
        row = super().__new__(cls, values)
        row._index = index
        return row

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            return tuple.__getitem__(self, self._index[key])
        return tuple.__getitem__(self, key)

    def keys(self) -> list[str]:
        return list(self._index)


def _pg_rows(cursor: Any) -> Any:
    index = {c.name: i for i, c in enumerate(cursor.description or ())}
    return lambda values: Row(values, index)


class Conn:
    """A thread's connection, taking queries in the shared spelling."""

    def __init__(self, raw: Any, dialect: Dialect) -> None:
        self.raw = raw
        self.dialect = dialect

    def execute(self, sql: str, args: Iterable[Any] = ()) -> Any:
        return self.raw.execute(self.dialect.query(sql), tuple(args))

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        rows = [tuple(r) for r in rows]
        if rows:
            cursor = self.raw.cursor()  # psycopg's connection has no executemany of its own
            try:
                cursor.executemany(self.dialect.query(sql), rows)
            finally:
                cursor.close()

    def serialize(self, key: str) -> None:
        """Hold `key` until this transaction ends (see the module's docstring)."""
        if self.dialect.serialize_sql is not None:
            self.execute(self.dialect.serialize_sql, (key,))


class Database(ABC):
    """One database: per-thread connections, transactions, and cross-process locks."""

    dialect: Dialect
    where: str  # what messages call it: a path, or the URL without its password

    def __init__(self) -> None:
        self._local = threading.local()
        self._conns: dict[threading.Thread, Any] = {}
        self._conns_lock = threading.Lock()

    # --- what each database does its own way -------------------------------------------

    @abstractmethod
    def _connect(self) -> Any:
        """A new DB-API connection in autocommit mode whose rows read by name."""

    def _usable(self, raw: Any) -> bool:
        return True

    @abstractmethod
    def lock(self, name: str, wait: bool = True) -> AbstractContextManager[bool]:
        """Hold `name` across threads and processes; without `wait`, yields False at once
        when someone else holds it."""

    # --- shared --------------------------------------------------------------------------

    def raw(self) -> Any:
        """This thread's DB-API connection (opened on first use)."""
        raw = getattr(self._local, "raw", None)
        if raw is not None and self._usable(raw):
            return raw
        raw = self._connect()
        self._local.raw = raw
        me = threading.current_thread()
        with self._conns_lock:
            gone = [t for t in self._conns if not t.is_alive() or t is me]
            stale = [self._conns.pop(t) for t in gone]
            self._conns[me] = raw
        for conn in stale:  # a finished worker thread's, or this thread's broken one
            _close_quietly(conn)
        return raw

    def conn(self) -> Conn:
        return Conn(self.raw(), self.dialect)

    @contextmanager
    def tx(self) -> Iterator[Conn]:
        """One write transaction, opened up front so that what it reads and then writes is
        atomic (with `serialize` or `FOR UPDATE` on PostgreSQL; see the module's docstring)."""
        conn = self.conn()
        conn.raw.execute(self.dialect.write_begin)
        try:
            yield conn
        except BaseException:
            if self._usable(conn.raw):  # a dropped connection rolled back on its own
                conn.raw.execute("ROLLBACK")
            raise
        conn.raw.execute("COMMIT")

    def query(self, sql: str, args: Iterable[Any] = ()) -> list[Any]:
        """Rows of a read outside any transaction. A read that failed because the server
        dropped the connection (a restart, a failover) is made again once, on a new one:
        reads change nothing, so trying twice is safe (a transaction is not retried)."""
        conn = self.conn()
        try:
            return list(conn.execute(sql, args).fetchall())
        except Exception:
            if self._usable(conn.raw):
                raise
        return list(self.conn().execute(sql, args).fetchall())

    def close(self) -> None:
        """Close every connection, in every thread (at shutdown: a thread that queries
        afterwards opens a new one)."""
        with self._conns_lock:
            conns, self._conns = list(self._conns.values()), {}
        for conn in conns:
            _close_quietly(conn)
        self._local = threading.local()


def _close_quietly(conn: Any) -> None:
    try:
        conn.close()
    except Exception:  # closing a connection its server already dropped
        return


class SqliteDatabase(Database):
    """A SQLite file in WAL mode: readers never wait, writers take turns (busy timeout)."""

    dialect = SQLITE
    LOCK_SLOTS = 256

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path
        self.where = str(path)
        self.lock_dir = path.parent / "locks"
        self.lock_dir.mkdir(mode=0o700, exist_ok=True)

    def _connect(self) -> Any:
        # check_same_thread off only so `close` can close every thread's connection at
        # shutdown; each connection is still used by the one thread that opened it.
        conn = sqlite3.connect(self.path, timeout=60, isolation_level=None, check_same_thread=False)
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA busy_timeout=60000")
        # Switching a new file to WAL needs it to itself, and SQLite answers "database is
        # locked" at once (no busy wait) while fifty openers race to do it: wait our turn.
        deadline = time.monotonic() + 60
        while True:
            try:
                conn.execute("PRAGMA journal_mode=WAL")
                break
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    conn.close()
                    raise
                time.sleep(0.01)
        conn.execute("PRAGMA synchronous=NORMAL")
        return conn

    @contextmanager
    def lock(self, name: str, wait: bool = True) -> Iterator[bool]:
        # A fixed set of lock files, a name hashed to one: the files are never deleted
        # (deleting a file someone waits on is a race), so there must not be one per name.
        slot = int(hashlib.sha256(name.encode()).hexdigest()[:8], 16) % self.LOCK_SLOTS
        with (self.lock_dir / f"{slot:02x}.lock").open("a") as fh:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                yield False
                return
            try:
                yield True
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)


class PostgresDatabase(Database):
    """A PostgreSQL database through psycopg 3 (`pip install 'whileai-toolkit[postgres]'`)."""

    dialect = POSTGRESQL

    def __init__(self, url: str) -> None:
        super().__init__()
        try:
            import psycopg
        except ImportError:
            raise ConfigError(
                "--database postgresql://... needs psycopg: pip install 'whileai-toolkit[postgres]'"
            ) from None
        self._psycopg = psycopg
        self.url = url
        self.where = redact(url)

    def _connect(self) -> Any:
        try:
            conn = self._psycopg.connect(self.url, autocommit=True, connect_timeout=10)
        except self._psycopg.Error as exc:
            raise ConfigError(f"{self.where}: cannot connect ({first_line(exc)})") from None
        conn.row_factory = _pg_rows
        return conn

    def _usable(self, raw: Any) -> bool:
        return not (raw.closed or raw.broken)

    @contextmanager
    def lock(self, name: str, wait: bool = True) -> Iterator[bool]:
        conn = self.conn()  # a session lock: it lives on this thread's connection
        if wait:
            conn.execute("SELECT pg_advisory_lock(hashtextextended(?, 0))", (name,))
        elif not conn.execute(
            "SELECT pg_try_advisory_lock(hashtextextended(?, 0))", (name,)
        ).fetchone()[0]:
            yield False
            return
        try:
            yield True
        finally:
            if not conn.raw.broken:  # a dropped connection took its lock with it
                conn.execute("SELECT pg_advisory_unlock(hashtextextended(?, 0))", (name,))


def first_line(exc: BaseException) -> str:
    """A driver's error in one line (PostgreSQL's carry DETAIL and HINT lines)."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def is_postgres(url: str | None) -> bool:
    return bool(url) and urlsplit(str(url)).scheme in POSTGRES_SCHEMES


def redact(url: str) -> str:
    """A database URL fit to print: the password, if any, replaced."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit(parts._replace(netloc=f"{parts.username}:***@{host}"))


def open_database(url: str | None, root: Path) -> Database:
    """`url` None: the SQLite file under `root`; `postgresql://...`: that database."""
    if not url:
        return SqliteDatabase(root / "store.db")
    if is_postgres(url):
        return PostgresDatabase(url)
    raise ConfigError(
        f"--database {redact(url)}: expected a postgresql://user@host/dbname URL"
        " (without --database the store is SQLite under --data)"
    )
