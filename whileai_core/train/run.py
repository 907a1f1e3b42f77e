"""`whileai train` as one call: a store run from the first line to the adapter.

    record = train(TrainOptions("graded.jsonl", "sft", "Qwen/Qwen2.5-0.5B-Instruct",
                                spec="specs/orders"))

In order: the source is read and shaped (`data`), the run is created on the store with
its knobs as `config`, the base is loaded, the holdout is played by the base (`holdout`),
TRL trains a LoRA with the run's callback streaming every logged number (and the hack
monitor, when asked, beside it), the adapter is saved, the holdout is played again by the
trained policy with the same judge, and the run finishes with `holdoutPassBefore/After`,
the delta report, and `adapter`. A run that raises finishes `failed` with the error; one
the monitor (or Ctrl-C) stopped finishes `stopped` with the reason in `error`, its adapter
still saved. The adapter folder holds `whileai-run.json` (run id, base, method, and for a
reward model its threshold), so `serve-model` and `rm:` judges need only the folder.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, WhileaiError
from .adapters import RUN_FILE
from .data import Shaped, Source, holdout_rows_of, read_jsonl, resolve_source, shape_lines
from .options import TRAINERS, TrainOptions, default_output, require_extra

if TYPE_CHECKING:
    from ..runs.handle import TrainingRun
    from ..spec import Spec
    from ..store.base import Store


class TrainingFailed(WhileaiError):
    """The run failed; it is on the store as `failed` with this error."""

    def __init__(self, run_id: str, error: str) -> None:
        self.run_id = run_id
        super().__init__(f"run {run_id} failed: {error}")


def _store_opener(store: Store | None) -> Callable[[], Store]:
    if store is None:
        from ..store import open_store

        return open_store

    class _Borrowed:
        """The caller's store, not closed by the reader that borrowed it."""

        def __getattr__(self, name: str) -> Any:
            return getattr(store, name)

        def close(self) -> None:
            return None

    return lambda: _Borrowed()


def train(
    opts: TrainOptions,
    *,
    store: Store | None = None,
    say: Callable[[str], None] = lambda line: None,
) -> dict[str, Any]:
    """Train, record, evaluate; returns the finished run's record."""
    opts.check()
    require_extra()
    from ..spec import load_spec

    spec = load_spec(opts.spec) if opts.spec else None
    with tempfile.TemporaryDirectory(prefix="whileai-train-") as tmp:
        source = resolve_source(opts.source, _store_opener(store), Path(tmp) / "source")
        holdout = _holdout_ref(opts, source, spec)
        if holdout is None and spec is None and source.holdout_dataset:
            say(f"whileai: not playing the holdout {source.holdout_dataset}: its tasks are "
                "played in the spec's world; give --spec")  # fmt: skip
        shaped = shape_lines(
            opts.method, source, spec=spec, mask=opts.mask, scratch=Path(tmp), reward=opts.reward
        )
        for warning in shaped.warnings:
            say(f"whileai: {warning}")
        none = opts.holdout in ("none", "")
        if holdout is None and not none and shaped.environment is not None and spec:
            holdout = _environment_holdout(shaped.environment, Path(tmp))
        run = _open_run(opts, source, shaped, store)
        say(
            f"whileai: run {run.run_id}: {opts.method} on {len(shaped.lines)} lines "
            f"({shaped.shape}), base {opts.base_model}"
        )
        out = Path(opts.output_dir) if opts.output_dir else default_output(run.run_id)
        try:
            return _train(opts, run, shaped, spec, holdout, out, say)
        except KeyboardInterrupt:
            run.finish("stopped", error="interrupted (Ctrl-C)")
            raise
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
            run.finish("failed", error=error)
            raise TrainingFailed(run.run_id, error) from exc
        finally:
            run.close()


def _holdout_ref(opts: TrainOptions, source: Source, spec: Spec | None) -> str | None:
    """The holdout to play: the flag, else the source's stored sibling; None for none."""
    if opts.holdout in ("none", ""):
        return None
    ref = opts.holdout or source.holdout_dataset
    if ref is not None and spec is None:
        if opts.holdout:
            raise ConfigError("--holdout needs --spec: the holdout's tasks are played in its world")
        return None
    return ref


def _environment_holdout(env: Path, scratch: Path) -> str | None:
    rows = holdout_rows_of(env)
    if not rows:
        return None
    path = scratch / "holdout.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def _open_run(
    opts: TrainOptions, source: Source, shaped: Shaped, store: Store | None
) -> TrainingRun:
    from ..runs.handle import training_run

    config = opts.knobs.as_config(opts.method)
    config.update(source=source.label, shape=shaped.shape, lines=len(shaped.lines))
    if opts.monitor is not None:
        config["monitor"] = {
            "every": opts.monitor.every,
            "samples": opts.monitor.samples,
            "stop_on": list(opts.monitor.stop_on),
        }
    name = opts.name or f"{opts.method}-{Path(source.label).stem or source.label}"
    return training_run(
        name,
        dataset=source.dataset_id,
        base_model=opts.base_model,
        trainer=f"trl {TRAINERS[opts.method]}",
        config=config,
        store=store,
        flush_every=1,
        flush_seconds=1.0,
    )


def _train(
    opts: TrainOptions,
    run: TrainingRun,
    shaped: Shaped,
    spec: Spec | None,
    holdout: str | None,
    out: Path,
    say: Callable[[str], None],
) -> dict[str, Any]:
    import datasets
    import transformers
    from datasets import load_dataset

    from ..runs.callback import TrainerCallback
    from .model import load_model, load_tokenizer
    from .trainers import build_trainer

    datasets.disable_progress_bars()  # stderr carries the run's own lines, not bars
    transformers.utils.logging.disable_progress_bar()
    knobs = opts.knobs
    out.mkdir(parents=True, exist_ok=True)
    data_file = out / "data" / "train.jsonl"
    data_file.parent.mkdir(parents=True, exist_ok=True)
    data_file.write_text("".join(json.dumps(x) + "\n" for x in shaped.lines), encoding="utf-8")
    dataset = load_dataset("json", data_files=str(data_file), split="train")
    import torch

    torch.manual_seed(knobs.seed)
    tokenizer = load_tokenizer(opts.base_model)
    model = load_model(opts.base_model, method=opts.method)
    policy = opts.method != "rm" and holdout is not None and spec is not None
    before = None
    if policy:
        assert holdout is not None and spec is not None
        before = _play(model, tokenizer, holdout, spec, opts, "before", say)
    callbacks: list[Any] = [TrainerCallback(run, finish=False)]
    monitor = _monitor(opts, shaped, run, tokenizer, spec)
    if monitor is not None:
        callbacks.append(monitor)
    trainer = build_trainer(
        opts.method,
        model,
        tokenizer,
        dataset,
        knobs,
        out / "trainer",
        callbacks=callbacks,
        reward=shaped.reward,
    )
    from transformers.trainer_callback import PrinterCallback, ProgressCallback

    for printer in (PrinterCallback, ProgressCallback):  # stdout is the record's, not the logs'
        trainer.remove_callback(printer)
    if len(trainer.train_dataset) == 0:
        raise ConfigError(
            f"no sample kept a trained token within --max-length {knobs.max_length} (the "
            "trainer truncates from the end, where the agent's turns are): raise --max-length"
        )
    trainer.train()
    adapter = out / "adapter"
    trainer.save_model(str(adapter))
    tokenizer.save_pretrained(str(adapter))
    summary: dict[str, Any] = {}
    for entry in reversed(trainer.state.log_history):
        if "train_loss" in entry:
            summary["train_loss"] = entry["train_loss"]
            break
    about: dict[str, Any] = {
        "run_id": run.run_id,
        "base_model": opts.base_model,
        "method": opts.method,
    }
    if opts.method == "rm":
        from .rm import fit_threshold

        fitted = fit_threshold(trainer.model, tokenizer, shaped.lines, knobs.max_length)
        summary.update(fitted)
        about["threshold"] = fitted["rm_threshold"]
    (adapter / RUN_FILE).write_text(json.dumps(about, indent=2) + "\n", encoding="utf-8")
    if before is not None:
        assert holdout is not None and spec is not None
        after = _play(trainer.model, tokenizer, holdout, spec, opts, "after", say)
        _record_holdout(run, before, after, say)
    stop = monitor.stop_reason if monitor is not None else None
    status = "stopped" if stop else "done"
    record = run.finish(status, summary=summary, adapter=str(adapter.resolve()), error=stop)
    say(f"whileai: run {run.run_id} {status}; adapter {adapter}")
    return record


def _play(
    model: Any,
    tokenizer: Any,
    holdout: str,
    spec: Spec,
    opts: TrainOptions,
    label: str,
    say: Callable[[str], None],
) -> Any:
    from .holdout import play_holdout

    side = play_holdout(
        model,
        tokenizer,
        holdout,
        spec,
        judge=opts.judge,
        label=label,
        max_new_tokens=opts.knobs.max_completion_length,
        seed=opts.knobs.seed,
    )
    rate = "n/a" if side.pass_rate is None else f"{side.pass_rate:.1%}"
    say(
        f"whileai: holdout {label}: pass {rate} over {len(side.judged)} judged rollouts"
        + (f" ({side.unjudged} unjudged)" if side.unjudged else "")
    )
    return side


def _record_holdout(run: TrainingRun, before: Any, after: Any, say: Callable[[str], None]) -> None:
    from .holdout import holdout_delta

    if before.pass_rate is not None and after.pass_rate is not None:
        run.holdout(before.pass_rate, after.pass_rate)
    run.note(
        holdout_rows={
            "before": len(before.rows),
            "after": len(after.rows),
            "unjudged_before": before.unjudged,
            "unjudged_after": after.unjudged,
        }
    )
    try:
        report = holdout_delta(before, after)
    except WhileaiError as exc:  # too few rows for a delta: the pass rates still stand
        say(f"whileai: no delta report: {exc}")
        return
    run.attach_delta(report)


def _monitor(
    opts: TrainOptions, shaped: Shaped, run: TrainingRun, tokenizer: Any, spec: Spec | None
) -> Any:
    if opts.monitor is None:
        return None
    if opts.method != "grpo" or shaped.reward is None:
        raise ConfigError("the hack monitor watches GRPO: --monitor needs --method grpo")
    env = shaped.environment
    held = env / "data" / "grpo" / "holdout.jsonl" if env is not None else None
    lines = read_jsonl(held) if held is not None and held.is_file() else []
    if not lines:
        lines = shaped.lines  # no held-out split: the monitor samples training prompts
    from .monitor import HackMonitor

    return HackMonitor(
        lines,
        proxy=shaped.reward,
        gold=opts.judge,
        run=run,
        options=opts.monitor,
        tokenizer=tokenizer,
        spec=spec,
        seed=opts.knobs.seed,
        max_new_tokens=opts.knobs.max_completion_length,
    )
