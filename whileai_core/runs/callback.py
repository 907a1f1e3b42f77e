"""One line on a Transformers or TRL trainer: `trainer.add_callback(TrainerCallback(run))`.

Every `on_log` becomes a point on the run (loss, learning rate, eval loss, epoch, grad
norm, and the reward and KL curves TRL's RL trainers log), `on_train_begin` sets the run's
length from the trainer, and `on_train_end` finishes it with the final train loss.
transformers is not a dependency: when it is installed the callback subclasses its
`TrainerCallback` (the Trainer checks that); when it is not, a plain base with the same
no-op events keeps the class importable and usable from any loop that calls them.
"""

from __future__ import annotations

from typing import Any

from .handle import TrainingRun

_EVENTS = (
    "on_init_end",
    "on_train_begin",
    "on_train_end",
    "on_epoch_begin",
    "on_epoch_end",
    "on_step_begin",
    "on_substep_end",
    "on_step_end",
    "on_optimizer_step",
    "on_pre_optimizer_step",
    "on_evaluate",
    "on_predict",
    "on_save",
    "on_log",
    "on_prediction_step",
)


class _Events:
    """What the Trainer calls on a callback, each doing nothing."""

    def __getattr__(self, name: str) -> Any:
        if name in _EVENTS:
            return lambda *args, **kwargs: None
        raise AttributeError(name)


def _base() -> type:
    try:
        from transformers import TrainerCallback as HFCallback
    except Exception:  # not installed (or broken): the plain base does the same job
        return _Events
    return HFCallback


# Trainer log keys -> the run's metric names. Timing and throughput keys are not learning
# signal and are left out; any other `eval_*` number is kept under its own name, and any
# `rewards/<fn>` under `reward_<fn>`.
LOG_KEYS = {
    "loss": "loss",
    "eval_loss": "eval_loss",
    "learning_rate": "lr",
    "epoch": "epoch",
    "grad_norm": "grad_norm",
    "train_loss": "train_loss",
    "mean_token_accuracy": "token_accuracy",
    "reward": "reward",
    "reward_std": "reward_std",
    "kl": "kl",
    "objective/kl": "kl",
    "objective/rlhf_reward": "reward",
    "entropy": "entropy",
    "completion_length": "completion_length",
    "completions/mean_length": "completion_length",
    # DPO's reward margin and pair accuracy; a reward model's the same two.
    "rewards/margins": "margin",
    "rewards/accuracies": "pair_accuracy",
    "margin": "margin",
    "accuracy": "pair_accuracy",
}
SKIP = frozenset(
    {
        "eval_runtime",
        "eval_samples_per_second",
        "eval_steps_per_second",
        "train_runtime",
        "train_samples_per_second",
        "train_steps_per_second",
        "total_flos",
        "step",
    }
)


def metric_name(key: str) -> str | None:
    if key in SKIP:
        return None
    if key in LOG_KEYS:
        return LOG_KEYS[key]
    if key.startswith("rewards/"):
        return "reward_" + key.removeprefix("rewards/").replace("/", "_")
    if key.startswith("eval_"):
        return key
    return None


class TrainerCallback(_base()):  # type: ignore[misc]
    """Logs a Trainer's numbers to `run`; `finish=False` leaves finishing to the script
    (one that evaluates after training and calls `run.holdout(...)`, `run.finish()`)."""

    def __init__(self, run: TrainingRun, *, finish: bool = True) -> None:
        super().__init__()
        self.run = run
        self.finish_on_end = finish

    def on_train_begin(
        self, args: Any = None, state: Any = None, control: Any = None, **kwargs: Any
    ) -> Any:
        total = getattr(state, "max_steps", None)
        if total:
            self.run.progress(int(getattr(state, "global_step", 0) or 0), int(total))
        return control

    def on_log(
        self,
        args: Any = None,
        state: Any = None,
        control: Any = None,
        logs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> Any:
        if not isinstance(logs, dict):
            return control
        metrics = {
            name: value for key, value in logs.items() if (name := metric_name(key)) is not None
        }
        if metrics:
            self.run.log(int(getattr(state, "global_step", 0) or 0), **metrics)
        return control

    def on_train_end(
        self, args: Any = None, state: Any = None, control: Any = None, **kwargs: Any
    ) -> Any:
        if self.finish_on_end and self.run.status == "running":
            summary: dict[str, Any] = {}
            for entry in reversed(getattr(state, "log_history", None) or []):
                if isinstance(entry, dict) and "train_loss" in entry:
                    summary["train_loss"] = entry["train_loss"]
                    break
            self.run.finish("done", summary=summary or None)
        return control
