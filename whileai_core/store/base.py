"""The `Store` protocol: everything the platform commands need, whichever store answers.

Two implementations honour it: the embedded store (`local.py`, SQLite plus row files
under WHILEAI_HOME; under `whileai serve`, the same code over PostgreSQL and an S3 bucket
when told to) and the HTTP client (`http.py`, a `whileai serve` or any server that
speaks the original SDK's wire format). Records cross this boundary as the wire's own
camelCase dicts (`datasetId`, `parentDatasetId`, ...), so the embedded store and the
server hand the CLI byte-for-byte the same shapes.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from ..errors import (  # noqa: F401  (re-exported: the store's errors live in errors.py)
    BadRequest,
    ConfigError,
    Conflict,
    Forbidden,
    Gone,
    NotFound,
    StoreError,
    TooLarge,
    TooManyRequests,
    TooSlow,
    Unauthorized,
    WhileaiError,
)

if TYPE_CHECKING:
    from .runs import NewRun

PURPOSES: tuple[str, ...] = ("train", "holdout", "eval")
Purpose = Literal["train", "holdout", "eval"]
# Fields `POST /datasets/{id}/meta` may change; everything else is set by the store.
META_FIELDS: tuple[str, ...] = ("name", "purpose", "mode", "agent", "description")
TRACE_PAGE_SIZE = 100
# The OTLP signals the store takes: spans (/v1/traces) and log records (/v1/logs), which
# GenAI instrumentations send their message events as.
Signal = Literal["traces", "logs"]
# A dataset created but not finalized this long after is abandoned: the signed upload link
# `whileai serve` hands out expires after as long, so nothing can complete it any more.
# `purge` removes such datasets; the storage sweeps the files a killed upload left.
STALE_UPLOAD_SECONDS = 3600.0
DATASET_STATUSES: tuple[str, ...] = ("ready", "pending")


ERRORS_BY_STATUS: dict[int, type[StoreError]] = {
    cls.status: cls
    for cls in (
        BadRequest,
        Unauthorized,
        NotFound,
        Conflict,
        Gone,
        TooSlow,
        TooLarge,
        TooManyRequests,
    )
}
ERRORS_BY_STATUS[403] = Unauthorized  # a refused key or link: the CLI says "check your key"


@dataclass(frozen=True)
class NewDataset:
    """What `POST /datasets` carries. `idempotency_key` makes a retried push land on the
    dataset the first attempt created instead of a duplicate."""

    name: str
    purpose: str = "train"
    mode: str | None = None
    agent: str | None = None
    description: str | None = None
    parent: str | None = None
    idempotency_key: str | None = None

    def wire(self) -> dict[str, Any]:
        body: dict[str, Any] = {"name": self.name, "purpose": self.purpose}
        optional = {
            "mode": self.mode,
            "agent": self.agent,
            "description": self.description,
            "parentDatasetId": self.parent,
            "idempotencyKey": self.idempotency_key,
        }
        body.update({k: v for k, v in optional.items() if v is not None})
        return body


def _one_of(what: str, value: str, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise BadRequest(f"{what} must be one of {', '.join(allowed)}, got {value!r}")
    return value


def check_purpose(purpose: str) -> str:
    return _one_of("purpose", purpose, PURPOSES)


def check_status(status: str) -> str:
    return _one_of("status", status, DATASET_STATUSES)


def check_score(value: float, name: str) -> float:
    """A verdict is a finite number with a name: NaN or infinity would be stored as null and
    read back as an ungraded run."""
    if not name:
        raise BadRequest("a score needs a name")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise BadRequest(f"a score must be a finite number, got {value!r}")
    return float(value)


@runtime_checkable
class Store(Protocol):
    """The platform as the CLI sees it. Every method raises a `StoreError` subclass on refusal."""

    kind: str  # "embedded" or "server"
    location: str  # a directory or a base URL, for `whileai status`

    # datasets
    def create_dataset(self, spec: NewDataset) -> dict[str, Any]:
        """A new pending dataset, or the one an earlier attempt with the same idempotency key
        made (`existing: true` when that one is already finalized)."""
        ...

    def upload(self, dataset_id: str, chunks: Iterable[bytes], size: int | None = None) -> int:
        """Stream the JSONL body of a pending dataset; returns bytes sent. `size`, when the
        caller knows it, lets a body over the store's limit be refused before it is sent."""
        ...

    def finalize(self, dataset_id: str) -> dict[str, Any]:
        """Validate every uploaded line and make the dataset visible; a bad line names its
        line number and leaves the dataset pending."""
        ...

    def list_datasets(self, status: str = "ready") -> list[dict[str, Any]]:
        """Finalized datasets, or with `status="pending"` the ones created and not finalized
        (an upload in flight, or one a killed push abandoned)."""
        ...

    def get_dataset(self, dataset_id: str) -> dict[str, Any]: ...

    def download(self, dataset_id: str) -> Iterator[bytes]:
        """The dataset's JSONL in chunks, streamed."""
        ...

    def delete_dataset(self, dataset_id: str) -> None: ...

    def update_meta(self, dataset_id: str, fields: dict[str, Any]) -> dict[str, Any]: ...

    def preview(self, dataset_id: str, n: int = 3) -> dict[str, Any]: ...

    def profile(self, dataset_id: str) -> dict[str, Any]: ...

    # agents
    def list_agents(self) -> list[dict[str, Any]]: ...

    def create_agent(
        self, slug: str, description: str | None = None, spec: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """Create or update an agent; `spec` holds what it is (`tools`, `system_prompt`)."""
        ...

    def delete_agent(self, slug: str) -> None: ...

    # traces
    def ingest_otlp(
        self,
        body: bytes | IO[bytes],
        content_type: str,
        content_encoding: str | None = None,
        signal: Signal = "traces",
    ) -> dict[str, Any]:
        """OTLP/HTTP export request body (protobuf or JSON, optionally gzip) -> traces; a
        file object is read a chunk at a time. `signal="logs"` takes a logs export (what
        /v1/logs receives) and joins its records to their traces."""
        ...

    def list_traces(
        self,
        agent: str | None = None,
        page: int = 1,
        since: float | None = None,
        limit: int = TRACE_PAGE_SIZE,
    ) -> dict[str, Any]:
        """`{traces: [...], page, pages, total, nextPage}`, newest first, `limit` a page."""
        ...

    def get_trace(self, trace_id: str) -> dict[str, Any]:
        """One trace's row: its turns, tool calls and scores (an id, or 8+ hex digits of one)."""
        ...

    def delete_trace(self, trace_id: str) -> None: ...

    def score_trace(self, trace_id: str, value: float, name: str = "score") -> dict[str, Any]:
        """Record a verdict that arrived after the run; the same name again corrects it."""
        ...

    # training runs
    def create_run(self, spec: NewRun) -> dict[str, Any]:
        """A new run, `running`, with no points yet."""
        ...

    def log_run(
        self, run_id: str, points: list[dict[str, Any]], total_steps: int | None = None
    ) -> dict[str, Any]:
        """Append a batch of points (stored whole or not at all)."""
        ...

    def finish_run(
        self,
        run_id: str,
        status: str,
        summary: dict[str, Any] | None = None,
        adapter: str | None = None,
        error: str | None = None,
    ) -> dict[str, Any]:
        """Set the run's status; a summary is merged into the one it has (a finished run
        can be finished again to add to it)."""
        ...

    def attach_delta(self, run_id: str, report: dict[str, Any]) -> dict[str, Any]:
        """Put a delta report on the run (`summary.delta`)."""
        ...

    def get_run(self, run_id: str) -> dict[str, Any]:
        """The run with `series`, its points oldest first."""
        ...

    def list_runs(self) -> list[dict[str, Any]]: ...

    def delete_run(self, run_id: str) -> None: ...

    # public cards
    def publish(
        self, dataset_id: str, agent: str, description: str | None = None
    ) -> dict[str, Any]:
        """Make a finalized dataset with rows a public card under `agent`."""
        ...

    def unpublish(self, dataset_id: str) -> dict[str, Any]: ...

    def catalog(self) -> dict[str, Any]:
        """Every public card: `{"datasets": [...], "agents": [...]}`."""
        ...

    def public_card(self, dataset_id: str) -> dict[str, Any]:
        """One public card (whoever owns it); NotFound unless it is public."""
        ...

    def download_public(self, dataset_id: str) -> Iterator[bytes]:
        """A public dataset's rows, whoever owns it, with no key."""
        ...

    # the account
    def usage(self) -> dict[str, Any]:
        """The account's tier, its quotas and what it has used of them."""
        ...

    def close(self) -> None:
        """Release what this store opened; a store handed a shared resource leaves it open."""
        ...


def iter_all_traces(
    store: Store, agent: str | None = None, since: float | None = None
) -> Iterator[dict[str, Any]]:
    """Every trace across pages (the listing is paged on the wire)."""
    page = 1
    while True:
        result = store.list_traces(agent=agent, page=page, since=since)
        yield from result.get("traces", [])
        next_page = result.get("nextPage")
        if not next_page:
            return
        page = int(next_page)


_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_since(text: str | None, now: float | None = None) -> float | None:
    """`7d`, `12h`, `30m`, `2w` -> the unix time that long ago: the `since` a trace listing
    (`list_traces`, `iter_all_traces`) takes, spelled as `--since` spells it."""
    if not text:
        return None
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*", text)
    if match is None:
        raise ConfigError(f"--since must look like 7d, 12h, 30m or 2w, got {text!r}")
    span = float(match.group(1)) * _UNITS[match.group(2)]
    return (now if now is not None else time.time()) - span
