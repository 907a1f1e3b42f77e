"""`simulate` as one call: resolve the agent and writer, open the output, run, close.

`-o FILE` is written row by row (appended, flushed) so a killed run keeps every settled
group; without `resume` an existing FILE is started afresh, with it the rows already in
FILE are read back and their asks skipped.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .. import aio
from ..agents.registry import resolve_agent
from ..errors import ConfigError
from ..jsonl import RowWriter, output_target
from ..models.options import ModelOptions
from ..people.resolve import resolve_writer
from ..registry import is_model_ref
from ..scale.executor import Executor, LocalExecutor, Part
from ..spec import Spec
from .execute import load_execute
from .grid import build_grid
from .plan import RunPlan
from .resume import load_done
from .scheduler import Engine, Report, SimulateConfig
from .shards import Shard, ShardTasks, ask_cost, budget_shares, parse_shard, shard_count_error
from .tasks import GridTasks, TaskSource

if TYPE_CHECKING:
    from ..judges.contract import Judge


def run_simulation(
    spec: Spec,
    config: SimulateConfig,
    *,
    agent_ref: str = "seeded",
    writer_ref: str | None = None,
    options: ModelOptions | None = None,
    output: str | None = None,
    resume: bool = False,
    grader: Judge | Callable[..., Any] | None = None,
    progress: Callable[[int, int], None] | None = None,
    sink: Callable[[dict[str, Any]], None] | None = None,
    plan: RunPlan | None = None,
    shard: Shard | None = None,
    blocks: int = 1,
    executor: Executor | None = None,
) -> Report:
    """Run one simulation to `output` (or stdout, or `sink` when given: each settled row is
    handed to it instead of being written). A `grader` is any judge under the one judge
    contract; its verdicts land on the rows and steer rl allocation. `plan` (from
    `api.plan_run`) says where the asks come from when it is not the spec's grid.

    `executor` says where the run is played: this process (the default), or N shards on a
    cluster (`scale.RayExecutor`), each shard's rows written as it finishes; the report is
    the same either way (a sharded run's adds `shards`). `shard` plays only that shard's
    asks on its budget share, here (rows carry `shard`); `blocks` N plays all N shards in
    this process, each with its own allocation state, so its rows are the N shards' rows
    (see `shards`). With `resume`, the rows already in `output` are kept and their asks
    skipped; a sharded run skips its complete shards and replays a cut one."""
    config.check()
    if executor is not None and shard is not None:
        raise ConfigError("give the shard to the executor (LocalExecutor(shard)), not both")
    executor = executor or LocalExecutor(shard)
    parts = executor.parts()
    if blocks < 1:
        raise ConfigError("--blocks must be at least 1")
    if blocks > 1 and parts != [None]:
        raise ConfigError(
            f"--executor {executor.name} keeps state per shard already: drop --blocks"
            if executor.remote
            else "give --shard I/N (one shard) or --blocks N (all of them), not both"
        )
    if resume and not output:
        raise ConfigError("--resume needs -o FILE: the rows to resume are read from it")
    if sink is not None and output:
        raise ConfigError("give either output or sink, not both")
    done: dict[str, list[dict[str, Any]]] = {}
    target = output_target(output)
    if resume and target.kind != "file":
        raise ConfigError(
            f"{output}: --resume reads the finished rows back from -o, so it needs a file, "
            "not a stream (a FIFO, a device, a pipe)"
        )
    if target.kind == "file":
        assert target.path is not None
        if resume:
            done = load_done(str(target.path))
        elif target.path.is_file() and target.path.stat().st_size:
            # Rows a run paid for are never thrown away by a forgotten flag.
            raise ConfigError(
                f"{output} already holds rows: --resume to finish that run, or remove the "
                "file to start over"
            )
    options = options or ModelOptions()
    sharded: ShardedRun | None = None
    to_play, by_part = parts, {part: done for part in parts}
    shares: list[int] | None = None
    if executor.remote or len(parts) > 1:
        to_play, by_part, sharded, shares = _shard_parts(spec, config, plan, parts, done, executor)
    if executor.remote:
        options = dataclasses.replace(options, clients={})  # a client does not travel
        grader = _portable(grader)
    # Parts that share this machine share its --concurrency (`Executor.concurrency`).
    share = executor.concurrency(config.concurrency)
    part_config = (
        config if share == config.concurrency else dataclasses.replace(config, concurrency=share)
    )
    run = PartRun(
        spec, part_config, agent_ref, writer_ref, options, grader, plan, blocks, by_part,
        progress=None if executor.remote else progress, shares=shares,
    )  # fmt: skip
    out = _Output(output if output and output != "-" else None)
    emit = sink or out.write
    started = time.monotonic()
    reports: list[Report] = []
    try:
        for part, report in executor.run(functools.partial(play_part, run), to_play, emit):
            reports.append(report)
            if sharded is not None:
                sharded.finished(part, report, executor)
        if sink is None:
            out.open()  # a run that settled no row still leaves its (empty) output
    finally:
        out.close()
    if sharded is None:
        return reports[0]
    return sharded.report(reports, config, executor, time.monotonic() - started)


class _Output:
    """`-o FILE` (or stdout), opened at the first row: a run that fails before one (an
    agent that does not load) leaves no file behind. Appended row by row, so a killed
    run keeps every settled group."""

    def __init__(self, path: str | None) -> None:
        self.path = path
        self.writer: RowWriter | None = None

    def open(self) -> RowWriter:
        if self.writer is None:
            self.writer = RowWriter(self.path, mode="append")
        return self.writer

    def write(self, row: dict[str, Any]) -> None:
        self.open().write(row)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


@dataclasses.dataclass
class PartRun:
    """What playing one part of a run needs, whichever process plays it (pickled for a
    worker: refs, not objects, for the agent and writer; a judge recipe for the grader)."""

    spec: Spec
    config: SimulateConfig
    agent_ref: str
    writer_ref: str | None
    options: ModelOptions
    grader: Any
    plan: RunPlan | None
    blocks: int
    done: dict[Part, dict[str, list[dict[str, Any]]]]
    progress: Callable[[int, int], None] | None = None
    shares: list[int] | None = None
    """Each shard's budget share, computed once here for a run in shards (walking every
    ask of the run), so no worker walks them again."""


def play_part(run: PartRun, part: Part, emit: Callable[[dict[str, Any]], None]) -> Report:
    """One part of a run (a shard, or the whole run), start to end, its rows to `emit`:
    the agent, writer and grader are built here, next to the rows they make."""
    config, options = run.config, run.options
    judge = None
    if run.grader is not None:
        from ..judges.contract import as_judge
        from ..judges.registry import JudgeRecipe

        grader = run.grader.build() if isinstance(run.grader, JudgeRecipe) else run.grader
        judge = as_judge(grader)  # a Judge already is one; a bare callable gets a name
    options.concurrency = config.concurrency
    agent = resolve_agent(run.agent_ref, run.spec, options)
    writer = resolve_writer(run.writer_ref, run.spec, options, avg_turns=config.avg_turns)
    world = load_execute(options.execute) if options.execute else None
    plan = run.plan
    parts = plan_parts(run.spec, config, plan, shard=part, blocks=run.blocks, shares=run.shares)
    done = run.done.get(part, {})
    offline_writer = not is_model_ref(run.writer_ref or "template")

    async def main() -> Report:
        engines = [
            Engine(
                run.spec,
                agent,
                writer,
                engine_part.config,
                sink=emit if engine_part.label is None else _labelled(emit, engine_part.label),
                done=done,
                execute_world=world,
                grader=judge,
                progress=run.progress if len(parts) == 1 else None,
                tasks=engine_part.tasks,
                sources=plan.sources if plan is not None else None,
                replay_openers=engine_part.label is not None and offline_writer,
            )
            for engine_part in parts
        ]
        try:
            if len(engines) == 1:
                report = await engines[0].run()
            else:
                report = combine_reports(
                    list(await asyncio.gather(*(e.run() for e in engines))), config
                )
            if plan is not None and plan.traces:
                report.traces = plan.traces
        finally:
            await agent.aclose()
            if judge is not None:
                from ..judges.contract import close_judge

                await close_judge(judge)
            close_writer = getattr(writer, "aclose", None)
            if close_writer is not None:
                await close_writer()
        if options.clients:  # only model-backed runs; keeps httpx out of offline runs
            from ..models.factory import model_stats

            report.models = model_stats(options)
        return report

    # A model-backed run (its clients exist by now) on the faster loop; an offline run
    # (seeded, command or sandboxed agents) keeps the standard one it is tested on.
    return aio.run(main()) if options.clients else asyncio.run(main())


def _portable(grader: Any) -> Any:
    """What travels to a worker for a grader: its recipe when it has one (a judge holds
    clients and co-processes), else the object itself (a plain function pickles)."""
    recipe = getattr(grader, "recipe", None)
    return recipe.portable() if recipe is not None else grader


def _shard_parts(
    spec: Spec,
    config: SimulateConfig,
    plan: RunPlan | None,
    parts: list[Part],
    done: dict[str, list[dict[str, Any]]],
    executor: Executor,
) -> tuple[list[Part], dict[Part, dict[str, list[dict[str, Any]]]], ShardedRun, list[int]]:
    """The shards still to play, the rows each already has, the bookkeeping that reports
    them, and each shard's budget share: a shard whose rows are all in the output is
    skipped, a cut one replayed from its own rows."""
    count = len(parts)
    _, shares, _ = shard_shares(spec, config, plan, count)
    problem = shard_count_error(shares, count, config.budget)
    if problem is not None:
        raise ConfigError(problem.replace("use at most", "use --shards of at most"))
    by_index, have = _split_done(done, count)
    sharded = ShardedRun(count, config.budget, resumed=sum(have.values()))
    to_play: list[Part] = []
    by_part: dict[Part, dict[str, list[dict[str, Any]]]] = {}
    for part in parts:
        if part is None:
            raise ConfigError(f"--executor {executor.name}: a run in parts needs shards")
        if have.get(part.index, 0) >= shares[part.index - 1]:
            sharded.skipped.append(part.label)
            sharded.skipped_rows += have[part.index]
            executor.say(f"shard {part.label}: already complete in the output, skipped")
            continue
        to_play.append(part)
        by_part[part] = by_index.get(part.index, {})
    return to_play, by_part, sharded, shares


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
                "not from a sharded run (--executor processes or ray)"
            )
        shard = parse_shard(label)
        if shard.count != count:
            raise ConfigError(
                f"--resume: the output's rows are of {shard.count} shards, not --shards {count}"
            )
        by_shard.setdefault(shard.index, {})[sid] = group
        rows[shard.index] = rows.get(shard.index, 0) + len(group)
    return by_shard, rows


@dataclasses.dataclass
class ShardedRun:
    """A sharded run's bookkeeping: what was skipped, what each shard reported."""

    count: int
    budget: int
    resumed: int = 0
    skipped: list[str] = dataclasses.field(default_factory=list)
    skipped_rows: int = 0
    by_shard: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)
    written: int = 0

    def finished(self, part: Part, report: Report, executor: Executor) -> None:
        label = part.label if part is not None else "1/1"
        new = report.rows - report.resumed_rows
        self.written += new
        self.by_shard[label] = {
            "rows": new, "resumed_rows": report.resumed_rows, "elapsed": report.elapsed,
            "agent_errors": report.agent_errors, "stopped": report.stopped,
        }  # fmt: skip
        executor.say(
            f"shard {label} done: {new} rows in {report.elapsed:.1f}s "
            f"({len(self.by_shard) + len(self.skipped)}/{self.count} shards, "
            f"{self.written + self.resumed}/{self.budget} rows)"
        )

    def report(
        self, reports: list[Report], config: SimulateConfig, executor: Executor, elapsed: float
    ) -> Report:
        out = (
            combine_reports(reports, config, parts="shards")
            if reports
            else Report(mode=config.mode, budget=config.budget)
        )
        out.rows += self.skipped_rows
        out.resumed_rows += self.skipped_rows
        out.elapsed = round(elapsed, 3)
        new = out.rows - out.resumed_rows
        out.rows_per_s = round(new / out.elapsed, 1) if out.elapsed else 0.0
        out.shards = {
            "executor": executor.name, "where": getattr(executor, "where", executor.name),
            "count": self.count, "skipped": self.skipped, "by_shard": self.by_shard,
        }  # fmt: skip
        return out


@dataclasses.dataclass
class EnginePart:
    """One engine's share of a run: its asks, its config (budget share) and shard label."""

    tasks: TaskSource | None
    config: SimulateConfig
    label: str | None = None


def shard_shares(
    spec: Spec,
    config: SimulateConfig,
    plan: RunPlan | None,
    count: int,
    known: list[int] | None = None,
) -> tuple[TaskSource, list[int], int | None]:
    """The task source shards draw from, each shard's budget share (`known` when the
    caller has them), and the run's ask cap."""
    base = plan.tasks if plan is not None else None
    inner: TaskSource = base or GridTasks(spec, build_grid(spec), fault_rate=config.fault_rate)
    n, k = config.shape
    max_asks = config.situations * n if config.situations else None
    if known is not None and len(known) == count:
        return inner, known, max_asks
    fixed = k == 1 or config.repeat_policy == "fixed"
    shares = budget_shares(
        inner, budget=config.budget, count=count, phrasings=n,
        cost=ask_cost(k, config.probe, fixed), max_asks=max_asks,
    )  # fmt: skip
    return inner, shares, max_asks


def plan_parts(
    spec: Spec,
    config: SimulateConfig,
    plan: RunPlan | None,
    *,
    shard: Shard | None,
    blocks: int,
    shares: list[int] | None = None,
) -> list[EnginePart]:
    """The engines a run needs: one for a plain run, one for a shard, one per block
    (`shares`: the shards' budget shares, when the caller already has them)."""
    if shard is None and blocks == 1:
        return [EnginePart(plan.tasks if plan is not None else None, config)]
    count = shard.count if shard is not None else blocks
    inner, shares, max_asks = shard_shares(spec, config, plan, count, shares)
    wanted = [shard.index] if shard is not None else range(1, count + 1)
    if shard is not None:
        problem = shard_count_error(shares, count, config.budget)
        if problem is not None and shares[shard.index - 1] == 0:
            raise ConfigError(problem)
    parts = []
    # A block run splits --concurrency between its engines; a shard keeps all of it.
    each = config.concurrency if shard is not None else max(1, config.concurrency // count)
    for index in wanted:
        share = shares[index - 1]
        if share == 0:
            continue
        part_config = dataclasses.replace(config, budget=share, situations=None, concurrency=each)
        tasks = ShardTasks(inner, Shard(index, count), max_asks=max_asks)
        label = Shard(index, count).label if shard is not None else f"block:{index}"
        parts.append(EnginePart(tasks, part_config, label))
    return parts


def _labelled(
    emit: Callable[[dict[str, Any]], None], label: str
) -> Callable[[dict[str, Any]], None]:
    """A sink that stamps a shard's rows with their shard (top level and in lineage)."""
    if label.startswith("block:"):
        return emit

    def stamp(row: dict[str, Any]) -> None:
        row["shard"] = label
        row["lineage"] = {**row.get("lineage", {}), "shard": label}
        emit(row)

    return stamp


_SUMMED = (
    "rows", "resumed_rows", "situations", "asks", "agent_errors", "grader_errors",
    "near_duplicates_rejected", "source_copies_redrawn", "source_copies_dropped",
    "person_dropped", "rollouts_abandoned", "cells_visited",
)  # fmt: skip


def combine_reports(
    reports: list[Report], config: SimulateConfig, *, parts: str = "blocks"
) -> Report:
    """One report for a run played in parts (`blocks` here, `shards` on an executor):
    counts summed, the slowest part's clock."""
    out = Report(mode=config.mode, budget=config.budget)
    first = reports[0]
    out.agent, out.writer, out.cells = first.agent, first.writer, first.cells
    for report in reports:
        for name in _SUMMED:
            setattr(out, name, getattr(out, name) + getattr(report, name))
        for label, stats in report.models.items():
            _add_model_stats(out.models.setdefault(label, {}), stats)
        for name in ("groups", "faults_fired", "seeded", "person"):
            merged = getattr(out, name)
            for key, value in getattr(report, name).items():
                if isinstance(value, (int, float)):
                    merged[key] = merged.get(key, 0) + value
        if out.first_error is None:
            out.first_error = report.first_error
    out.cells_visited = min(out.cells_visited, out.cells)
    out.elapsed = max(r.elapsed for r in reports)
    out.rows_per_s = round((out.rows - out.resumed_rows) / out.elapsed, 1) if out.elapsed else 0.0
    stops = {r.stopped for r in reports}
    out.stopped = stops.pop() if len(stops) == 1 else "+".join(sorted(stops))
    out.tasks = {**first.tasks, parts: len(reports)}
    out.tasks.pop("shard", None)
    return out


def _add_model_stats(into: dict[str, Any], stats: dict[str, Any]) -> None:
    """One model client's counts (`ClientStats.as_dict`) added into another's: a run in
    parts reports the calls of every part's client, by role and model as one run does."""
    for key, value in stats.items():
        if isinstance(value, float):
            into[key] = round(into.get(key, 0.0) + value, 3)
        elif isinstance(value, int) and not isinstance(value, bool):
            into[key] = into.get(key, 0) + value
        elif isinstance(value, dict):
            merged = into.setdefault(key, {})
            for name, count in value.items():
                merged[name] = merged.get(name, 0) + count
        elif into.get(key) is None:  # the first part's word on why a client stopped
            into[key] = value
