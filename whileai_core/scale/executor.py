"""Executors: where a stage's work runs, chosen by the caller and passed to the stage.

simulate, grade and evaluate take an `executor`; each splits its work into the parts the
executor asks for (`parts()`: the whole run, a `--shard I/N`, or N shards) and hands it a
task per part. The executor runs the tasks (here, or as Ray tasks) and delivers the rows
each task made to the stage's `emit`, then the task's own result (a report, read stats):

    task(part, sink) -> result        a module-level function (a remote executor pickles it)
    executor.run(task, parts, emit)   yields (part, result) as each part finishes

`LocalExecutor` runs its one part in this process and its rows reach `emit` as they are
made (a stream: memory does not grow with the run). `ProcessExecutor`
(`process_executor.py`) runs N shards in N local processes, one per core by default,
their rows handed on in shard order as they arrive. `RayExecutor` (`ray_executor.py`)
runs N shards as Ray tasks; a shard's rows come back together when it is done, so a
worker that dies and is retried never delivers a row twice. What the stage does with the
rows (writing `-o FILE`, resuming, tallying) is the stage's, the same for every executor.

The CLI builds one from the user's `--executor local|processes|ray` and its flags
(`make_executor`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, TypeVar

from ..errors import ConfigError
from .shards import Shard

Row = dict[str, Any]
Sink = Callable[[Row], None]
Part = Shard | None
"""One part of a run: a shard, or None for the whole run."""
T = TypeVar("T")

EXECUTORS = ("local", "processes", "ray")
DEFAULT_SHARDS = 4


class Executor(Protocol):
    """Runs a stage's tasks, one per part, and hands their rows and results back."""

    @property
    def name(self) -> str:
        """What the user typed to choose it (`--executor NAME`)."""
        ...

    @property
    def remote(self) -> bool:
        """Parts run in other processes: what a task captures must pickle, files it reads
        must be readable there (absolute paths, no stdin), and rows come back per part."""
        ...

    def parts(self) -> list[Part]:
        """The parts a run is split into."""
        ...

    def concurrency(self, total: int) -> int:
        """Each part's share of the run's `--concurrency`: all of it where a part has a
        machine to itself, a 1/N share where N parts share this one."""
        ...

    def run(
        self, task: Callable[[Part, Sink], T], parts: Sequence[Part], emit: Sink
    ) -> Iterator[tuple[Part, T]]:
        """Run `task` on each of `parts`; rows a task hands its sink reach `emit`; yield
        (part, the task's result) as each part finishes."""
        ...

    def say(self, line: str) -> None:
        """A progress line for stderr (a remote run's shards); a local run has none."""
        ...


class ShardedRuns:
    """What every executor that splits a run into N shards shares: the shards, the
    check on N, and the progress line. Mixed into a dataclass with `shards` and
    `progress` fields (Ray's, the local processes')."""

    shards: int
    progress: Callable[[str], None] | None

    def __post_init__(self) -> None:
        if self.shards < 1:
            raise ConfigError("--shards must be at least 1")

    def parts(self) -> list[Part]:
        return [Shard(index, self.shards) for index in range(1, self.shards + 1)]

    def say(self, line: str) -> None:
        if self.progress is not None:
            self.progress(line)


@dataclass(frozen=True)
class LocalExecutor:
    """This process: the whole run, or the one shard `shard` (`--shard I/N`) of it."""

    shard: Shard | None = None
    name: ClassVar[str] = "local"
    remote: ClassVar[bool] = False

    def parts(self) -> list[Part]:
        return [self.shard]

    def concurrency(self, total: int) -> int:
        return total

    def run(
        self, task: Callable[[Part, Sink], T], parts: Sequence[Part], emit: Sink
    ) -> Iterator[tuple[Part, T]]:
        for part in parts:
            yield part, task(part, emit)

    def say(self, line: str) -> None:
        return None


def make_executor(
    name: str = "local",
    *,
    shard: Shard | None = None,
    shards: int | None = None,
    address: str | None = None,
    say: Callable[[str], None] | None = None,
) -> Executor:
    """The executor a user chose: `local` (this process, optionally one `shard`),
    `processes` (`shards` shards, default one per core, each in its own local process) or
    `ray` (`shards` shards, default 4, on the cluster at `address` or a local Ray started
    for the run); `say` gets a line per shard. A flag that does not fit the choice is a
    one-line ConfigError."""
    if name == "local":
        if shards is not None or address is not None:
            raise ConfigError(
                "--shards is for --executor processes or ray, --ray-address for --executor ray"
            )
        return LocalExecutor(shard)
    if name == "processes":
        if shard is not None:
            raise ConfigError("--executor processes plays every shard itself: give --shards N")
        if address is not None:
            raise ConfigError("--ray-address is for --executor ray")
        from .process_executor import ProcessExecutor, default_shards

        return ProcessExecutor(shards=shards or default_shards(), progress=say)
    if name == "ray":
        if shard is not None:
            raise ConfigError("--executor ray plays every shard itself: give --shards N")
        from .ray_executor import RayExecutor, import_ray

        import_ray()  # a missing extra is named now, not after the run is planned
        return RayExecutor(shards=shards or DEFAULT_SHARDS, address=address, progress=say)
    raise ConfigError(f"unknown executor {name!r}: expected one of {', '.join(EXECUTORS)}")
