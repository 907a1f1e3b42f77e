"""`--executor processes`: a run's shards in N local OS processes, so a run uses every core.

One Python process runs its event loop on one core; a run against a fast model endpoint
at high concurrency is capped there. Here each shard runs in its own process, started
with multiprocessing's "spawn" method: a fresh interpreter that inherits none of this
process's event loop, threads, open clients or sockets (a forked copy of a running loop
is not safe), and is this process's own child, so its CPU counts in this process's
rusage. The shards share this machine, so each gets ceil(C/N) of `--concurrency`
(`concurrency`), not all of it as a Ray shard on its own node does.

Rows: a worker sends what its sink got in one turn of its event loop as one message (a
simulate group is handed over in one synchronous loop, so it travels in one message
unless the 50 ms mark falls inside it), at the latest 50 ms after the first of them
(`_Sender`). Here they reach `emit` in shard order,
1 to N, whichever finishes first: the lowest unfinished shard's rows as they arrive, the
others' spooled to a temporary file (raw, as received) until every shard before them is
done. Memory holds no shard's rows, and which shard finished first never shows.

No retries: a worker that raises or dies (killed, out of memory) ends the run with a
one-line error naming its shard, once every row already received (from any shard) has
reached `emit`, in shard order; `simulate --resume` then skips the complete shards and
replays the cut ones. SIGINT (the terminal sends it to the whole process group) is
ignored by the workers; on SIGINT or SIGTERM this process stops them, hands on the rows
it has, and ends as interrupted. A worker whose parent dies (SIGKILL) exits by itself.
A program that calls a stage with this executor guards its entry point
(`if __name__ == "__main__":`), as for any spawned process: a worker imports the
program's main module again (the `whileai` command does).
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import os
import pickle
import signal
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from typing import IO, Any, ClassVar, TypeVar

from ..errors import ConfigError
from .executor import Part, Row, ShardedRuns, Sink

T = TypeVar("T")

#: Seconds a stopped worker gets to exit after SIGTERM before it is killed.
STOP_GRACE = 5.0
#: Seconds a worker holds settled rows while its event loop does not turn.
BATCH_SECONDS = 0.05
_ROWS, _DONE, _ERROR = b"R", b"D", b"E"


def default_shards() -> int:
    """One shard per core."""
    return os.cpu_count() or 1


@dataclass
class ProcessExecutor(ShardedRuns):
    """`shards` shards, each in its own local process; `progress` gets a line when they
    start and the stage's line per finished shard."""

    shards: int = field(default_factory=default_shards)
    progress: Callable[[str], None] | None = field(default=None, repr=False)
    name: ClassVar[str] = "processes"
    remote: ClassVar[bool] = True
    where: ClassVar[str] = "local processes"

    def concurrency(self, total: int) -> int:
        return max(1, -(-total // self.shards))

    def run(
        self, task: Callable[[Part, Sink], T], parts: Sequence[Part], emit: Sink
    ) -> Iterator[tuple[Part, T]]:
        context = multiprocessing.get_context("spawn")
        workers: list[_Worker] = []
        restore = _sigterm_interrupts()
        try:
            for part in parts:
                workers.append(_Worker.start(context, task, part))
            self.say(f"processes: {len(workers)} of {self.shards} shards started")
            yield from _gather(workers, emit)
        except GeneratorExit:  # the stage stopped reading: nobody takes rows any more
            _stop(workers)
            raise
        except BaseException:  # a failed shard, an interrupt: what arrived is kept
            _stop(workers)
            _hand_on(workers, emit)
            raise
        finally:
            _stop(workers)
            for worker in workers:
                worker.close()
            restore()


# -- in this process -----------------------------------------------------------------------


class _Worker:
    """One shard's process, its pipe, and its rows held back until it is the head shard."""

    def __init__(self, part: Part, process: Any, conn: Connection, alive: Connection) -> None:
        self.part, self.process, self.conn, self.alive = part, process, conn, alive
        self.open = True  # the pipe has not reached its end
        self.head = False  # its rows go straight to emit
        self.result: Any = None
        self.done = False
        self.error: str | None = None
        self.spool: IO[bytes] | None = None

    @classmethod
    def start(cls, context: Any, task: Callable[[Part, Sink], Any], part: Part) -> _Worker:
        mine, theirs = context.Pipe(duplex=False)
        alive_read, alive_write = context.Pipe(duplex=False)
        label = part.label if part is not None else "1/1"
        process = context.Process(
            target=_work, args=(task, part, theirs, alive_read),
            name=f"whileai shard {label}",
        )  # fmt: skip
        process.start()
        theirs.close()  # the worker's end: closed here, so its exit is this pipe's end
        alive_read.close()
        return cls(part, process, mine, alive_write)

    @property
    def label(self) -> str:
        return self.part.label if self.part is not None else "1/1"

    def pump(self, emit: Sink) -> None:
        """Take every message waiting on the pipe: rows to `emit` (head) or the spool."""
        while self.open and self.conn.poll():
            try:
                message = self.conn.recv_bytes()
            except (EOFError, OSError):  # the end, or a message cut by a killed worker
                self.open = False
                return
            kind, body = message[:1], message[1:]
            if kind == _ROWS:
                if self.head:
                    for row in pickle.loads(body):
                        emit(row)
                else:
                    if self.spool is None:
                        # held open across calls, closed by promote() or close()
                        self.spool = tempfile.TemporaryFile(prefix="whileai-shard-")  # noqa: SIM115
                    self.spool.write(len(body).to_bytes(8, "big") + body)
            elif kind == _DONE:
                self.result, self.done = pickle.loads(body), True
            elif kind == _ERROR:
                self.error = body.decode(errors="replace")

    def promote(self, emit: Sink) -> None:
        """Make this the head shard: its spooled rows to `emit` first, in arrival order."""
        self.head = True
        if self.spool is None:
            return
        spool, self.spool = self.spool, None
        spool.seek(0)
        while size := int.from_bytes(spool.read(8) or b"\0", "big"):
            for row in pickle.loads(spool.read(size)):
                emit(row)
        spool.close()

    def failure(self) -> str:
        """The one line that says why this shard did not finish."""
        if self.error:
            return f"shard {self.label} failed: {self.error}"
        self.process.join(STOP_GRACE)
        code = self.process.exitcode
        if code is not None and code < 0:
            try:
                how = f"killed by {signal.Signals(-code).name}"
            except ValueError:
                how = f"killed by signal {-code}"
        else:
            how = f"exited with code {code}"
        return (
            f"shard {self.label} failed: its worker process (pid {self.process.pid}) {how} "
            "before it finished; the rows it sent are written (--resume replays the shard)"
        )

    def close(self) -> None:
        for handle in (self.conn, self.alive):
            handle.close()
        if self.spool is not None:
            self.spool.close()
            self.spool = None


def _gather(workers: list[_Worker], emit: Sink) -> Iterator[tuple[Part, Any]]:
    """(part, result) in part order, each once its rows have all reached `emit`; a shard
    that failed is a one-line ConfigError."""
    head = 0
    if workers:
        workers[0].promote(emit)
    while head < len(workers):
        live = [w for w in workers if w.open]
        waiting: list[Any] = [w.conn for w in live]
        wait(waiting)
        for worker in live:
            worker.pump(emit)
        for worker in live:
            if not worker.open and not worker.done:
                raise ConfigError(worker.failure())
        while head < len(workers) and not workers[head].open:
            finished = workers[head]
            finished.process.join()
            yield finished.part, finished.result
            head += 1
            if head < len(workers):
                workers[head].promote(emit)


def _stop(workers: list[_Worker]) -> None:
    """Every worker still running is asked to stop (SIGTERM), then killed after a grace."""
    running = [w.process for w in workers if w.process.is_alive()]
    for process in running:
        process.terminate()
    for process in running:
        process.join(STOP_GRACE)
        if process.is_alive():
            process.kill()
            process.join()


def _hand_on(workers: list[_Worker], emit: Sink) -> None:
    """After a stop: every row still in a pipe or a spool to `emit`, in shard order."""
    for worker in workers:
        worker.pump(emit)  # the process is gone: the pipe ends after what it sent
    for worker in workers:
        if not worker.head:
            worker.promote(emit)


def _sigterm_interrupts() -> Callable[[], None]:
    """Make SIGTERM stop the run as SIGINT does (a KeyboardInterrupt, so the workers are
    stopped and the rows handed on); returns what puts the old handler back."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None

    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)

    def restore() -> None:
        signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)

    return restore


# -- in a worker ---------------------------------------------------------------------------


class _Sender:
    """A worker's sink: the rows one turn of its event loop settled (a simulate group is
    handed over in one synchronous loop), sent as one message when the loop next turns,
    or before the next row once they have waited `BATCH_SECONDS` (an engine whose agent
    never awaits can settle a whole shard in one turn). Outside a loop, each row at once."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.batch: list[Row] = []
        self.since = 0.0

    def __call__(self, row: Row) -> None:
        if self.batch and time.monotonic() - self.since >= BATCH_SECONDS:
            self.flush()
        self.batch.append(row)
        if len(self.batch) > 1:
            return
        self.since = time.monotonic()
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.flush()
            return
        loop.call_soon(self.flush)

    def flush(self) -> None:
        if self.batch:
            batch, self.batch = self.batch, []
            self.conn.send_bytes(_ROWS + pickle.dumps(batch, pickle.HIGHEST_PROTOCOL))


def _work(
    task: Callable[[Part, Sink], Any], part: Part, conn: Connection, alive: Connection
) -> None:
    """A worker's life: the task on its part, its rows and then its result (or its error,
    one line) sent back on `conn`."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when the run stops
    threading.Thread(target=_exit_with_parent, args=(alive,), daemon=True).start()
    sink = _Sender(conn)
    try:
        result = task(part, sink)
        sink.flush()
        conn.send_bytes(_DONE + pickle.dumps(result, pickle.HIGHEST_PROTOCOL))
    except BaseException as exc:  # one line back to the parent, never a traceback
        with contextlib.suppress(Exception):
            sink.flush()  # the groups settled before the error are rows like any other
        text = (str(exc).strip().splitlines() or [""])[-1]
        conn.send_bytes(_ERROR + f"{type(exc).__name__}: {text}".encode())
        conn.close()
        os._exit(1)
    conn.close()


def _exit_with_parent(alive: Connection) -> None:
    """Block until the parent's end of `alive` closes (it exited, or was killed), then
    end this worker: nobody is left to take its rows."""
    with contextlib.suppress(EOFError, OSError):
        alive.recv_bytes()
    os._exit(1)
