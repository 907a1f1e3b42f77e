"""Training-run records: a run, the points its trainer logs, how it finished.

The contract is the original SDK's plain HTTP one (`POST /runs`, `/runs/{id}/log`,
`/runs/{id}/finish`, `GET /runs/{id}`), and these are its checks and its storage, shared
by the embedded store and `whileai serve`. A run's points keep their arrival order
(`seq`), so `series` reads back oldest first however the batches interleave; each batch
is written in one transaction, so a batch is stored whole or not at all, and two loggers
never get the same `seq`.

Finishing is also how a summary grows after the run: the SDK re-sends `/finish` on a
finished run with the summary it holds (a note, a holdout, a delta report), so a finish
of a finished run merges its summary into the stored one and takes the status it names;
`finishedAt` stays the first finish's.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

from ..metrics.verdict import HOLDOUT_KEYS, run_holdout
from .agents import iso
from .base import BadRequest, NotFound
from .limits import refuse

if TYPE_CHECKING:
    from .local import Storage
    from .sql import Conn

RUN_STATUSES = ("running", "done", "failed", "stopped")
FINISH_STATUSES = RUN_STATUSES[1:]
MAX_METRIC_NAME = 64
MAX_ERROR_CHARS = 2000
MAX_RUN_PAGE = 500


@dataclass(frozen=True)
class NewRun:
    """What `POST /runs` carries (the SDK's snake_case names)."""

    name: str
    dataset_id: str | None = None
    after_dataset_id: str | None = None
    base_model: str | None = None
    trainer: str | None = None
    total_steps: int | None = None
    config: dict[str, Any] | None = None

    @classmethod
    def from_wire(cls, body: Mapping[str, Any]) -> NewRun:
        def text(key: str) -> str | None:
            value = body.get(key)
            if value is not None and not isinstance(value, str):
                raise BadRequest(f"{key} must be a string")
            return value or None

        config = body.get("config")
        if config is not None and not isinstance(config, dict):
            raise BadRequest("config must be a JSON object")
        name = text("name")
        if not name or not name.strip():
            raise BadRequest("a run needs a name")
        return cls(
            name=name.strip(),
            dataset_id=text("dataset_id"),
            after_dataset_id=text("after_dataset_id"),
            base_model=text("base_model"),
            trainer=text("trainer"),
            total_steps=_steps(body.get("total_steps"), "total_steps"),
            config=config,
        )

    def wire(self) -> dict[str, Any]:
        body = {
            "name": self.name,
            "dataset_id": self.dataset_id,
            "after_dataset_id": self.after_dataset_id,
            "base_model": self.base_model,
            "trainer": self.trainer,
            "total_steps": self.total_steps,
            "config": self.config,
        }
        return {k: v for k, v in body.items() if v is not None}


def _steps(value: Any, what: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise BadRequest(f"{what} must be a whole number of steps, got {value!r}")
    return value or None


def _finite(value: Any) -> bool:
    """A JSON number that is one: not a bool, not NaN or infinity."""
    return not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)


def check_points(points: Any, max_points: int) -> list[dict[str, Any]]:
    """A batch of points: each `{"step": int, "ts"?: seconds, <metric>: number, ...}`. A
    metric that is not a finite number is refused with the point's index, not dropped:
    a curve with silent holes reads as a trainer that stalled."""
    if not isinstance(points, list):
        raise BadRequest("points must be a list of {step, <metric>: number} objects")
    if len(points) > max_points:
        raise refuse("max_run_points", f"{len(points):,} points in one batch", max_points)
    clean: list[dict[str, Any]] = []
    for i, point in enumerate(points):
        where = f"points[{i}]"
        if not isinstance(point, dict):
            raise BadRequest(f"{where} must be an object")
        step = point.get("step")
        if isinstance(step, bool) or not isinstance(step, int) or step < 0:
            raise BadRequest(f"{where}.step must be a whole number >= 0, got {step!r}")
        ts = point.get("ts")
        if ts is not None and (isinstance(ts, bool) or not isinstance(ts, (int, float))):
            raise BadRequest(f"{where}.ts must be unix seconds")
        metrics: dict[str, float] = {}
        for key, value in point.items():
            if key in ("step", "ts"):
                continue
            if len(key) > MAX_METRIC_NAME or not key:
                raise BadRequest(f"{where}: a metric name is 1 to {MAX_METRIC_NAME} characters")
            if value is None:
                continue
            if not _finite(value):
                raise BadRequest(f"{where}.{key} must be a finite number, got {value!r}")
            metrics[key] = float(value)
        clean.append({"step": step, "ts": float(ts) if ts is not None else None, **metrics})
    return clean


def check_summary(summary: Any) -> dict[str, Any]:
    if summary is None:
        return {}
    if not isinstance(summary, dict):
        raise BadRequest("summary must be a JSON object")
    for metric, keys in HOLDOUT_KEYS.items():
        for key in keys:
            value = summary.get(key)
            if value is None:
                continue
            if not _finite(value):
                raise BadRequest(f"summary.{key} must be a number, got {value!r}")
            if metric == "pass" and not 0 <= value <= 1:
                raise BadRequest(f"summary.{key} is a pass rate from 0 to 1 (58% is 0.58)")
    return summary


def liveness(status: str, updated_at: float | None, now: float | None = None) -> str | None:
    """How a running run's trainer is doing, from when it last said anything (a batch of
    points, or the empty batch a handle sends as its heartbeat): `live`, `stale` past
    WHILEAI_RUN_STALE_SECONDS, `crashed` past WHILEAI_RUN_CRASHED_SECONDS. A run that
    finished has none: its status says how it ended. The stored status is never changed
    by this, so a trainer that comes back is live again."""
    if status != "running" or updated_at is None:
        return None
    from ..settings import run_heartbeat_limits

    stale, crashed = run_heartbeat_limits()
    silent = (time.time() if now is None else now) - float(updated_at)
    return "crashed" if silent >= crashed else "stale" if silent >= stale else "live"


def holdout_from_delta(report: Mapping[str, Any]) -> dict[str, float]:
    """The holdout pass rate before and after, read off a delta report's pass@1."""
    metric = (report.get("metrics") or {}).get("pass_at_1") or {}
    before, after = metric.get("mean_a"), metric.get("mean_b")
    numbers = [float(v) for v in (before, after) if isinstance(v, (int, float)) and 0 <= v <= 1]
    if len(numbers) != 2:
        return {}
    return dict(zip(HOLDOUT_KEYS["pass"], numbers, strict=True))


def _summary_in(db: Conn, account: str, run_id: str) -> dict[str, Any]:
    """A run's stored summary, read inside the caller's write (so a merge is atomic)."""
    row = db.execute(
        "SELECT summary FROM runs WHERE account = ? AND id = ? FOR UPDATE", (account, run_id)
    ).fetchone()
    if row is None:
        raise NotFound(f"run {run_id} not found")
    return dict(orjson.loads(row["summary"])) if row["summary"] else {}


class RunTable:
    def __init__(self, storage: Storage) -> None:
        self.storage = storage

    def _row(self, account: str, run_id: str) -> Any:
        found = self.storage.query(
            "SELECT * FROM runs WHERE account = ? AND id = ?", (account, run_id)
        )
        if not found:
            raise NotFound(f"run {run_id} not found")
        return found[0]

    @staticmethod
    def _record(row: Any) -> dict[str, Any]:
        summary = orjson.loads(row["summary"]) if row["summary"] else {}
        return {
            "runId": row["id"],
            "name": row["name"],
            "datasetId": row["dataset_id"],
            "afterDatasetId": row["after_dataset_id"],
            "baseModel": row["base_model"],
            "trainer": row["trainer"],
            "status": row["status"],
            "step": row["step"],
            "totalSteps": row["total_steps"],
            "points": row["points"],
            "config": orjson.loads(row["config"]) if row["config"] else None,
            "summary": summary,
            "adapter": row["adapter"],
            "error": row["error"],
            "holdout": run_holdout(summary),
            "createdAt": iso(row["created_at"]),
            "updatedAt": iso(row["updated_at"]),
            "liveness": liveness(row["status"], row["updated_at"]),
            "finishedAt": iso(row["finished_at"]),
        }

    def create(self, account: str, spec: NewRun) -> dict[str, Any]:
        from .local import new_id

        if not spec.name.strip():
            raise BadRequest("a run needs a name")
        for dataset in (spec.dataset_id, spec.after_dataset_id):
            if dataset is not None:
                self.storage.get_dataset(account, dataset)  # another account's: 404
        run_id, now = new_id("run"), time.time()
        with self.storage.tx() as db:
            db.execute(
                "INSERT INTO runs (id, account, name, dataset_id, after_dataset_id, base_model,"
                " trainer, total_steps, config, created_at, updated_at)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (
                    run_id,
                    account,
                    spec.name,
                    spec.dataset_id,
                    spec.after_dataset_id,
                    spec.base_model,
                    spec.trainer,
                    spec.total_steps,
                    orjson.dumps(spec.config).decode() if spec.config is not None else None,
                    now,
                    now,
                ),
            )
        return self._record(self._row(account, run_id))

    def log(
        self, account: str, run_id: str, points: Any, total_steps: Any = None
    ) -> dict[str, Any]:
        clean = check_points(points, self.storage.limits.max_run_points)
        total = _steps(total_steps, "total_steps")
        with self.storage.tx() as db:
            row = db.execute(
                "SELECT points, step FROM runs WHERE account = ? AND id = ? FOR UPDATE",
                (account, run_id),
            ).fetchone()
            if row is None:
                raise NotFound(f"run {run_id} not found")
            first = int(row["points"])
            db.executemany(
                "INSERT INTO run_points (run_id, seq, step, ts, metrics) VALUES (?,?,?,?,?)",
                [
                    (
                        run_id,
                        first + i,
                        p["step"],
                        p["ts"],
                        orjson.dumps(
                            {k: v for k, v in p.items() if k not in ("step", "ts")}
                        ).decode(),
                    )
                    for i, p in enumerate(clean)
                ],
            )
            step = max([int(row["step"]), *(p["step"] for p in clean)])
            db.execute(
                "UPDATE runs SET points = ?, step = ?, total_steps = COALESCE(?, total_steps),"
                " updated_at = ? WHERE id = ?",
                (first + len(clean), step, total, time.time(), run_id),
            )
        return {"runId": run_id, "accepted": len(clean), "points": first + len(clean)}

    def finish(
        self,
        account: str,
        run_id: str,
        status: Any,
        summary: Any = None,
        adapter: Any = None,
        error: Any = None,
    ) -> dict[str, Any]:
        if status not in FINISH_STATUSES:
            raise BadRequest(f"status must be one of {', '.join(FINISH_STATUSES)}, got {status!r}")
        added = check_summary(summary)
        for key, value in (("adapter", adapter), ("error", error)):
            if value is not None and not isinstance(value, str):
                raise BadRequest(f"{key} must be a string")
        now = time.time()
        with self.storage.tx() as db:
            merged = {**_summary_in(db, account, run_id), **added}
            db.execute(
                "UPDATE runs SET status = ?, summary = ?, adapter = COALESCE(?, adapter),"
                " error = COALESCE(?, error), updated_at = ?,"
                " finished_at = COALESCE(finished_at, ?) WHERE id = ?",
                (
                    status,
                    orjson.dumps(merged).decode(),
                    adapter,
                    error[:MAX_ERROR_CHARS] if error else None,
                    now,
                    now,
                    run_id,
                ),
            )
        return self._record(self._row(account, run_id))

    def attach_delta(self, account: str, run_id: str, report: Any) -> dict[str, Any]:
        """Put a delta report on a run (`summary.delta`), with the holdout pass rates it
        measured filled in where the run has none; the status is left as it is."""
        if not isinstance(report, dict) or not isinstance(report.get("metrics"), dict):
            raise BadRequest("a delta report is an object with its `metrics`")
        with self.storage.tx() as db:
            summary = _summary_in(db, account, run_id)
            summary["delta"] = report
            for key, value in holdout_from_delta(report).items():
                summary.setdefault(key, value)
            db.execute(
                "UPDATE runs SET summary = ?, updated_at = ? WHERE id = ?",
                (orjson.dumps(summary).decode(), time.time(), run_id),
            )
        return self._record(self._row(account, run_id))

    def get(self, account: str, run_id: str) -> dict[str, Any]:
        record = self._record(self._row(account, run_id))
        points = self.storage.query(
            "SELECT step, ts, metrics FROM run_points WHERE run_id = ? ORDER BY seq", (run_id,)
        )
        record["series"] = [
            {
                "step": p["step"],
                **({"ts": p["ts"]} if p["ts"] is not None else {}),
                **orjson.loads(p["metrics"]),
            }
            for p in points
        ]
        return record

    def list(self, account: str, limit: int = MAX_RUN_PAGE) -> list[dict[str, Any]]:
        found = self.storage.query(
            "SELECT * FROM runs WHERE account = ? ORDER BY created_at DESC, id LIMIT ?",
            (account, limit),
        )
        return [self._record(r) for r in found]

    def delete(self, account: str, run_id: str) -> None:
        self._row(account, run_id)
        with self.storage.tx() as db:
            db.execute("DELETE FROM run_points WHERE run_id = ?", (run_id,))
            db.execute("DELETE FROM runs WHERE id = ? AND account = ?", (run_id, account))
