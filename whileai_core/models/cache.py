"""A SQLite cache of completions, so a re-run or a resumed run does not pay twice.

The key is a SHA-256 over the endpoint, the exact request body (model, messages, tools,
sampling) and a salt the caller adds when identical bodies must still get separate
answers — the agent salts with the rollout's identity, so the eight repeats of one
phrasing in an rl group stay eight samples while a re-run of the same rollout hits.
The file lives at `WHILEAI_HOME/cache/models.sqlite3`; `whileai cache stats|clear`.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import orjson

from ..errors import UnreadableCache
from ..settings import home

_SCHEMA = """
CREATE TABLE IF NOT EXISTS completions (
    key TEXT PRIMARY KEY,
    endpoint TEXT NOT NULL,
    model TEXT NOT NULL,
    response BLOB NOT NULL,
    created REAL NOT NULL,
    hits INTEGER NOT NULL DEFAULT 0
)
"""


def default_cache_path() -> Path:
    return home() / "cache" / "models.sqlite3"


@dataclass
class CacheStats:
    path: str
    entries: int
    bytes: int
    hits: int
    models: dict[str, int]

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class ModelCache:
    """Completions by request hash. Safe to share between the agent, writer and judge
    clients of one process; WAL mode lets two runs use the same file."""

    def __init__(self, path: Path | str | None = None) -> None:
        self.path = Path(path) if path is not None else default_cache_path()
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, check_same_thread=False, timeout=30)
            try:
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")
                conn.execute(_SCHEMA)
                conn.commit()
            except sqlite3.DatabaseError as exc:
                conn.close()
                raise UnreadableCache(
                    f"{self.path}: not a model cache ({exc}); `whileai cache clear` removes it"
                ) from None
            self._conn = conn
        return self._conn

    @staticmethod
    def key(endpoint: str, body: dict[str, Any], *, salt: str | None = None) -> str:
        blob = orjson.dumps(
            {"endpoint": endpoint, "body": body, "salt": salt}, option=orjson.OPT_SORT_KEYS
        )
        return hashlib.sha256(blob).hexdigest()

    def get(self, key: str) -> Any | None:
        with self._lock:
            db = self._db()
            row = db.execute("SELECT response FROM completions WHERE key = ?", (key,)).fetchone()
            if row is None:
                return None
            db.execute("UPDATE completions SET hits = hits + 1 WHERE key = ?", (key,))
            db.commit()
        try:
            return orjson.loads(row[0])
        except orjson.JSONDecodeError:
            return None

    def put(self, key: str, endpoint: str, model: str, response: Any) -> None:
        with self._lock:
            db = self._db()
            db.execute(
                "INSERT OR REPLACE INTO completions (key, endpoint, model, response, created)"
                " VALUES (?, ?, ?, ?, ?)",
                (key, endpoint, model, orjson.dumps(response), time.time()),
            )
            db.commit()

    def stats(self) -> CacheStats:
        """Counts without creating the file when there is none yet."""
        if not self.path.exists():
            return CacheStats(str(self.path), 0, 0, 0, {})
        with self._lock:
            db = self._db()
            entries, hits = db.execute(
                "SELECT COUNT(*), COALESCE(SUM(hits), 0) FROM completions"
            ).fetchone()
            models = dict(
                db.execute(
                    "SELECT model, COUNT(*) FROM completions GROUP BY model ORDER BY model"
                ).fetchall()
            )
        size = sum(p.stat().st_size for p in self.path.parent.glob(self.path.name + "*"))
        return CacheStats(str(self.path), int(entries), size, int(hits), models)

    def clear(self) -> int:
        """Delete every entry; returns how many there were. A file that is not a cache at
        all is removed (nothing in it could be read back anyway)."""
        if not self.path.exists():
            return 0
        with self._lock:
            try:
                db = self._db()
            except UnreadableCache:
                for part in self.path.parent.glob(self.path.name + "*"):
                    part.unlink(missing_ok=True)
                return 0
            (count,) = db.execute("SELECT COUNT(*) FROM completions").fetchone()
            db.execute("DELETE FROM completions")
            db.commit()
            db.execute("VACUUM")
        return int(count)

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
