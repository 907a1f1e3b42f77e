"""`Storage` seen as one account: the `Store` the CLI and each server request talk to.

The CLI without a server talks to the account `local` (`LocalStore`); each server request
to its key's account. Every method is the storage's, with the account filled in, so the
embedded store and `whileai serve` answer the same calls with the same code.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from .base import TRACE_PAGE_SIZE, NewDataset, Signal
from .limits import Limits
from .local import LOCAL_ACCOUNT, Storage
from .quotas import QuotaPolicy, Quotas
from .runs import NewRun


class BoundStore:
    """Only the store that opened its storage closes it: a server request's store shares
    the server's, and closing it closes nothing."""

    kind = "embedded"

    def __init__(self, storage: Storage, account: str = LOCAL_ACCOUNT, owns: bool = False) -> None:
        self.storage = storage
        self.account = account
        self.location = str(storage.root)
        self._owns = owns

    # datasets
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

    # agents
    def list_agents(self) -> list[dict[str, Any]]:
        return self.storage.agents.list(self.account)

    def create_agent(
        self, slug: str, description: str | None = None, spec: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        return self.storage.agents.create(self.account, slug, description, spec)

    def delete_agent(self, slug: str) -> None:
        self.storage.agents.delete(self.account, slug)

    # traces
    def ingest_otlp(
        self,
        body: bytes | IO[bytes],
        content_type: str,
        content_encoding: str | None = None,
        signal: Signal = "traces",
    ) -> dict[str, Any]:
        traces = self.storage.traces
        ingest = traces.ingest_logs if signal == "logs" else traces.ingest
        return ingest(self.account, body, content_type, content_encoding)

    def list_traces(
        self,
        agent: str | None = None,
        page: int = 1,
        since: float | None = None,
        limit: int = TRACE_PAGE_SIZE,
    ) -> dict[str, Any]:
        return self.storage.traces.list(self.account, agent, page, since, limit)

    def get_trace(self, trace_id: str) -> dict[str, Any]:
        return self.storage.traces.get(self.account, trace_id)

    def delete_trace(self, trace_id: str) -> None:
        self.storage.traces.delete(self.account, trace_id)

    def score_trace(self, trace_id: str, value: float, name: str = "score") -> dict[str, Any]:
        return self.storage.traces.score(self.account, trace_id, value, name)

    # training runs
    def create_run(self, spec: NewRun) -> dict[str, Any]:
        return self.storage.runs.create(self.account, spec)

    def log_run(
        self, run_id: str, points: list[dict[str, Any]], total_steps: int | None = None
    ) -> dict[str, Any]:
        return self.storage.runs.log(self.account, run_id, points, total_steps)

    def finish_run(
        self,
        run_id: str,
        status: str,
        summary: dict[str, Any] | None = None,
        adapter: str | None = None,
        error: str | None = None,
    ) -> dict[str, Any]:
        return self.storage.runs.finish(self.account, run_id, status, summary, adapter, error)

    def attach_delta(self, run_id: str, report: dict[str, Any]) -> dict[str, Any]:
        return self.storage.runs.attach_delta(self.account, run_id, report)

    def get_run(self, run_id: str) -> dict[str, Any]:
        return self.storage.runs.get(self.account, run_id)

    def list_runs(self) -> list[dict[str, Any]]:
        return self.storage.runs.list(self.account)

    def delete_run(self, run_id: str) -> None:
        self.storage.runs.delete(self.account, run_id)

    # public cards
    def publish(
        self, dataset_id: str, agent: str, description: str | None = None
    ) -> dict[str, Any]:
        return self.storage.catalog.publish(self.account, dataset_id, agent, description)

    def unpublish(self, dataset_id: str) -> dict[str, Any]:
        return self.storage.catalog.unpublish(self.account, dataset_id)

    def catalog(self) -> dict[str, Any]:
        return self.storage.catalog.list()

    def public_card(self, dataset_id: str) -> dict[str, Any]:
        return self.storage.catalog.card(dataset_id)

    def download_public(self, dataset_id: str) -> Iterator[bytes]:
        self.storage.catalog.card(dataset_id)
        return self.storage.datasets.read_chunks(dataset_id)

    # the account
    def usage(self) -> dict[str, Any]:
        return self.storage.usage(self.account)

    def close(self) -> None:
        if self._owns:
            self.storage.close()


def LocalStore(root: Path | str | None = None) -> BoundStore:
    """The embedded store under WHILEAI_HOME (no login, one account), with the limits and
    quotas WHILEAI_MAX_* set, as a server's would be."""
    from ..settings import home

    policy = QuotaPolicy(default=Quotas.from_env())
    storage = Storage(root if root is not None else home(), Limits.from_env(), policy)
    storage.sweep()
    return BoundStore(storage, LOCAL_ACCOUNT, owns=True)
