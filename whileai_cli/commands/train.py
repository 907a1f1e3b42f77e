"""train, reward-model, serve-model and models: training on exports, and what it made.

Each needs the `train` extra (TRL, PEFT, transformers, torch) except `models`; without it
they stop before any work with the line that installs it."""

from __future__ import annotations

from typing import Annotated, Literal

import typer

from ..options import JsonOpt, SpecOpt
from .platform import ApiKeyOpt, opened

_KNOBS = "Knobs (recorded on the run)"
_WATCH = "Hack monitor (GRPO)"
_HOLDOUT = "Holdout"


def _say(line: str) -> None:
    from ..console import err

    err().print(line, markup=False, highlight=False)


def train(
    source: Annotated[
        str,
        typer.Argument(
            help="Rows or an export's lines (a JSONL file), a dataset id on the store, or "
            "(GRPO) the folder `export --env` wrote.",
            show_default=False,
        ),
    ],
    method: Annotated[
        Literal["sft", "dpo", "grpo", "rm"],
        typer.Option("--method", help="sft, dpo, grpo, or rm (a reward model)."),
    ],
    base_model: Annotated[
        str,
        typer.Option(
            "--base-model",
            help="A model name or a local folder from_pretrained reads; a folder holding "
            "an adapter starts from its base with it merged.",
            show_default=False,
        ),
    ],
    spec: SpecOpt = None,
    holdout: Annotated[
        str | None,
        typer.Option(
            "--holdout",
            rich_help_panel=_HOLDOUT,
            help="Rows (file or dataset id) whose tasks the policy plays before and after, "
            "or 'none'. Default: the dataset's holdout sibling (push --holdout), or an "
            "environment's holdout split. Needs --spec.",
            show_default=False,
        ),
    ] = None,
    judge: Annotated[
        str | None,
        typer.Option(
            "--judge",
            "-j",
            rich_help_panel=_HOLDOUT,
            help="The judge of the holdout (and the monitor's gold): any grade --judge "
            "value. Default: grade's.",
            show_default=False,
        ),
    ] = None,
    reward: Annotated[
        str | None,
        typer.Option(
            "--reward",
            help="GRPO's reward: a TRL reward function (module:function or file.py:function). "
            "Default: the environment's whileai_reward.",
            show_default=False,
        ),
    ] = None,
    mask: Annotated[
        Literal["all", "final"],
        typer.Option("--mask", help="SFT from rows: train every agent turn, or the final one."),
    ] = "all",
    epochs: Annotated[float, typer.Option("--epochs", rich_help_panel=_KNOBS)] = 1.0,
    steps: Annotated[
        int | None,
        typer.Option(
            "--steps",
            min=1,
            rich_help_panel=_KNOBS,
            help="Optimizer steps (overrides --epochs).",
            show_default=False,
        ),
    ] = None,
    learning_rate: Annotated[float, typer.Option("--learning-rate", rich_help_panel=_KNOBS)] = 2e-4,
    beta: Annotated[
        float | None,
        typer.Option(
            "--beta",
            rich_help_panel=_KNOBS,
            help="DPO's beta; GRPO's KL coefficient (default: TRL's).",
            show_default=False,
        ),
    ] = None,
    generations: Annotated[
        int,
        typer.Option(
            "--generations", min=2, rich_help_panel=_KNOBS, help="GRPO: completions per prompt."
        ),
    ] = 4,
    seed: Annotated[int, typer.Option("--seed", rich_help_panel=_KNOBS)] = 0,
    lora_r: Annotated[int, typer.Option("--lora-r", min=1, rich_help_panel=_KNOBS)] = 16,
    batch_size: Annotated[int, typer.Option("--batch-size", min=1, rich_help_panel=_KNOBS)] = 2,
    max_length: Annotated[
        int,
        typer.Option(
            "--max-length", min=16, rich_help_panel=_KNOBS, help="Tokens of one training sequence."
        ),
    ] = 1024,
    max_completion_length: Annotated[
        int,
        typer.Option(
            "--max-completion-length",
            min=1,
            rich_help_panel=_KNOBS,
            help="Tokens of a GRPO completion, a holdout reply, a monitor sample.",
        ),
    ] = 64,
    monitor_every: Annotated[
        int,
        typer.Option(
            "--monitor-every",
            min=0,
            rich_help_panel=_WATCH,
            help="Look at the live policy every N steps (0: no monitor).",
        ),
    ] = 0,
    monitor_samples: Annotated[
        int,
        typer.Option(
            "--monitor-samples",
            min=2,
            rich_help_panel=_WATCH,
            help="Completions per held-out prompt at each look.",
        ),
    ] = 4,
    monitor_prompts: Annotated[
        int,
        typer.Option(
            "--monitor-prompts",
            min=1,
            rich_help_panel=_WATCH,
            help="Held-out prompts sampled at each look.",
        ),
    ] = 8,
    monitor_window: Annotated[
        int,
        typer.Option(
            "--monitor-window",
            min=2,
            rich_help_panel=_WATCH,
            help="Looks a trend (divergence, length) is read over.",
        ),
    ] = 3,
    kl_budget: Annotated[
        float,
        typer.Option(
            "--kl-budget", rich_help_panel=_WATCH, help="The drift alarm fires past this KL."
        ),
    ] = 0.5,
    length_growth: Annotated[
        float,
        typer.Option(
            "--length-growth",
            rich_help_panel=_WATCH,
            help="The length alarm fires when completions grow by this share.",
        ),
    ] = 0.2,
    endorsed: Annotated[
        str | None,
        typer.Option(
            "--endorsed",
            rich_help_panel=_WATCH,
            help="Features the reward should track, for the scan (tool:get_order,...).",
            show_default=False,
        ),
    ] = None,
    stop_on: Annotated[
        str | None,
        typer.Option(
            "--stop-on",
            rich_help_panel=_WATCH,
            help="Alarms that stop training: divergence, length, drift, feature "
            "(comma-separated) or all. Turns the monitor on.",
            show_default=False,
        ),
    ] = None,
    output_dir: Annotated[
        str | None,
        typer.Option(
            "--output-dir",
            help="Where the adapter goes (default: WHILEAI_HOME/train/RUN_ID).",
            show_default=False,
        ),
    ] = None,
    name: Annotated[
        str | None, typer.Option("--name", help="The run's name.", show_default=False)
    ] = None,
    json: JsonOpt = False,
    api_key: ApiKeyOpt = None,
) -> None:
    """Train a LoRA adapter with TRL (sft, dpo, grpo, rm) as a store run; holdout before/after."""
    from whileai_core.runs.report import run_lines
    from whileai_core.train import Knobs, MonitorOptions, TrainOptions
    from whileai_core.train import train as run_training
    from whileai_core.train.options import parse_alarms

    from ..console import print_json, print_lines

    knobs = Knobs(
        epochs=epochs,
        steps=steps,
        learning_rate=learning_rate,
        beta=beta,
        generations=generations,
        seed=seed,
        lora_r=lora_r,
        batch_size=batch_size,
        max_length=max_length,
        max_completion_length=max_completion_length,
    )
    alarms = parse_alarms(stop_on)
    monitor = None
    if monitor_every or alarms:
        monitor = MonitorOptions(
            every=monitor_every or 10,
            samples=monitor_samples,
            prompts=monitor_prompts,
            window=monitor_window,
            kl_budget=kl_budget,
            length_growth=length_growth,
            stop_on=alarms,
            endorsed=tuple(e for e in (endorsed or "").split(",") if e),
        )
    options = TrainOptions(
        source=source,
        method=method,
        base_model=base_model,
        knobs=knobs,
        output_dir=output_dir,
        name=name,
        spec=spec,
        holdout=holdout,
        judge=judge,
        reward=reward,
        mask=mask,
        monitor=monitor,
    )
    with opened(api_key) as store:
        record = run_training(options, store=store, say=_say)
        record = store.get_run(record["runId"])
    if json:
        print_json(record)
    else:
        print_lines(run_lines(record))


def reward_model(
    run: Annotated[str, typer.Argument(help="A reward-model run's id, or its adapter folder.")],
    inputs: Annotated[
        list[str] | None,
        typer.Argument(help="Rows to grade ('-' or nothing: stdin).", show_default=False),
    ] = None,
    spec: SpecOpt = None,
    output: Annotated[
        str | None,
        typer.Option("--output", "-o", help="Write graded rows here instead of stdout."),
    ] = None,
) -> None:
    """Grade rows with a trained reward model: reward 0/1 against its threshold, rm_score kept.

    The same judge as `grade --judge rm:RUN`, so trust, probes and agreement take it too."""
    from whileai_core.judges.run import grade_files
    from whileai_core.train.rm import reward_model_judge

    from ..options import load_spec_flag

    judge = reward_model_judge(run, spec=load_spec_flag(spec))
    result = grade_files(inputs or ["-"], judge, output=output, concurrency=1, timeout=None)
    for line in result.lines():
        _say(line)


def serve_model(
    run: Annotated[str, typer.Argument(help="A finished run's id, or its adapter folder.")],
    port: Annotated[
        int, typer.Option("--port", min=0, max=65535, help="0 picks a free port.")
    ] = 8000,
    host: Annotated[str, typer.Option("--host", help="Interface to listen on.")] = "127.0.0.1",
    name: Annotated[
        str | None,
        typer.Option(
            "--name", help="The model name clients send (default: the run id).", show_default=False
        ),
    ] = None,
    max_tokens: Annotated[
        int, typer.Option("--max-tokens", min=1, help="Cap on tokens a reply may generate.")
    ] = 512,
) -> None:
    """Serve a run's adapter at an OpenAI-compatible /v1/chat/completions (tool calls too)."""
    import signal

    from whileai_core.train.serve import serve_run

    def stop(*_: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)

    def ready(server: object) -> None:
        _say(
            f"whileai: serving {getattr(server, 'name', '')} at "
            f"{getattr(server, 'base_url', '')} (Ctrl-C stops)"
        )

    try:
        serve_run(run, host=host, port=port, name=name, max_new_tokens=max_tokens, ready=ready)
    except KeyboardInterrupt:
        _say("whileai: stopped serving")


def models(json: JsonOpt = False) -> None:
    """List the models `serve-model` is serving on this machine, with their URLs."""
    from whileai_core.train.served import list_served

    from ..console import print_json, print_table

    served = list_served()
    if json:
        print_json({"models": served})
        return
    print_table(
        ["name", "url", "run", "method", "base", "pid"],
        [
            [str(r.get(k) or "-") for k in ("name", "url", "run", "method", "base_model", "pid")]
            for r in served
        ],
    )
    _say(f"{len(served)} models served")
