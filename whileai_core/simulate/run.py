"""`simulate` as one call: resolve the agent and writer, open the output, run, close.

`-o FILE` is written row by row (appended, flushed) so a killed run keeps every settled
group; without `resume` an existing FILE is started afresh, with it the rows already in
FILE are read back and their asks skipped.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..agents.registry import load_world, resolve_agent, resolve_writer
from ..errors import ConfigError
from ..jsonl import RowWriter
from ..models.options import ModelOptions
from ..spec import Spec
from .plan import RunPlan
from .resume import load_done
from .scheduler import Engine, Report, SimulateConfig

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
) -> Report:
    """Run one simulation to `output` (or stdout, or `sink` when given: each settled row is
    handed to it instead of being written). A `grader` is any judge under the one judge
    contract; its verdicts land on the rows and steer rl allocation. `plan` (from
    `plan_run`) says where the asks come from when it is not the spec's grid."""
    config.check()
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
    done: dict[str, list[dict[str, Any]]] = {}
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

    async def main() -> Report:
        engine = Engine(
            spec,
            agent,
            writer,
            config,
            sink=emit,
            done=done,
            execute_world=world,
            grader=judge,
            progress=progress,
            tasks=plan.tasks if plan is not None else None,
            sources=plan.sources if plan is not None else None,
        )
        try:
            report = await engine.run()
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
        return asyncio.run(main())
    finally:
        if writer_out is not None:
            writer_out.close()
