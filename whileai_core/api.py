"""The library's front door: each stage as one call on rows, for a notebook or a script.

These are the functions the CLI commands wrap, with the row lists and iterators a Python
caller holds instead of files. `import whileai_core` exposes them lazily (see
`__init__.py`), so importing the package costs nothing until one is used.

    import whileai_core as wa

    rows, run = wa.simulate_rows("specs/orders", mode="rl", budget=200)
    graded = list(wa.grade(rows))                 # conduct x checklist
    print(wa.report(graded)["pass_at_1"])
    kept, why = wa.optimize(graded)               # rl groups in the band
    samples = list(wa.training_samples(kept, fmt="trl"))
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from .errors import ConfigError
from .models.options import ModelOptions
from .simulate.config import Report, SimulateConfig
from .simulate.plan import RunPlan
from .spec import Spec

Row = dict[str, Any]


def simulate_rows(
    spec: Spec | str | Path | None = None,
    *,
    agent: str = "seeded",
    writer: str | None = None,
    grader: Any = None,
    options: ModelOptions | None = None,
    traces: str | Iterable[Row] | None = None,
    tasks: str | None = None,
    broaden: bool = True,
    **config: Any,
) -> tuple[list[Row], Report]:
    """Play `agent` across the spec's grid; the rows and the run report.

    `config` takes the `SimulateConfig` fields (mode, budget, repeats, seed, reproducible,
    ...); `agent` and `writer` take what `--agent` and `--writer` take. `traces` (rows, a
    JSONL path, a dataset id, `agent:NAME`) aims the grid at what they got wrong, and
    with no `spec` the tools are read off them; `tasks` re-runs an earlier run's asks.
    """
    from .simulate.run import run_simulation

    settings = SimulateConfig(**config)
    if "budget" not in config:
        settings.budget_given = False
    target = spec if isinstance(spec, Spec) or spec is None else str(spec)
    plan = plan_run(target, settings, tasks_from=tasks, traces_from=traces, broaden=broaden)
    rows: list[Row] = []
    report = run_simulation(
        plan.spec,
        settings,
        agent_ref=agent,
        writer_ref=writer,
        options=options,
        grader=grader,
        sink=rows.append,
        plan=plan,
    )
    return rows, report


def plan_run(
    spec_ref: Spec | str | None,
    config: SimulateConfig,
    *,
    tasks_from: str | None = None,
    traces_from: str | Iterable[dict[str, Any]] | None = None,
    since: str | None = None,
    broaden: bool = True,
) -> RunPlan:
    """Load what the run plays: the spec's grid, an earlier run's task set pinned
    (`tasks_from`), or the grid aimed by traces (`traces_from`). `config` is completed in
    place where the task set decides (k and the budget of a pinned set).

    It lives here, above the traces and the store it reads from, so the simulate package
    never imports upward: `RunPlan` is simulate's, the traces build one."""
    if tasks_from and traces_from is not None:
        raise ConfigError("give --tasks (re-run a task set) or --traces (aim a new one), not both")
    if since and traces_from is None:
        raise ConfigError("--since filters platform traces: it needs --traces agent:NAME")
    if not broaden and traces_from is None:
        raise ConfigError("--no-broaden narrows the grid to the tools traces touched: add --traces")
    if traces_from is not None:
        from .traces.aim import plan_from_traces

        return plan_from_traces(spec_ref, config, traces_from, since=since, broaden=broaden)
    if spec_ref is None:
        raise ConfigError("give a SPEC (or --traces FILE to read the tools off traces)")
    from .spec import load_spec

    spec = spec_ref if isinstance(spec_ref, Spec) else load_spec(spec_ref)
    if tasks_from is None:
        return RunPlan(spec)
    from .simulate.pinned import load_pinned
    from .store.source import iter_source_rows

    pinned = load_pinned(
        spec, iter_source_rows(tasks_from), label=tasks_from, repeats=config.repeats,
        fault_rate=config.fault_rate,
    )  # fmt: skip
    config.repeats = pinned.k
    config.phrasings = 1
    if not config.budget_given:
        config.budget = pinned.needed()
    return RunPlan(spec, tasks=pinned)


def grade(
    rows: Iterable[Row],
    judge: Any = None,
    *,
    concurrency: int = 8,
    timeout: float | None = 60.0,
    **options: Any,
) -> Iterator[Row]:
    """Graded copies of `rows` under the one judge contract.

    `judge` is a `--judge` string (None: conduct x checklist), a `Judge`, or any callable
    `row -> verdict`; `options` are `JudgeOptions` fields (field, schema, spec, rubric...).
    """
    from .judges.contract import Judge, as_judge, grade_rows
    from .judges.registry import JudgeOptions, parse_judge

    if judge is None or isinstance(judge, str):
        chosen = parse_judge(judge, JudgeOptions(**options))
    else:
        chosen = judge if isinstance(judge, Judge) else as_judge(judge)
    return grade_rows(rows, chosen, concurrency=concurrency, timeout=timeout)


def report(rows: Iterable[Row], *, k: int | None = None, seed: int = 0) -> dict[str, Any]:
    """pass@1 with its interval, pass^k, pass@k, headroom, statuses and markers."""
    from .metrics.passat import pass_report

    return pass_report(rows, k=k, seed=seed)
