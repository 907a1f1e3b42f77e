"""`training_run(...)`: the handle a trainer logs into, over any `Store`.

The trainer's loop must never wait on, or die of, the dashboard. So `log` only appends to
a buffer; a sender thread ships the buffer in batches (every `flush_every` points or
`flush_seconds`, at most `max_batch` a request) and a batch that fails to send stays in
the buffer for the next flush, counted in `errors`, with one warning. `finish` sends what
is left and the status, and a handle used as a context manager finishes itself: `done`,
or `failed` with the exception when the block raises.

After `finish` the run can still grow: `note`, `holdout` and `attach_delta` send the
summary again (a finish of a finished run merges it), as the original SDK does.
"""

from __future__ import annotations

import logging
import math
import threading
import time
import warnings
from collections.abc import Mapping
from types import TracebackType
from typing import Any

from ..errors import ConfigError
from ..metrics.verdict import HOLDOUT_KEYS
from ..store.base import Store
from ..store.runs import MAX_ERROR_CHARS, NewRun

log = logging.getLogger("whileai.runs")

FLUSH_EVERY = 25
FLUSH_SECONDS = 15.0
# With nothing to send for this long, the sender sends an empty batch: the heartbeat that
# keeps a slow step (or a long evaluation) reading as live, not stale (store.runs.liveness).
HEARTBEAT_SECONDS = 30.0
MAX_BATCH = 500
# Points kept while the store cannot be reached; past this the oldest are dropped (and
# counted), so a dead server cannot grow a trainer's memory without end.
MAX_BUFFER = 1_000_000


def _finite(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def holdout_fields(before: float, after: float, metric: str = "pass") -> dict[str, float]:
    """The summary keys for a holdout before and after; a pass rate is 0 to 1."""
    if metric not in HOLDOUT_KEYS:
        raise ConfigError(f"metric must be 'pass' (a pass rate) or 'loss', not {metric!r}")
    fields: dict[str, float] = {}
    pairs = zip(HOLDOUT_KEYS[metric], ("before", "after"), (before, after), strict=True)
    for key, side, value in pairs:
        number = _finite(value)
        if number is None:
            raise ConfigError(f"{side} must be a finite number, got {value!r}")
        if metric == "pass" and not 0 <= number <= 1:
            raise ConfigError(f"{side}={value!r}: a pass rate is 0 to 1 (58% is 0.58)")
        fields[key] = number
    return fields


class TrainingRun:
    """One run's handle. Thread-safe: a callback and a loop may log into the same run."""

    def __init__(
        self,
        store: Store,
        record: Mapping[str, Any],
        *,
        flush_every: int = FLUSH_EVERY,
        flush_seconds: float = FLUSH_SECONDS,
        max_batch: int = MAX_BATCH,
        owns_store: bool = False,
        heartbeat_seconds: float = HEARTBEAT_SECONDS,
    ) -> None:
        self.store = store
        self.run_id = str(record["runId"])
        self.name = str(record.get("name") or "")
        self.status = str(record.get("status") or "running")
        self.total_steps: int | None = record.get("totalSteps")
        self.step = int(record.get("step") or 0)
        self.errors = 0  # failed sends (each retried on the next flush)
        self.sent = 0  # points the store has taken
        self.dropped = 0  # points never sent: not numbers, or past MAX_BUFFER
        self._flush_every = max(1, int(flush_every))
        self._flush_seconds = float(flush_seconds)
        self._max_batch = max(1, min(int(max_batch), MAX_BATCH))
        self._owns_store = owns_store
        self._buffer: list[dict[str, Any]] = []
        self._pending_total: int | None = None
        self._summary: dict[str, Any] = {}
        self._lock = threading.Lock()  # the buffer
        self._sending = threading.Lock()  # one batch in flight at a time: no point twice
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._sender: threading.Thread | None = None
        self._last_flush = time.monotonic()
        self._heartbeat = max(0.05, float(heartbeat_seconds))
        self._warned = False

    def __repr__(self) -> str:
        return f"TrainingRun({self.run_id!r}, {self.name!r}, status={self.status!r})"

    @property
    def id(self) -> str:
        return self.run_id

    # --- logging -----------------------------------------------------------------------

    def log(self, step: int, **metrics: Any) -> None:
        """One point: every finite number given is a metric (`loss`, `lr`, `eval_loss`,
        `reward`, `kl`, ...); anything else is left out and counted in `dropped`."""
        point: dict[str, Any] = {"step": max(0, int(step)), "ts": time.time()}
        for key, value in metrics.items():
            number = _finite(value)
            if number is None:
                self.dropped += value is not None
                continue
            point[str(key)[:64]] = number
        with self._lock:
            self._buffer.append(point)
            if len(self._buffer) > MAX_BUFFER:
                del self._buffer[0]
                self.dropped += 1
            self.step = max(self.step, point["step"])
            due = (
                len(self._buffer) >= self._flush_every
                or time.monotonic() - self._last_flush >= self._flush_seconds
            )
        if due:
            self._kick()

    def progress(self, step: int, total_steps: int | None = None) -> None:
        """Move the bar without a metric; `total_steps` (re)sets its length."""
        if total_steps:
            with self._lock:
                self.total_steps = self._pending_total = int(total_steps)
        self.log(step)

    def _kick(self) -> None:
        if self._sender is None or not self._sender.is_alive():
            self._sender = threading.Thread(
                target=self._send_loop, name=f"whileai-run-{self.run_id}", daemon=True
            )
            self._sender.start()
        self._wake.set()

    def _send_loop(self) -> None:
        while not self._stop.is_set():
            self._wake.wait(min(self._flush_seconds, self._heartbeat))
            self._wake.clear()
            if self._stop.is_set():
                return
            self.flush()

    def flush(self) -> bool:
        """Send what is buffered, now; True when nothing is left unsent. Never raises: a
        failed batch stays buffered for the next flush."""
        with self._sending:
            while True:
                with self._lock:
                    batch = self._buffer[: self._max_batch]
                    total = self._pending_total
                beat = time.monotonic() - self._last_flush >= self._heartbeat
                if not batch and total is None and not (beat and self.status == "running"):
                    return True
                try:
                    self.store.log_run(self.run_id, batch, total)
                except Exception as exc:  # the dashboard must never stop the trainer
                    self.errors += 1
                    if not self._warned:
                        self._warned = True
                        warnings.warn(
                            f"training run {self.run_id}: could not send {len(batch)} points"
                            f" ({exc}); they are kept and sent on the next flush",
                            stacklevel=2,
                        )
                    log.debug("run %s: send failed: %s", self.run_id, exc)
                    return False
                with self._lock:
                    del self._buffer[: len(batch)]
                    if self._pending_total == total:
                        self._pending_total = None
                    self._last_flush = time.monotonic()
                self.sent += len(batch)
                if not batch:
                    return True

    @property
    def unsent(self) -> int:
        with self._lock:
            return len(self._buffer)

    # --- the summary ---------------------------------------------------------------------

    def note(self, **fields: Any) -> None:
        """Fields for the run's summary: sent with `finish`, or at once once finished."""
        self._summary.update(fields)
        if self.status != "running":
            self._resend()

    def holdout(self, before: float, after: float, *, metric: str = "pass") -> dict[str, float]:
        """The held-out number before and after training, the run's one word: a pass rate
        (0 to 1, higher is better) or, with `metric="loss"`, a held-out loss."""
        fields = holdout_fields(before, after, metric)
        self.note(**fields)
        return fields

    def attach_delta(self, report: Mapping[str, Any]) -> dict[str, Any]:
        """Put a before/after delta report on the run (its page draws the table)."""
        return self.store.attach_delta(self.run_id, dict(report))

    def _resend(self) -> None:
        try:
            self.store.finish_run(self.run_id, self.status, dict(self._summary))
        except Exception as exc:
            self.errors += 1
            warnings.warn(
                f"training run {self.run_id}: could not send its summary ({exc})", stacklevel=3
            )

    # --- the end ---------------------------------------------------------------------------

    def finish(
        self,
        status: str = "done",
        *,
        summary: Mapping[str, Any] | None = None,
        adapter: str | None = None,
        error: str | None = None,
    ) -> dict[str, Any]:
        """Send every buffered point, then the status (`done`, `failed` or `stopped`)."""
        self._stop.set()
        self._wake.set()
        self.flush()
        self._summary.update(summary or {})
        try:
            record = self.store.finish_run(
                self.run_id,
                status,
                dict(self._summary) or None,
                adapter,
                error[:MAX_ERROR_CHARS] if error else None,
            )
        except Exception as exc:
            self.errors += 1
            warnings.warn(f"training run {self.run_id}: could not finish ({exc})", stacklevel=2)
            record = {"runId": self.run_id, "status": status, "unsent": True}
        self.status = status
        if self.unsent:
            record["unsentPoints"] = self.unsent
        return record

    def fail(self, error: str) -> dict[str, Any]:
        return self.finish("failed", error=error)

    def close(self) -> None:
        """Stop the sender (sending what it can) and close a store the handle opened."""
        self._stop.set()
        self._wake.set()
        self.flush()
        if self._owns_store:
            self.store.close()

    def __enter__(self) -> TrainingRun:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self.status != "running":
            return
        if exc is not None and exc_type is not None:
            self.finish("failed", error=f"{exc_type.__name__}: {exc}")
        else:
            self.finish("done")


def training_run(
    name: str,
    *,
    dataset: str | None = None,
    after_dataset: str | None = None,
    base_model: str | None = None,
    trainer: str | None = None,
    total_steps: int | None = None,
    config: Mapping[str, Any] | None = None,
    store: Store | None = None,
    api_key: str | None = None,
    flush_every: int = FLUSH_EVERY,
    flush_seconds: float = FLUSH_SECONDS,
    max_batch: int = MAX_BATCH,
    heartbeat_seconds: float = HEARTBEAT_SECONDS,
) -> TrainingRun:
    """Create a run and return its handle. `store` defaults to `open_store(api_key)`: the
    server at WHILEAI_API_URL, else the embedded store. Creating the run is the one call
    that raises (a wrong key, an unknown dataset): better at the start than silently never."""
    from ..store import open_store

    owned = store is None
    target = store if store is not None else open_store(api_key)
    spec = NewRun(
        name=name,
        dataset_id=dataset,
        after_dataset_id=after_dataset,
        base_model=base_model,
        trainer=trainer,
        total_steps=int(total_steps) if total_steps else None,
        config=dict(config) if config else None,
    )
    try:
        record = target.create_run(spec)
    except BaseException:
        if owned:
            target.close()
        raise
    run = TrainingRun(
        target,
        record,
        flush_every=flush_every,
        flush_seconds=flush_seconds,
        max_batch=max_batch,
        owns_store=owned,
        heartbeat_seconds=heartbeat_seconds,
    )
    run._kick()  # the sender is the heartbeat too: it runs from the start
    return run
