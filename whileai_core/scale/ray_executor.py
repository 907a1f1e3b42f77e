"""`simulate --executor ray`: a run's shards as Ray tasks, rows streamed back shard by shard.

Each shard is one task (`--shard I/N` played in a worker, on its budget share) that
returns its rows only when the whole shard is done. A worker that dies (killed, out of
memory) is retried by Ray itself (`max_retries`); since a failed attempt returned nothing,
a retried shard never writes a row twice. The driver writes each shard's rows to stdout
or `-o FILE` as that shard finishes and says so on stderr. `--resume` reads FILE: a shard
whose rows are all there is skipped, a shard cut short is replayed from its own rows (the
engine's resume), so only the rows it lacks come back.

Ray is an optional extra (`pip install 'whileai[ray]'`). Without `--ray-address` a local
Ray is started for the run, sized to this machine, with a small object store and its
files under a temporary directory, and stopped at the end.
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
import time
from collections.abc import Callable
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
        raise ConfigError("--executor ray needs Ray: pip install 'whileai[ray]'") from None
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
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            shard = pending.pop(ready[0])
            try:
                result: ShardDone = ray.get(ready[0])
            except Exception as exc:  # the task's own error, or Ray's when retries ran out
                cause = getattr(exc, "cause", None) or exc
                text = (str(cause).strip().splitlines() or [""])[-1]
                raise ConfigError(
                    f"shard {shard.label} failed: {type(cause).__name__}: {text}"
                ) from None
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
