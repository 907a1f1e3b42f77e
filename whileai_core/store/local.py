"""The embedded store: SQLite (WAL) for metadata, one JSONL file per dataset.

`Storage` is the storage code itself and is multi-account (every table has an `account`
column); `whileai serve` runs it for many accounts, the CLI without a server runs it for
the one account `local` through `LocalStore`. There is no second storage layer.

Layout under the root (WHILEAI_HOME, or `serve --data DIR`): `store.db` holds the
metadata (datasets, agents, traces, accounts, keys), `datasets/` the row files
(`files.py`). A push killed between create and finalize leaves a pending dataset (and
maybe its files); `purge` deletes pending datasets older than `STALE_UPLOAD_SECONDS`,
and `sweep` removes upload files nobody has written to for that long.

Every connection is per thread, WAL mode with a busy timeout, so many concurrent pushes
(threads of the server, or several CLI processes) serialize on SQLite's write lock
instead of failing.
"""

from __future__ import annotations

import itertools
import secrets
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import orjson

from ..errors import ConfigError
from ..privileged import has_privileged
from ..validate import row_problem
from .base import (
    META_FIELDS,
    STALE_UPLOAD_SECONDS,
    TRACE_PAGE_SIZE,
    BadRequest,
    NewDataset,
    NotFound,
    check_purpose,
    check_status,
)
from .files import DatasetFiles
from .limits import Limits
from .profile import profile_rows
from .traces import TraceTable, ensure_agent

LOCAL_ACCOUNT = "local"
MAX_PREVIEW = 100

_SCHEMA = """
CREATE TABLE IF NOT EXISTS datasets (
    id TEXT PRIMARY KEY,
    account TEXT NOT NULL,
    name TEXT NOT NULL,
    purpose TEXT NOT NULL DEFAULT 'train',
    mode TEXT,
    agent TEXT,
    description TEXT,
    parent_id TEXT,
    status TEXT NOT NULL DEFAULT 'pending',
    rows INTEGER NOT NULL DEFAULT 0,
    bytes INTEGER NOT NULL DEFAULT 0,
    idem_key TEXT,
    created_at REAL NOT NULL,
    finalized_at REAL
);
CREATE INDEX IF NOT EXISTS datasets_account ON datasets(account, created_at);
CREATE UNIQUE INDEX IF NOT EXISTS datasets_idem ON datasets(account, idem_key)
    WHERE idem_key IS NOT NULL;
CREATE TABLE IF NOT EXISTS agents (
    account TEXT NOT NULL,
    slug TEXT NOT NULL,
    description TEXT,
    spec TEXT,
    created_at REAL NOT NULL,
    PRIMARY KEY (account, slug)
);
CREATE TABLE IF NOT EXISTS traces (
    account TEXT NOT NULL,
    trace_id TEXT NOT NULL,
    agent TEXT,
    scenario_id TEXT,
    started_at REAL NOT NULL,
    spans TEXT NOT NULL,
    scores TEXT NOT NULL DEFAULT '{}',
    row TEXT NOT NULL,
    PRIMARY KEY (account, trace_id)
);
CREATE INDEX IF NOT EXISTS traces_agent ON traces(account, agent, started_at);
CREATE TABLE IF NOT EXISTS accounts (
    id TEXT PRIMARY KEY,
    email TEXT UNIQUE,
    name TEXT,
    created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS api_keys (
    hash TEXT PRIMARY KEY,
    account TEXT NOT NULL,
    name TEXT,
    created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS device_codes (
    device_code TEXT PRIMARY KEY,
    user_code TEXT NOT NULL UNIQUE,
    name TEXT,
    created_at REAL NOT NULL,
    expires_at REAL NOT NULL,
    interval REAL NOT NULL,
    last_poll REAL,
    account TEXT,
    done INTEGER NOT NULL DEFAULT 0
);
"""


def _shipped_answer_key(raw: bytes) -> str | None:
    """A stored set never holds the answer key, whoever uploaded it: `push` strips it, so a
    line that still carries `privileged` (or `vector`) came around the client."""
    if not any(t in raw for t in (b"privileged", b"vector", b"\\u")):
        return None
    if has_privileged(orjson.loads(raw)):
        return "carries privileged data (the answer key never ships; push strips it)"
    return None


def new_id(prefix: str) -> str:
    return f"{prefix}_{secrets.token_hex(8)}"


def _iso(ts: float | None) -> str | None:
    if ts is None:
        return None
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))


class Storage:
    """SQLite + files under one root, shared by every account that lives there."""

    def __init__(self, root: Path | str, limits: Limits | None = None) -> None:
        self.root = Path(root).expanduser()
        self.limits = limits or Limits()
        # Rows and key hashes live here: readable by the owner only.
        self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.datasets = DatasetFiles(self.root / "datasets", self.limits)
        self.files = self.datasets.dir
        self.db_path = self.root / "store.db"
        self._local = threading.local()
        self._conns: list[sqlite3.Connection] = []
        self._conns_lock = threading.Lock()
        self.traces = TraceTable(self)
        # executescript commits on its own; IF NOT EXISTS makes concurrent first runs safe.
        try:
            self._conn().executescript(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            self.close()
            raise ConfigError(f"{self.db_path}: not a whileai store ({exc})") from None

    # --- connections ---------------------------------------------------------------

    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            # check_same_thread off only so `close` can close every thread's connection at
            # shutdown; each connection is still used by the one thread that opened it.
            conn = sqlite3.connect(
                self.db_path, timeout=60, isolation_level=None, check_same_thread=False
            )
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA busy_timeout=60000")
            self._local.conn = conn
            with self._conns_lock:
                self._conns.append(conn)
        return conn

    @contextmanager
    def tx(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, taken up front (IMMEDIATE) so read-then-write is atomic."""
        conn = self._conn()
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def create_tables(self, schema: str) -> None:
        """Tables of a layer above the store (the server's invites) in the same database."""
        self._conn().executescript(schema)

    def query(self, sql: str, args: Iterable[Any] = ()) -> list[sqlite3.Row]:
        return self._conn().execute(sql, tuple(args)).fetchall()

    def close(self) -> None:
        """Close every connection this storage opened, in every thread (at shutdown: a
        thread that queries afterwards would open a new one)."""
        with self._conns_lock:
            conns, self._conns = self._conns, []
        for conn in conns:
            conn.close()
        self._local = threading.local()

    # --- datasets ------------------------------------------------------------------

    def path_of(self, dataset_id: str, suffix: str = "jsonl") -> Path:
        return self.datasets.path_of(dataset_id, suffix)

    def _record(self, row: sqlite3.Row) -> dict[str, Any]:
        return {
            "datasetId": row["id"],
            "name": row["name"],
            "purpose": row["purpose"],
            "mode": row["mode"],
            "agent": row["agent"],
            "description": row["description"],
            "parentDatasetId": row["parent_id"],
            "status": row["status"],
            "rows": row["rows"],
            "sizeBytes": row["bytes"],
            "createdAt": _iso(row["created_at"]),
            "finalizedAt": _iso(row["finalized_at"]),
        }

    def _row(self, account: str, dataset_id: str) -> sqlite3.Row:
        found = self.query(
            "SELECT * FROM datasets WHERE account = ? AND id = ?", (account, dataset_id)
        )
        if not found:
            raise NotFound(f"dataset {dataset_id} not found")
        return found[0]

    def create_dataset(self, account: str, spec: NewDataset) -> dict[str, Any]:
        if not spec.name.strip():
            raise BadRequest("a dataset needs a name")
        check_purpose(spec.purpose)
        with self.tx() as db:
            if (
                spec.parent is not None
                and not db.execute(
                    "SELECT 1 FROM datasets WHERE account = ? AND id = ?", (account, spec.parent)
                ).fetchone()
            ):
                raise NotFound(f"parent dataset {spec.parent} not found")
            if spec.idempotency_key is not None:
                prior = db.execute(
                    "SELECT * FROM datasets WHERE account = ? AND idem_key = ?",
                    (account, spec.idempotency_key),
                ).fetchone()
                if prior is not None:
                    record = self._record(prior)
                    record["existing"] = prior["status"] == "ready"
                    return record
            dataset_id = new_id("ds")
            db.execute(
                "INSERT INTO datasets (id, account, name, purpose, mode, agent, description,"
                " parent_id, idem_key, created_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
                (
                    dataset_id,
                    account,
                    spec.name,
                    spec.purpose,
                    spec.mode,
                    spec.agent,
                    spec.description,
                    spec.parent,
                    spec.idempotency_key,
                    time.time(),
                ),
            )
            if spec.agent:
                ensure_agent(db, account, spec.agent)
            row = db.execute("SELECT * FROM datasets WHERE id = ?", (dataset_id,)).fetchone()
        record = self._record(row)
        record["existing"] = False
        return record

    def upload(
        self,
        account: str,
        dataset_id: str,
        chunks: Iterable[bytes],
        declared: int | None = None,
    ) -> int:
        """Stream a body for a pending dataset (`declared`: the size a client announced, so
        one over the limit is refused before a byte is read)."""
        row = self._row(account, dataset_id)
        if row["status"] == "ready":
            raise BadRequest(f"dataset {dataset_id} is already finalized")
        return self.datasets.write(dataset_id, chunks, declared)

    def finalize(self, account: str, dataset_id: str) -> dict[str, Any]:
        row = self._row(account, dataset_id)
        if row["status"] == "ready":
            return self._record(row)
        with self.datasets.locked(dataset_id):
            row = self._row(account, dataset_id)
            if row["status"] == "ready":  # a concurrent finalize got there first
                return self._record(row)
            rows, size = self.datasets.check_and_publish(
                dataset_id, lambda raw: row_problem(raw) or _shipped_answer_key(raw)
            )
            with self.tx() as db:
                db.execute(
                    "UPDATE datasets SET status = 'ready', rows = ?, bytes = ?, finalized_at = ?"
                    " WHERE id = ? AND account = ?",
                    (rows, size, time.time(), dataset_id, account),
                )
        return self._record(self._row(account, dataset_id))

    def list_datasets(self, account: str, status: str = "ready") -> list[dict[str, Any]]:
        found = self.query(
            "SELECT * FROM datasets WHERE account = ? AND status = ? ORDER BY created_at, id",
            (account, check_status(status)),
        )
        return [self._record(r) for r in found]

    def get_dataset(self, account: str, dataset_id: str) -> dict[str, Any]:
        return self._record(self._row(account, dataset_id))

    def ready_file(self, account: str, dataset_id: str) -> Path:
        row = self._row(account, dataset_id)
        if row["status"] != "ready":
            raise BadRequest(f"dataset {dataset_id} is not finalized")
        return self.path_of(dataset_id)

    def read_chunks(self, account: str, dataset_id: str) -> Iterator[bytes]:
        self.ready_file(account, dataset_id)
        return self.datasets.read_chunks(dataset_id)

    def iter_rows(self, account: str, dataset_id: str) -> Iterator[dict[str, Any]]:
        with self.ready_file(account, dataset_id).open("rb") as fh:
            for raw in fh:
                if raw.strip():
                    yield orjson.loads(raw)

    def delete_dataset(self, account: str, dataset_id: str) -> None:
        self._row(account, dataset_id)
        with self.tx() as db:
            db.execute("DELETE FROM datasets WHERE id = ? AND account = ?", (dataset_id, account))
        self.datasets.remove(dataset_id)

    def sweep(self, max_age: float = STALE_UPLOAD_SECONDS, now: float | None = None) -> int:
        """Files of killed uploads and finalizes, and of datasets that no longer exist
        (`DatasetFiles.sweep`); returns how many went."""
        known = {r[0] for r in self.query("SELECT id FROM datasets")}
        return self.datasets.sweep(known, max_age, now)

    def update_meta(self, account: str, dataset_id: str, fields: dict[str, Any]) -> dict[str, Any]:
        unknown = sorted(set(fields) - set(META_FIELDS))
        if unknown:
            raise BadRequest(f"cannot change {', '.join(unknown)} (only {', '.join(META_FIELDS)})")
        for key, value in fields.items():
            if value is not None and not isinstance(value, str):
                raise BadRequest(f"{key} must be a string or null")
        if not str(fields.get("name", "x") or "").strip():
            raise BadRequest("a dataset needs a name")
        if "purpose" in fields:
            check_purpose(str(fields["purpose"]))
        self._row(account, dataset_id)
        if fields:
            with self.tx() as db:
                sets = ", ".join(f"{k} = ?" for k in fields)
                db.execute(
                    f"UPDATE datasets SET {sets} WHERE id = ? AND account = ?",
                    (*fields.values(), dataset_id, account),
                )
                if fields.get("agent"):
                    ensure_agent(db, account, str(fields["agent"]))
        return self.get_dataset(account, dataset_id)

    def preview(self, account: str, dataset_id: str, n: int = 3) -> dict[str, Any]:
        """The first `n` rows (at most MAX_PREVIEW: a preview is not a download) and the profile."""
        if not 0 <= n <= MAX_PREVIEW:
            raise BadRequest(f"n must be between 0 and {MAX_PREVIEW}, got {n}")
        sample = list(itertools.islice(self.iter_rows(account, dataset_id), n))
        return {
            "dataset": self.get_dataset(account, dataset_id),
            "rows": sample,
            "profile": self.profile(account, dataset_id),
        }

    def profile(self, account: str, dataset_id: str) -> dict[str, Any]:
        report = profile_rows(self.iter_rows(account, dataset_id))
        report["datasetId"] = dataset_id
        return report

    # --- agents --------------------------------------------------------------------

    def list_agents(self, account: str) -> list[dict[str, Any]]:
        agents = self.query(
            "SELECT slug, description, spec, created_at FROM agents WHERE account = ?"
            " ORDER BY slug",
            (account,),
        )
        traces: dict[str, int] = {
            r[0]: r[1]
            for r in self.query(
                "SELECT agent, COUNT(*) FROM traces WHERE account = ? GROUP BY agent", (account,)
            )
        }
        sets: dict[str, dict[str, int]] = {}
        for r in self.query(
            "SELECT agent, purpose, COUNT(*) AS n FROM datasets WHERE account = ?"
            " AND status = 'ready' GROUP BY agent, purpose",
            (account,),
        ):
            sets.setdefault(r["agent"], {})[r["purpose"]] = r["n"]
        return [
            {
                "slug": a["slug"],
                "description": a["description"],
                "traces": traces.get(a["slug"], 0),
                "datasets": sets.get(a["slug"], {}),
                "createdAt": _iso(a["created_at"]),
                **(orjson.loads(a["spec"]) if a["spec"] else {}),
            }
            for a in agents
        ]

    def create_agent(
        self,
        account: str,
        slug: str,
        description: str | None,
        spec: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Create or update an agent; `spec` holds what it is (`tools`, `system_prompt`)."""
        slug = slug.strip()
        if not slug:
            raise BadRequest("an agent needs a slug")
        with self.tx() as db:
            ensure_agent(db, account, slug)
            if description is not None:
                db.execute(
                    "UPDATE agents SET description = ? WHERE account = ? AND slug = ?",
                    (description, account, slug),
                )
            if spec:
                db.execute(
                    "UPDATE agents SET spec = ? WHERE account = ? AND slug = ?",
                    (orjson.dumps(spec).decode(), account, slug),
                )
        return next(a for a in self.list_agents(account) if a["slug"] == slug)

    def delete_one(self, what: str, sql: str, account: str, key: str) -> None:
        with self.tx() as db:
            gone = db.execute(sql, (account, key)).rowcount
        if not gone:
            raise NotFound(f"{what} {key} not found")

    def delete_agent(self, account: str, slug: str) -> None:
        sql = "DELETE FROM agents WHERE account = ? AND slug = ?"
        self.delete_one("agent", sql, account, slug)


class BoundStore:
    """`Storage` seen as one account: the `Store` the CLI (account `local`) and each server
    request (the key's account) talk to. Only the store that opened its storage closes
    it: a server request's store shares the server's, and closing it closes nothing."""

    kind = "embedded"

    def __init__(self, storage: Storage, account: str = LOCAL_ACCOUNT, owns: bool = False) -> None:
        self.storage = storage
        self.account = account
        self.location = str(storage.root)
        self._owns = owns

    def create_dataset(self, spec: NewDataset) -> dict[str, Any]:
        return self.storage.create_dataset(self.account, spec)

    def upload(self, dataset_id: str, chunks: Iterable[bytes], size: int | None = None) -> int:
        return self.storage.upload(self.account, dataset_id, chunks, size)

    def finalize(self, dataset_id: str) -> dict[str, Any]:
        return self.storage.finalize(self.account, dataset_id)

    def list_datasets(self, status: str = "ready") -> list[dict[str, Any]]:
        return self.storage.list_datasets(self.account, status)

    def get_dataset(self, dataset_id: str) -> dict[str, Any]:
        return self.storage.get_dataset(self.account, dataset_id)

    def download(self, dataset_id: str) -> Iterator[bytes]:
        return self.storage.read_chunks(self.account, dataset_id)

    def delete_dataset(self, dataset_id: str) -> None:
        self.storage.delete_dataset(self.account, dataset_id)

    def update_meta(self, dataset_id: str, fields: dict[str, Any]) -> dict[str, Any]:
        return self.storage.update_meta(self.account, dataset_id, fields)

    def preview(self, dataset_id: str, n: int = 3) -> dict[str, Any]:
        return self.storage.preview(self.account, dataset_id, n)

    def profile(self, dataset_id: str) -> dict[str, Any]:
        return self.storage.profile(self.account, dataset_id)

    def list_agents(self) -> list[dict[str, Any]]:
        return self.storage.list_agents(self.account)

    def create_agent(
        self, slug: str, description: str | None = None, spec: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        return self.storage.create_agent(self.account, slug, description, spec)

    def delete_agent(self, slug: str) -> None:
        self.storage.delete_agent(self.account, slug)

    def ingest_otlp(
        self, body: bytes | IO[bytes], content_type: str, content_encoding: str | None = None
    ) -> dict[str, Any]:
        return self.storage.traces.ingest(self.account, body, content_type, content_encoding)

    def list_traces(
        self,
        agent: str | None = None,
        page: int = 1,
        since: float | None = None,
        limit: int = TRACE_PAGE_SIZE,
    ) -> dict[str, Any]:
        return self.storage.traces.list(self.account, agent, page, since, limit)

    def delete_trace(self, trace_id: str) -> None:
        self.storage.traces.delete(self.account, trace_id)

    def score_trace(self, trace_id: str, value: float, name: str = "score") -> dict[str, Any]:
        return self.storage.traces.score(self.account, trace_id, value, name)

    def close(self) -> None:
        if self._owns:
            self.storage.close()


def LocalStore(root: Path | str | None = None) -> BoundStore:
    """The embedded store under WHILEAI_HOME (no login, one account), with the limits
    WHILEAI_MAX_* set, as a server's would be."""
    from ..settings import home

    storage = Storage(root if root is not None else home(), Limits.from_env())
    storage.sweep()
    return BoundStore(storage, LOCAL_ACCOUNT, owns=True)
