"""`simulate` as one call: resolve the agent and writer, open the output, run, close.

`-o FILE` is written row by row (appended, flushed) so a killed run keeps every settled
group; without `resume` an existing FILE is started afresh, with it the rows already in
FILE are read back and their asks skipped.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import aio
from ..agents.registry import load_world, resolve_agent, resolve_writer
from ..errors import ConfigError
from ..jsonl import RowWriter
from ..models.options import ModelOptions
from ..registry import is_model_ref
from ..spec import Spec
from .grid import build_grid
from .plan import RunPlan
from .resume import load_done
from .scheduler import Engine, Report, SimulateConfig
from .shards import Shard, ShardTasks, ask_cost, budget_shares, shard_count_error
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
    done: dict[str, list[dict[str, Any]]] | None = None,
) -> Report:
    """Run one simulation to `output` (or stdout, or `sink` when given: each settled row is
    handed to it instead of being written). A `grader` is any judge under the one judge
    contract; its verdicts land on the rows and steer rl allocation. `plan` (from
    `plan_run`) says where the asks come from when it is not the spec's grid.

    `shard` plays only that shard's asks on its budget share (rows carry `shard`);
    `blocks` N plays all N shards in this process, each with its own allocation state, so
    its rows are the N shards' rows (see `shards`). `done` is what `--resume` replays, when
    the caller read it already (the Ray executor hands each shard its own)."""
    config.check()
    if shard is not None and blocks > 1:
        raise ConfigError("give --shard I/N (one shard) or --blocks N (all of them), not both")
    if blocks < 1:
        raise ConfigError("--blocks must be at least 1")
    judge = None
    if grader is not None:
        from ..judges.contract import as_judge

        judge = as_judge(grader)  # a Judge already is one; a bare callable gets a name
    options = options or ModelOptions()
    options.concurrency = config.concurrency
    if resume and not output:
        raise ConfigError("--resume needs -o FILE: the rows to resume are read from it")
    agent = resolve_agent(agent_ref, spec, options)
    writer = resolve_writer(writer_ref, spec, options, avg_turns=config.avg_turns)
    world = load_world(options.execute) if options.execute else None
    parts = plan_parts(spec, config, plan, shard=shard, blocks=blocks)
    done = dict(done or {})
    if output and output != "-":
        if resume:
            done = load_done(output)
        elif Path(output).is_file() and Path(output).stat().st_size:
            # Rows a run paid for are never thrown away by a forgotten flag.
            raise ConfigError(
                f"{output} already holds rows: --resume to finish that run, or remove the "
                "file to start over"
            )
    if sink is not None and output:
        raise ConfigError("give either output or sink, not both")
    writer_out: RowWriter | None = None
    emit = sink
    if emit is None:
        append = bool(output) and output != "-"
        writer_out = RowWriter(output if append else None, mode="append")
        emit = writer_out.write
    offline_writer = not is_model_ref(writer_ref or "template")

    async def main() -> Report:
        engines = [
            Engine(
                spec,
                agent,
                writer,
                part.config,
                sink=emit if part.label is None else _labelled(emit, part.label),
                done=done,
                execute_world=world,
                grader=judge,
                progress=progress if len(parts) == 1 else None,
                tasks=part.tasks,
                sources=plan.sources if plan is not None else None,
                replay_openers=part.label is not None and offline_writer,
            )
            for part in parts
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

    try:
        # A model-backed run (its clients exist by now) on the faster loop; an offline run
        # (seeded, command or sandboxed agents) keeps the standard one it is tested on.
        return aio.run(main()) if options.clients else asyncio.run(main())
    finally:
        if writer_out is not None:
            writer_out.close()


@dataclasses.dataclass
class Part:
    """One engine's share of a run: its asks, its config (budget share) and shard label."""

    tasks: TaskSource | None
    config: SimulateConfig
    label: str | None = None


def shard_shares(
    spec: Spec, config: SimulateConfig, plan: RunPlan | None, count: int
) -> tuple[TaskSource, list[int], int | None]:
    """The task source shards draw from, each shard's budget share, and the run's ask cap."""
    base = plan.tasks if plan is not None else None
    inner: TaskSource = base or GridTasks(spec, build_grid(spec), fault_rate=config.fault_rate)
    n, k = config.shape
    max_asks = config.situations * n if config.situations else None
    fixed = k == 1 or config.repeat_policy == "fixed"
    shares = budget_shares(
        inner, budget=config.budget, count=count, phrasings=n,
        cost=ask_cost(k, config.probe, fixed), max_asks=max_asks,
    )  # fmt: skip
    return inner, shares, max_asks


def plan_parts(
    spec: Spec, config: SimulateConfig, plan: RunPlan | None, *, shard: Shard | None, blocks: int
) -> list[Part]:
    """The engines a run needs: one for a plain run, one for a shard, one per block."""
    if shard is None and blocks == 1:
        return [Part(plan.tasks if plan is not None else None, config)]
    count = shard.count if shard is not None else blocks
    inner, shares, max_asks = shard_shares(spec, config, plan, count)
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
        parts.append(Part(tasks, part_config, label))
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
    "rollouts_abandoned", "cells_visited",
)  # fmt: skip


def combine_reports(reports: list[Report], config: SimulateConfig) -> Report:
    """One report for a run played as blocks: counts summed, the slowest block's clock."""
    out = Report(mode=config.mode, budget=config.budget)
    first = reports[0]
    out.agent, out.writer, out.cells = first.agent, first.writer, first.cells
    for report in reports:
        for name in _SUMMED:
            setattr(out, name, getattr(out, name) + getattr(report, name))
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
    out.tasks = {**first.tasks, "blocks": len(reports)}
    out.tasks.pop("shard", None)
    return out
