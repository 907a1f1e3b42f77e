"""`simulate --executor ray`: a run's shards as Ray tasks, rows streamed back shard by shard.

Each shard is one task (`--shard I/N` played in a worker, on its budget share) that
returns its rows only when the whole shard is done. A worker that dies (killed, out of
memory) is retried by Ray itself (`max_retries`); since a failed attempt returned nothing,
a retried shard never writes a row twice. The driver writes each shard's rows to stdout
or `-o FILE` as that shard finishes and says so on stderr. `--resume` reads FILE: a shard
whose rows are all there is skipped, a shard cut short is replayed from its own rows (the
engine's resume), so only the rows it lacks come back.

Ray is an optional extra (`pip install 'whileai-toolkit[ray]'`). Without `--ray-address` a local
Ray is started for the run, sized to this machine, with a small object store and its
files under a temporary directory, and stopped at the end.
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..jsonl import RowWriter
from ..models.options import ModelOptions
from ..simulate.config import Report, SimulateConfig
from ..simulate.plan import RunPlan
from ..simulate.resume import load_done
from ..simulate.run import run_simulation, shard_shares
from ..simulate.shards import Shard, parse_shard, shard_count_error
from ..spec import Spec

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
class ShardDone:
    """What one shard's task returned."""

    shard: Shard
    rows: list[dict[str, Any]]
    report: dict[str, Any]
    elapsed: float = 0.0


@dataclass
class RayReport:
    """The run over all shards: the per-shard reports and the totals."""

    shards: int
    budget: int
    rows: int = 0
    resumed_rows: int = 0
    skipped_shards: list[str] = field(default_factory=list)
    by_shard: dict[str, dict[str, Any]] = field(default_factory=dict)
    agent_errors: int = 0
    first_error: str | None = None
    elapsed: float = 0.0
    rows_per_s: float = 0.0
    address: str = "local"

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    def lines(self) -> list[str]:
        out = [
            f"rows {self.rows} (resumed {self.resumed_rows}) of budget {self.budget} from "
            f"{self.shards} shards on Ray ({self.address})",
            f"elapsed {self.elapsed:.2f}s, {self.rows_per_s:.0f} rows/s",
        ]
        if self.skipped_shards:
            out.append(f"already complete in the output: {', '.join(self.skipped_shards)}")
        if self.agent_errors:
            out.append(
                f"agent errors: {self.agent_errors}"
                + (f" (first: {self.first_error})" if self.first_error else "")
            )
        return out


def play_shard(
    spec: Spec,
    config: SimulateConfig,
    plan: RunPlan,
    shard: Shard,
    agent_ref: str,
    writer_ref: str | None,
    options: ModelOptions,
    done: dict[str, list[dict[str, Any]]],
    grader_ref: str | None = None,
) -> ShardDone:
    """One shard, start to end, in whatever process runs it; its rows come back together.
    A grader is given by its `--grader` string and built here, next to the rows it judges."""
    started = time.monotonic()
    rows: list[dict[str, Any]] = []
    grader = None
    if grader_ref:
        from ..judges.registry import JudgeOptions, parse_judge

        grader = parse_judge(grader_ref, JudgeOptions(spec=spec, models=options))
    report: Report = run_simulation(
        spec, config, agent_ref=agent_ref, writer_ref=writer_ref, options=options,
        sink=rows.append, plan=plan, shard=shard, done=done, grader=grader,
    )  # fmt: skip
    return ShardDone(shard, rows, report.as_dict(), time.monotonic() - started)


def _split_done(
    done: dict[str, list[dict[str, Any]]], count: int
) -> tuple[dict[int, dict[str, list[dict[str, Any]]]], dict[int, int]]:
    """Rows already in the output, by the shard they came from (and how many each)."""
    by_shard: dict[int, dict[str, list[dict[str, Any]]]] = {}
    rows: dict[int, int] = {}
    for sid, group in done.items():
        label = group[0].get("shard") if group else None
        if not isinstance(label, str):
            raise ConfigError(
                f"--resume: the output holds rows without a shard (scenario {sid}): it is "
                "not from --executor ray"
            )
        shard = parse_shard(label)
        if shard.count != count:
            raise ConfigError(
                f"--resume: the output's rows are of {shard.count} shards, not --shards {count}"
            )
        by_shard.setdefault(shard.index, {})[sid] = group
        rows[shard.index] = rows.get(shard.index, 0) + len(group)
    return by_shard, rows


def _finished(ray: Any, pending: dict[Any, Shard]) -> Iterator[tuple[Shard, Any]]:
    """(shard, what its task returned) as each finishes; a task that failed for good (its
    own error, or Ray's once the retries ran out) is a one-line ConfigError."""
    while pending:
        ready, _ = ray.wait(list(pending), num_returns=1)
        shard = pending.pop(ready[0])
        try:
            result = ray.get(ready[0])
        except Exception as exc:
            cause = getattr(exc, "cause", None) or exc
            text = (str(cause).strip().splitlines() or [""])[-1]
            raise ConfigError(
                f"shard {shard.label} failed: {type(cause).__name__}: {text}"
            ) from None
        yield shard, result


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


def run_on_ray(
    spec: Spec,
    config: SimulateConfig,
    *,
    shards: int,
    plan: RunPlan | None = None,
    address: str | None = None,
    agent_ref: str = "seeded",
    writer_ref: str | None = None,
    options: ModelOptions | None = None,
    output: str | None = None,
    resume: bool = False,
    grader_ref: str | None = None,
    say: Callable[[str], None] | None = None,
    max_retries: int = MAX_RETRIES,
) -> RayReport:
    """Play `shards` shards of the run as Ray tasks; rows to `output` or stdout as each
    shard finishes. `say` gets one progress line per shard; `grader_ref` is simulate's
    `--grader`, built in each worker."""
    config.check()
    if shards < 1:
        raise ConfigError("--shards must be at least 1")
    if resume and not output:
        raise ConfigError("--resume needs -o FILE: the rows to resume are read from it")
    plan = plan or RunPlan(spec)
    options = options or ModelOptions()
    ray = import_ray()
    _, shares, _ = shard_shares(spec, config, plan, shards)
    problem = shard_count_error(shares, shards, config.budget)
    if problem is not None:
        raise ConfigError(problem.replace("use at most", "use --shards of at most"))
    done_rows: dict[int, dict[str, list[dict[str, Any]]]] = {}
    have: dict[int, int] = {}
    if output and output != "-":
        if resume:
            done_rows, have = _split_done(load_done(output), shards)
        elif Path(output).is_file() and Path(output).stat().st_size:
            raise ConfigError(
                f"{output} already holds rows: --resume to finish that run, or remove the "
                "file to start over"
            )
    report = RayReport(shards=shards, budget=config.budget)
    report.resumed_rows = sum(have.values())
    say = say or (lambda _line: None)
    stack: list[Callable[[], None]] = []
    started = time.monotonic()
    writer: RowWriter | None = None
    try:
        report.address = _start_ray(ray, address, stack)
        task = ray.remote(max_retries=max_retries, retry_exceptions=False)(play_shard)
        spec_ref, plan_ref = ray.put(spec), ray.put(plan)
        pending: dict[Any, Shard] = {}
        for index in range(1, shards + 1):
            shard = Shard(index, shards)
            if have.get(index, 0) >= shares[index - 1]:
                report.skipped_shards.append(shard.label)
                say(f"shard {shard.label}: already complete in {output}, skipped")
                continue
            ref = task.remote(
                spec_ref, config, plan_ref, shard, agent_ref, writer_ref,
                dataclasses.replace(options, clients={}), done_rows.get(index, {}), grader_ref,
            )  # fmt: skip
            pending[ref] = shard
        say(f"ray ({report.address}): {len(pending)} of {shards} shards submitted")
        writer = RowWriter(output if output and output != "-" else None, mode="append")
        finished = len(report.skipped_shards)
        for shard, result in _finished(ray, pending):
            for row in result.rows:
                writer.write(row)
            finished += 1
            report.rows += len(result.rows)
            shard_report = result.report
            report.by_shard[shard.label] = shard_report
            report.agent_errors += int(shard_report.get("agent_errors", 0))
            report.first_error = report.first_error or shard_report.get("first_error")
            say(
                f"shard {shard.label} done: {len(result.rows)} rows in {result.elapsed:.1f}s "
                f"({finished}/{shards} shards, {report.rows + report.resumed_rows}/"
                f"{config.budget} rows)"
            )
    finally:
        if writer is not None:
            writer.close()
        for stop in reversed(stack):
            stop()
    report.elapsed = round(time.monotonic() - started, 3)
    if report.elapsed:
        report.rows_per_s = round(report.rows / report.elapsed, 1)
    return report


def grade_shard(
    inputs: list[str],
    judge_ref: str | None,
    judge_options: Any,
    shard: Shard,
    grade_kw: dict[str, Any],
    prepare: Callable[[dict[str, Any]], dict[str, Any]] | None,
) -> tuple[list[dict[str, Any]], Any]:
    """One shard of a grade run in a worker: the judge built here from its `--judge` string,
    the rows of the inputs this shard owns judged, handed back together with the read stats."""
    from ..judges.registry import parse_judge
    from ..judges.run import grade_files

    judge = parse_judge(judge_ref, judge_options)
    rows: list[dict[str, Any]] = []
    result = grade_files(inputs, judge, shard=shard, prepare=prepare, sink=rows.append, **grade_kw)
    return rows, result.read


def grade_on_ray(
    inputs: Iterable[str],
    judge: Any,
    *,
    judge_ref: str | None,
    judge_options: Any,
    shards: int,
    address: str | None = None,
    output: str | None = None,
    on_error: Any = "fail",
    concurrency: int = 8,
    timeout: float | None = 60.0,
    k: int | None = None,
    seed: int = 0,
    on_row: Callable[[int], None] | None = None,
    prepare: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
    on_graded: Callable[[dict[str, Any]], None] | None = None,
    shard: Shard | None = None,
    say: Callable[[str], None] | None = None,
    max_retries: int = MAX_RETRIES,
) -> Any:
    """`grade_files` with its rows judged as `shards` Ray tasks, each the rows of one shard
    (by task id), each worker building its own judge from `judge_ref`. Rows go to `output`
    (atomic replace) or stdout as each shard finishes; the report is tallied here over all."""
    from ..jsonl import ReadStats
    from ..judges.run import GradeTally
    from ..metrics.passat import PassReport

    if shard is not None:
        raise ConfigError("--executor ray plays every shard itself: give --shards N")
    files = [str(Path(f).resolve()) if f != "-" else f for f in inputs]
    if "-" in files:
        raise ConfigError("--executor ray reads files in its workers: give FILES, not stdin")
    ray = import_ray()
    say = say or (lambda _line: None)
    tally = GradeTally(PassReport(k=k, seed=seed), on_graded=on_graded, on_row=on_row)
    stats = ReadStats()
    stack: list[Callable[[], None]] = []
    kw = {"on_error": on_error, "concurrency": concurrency, "timeout": timeout, "k": k,
          "seed": seed}  # fmt: skip
    try:
        where = _start_ray(ray, address, stack)
        task = ray.remote(max_retries=max_retries, retry_exceptions=False)(grade_shard)
        options_ref = ray.put(judge_options)
        pending = {
            task.remote(files, judge_ref, options_ref, Shard(i, shards), kw, prepare): Shard(
                i, shards
            )
            for i in range(1, shards + 1)
        }
        say(f"ray ({where}): {shards} grade shards submitted")
        finished = 0
        with RowWriter(output) as writer:
            for done, (rows, read) in _finished(ray, pending):
                for row in rows:
                    writer.write(row)
                    tally.add(row)
                finished += 1
                stats.skipped = max(stats.skipped, read.skipped)  # every shard reads all lines
                stats.first_error = stats.first_error or read.first_error
                stats.rows = max(stats.rows, read.rows)
                say(
                    f"shard {done.label} done: {len(rows)} rows ({finished}/{shards} shards, "
                    f"{tally.count} rows)"
                )
    finally:
        for stop in reversed(stack):
            stop()
    return tally.result(judge, stats)
