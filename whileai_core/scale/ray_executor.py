"""`--executor ray`: a run's shards as Ray tasks, each shard's rows handed back when it is done.

Each shard is one task (the stage's task for that part, in a worker) that returns its
rows only when the whole shard is done. A worker that dies (killed, out of memory) is
retried by Ray itself (`max_retries`); since a failed attempt returned nothing, a retried
shard never delivers a row twice. The stage writes each shard's rows as that shard
finishes; what a stage does on top (simulate's `--resume` skipping complete shards,
grade's tally) is the stage's own, the same as for the local executor.

Ray is an optional extra (`pip install 'whileai-toolkit[ray]'`). Without an address a local
Ray is started for the run, sized to this machine, with a small object store and its files
under a temporary directory, and stopped at the end.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

from ..errors import ConfigError
from .executor import DEFAULT_SHARDS, Part, Row, ShardedRuns, Sink

T = TypeVar("T")

#: Attempts beyond the first for a shard whose worker died.
MAX_RETRIES = 3
#: The local cluster's object store: rows come back as one object per shard.
OBJECT_STORE_BYTES = 200 * 1024 * 1024


def import_ray() -> Any:
    """The `ray` module, or a one-line error naming the extra that installs it."""
    try:
        import ray
    except ImportError:
        raise ConfigError("--executor ray needs Ray: pip install 'whileai-toolkit[ray]'") from None
    return ray


@dataclass
class RayExecutor(ShardedRuns):
    """`shards` shards as Ray tasks on the cluster at `address` (else a local Ray started
    for the run); `progress` gets a line when they are submitted and the stage's line per
    finished shard. `where` says which Ray ran the last run (for the report)."""

    shards: int = DEFAULT_SHARDS
    address: str | None = None
    max_retries: int = MAX_RETRIES
    progress: Callable[[str], None] | None = field(default=None, repr=False)
    where: str = "local"
    name: ClassVar[str] = "ray"
    remote: ClassVar[bool] = True

    def concurrency(self, total: int) -> int:
        return total  # a shard's worker may be a node of its own: each keeps all of it

    def run(
        self, task: Callable[[Part, Sink], T], parts: Sequence[Part], emit: Sink
    ) -> Iterator[tuple[Part, T]]:
        ray = import_ray()
        stack: list[Callable[[], None]] = []
        try:
            self.where = _start_ray(ray, self.address, stack)
            remote = ray.remote(max_retries=self.max_retries, retry_exceptions=False)(_collect)
            shared = ray.put(task)  # one copy of what the task carries (spec, plan), not N
            pending = {remote.remote(shared, part): part for part in parts}
            self.say(f"ray ({self.where}): {len(pending)} of {self.shards} shards submitted")
            for part, (rows, result) in _finished(ray, pending):
                for row in rows:
                    emit(row)
                yield part, result
        finally:
            for stop in reversed(stack):
                stop()


def _collect(task: Callable[[Part, Sink], T], part: Part) -> tuple[list[Row], T]:
    """In a worker: the task's rows, held until the part is done, and its result."""
    rows: list[Row] = []
    result = task(part, rows.append)
    return rows, result


def _finished(ray: Any, pending: dict[Any, Part]) -> Iterator[tuple[Part, Any]]:
    """(shard, what its task returned) as each finishes; a task that failed for good (its
    own error, or Ray's once the retries ran out) is a one-line ConfigError."""
    while pending:
        ready, _ = ray.wait(list(pending), num_returns=1)
        part = pending.pop(ready[0])
        try:
            result = ray.get(ready[0])
        except Exception as exc:
            cause = getattr(exc, "cause", None) or exc
            text = (str(cause).strip().splitlines() or [""])[-1]
            raise ConfigError(
                f"shard {part.label if part else '1/1'} failed: {type(cause).__name__}: {text}"
            ) from None
        yield part, result


def _start_ray(ray: Any, address: str | None, stack: list[Callable[[], None]]) -> str:
    """Connect to `address`, or reuse a Ray this process already runs, or start a local one."""
    if ray.is_initialized():
        return "this process's Ray"
    if address:
        try:
            ray.init(address=address, log_to_driver=False)
        except Exception as exc:  # Ray raises ConnectionError, RuntimeError, ...
            raise ConfigError(f"--ray-address {address}: cannot connect ({exc})") from None
        stack.append(ray.shutdown)
        return address
    # A throwaway cluster: token auth off (2.60+ turns it on), files under a temp dir.
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    temp = tempfile.mkdtemp(prefix="whileai-ray-")
    ray.init(
        num_cpus=os.cpu_count() or 1,
        include_dashboard=False,
        object_store_memory=OBJECT_STORE_BYTES,
        _temp_dir=temp,
        log_to_driver=False,
    )

    def stop() -> None:
        import shutil

        ray.shutdown()
        shutil.rmtree(temp, ignore_errors=True)

    stack.append(stop)
    return "local"
