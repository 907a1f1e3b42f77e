"""The store's storage: metadata in a SQL database, dataset bodies in a blob store.

`Storage` is the storage code itself and is multi-account (every table has an `account`
column); `whileai serve` runs it for many accounts, the CLI without a server runs it for
the one account `local` through `LocalStore`. There is no second storage layer, and no
second copy of it per backend: the database is SQLite under the root (the default) or
PostgreSQL (`serve --database postgresql://...`), both spoken to through `sql.py`; the
bodies live under `root/datasets` (the default) or in an S3 bucket (`serve --blobs`),
both through `blobs.py`.

Layout under the root (WHILEAI_HOME, or `serve --data DIR`): `store.db` holds the
metadata (datasets, agents, traces, runs, accounts, keys) when SQLite does, `datasets/`
the bodies (`files.py`) when the directory does; the schema is versioned
(`migrations.py`) and brought up to date on open, in either database. A push killed
between create and finalize leaves a pending dataset (and maybe its body); `purge`
deletes pending datasets older than `STALE_UPLOAD_SECONDS`, and `sweep` removes upload
files nobody has written to for that long.

Many concurrent pushes (threads of the server, several CLI processes, several servers on
one PostgreSQL) stay correct: every read that decides a write happens inside the write's
transaction, serialized per account where a quota or a merge depends on it (`sql.py`).
"""

from __future__ import annotations

import itertools
import secrets
import time
from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import orjson

from ..errors import ConfigError
from ..jsonl import dumps
from ..row.privileged import might_carry, prepare_to_ship
from ..row.validate import row_problem
from . import quotas
from .agents import AgentTable, ensure_agent, iso
from .base import (
    META_FIELDS,
    STALE_UPLOAD_SECONDS,
    BadRequest,
    NewDataset,
    NotFound,
    StoreError,
    check_purpose,
    check_status,
)
from .blobs import BlobStore, LocalBlobs
from .catalog import Catalog
from .files import DatasetFiles, Published
from .limits import Limits
from .migrations import migrate
from .profile import profile_rows
from .quotas import QuotaPolicy, Quotas
from .runs import RunTable
from .sql import Conn, Database, first_line, open_database
from .traces import TraceTable

LOCAL_ACCOUNT = "local"
MAX_PREVIEW = 100


def _ship_line(raw: bytes) -> tuple[bytes | None, str | None]:
    """A stored set never holds the answer key, whoever uploaded it (`push` strips it; the
    original SDK's `push_rows` sends rows as they are): the line as stored and why it
    changed, by the one decision every way out makes (`privileged.prepare_to_ship`)."""
    if not might_carry(raw):
        return raw, None
    shipped = prepare_to_ship(orjson.loads(raw))
    if shipped.row is None:
        return None, shipped.refused
    if shipped.stripped:
        return dumps(shipped.row), "privileged_removed"
    return raw, None


def _fixes_said(published: Published) -> dict[str, Any]:
    """What finalize changed of the upload, for its answer: counts, the first lines, and a
    sentence each (the original SDK shows a client the response as it came)."""
    if not published.fixes:
        return {}
    said: dict[str, Any] = {}
    warnings = []
    removed = published.fixes.get("privileged_removed", 0)
    if removed:
        said["privilegedRemoved"] = removed
        warnings.append(
            f"removed the privileged block from {removed} rows: the answer key is never stored"
        )
    left = {k: v for k, v in published.fixes.items() if k != "privileged_removed"}
    if left:
        said["leftOut"] = left
        said["leftOutLines"] = {k: published.lines[k] for k in left}
        for why, count in left.items():
            lines = ", ".join(map(str, published.lines[why]))
            warnings.append(f"left out {count} rows that {_LEFT_OUT[why]} (lines {lines})")
    said["warnings"] = warnings
    return said


_LEFT_OUT = {
    "quotes_privileged": "repeat their own answer key",
    "privileged_residue": "still name the privileged block where it cannot be removed",
}


def new_id(prefix: str) -> str:
    return f"{prefix}_{secrets.token_hex(8)}"


def datasets_of(account: str) -> str:
    """The key that serializes what decides an account's dataset writes (its quotas and
    its idempotency keys): `Conn.serialize(datasets_of(account))`."""
    return f"datasets of {account}"


class Storage:
    """A database and a blob store, shared by every account that lives there."""

    def __init__(
        self,
        root: Path | str,
        limits: Limits | None = None,
        policy: QuotaPolicy | None = None,
        *,
        database: str | None = None,
        blobs: BlobStore | None = None,
    ) -> None:
        self.root = Path(root).expanduser()
        self.limits = limits or Limits()
        self.policy = policy or QuotaPolicy()
        # Rows and key hashes live here: readable by the owner only.
        self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.db: Database = open_database(database, self.root)
        self.blobs: BlobStore = blobs or LocalBlobs(self.root / "datasets")
        self.datasets = DatasetFiles(self.blobs, self.limits, self.db.lock)
        self.traces = TraceTable(self)
        self.agents = AgentTable(self)
        self.runs = RunTable(self)
        self.catalog = Catalog(self)
        try:
            migrate(self.db.raw(), self.db.dialect, where=self.db.where)
        except ConfigError:
            self.close()
            raise
        except Exception as exc:  # sqlite3.DatabaseError, psycopg.Error: not our schema
            self.close()
            raise ConfigError(f"{self.db.where}: not a whileai store ({first_line(exc)})") from None

    @property
    def where(self) -> str:
        """What `whileai serve` says it serves: the database and where the bodies live."""
        return f"metadata {self.db.where}, bodies {self.blobs.location}"

    # --- the database ----------------------------------------------------------------

    def tx(self) -> AbstractContextManager[Conn]:
        return self.db.tx()

    def query(self, sql: str, args: Iterable[Any] = ()) -> list[Any]:
        return self.db.query(sql, args)

    def close(self) -> None:
        """Close every connection this storage opened, in every thread (at shutdown: a
        thread that queries afterwards would open a new one)."""
        self.db.close()

    # --- quotas --------------------------------------------------------------------

    def quotas_for(self, account: str) -> tuple[str, Quotas]:
        """The account's tier and its quotas (the server's default for an account without
        a tier, and for the embedded store's one account)."""
        found = self.query("SELECT tier FROM accounts WHERE id = ?", (account,))
        return self.policy.for_tier(found[0]["tier"] if found else None)

    def usage(self, account: str) -> dict[str, Any]:
        tier, limits = self.quotas_for(account)
        return quotas.report(self.db.conn(), account, tier, limits)

    # --- datasets ------------------------------------------------------------------

    @staticmethod
    def _record(row: Any) -> dict[str, Any]:
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
            "public": row["published_at"] is not None,
            "createdAt": iso(row["created_at"]),
            "finalizedAt": iso(row["finalized_at"]),
        }

    def _row(self, account: str, dataset_id: str) -> Any:
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
        _, limits = self.quotas_for(account)
        with self.tx() as db:
            db.serialize(datasets_of(account))  # the quota count and the idempotency key
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
            held, _ = quotas.stored(db, account)
            quotas.refuse_if_over(
                "max_datasets",
                limits,
                held,
                1,
                f"no room for another dataset: the account holds {held:,}"
                " (delete one with `whileai delete ID`, or `whileai purge`)",
            )
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

    def _byte_budget(self, account: str) -> tuple[int, str, str] | None:
        """The bytes an upload may still write under the account's quotas: (bytes, the
        quota that binds, what it says), or None when no byte quota is set."""
        _, limits = self.quotas_for(account)
        conn = self.db.conn()
        budgets: list[tuple[int, str, str]] = []
        if limits.max_stored_bytes is not None:
            _, size = quotas.stored(conn, account)
            budgets.append((limits.max_stored_bytes - size, "max_stored_bytes", "stored"))
        if limits.max_daily_bytes is not None:
            used = quotas.usage_today(conn, account)["bytes_pushed"]
            budgets.append((limits.max_daily_bytes - used, "max_daily_bytes", "pushed today"))
        return min(budgets) if budgets else None

    def upload(
        self,
        account: str,
        dataset_id: str,
        chunks: Iterable[bytes],
        declared: int | None = None,
    ) -> int:
        """Stream a body for a pending dataset (`declared`: the size a client announced, so
        one over the limit is refused before a byte is read). An upload over a quota is
        refused as soon as the bytes that pass it arrive, and takes its dataset with it."""
        row = self._row(account, dataset_id)
        if row["status"] == "ready":
            raise BadRequest(f"dataset {dataset_id} is already finalized")
        budget = self._byte_budget(account)

        def over_quota(size: int) -> StoreError:
            assert budget is not None
            left, name, what = budget
            _, limits = self.quotas_for(account)
            refusal = quotas.over(
                name,
                limits,
                getattr(limits, name) - left,
                size,
                f"dataset {dataset_id} refused: {quotas.shown(name, size)} or more would"
                f" pass the bytes the account may have {what}",
            )
            assert refusal is not None
            return refusal

        try:
            return self.datasets.write(
                dataset_id, chunks, declared, (budget[0], over_quota) if budget else None
            )
        except StoreError as exc:
            if getattr(exc, "limit", "") in quotas.NAMES:
                self._drop(account, dataset_id)
            raise

    def _drop(self, account: str, dataset_id: str) -> None:
        """Remove a pending dataset whose upload was refused: nothing of the push stays."""
        with self.tx() as db:
            db.execute(
                "DELETE FROM datasets WHERE id = ? AND account = ? AND status = 'pending'",
                (dataset_id, account),
            )
        self.datasets.remove(dataset_id)

    def finalize(self, account: str, dataset_id: str) -> dict[str, Any]:
        row = self._row(account, dataset_id)
        if row["status"] == "ready":
            return self._record(row)
        _, limits = self.quotas_for(account)
        with self.datasets.locked(dataset_id):
            row = self._row(account, dataset_id)
            if row["status"] == "ready":  # a concurrent finalize got there first
                return self._record(row)
            row_cap = None
            if limits.max_push_rows is not None:
                row_cap = (limits.max_push_rows, self._rows_refusal(dataset_id, limits))
            # Nothing uploaded yet is no refusal: the dataset stays pending for its upload.
            checking = self.datasets.take_part(dataset_id)
            try:
                published = self.datasets.check_and_publish(
                    dataset_id, checking, row_problem, row_cap, fix=_ship_line
                )
                if published.rows == 0 and published.fixes.keys() - {"privileged_removed"}:
                    raise BadRequest(
                        f"dataset {dataset_id} refused: every row was left out "
                        f"({'; '.join(_fixes_said(published)['warnings'])})"
                    )
                rows, size = published.rows, published.size
                with self.tx() as db:
                    db.serialize(datasets_of(account))
                    self._check_push(db, account, dataset_id, limits, rows, size)
                    db.execute(
                        "UPDATE datasets SET status = 'ready', rows = ?, bytes = ?,"
                        " finalized_at = ? WHERE id = ? AND account = ?",
                        (rows, size, time.time(), dataset_id, account),
                    )
                    quotas.add_usage(db, account, rows_pushed=rows, bytes_pushed=size)
            except StoreError:
                # A refused upload leaves nothing behind: no pending dataset, no body.
                self._drop(account, dataset_id)
                raise
        return {**self._record(self._row(account, dataset_id)), **_fixes_said(published)}

        return self._record(self._row(account, dataset_id))

    @staticmethod
    def _rows_refusal(dataset_id: str, limits: Quotas) -> Any:
        def refusal(rows: int) -> StoreError:
            found = quotas.over(
                "max_push_rows",
                limits,
                0,
                rows,
                f"dataset {dataset_id} refused: more than {limits.max_push_rows:,} rows in one"
                " push (split it into smaller pushes)",
            )
            assert found is not None
            return found

        return refusal

    @staticmethod
    def _check_push(
        db: Conn, account: str, dataset_id: str, limits: Quotas, rows: int, size: int
    ) -> None:
        """The quotas a finalized push counts toward, checked in the transaction that marks
        it ready (so concurrent pushes of one account cannot both squeeze under a cap)."""
        _, held = quotas.stored(db, account)
        day = quotas.usage_today(db, account)
        what = f"dataset {dataset_id} refused"
        quotas.refuse_if_over(
            "max_stored_bytes",
            limits,
            held,
            size,
            f"{what}: its {quotas.shown('max_stored_bytes', size)} would pass what the account"
            f" may store (it holds {quotas.shown('max_stored_bytes', held)}; delete a dataset)",
        )
        quotas.refuse_if_over(
            "max_daily_rows", limits, day["rows_pushed"], rows, f"{what}: {rows:,} rows"
        )
        quotas.refuse_if_over(
            "max_daily_bytes",
            limits,
            day["bytes_pushed"],
            size,
            f"{what}: {quotas.shown('max_daily_bytes', size)}",
        )

    def list_datasets(self, account: str, status: str = "ready") -> list[dict[str, Any]]:
        found = self.query(
            "SELECT * FROM datasets WHERE account = ? AND status = ? ORDER BY created_at, id",
            (account, check_status(status)),
        )
        return [self._record(r) for r in found]

    def get_dataset(self, account: str, dataset_id: str) -> dict[str, Any]:
        return self._record(self._row(account, dataset_id))

    def _ready(self, account: str, dataset_id: str) -> None:
        if self._row(account, dataset_id)["status"] != "ready":
            raise BadRequest(f"dataset {dataset_id} is not finalized")

    def read_chunks(self, account: str, dataset_id: str) -> Iterator[bytes]:
        self._ready(account, dataset_id)
        return self.datasets.read_chunks(dataset_id)

    def direct_link(self, account: str, dataset_id: str, ttl: float) -> str | None:
        """A link to a finalized body that needs neither key nor server (a presigned URL
        when the bodies are in S3), or None when only the server can serve it."""
        self._ready(account, dataset_id)
        return self.datasets.link(dataset_id, ttl)

    def iter_rows(self, account: str, dataset_id: str) -> Iterator[dict[str, Any]]:
        self._ready(account, dataset_id)
        with self.datasets.open(dataset_id) as fh:
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

    # --- rows the tables delete ------------------------------------------------------

    def delete_one(self, what: str, sql: str, account: str, key: str) -> None:
        """Delete one account's row by `sql` (an agent, a trace), so that a key the
        account does not have is a NotFound however the table names it."""
        with self.tx() as db:
            gone = db.execute(sql, (account, key)).rowcount
        if not gone:
            raise NotFound(f"{what} {key} not found")
