"""simulate, grid, recommend: making rows from a spec, and sizing the run first."""

from __future__ import annotations

from typing import Annotated, Literal

import typer

from ..options import (
    ExecutorOpt,
    JsonOpt,
    RayAddressOpt,
    ReportFile,
    ShardOpt,
    ShardsOpt,
    check_executor,
    scoped_env,
    warn_renamed_env,
)

Mode = Literal["explore", "sft", "rl", "adaptive"]


SpecArg = Annotated[str, typer.Argument(help="Spec folder, or a spec JSON/YAML file.")]

# `simulate --help` in panels, in the order a user decides: who plays, what the run plays,
# its pace and seeds, where it aims, the model calls, where rows go (the shard and Ray
# flags carry their own panel, shared with grade and evaluate).
_WHO = "Who plays"
_PLAY = "What the run plays"
_PACE = "Seeds and pace"
_AIM = "Aim: traces and pinned tasks"
_MODEL = "Model calls"
_OUT = "Output"


def simulate(
    spec: Annotated[
        str | None,
        typer.Argument(
            help="Spec folder, or a spec JSON/YAML file (optional with --traces: the tools "
            "are then read off the traces).",
            show_default=False,
        ),
    ] = None,
    agent: Annotated[
        str | None,
        typer.Option(
            "--agent",
            rich_help_panel=_WHO,
            help="seeded, module:function, file.py:function, 'cmd:COMMAND', openai:MODEL, "
            "vllm:MODEL@URL, ollama:MODEL or a URL. Default: the spec's agent, WHILEAI_AGENT, "
            "seeded.",
        ),
    ] = None,
    writer: Annotated[
        str,
        typer.Option(
            "--writer",
            rich_help_panel=_WHO,
            envvar="WHILEAI_WRITER",
            help="Who voices the person: template (offline) or a model ref (openai:MODEL, ...).",
        ),
    ] = "template",
    mode: Annotated[
        Mode,
        typer.Option(
            "--mode",
            rich_help_panel=_PLAY,
            envvar="WHILEAI_MODE",
            help="explore: a new situation per row; sft: 3 phrasings each; rl: probe 2 "
            "rollouts per ask, fill to --repeats where they split; adaptive: phrasings x "
            "rollouts, see --until.",
        ),
    ] = "explore",
    budget: Annotated[
        int | None,
        typer.Option(
            "--budget",
            rich_help_panel=_PLAY,
            min=1,
            envvar="WHILEAI_BUDGET",
            help="Rows to write (exact). Default 1000; with --tasks, what the task set needs.",
            show_default=False,
        ),
    ] = None,
    time_budget: Annotated[
        float | None,
        typer.Option(
            "--time-budget",
            rich_help_panel=_PLAY,
            min=0.0,
            envvar="WHILEAI_TIME_BUDGET",
            help="Seconds; 0 = off.",
        ),
    ] = None,
    situations: Annotated[
        int | None,
        typer.Option(
            "--situations", rich_help_panel=_PLAY, min=1, help="Distinct situations at most."
        ),
    ] = None,
    phrasings: Annotated[
        int | None,
        typer.Option(
            "--phrasings", rich_help_panel=_PLAY, min=1, help="Phrasings per situation (n)."
        ),
    ] = None,
    repeats: Annotated[
        int | None,
        typer.Option(
            "--repeats",
            rich_help_panel=_PLAY,
            min=1,
            envvar="WHILEAI_REPEATS",
            help="Rollouts per phrasing (k).",
        ),
    ] = None,
    fault_rate: Annotated[
        float,
        typer.Option(
            "--fault-rate",
            rich_help_panel=_PLAY,
            min=0.0,
            max=1.0,
            envvar="WHILEAI_FAULT_RATE",
            help="Chance a cell's scheduled fault fires on each call to its tool (1.0: every "
            "call of a faulted cell fails).",
        ),
    ] = 1.0,
    concurrency: Annotated[
        int,
        typer.Option(
            "--concurrency",
            rich_help_panel=_PACE,
            min=1,
            envvar=scoped_env("WHILEAI_CONCURRENCY", "simulate"),
            help="Rollouts in flight.",
        ),
    ] = 32,
    seed: Annotated[
        int,
        typer.Option(
            "--seed",
            rich_help_panel=_PACE,
            envvar=scoped_env("WHILEAI_SEED", "simulate"),
            help="Seeds every draw.",
        ),
    ] = 0,
    reproducible: Annotated[
        bool,
        typer.Option(
            "--reproducible",
            rich_help_panel=_PACE,
            envvar="WHILEAI_REPRODUCIBLE",
            help="Byte-identical output at any concurrency.",
        ),
    ] = False,
    until: Annotated[
        Literal["compute", "saturation"],
        typer.Option(
            "--until",
            rich_help_panel=_PLAY,
            envvar="WHILEAI_UNTIL",
            help="compute: run to the budget; saturation (best with adaptive): stop once "
            "the last window of rows (a quarter of the cells, at least 100) added no cell, "
            "no pair of axis values and new behaviours (calls and their results) in under "
            "5% of its rows.",
        ),
    ] = "compute",
    avg_turns: Annotated[
        int,
        typer.Option(
            "--avg-turns",
            rich_help_panel=_PLAY,
            min=2,
            envvar="WHILEAI_AVG_TURNS",
            help="Target turns per row; the person speaks at most avg_turns // 2 times.",
        ),
    ] = 12,
    grader: Annotated[
        str | None,
        typer.Option(
            "--grader",
            rich_help_panel=_WHO,
            envvar="WHILEAI_GRADER",
            help="Judge rows as they land (any --judge value of `whileai grade`); rl reads its "
            "verdicts to decide where to spend repeats.",
        ),
    ] = None,
    output: Annotated[
        str | None,
        typer.Option(
            "--output",
            "-o",
            rich_help_panel=_OUT,
            help="Write rows here, row by row as groups settle (resumable).",
        ),
    ] = None,
    resume: Annotated[
        bool,
        typer.Option(
            "--resume",
            rich_help_panel=_OUT,
            help="Skip the asks already in -o FILE, append the rest.",
        ),
    ] = False,
    report: ReportFile = None,
    json: JsonOpt = False,
    model: Annotated[
        str | None,
        typer.Option(
            "--model", rich_help_panel=_MODEL, help="Model name for a bare URL (else OPENAI_MODEL)."
        ),
    ] = None,
    temperature: Annotated[
        float | None,
        typer.Option(
            "--temperature",
            rich_help_panel=_MODEL,
            min=0.0,
            envvar="WHILEAI_TEMPERATURE",
            help="Sampling temperature (default: the server's).",
        ),
    ] = None,
    max_tokens: Annotated[
        int | None,
        typer.Option(
            "--max-tokens",
            rich_help_panel=_MODEL,
            min=1,
            envvar="WHILEAI_MAX_TOKENS",
            help="Token cap of one model reply (default: the server's).",
        ),
    ] = None,
    top_p: Annotated[
        float | None,
        typer.Option(
            "--top-p",
            rich_help_panel=_MODEL,
            min=0.0,
            max=1.0,
            envvar="WHILEAI_TOP_P",
            help="Nucleus sampling (default: the server's).",
        ),
    ] = None,
    writer_max_tokens: Annotated[
        int | None,
        typer.Option(
            "--writer-max-tokens",
            rich_help_panel=_MODEL,
            min=1,
            help="Token cap on each completion of a model writer (the person's turns; "
            "--max-tokens caps the agent's). Default: WHILEAI_WRITER_MAX_TOKENS, else 400.",
            show_default=False,
        ),
    ] = None,
    agent_timeout: Annotated[
        float | None,
        typer.Option(
            "--agent-timeout",
            rich_help_panel=_MODEL,
            min=0.001,
            help="Seconds a model agent's call waits for its reply. Default: "
            "WHILEAI_AGENT_TIMEOUT, else 60.",
            show_default=False,
        ),
    ] = None,
    model_retries: Annotated[
        int | None,
        typer.Option(
            "--model-retries",
            rich_help_panel=_MODEL,
            min=0,
            help="Retries of a failed agent or writer call (timeout, 5xx, 429), with "
            "backoff. Default: WHILEAI_MODEL_RETRIES, else 5.",
            show_default=False,
        ),
    ] = None,
    writer_timeout: Annotated[
        float | None,
        typer.Option(
            "--writer-timeout",
            rich_help_panel=_MODEL,
            min=0.001,
            help="Seconds a model writer's call waits for its reply. Default: "
            "WHILEAI_WRITER_TIMEOUT, else 60.",
            show_default=False,
        ),
    ] = None,
    person_mode: Annotated[
        str | None,
        typer.Option(
            "--person-mode",
            rich_help_panel=_MODEL,
            metavar="plan|free",
            help="How a model writer voices the person: plan (the template decides what "
            "the person says and the model words it) or free (the model writes each turn; "
            "a small model breaks role more often). Default: WHILEAI_PERSON_MODE, else plan.",
            show_default=False,
        ),
    ] = None,
    logprobs: Annotated[
        bool, typer.Option("--logprobs", rich_help_panel=_MODEL, help="Record summed logprobs.")
    ] = False,
    logprobs_tokens: Annotated[
        bool,
        typer.Option(
            "--logprobs-tokens", rich_help_panel=_MODEL, help="Also keep the per-token list."
        ),
    ] = False,
    cache: Annotated[
        bool,
        typer.Option(
            "--cache", rich_help_panel=_MODEL, envvar="WHILEAI_CACHE", help="Cache model responses."
        ),
    ] = False,
    execute: Annotated[
        str | None,
        typer.Option(
            "--execute",
            rich_help_panel=_WHO,
            help="module:function (found in the current directory too) answering tool calls "
            "instead of the mock; whileai_core.simulate.execute.current_rollout() names the "
            "rollout inside each call.",
        ),
    ] = None,
    traces: Annotated[
        str | None,
        typer.Option(
            "--traces",
            rich_help_panel=_AIM,
            envvar="WHILEAI_TRACES",
            help="Aim the grid at what these traces got wrong: a JSONL file, a dataset id, "
            "agent:NAME (ingested traces) or platform. Sources never enter the output.",
        ),
    ] = None,
    broaden: Annotated[
        bool,
        typer.Option(
            "--broaden/--no-broaden",
            rich_help_panel=_AIM,
            help="--no-broaden: drop the tools the traces never touched from the grid.",
        ),
    ] = True,
    since: Annotated[
        str | None,
        typer.Option(
            "--since",
            rich_help_panel=_AIM,
            envvar="WHILEAI_SINCE",
            help="With --traces agent:NAME: only traces this recent (7d, 12h).",
        ),
    ] = None,
    tasks: Annotated[
        str | None,
        typer.Option(
            "--tasks",
            rich_help_panel=_AIM,
            help="Re-run every ask of this earlier run (JSONL or dataset id) on its own "
            "scenario_id, world and faults; nothing new is drawn; k is its k unless --repeats.",
        ),
    ] = None,
    repeat_policy: Annotated[
        Literal["adaptive", "fixed"],
        typer.Option(
            "--repeat-policy",
            rich_help_panel=_PLAY,
            envvar="WHILEAI_REPEAT_POLICY",
            help="adaptive: probe each ask, fill only the groups that split; fixed: "
            "--repeats rollouts for every ask.",
        ),
    ] = "adaptive",
    probe: Annotated[
        int,
        typer.Option(
            "--probe",
            rich_help_panel=_PLAY,
            min=1,
            envvar="WHILEAI_PROBE",
            help="Rollouts an rl ask is probed with.",
        ),
    ] = 2,
    stop_grace: Annotated[
        float,
        typer.Option(
            "--stop-grace",
            rich_help_panel=_PACE,
            min=0.0,
            envvar="WHILEAI_STOP_GRACE",
            help="Seconds the rollouts in flight get to finish after a stop; the rest are "
            "abandoned and counted.",
        ),
    ] = 5.0,
    shard: ShardOpt = None,
    blocks: Annotated[
        int,
        typer.Option(
            "--blocks",
            min=1,
            envvar="WHILEAI_BLOCKS",
            help="Keep the run-wide state (rl allocation, near-duplicate filter) per block of "
            "N, as N shards do: the run's rows then equal its N shards' rows, merged.",
        ),
    ] = 1,
    executor: ExecutorOpt = "local",
    ray_address: RayAddressOpt = None,
    shards: ShardsOpt = None,
) -> None:
    """Play the agent against a mock world across the coverage grid; rows to stdout or -o."""
    warn_renamed_env("simulate")
    from contextlib import nullcontext

    from whileai_core.agents.registry import pick_agent_ref
    from whileai_core.api import plan_run
    from whileai_core.errors import WhileaiError
    from whileai_core.models.options import ModelOptions
    from whileai_core.scale.executor import make_executor
    from whileai_core.settings import agent_timeout as agent_timeout_of
    from whileai_core.settings import model_retries as model_retries_of
    from whileai_core.settings import person_mode as person_mode_of
    from whileai_core.simulate.run import run_simulation
    from whileai_core.simulate.scheduler import SimulateConfig

    from ..console import check_report_path, emit_report, err, progress_bar, say

    check_report_path(report)
    picked_shard = check_executor(shard, executor, ray_address, shards, blocks)
    config = SimulateConfig(
        mode=mode,
        budget=budget or 1000,
        budget_given=budget is not None,
        time_budget=time_budget or None,
        situations=situations,
        phrasings=phrasings,
        repeats=repeats,
        fault_rate=fault_rate,
        concurrency=concurrency,
        seed=seed,
        reproducible=reproducible,
        until=until,
        avg_turns=avg_turns,
        probe=probe,
        stop_grace=stop_grace,
        repeat_policy=repeat_policy,
    )
    plan = plan_run(
        spec, config, tasks_from=tasks, traces_from=traces, since=since, broaden=broaden
    )
    loaded = plan.spec
    ref, source = pick_agent_ref(agent, loaded)
    if source == "default":
        say("whileai: no --agent given: using the built-in seeded agent")
    options = ModelOptions(
        model=model,
        temperature=temperature,
        max_tokens=max_tokens,
        top_p=top_p,
        logprobs="tokens" if logprobs_tokens else logprobs,
        cache=cache,
        concurrency=concurrency,
        execute=execute,
        timeout=agent_timeout_of(agent_timeout),
        retries=model_retries_of(model_retries),
        writer_max_tokens=writer_max_tokens,
        writer_timeout=writer_timeout,
        person_mode=person_mode_of(_person_mode_flag(person_mode)),
    )
    judge = None
    if grader:  # the judges load only for a run that grades as it goes
        from whileai_core.judges.registry import JudgeOptions, parse_judge

        judge = parse_judge(grader, JudgeOptions(spec=loaded, models=options))
    run_on = make_executor(
        executor, shard=picked_shard, shards=shards, address=ray_address, say=say
    )
    # A sharded run says a line per shard instead of a bar.
    bar = nullcontext(None) if run_on.remote else progress_bar("simulate", total=config.budget)
    with bar as update:
        result = run_simulation(
            loaded,
            config,
            agent_ref=ref,
            writer_ref=writer,
            options=options,
            output=output,
            resume=resume,
            grader=judge,
            progress=None if update is None else lambda done, _total: update(done),
            plan=plan,
            blocks=blocks,
            executor=run_on,
        )
    data = result.as_dict()
    if not emit_report(data, json=json, report_file=report, data_on_stdout=output is None):
        for line in result.lines():
            err().print(line, markup=False, highlight=False)
    if result.rows == 0:
        raise WhileaiError(
            f"{result.stopped}: no row survived"
            + (f"; first agent error: {result.first_error}" if result.first_error else "")
        )


def merge(
    files: Annotated[
        list[str], typer.Argument(help="Every shard's output of one run (any order).")
    ],
    output: Annotated[
        str | None,
        typer.Option("--output", "-o", help="Write the merged rows here (atomic replace)."),
    ] = None,
    json: JsonOpt = False,
    report: ReportFile = None,
) -> None:
    """Merge the N outputs of a sharded run, in shard order; refuse overlaps and gaps."""
    from whileai_core.simulate.merge import merge_shards

    from ..console import check_report_path, emit_report, say

    check_report_path(report)
    merged = merge_shards(files, output)
    if not emit_report(
        merged.as_dict(), json=json, report_file=report, data_on_stdout=output is None
    ):
        for line in merged.lines():
            say(line)


def grid(spec: SpecArg, json: JsonOpt = False, report: ReportFile = None) -> None:
    """Print the coverage grid's axes, their values and the cell count."""
    from whileai_core.simulate.grid import build_grid
    from whileai_core.spec import load_spec

    from ..console import check_report_path, emit_report, out

    check_report_path(report)
    described = build_grid(load_spec(spec)).describe()
    if emit_report(described, json=json, report_file=report, data_on_stdout=False):
        return
    console = out()
    for name, values in described["axes"].items():
        console.print(f"[bold]{name}[/bold] ({len(values)}): " + " | ".join(values), markup=True)
    console.print(
        f"cells: {described['cells']} in {described['blocks']} rule blocks "
        f"(pairwise; the full product is {described['full_product']:,})"
    )


def recommend(
    spec: SpecArg,
    mode: Annotated[Mode, typer.Option("--mode", help="The mode the run will use.")] = "sft",
    target: Annotated[int, typer.Option("--target", min=1, help="Rows you want to keep.")] = 800,
    mixed_rate: Annotated[
        float,
        typer.Option(
            "--mixed-rate",
            min=0.0,
            max=1.0,
            help="Measured share of mixed rl groups.",
        ),
    ] = 0.5,
    repeats: Annotated[int, typer.Option("--repeats", min=2, help="k for rl.")] = 8,
    json: JsonOpt = False,
    report: ReportFile = None,
) -> None:
    """Size a run from this agent's grid: cells, visits, budget, situations x repeats."""
    from whileai_core.simulate.recommend import recommend as sized
    from whileai_core.spec import load_spec

    from ..console import check_report_path, emit_report, out

    check_report_path(report)
    rec = sized(load_spec(spec), mode, target=target, mixed_rate=mixed_rate, repeats=repeats)
    if emit_report(rec, json=json, report_file=report, data_on_stdout=False):
        return
    console = out()
    for line in rec["reasoning"]:
        console.print(line, markup=False)
    console.print(
        f"cells {rec['cells']}, visits per cell {rec['visits_per_cell']}, budget {rec['budget']}, "
        f"{rec['situations']} situations x {rec['phrasings']} phrasings x {rec['repeats']} repeats",
        markup=False,
    )
    console.print("whileai simulate SPEC " + " ".join(rec["simulate_args"]), markup=False)


def _person_mode_flag(value: str | None) -> str | None:
    """--person-mode as given; one that is neither mode is a usage error, exit 2."""
    from whileai_core.settings import PERSON_MODES

    from ..options import bad_flag

    if value is not None and value.strip().lower() not in PERSON_MODES:
        bad_flag("--person-mode", f"{value!r} is not one of {', '.join(PERSON_MODES)}")
    return value
