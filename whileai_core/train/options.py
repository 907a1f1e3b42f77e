"""What a training run is asked to do, and the knobs two runs are compared by.

Everything here is plain data: `whileai train --help`, the run's record and the checks on
a flag need no torch. `Knobs` is what lands on the run's `config` (so the dashboard and
`runs show` can say what differed between two runs); the rest of `TrainOptions` is where
the data, the model and the output are.
"""

from __future__ import annotations

import dataclasses
import importlib.util
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ConfigError

METHODS = ("sft", "dpo", "grpo", "rm")
TRAINERS = {"sft": "SFTTrainer", "dpo": "DPOTrainer", "grpo": "GRPOTrainer", "rm": "RewardTrainer"}
# What the `train` extra brings; each is imported only inside a run.
EXTRA_MODULES = ("torch", "transformers", "trl", "peft", "datasets")
INSTALL_HINT = "pip install 'whileai-toolkit[train]'"


@dataclass
class Knobs:
    """The numbers a run is compared by; all recorded on the run's config."""

    epochs: float = 1.0
    steps: int | None = None  # overrides epochs when set
    learning_rate: float = 2e-4
    beta: float | None = None  # DPO's beta, GRPO's KL coefficient; None: TRL's default
    generations: int = 4  # GRPO: completions per prompt
    seed: int = 0
    lora_r: int = 16
    lora_alpha: int | None = None  # None: 2 * lora_r
    batch_size: int = 2
    max_length: int = 1024  # tokens of one training sequence
    max_completion_length: int = 64  # GRPO completions, holdout replies, monitor samples

    def check(self) -> None:
        if self.epochs <= 0:
            raise ConfigError("--epochs must be above 0")
        if self.steps is not None and self.steps < 1:
            raise ConfigError("--steps must be at least 1")
        if not 0 < self.learning_rate < 1:
            raise ConfigError(f"--learning-rate must be between 0 and 1, got {self.learning_rate}")
        if self.beta is not None and self.beta < 0:
            raise ConfigError("--beta must not be negative")
        if self.generations < 2:
            raise ConfigError("--generations must be at least 2 (GRPO compares completions)")
        if self.lora_r < 1:
            raise ConfigError("--lora-r must be at least 1")
        if self.batch_size < 1:
            raise ConfigError("--batch-size must be at least 1")
        if self.max_length < 16 or self.max_completion_length < 1:
            raise ConfigError("--max-length must be at least 16, --max-completion-length 1")

    def as_config(self, method: str) -> dict[str, Any]:
        """The run's `config`: the knobs that apply to `method`, None left out."""
        out = {k: v for k, v in dataclasses.asdict(self).items() if v is not None}
        out["lora_alpha"] = self.lora_alpha or 2 * self.lora_r
        if method != "grpo":
            out.pop("generations", None)
        if method not in ("dpo", "grpo"):
            out.pop("beta", None)
        return {"method": method, **out}


@dataclass
class TrainOptions:
    """One `whileai train`: the source, the method, the base, and where things go."""

    source: str
    method: str
    base_model: str
    knobs: Knobs = field(default_factory=Knobs)
    output_dir: str | None = None  # default: WHILEAI_HOME/train/<run id>
    name: str | None = None
    spec: str | None = None  # the agent's spec: tools and system prompt; holdout rollouts
    holdout: str | None = None  # file, dataset id, or "none"; default: the source's sibling
    judge: str | None = None  # the holdout's judge (and the monitor's gold); grade's default
    reward: str | None = None  # GRPO: a TRL reward function (module:function | file.py:fn)
    mask: str = "all"  # SFT: which agent turns train (export --mask)
    monitor: MonitorOptions | None = None

    def check(self) -> None:
        if self.method not in METHODS:
            raise ConfigError(f"--method must be one of {', '.join(METHODS)}, not {self.method!r}")
        if not self.base_model.strip():
            raise ConfigError("--base-model is empty: give a model name or a local folder")
        if self.mask not in ("all", "final"):
            raise ConfigError(f"--mask must be 'all' or 'final', not {self.mask!r}")
        if self.reward is not None and self.method != "grpo":
            raise ConfigError("--reward is GRPO's reward function; --method grpo uses it")
        self.knobs.check()
        if self.monitor is not None:
            self.monitor.check()


ALARMS = ("divergence", "length", "drift", "feature")


@dataclass
class MonitorOptions:
    """The hack monitor: how often it samples, what it grades with, what stops the run."""

    every: int = 10  # steps between two looks
    samples: int = 4  # completions per held-out prompt (k)
    prompts: int = 8  # held-out prompts sampled each look
    window: int = 3  # looks a trend is read over
    kl_budget: float = 0.5  # `drift` past this mean KL
    length_growth: float = 0.2  # `length`: completions this much longer than the window's start
    proxy_rise: float = 0.1  # `divergence`: proxy reward up at least this much
    stop_on: tuple[str, ...] = ()
    endorsed: tuple[str, ...] = ()  # features the reward should track (the hack scan's)
    temperature: float = 1.0

    def check(self) -> None:
        unknown = [a for a in self.stop_on if a not in ALARMS]
        if unknown:
            raise ConfigError(f"--stop-on {','.join(unknown)}: the alarms are {', '.join(ALARMS)}")
        for name in ("every", "samples", "prompts"):
            if getattr(self, name) < 1:
                raise ConfigError(f"monitor {name} must be at least 1")
        if self.window < 2:
            raise ConfigError("monitor window must be at least 2 looks (a trend needs two)")
        if self.samples < 2:
            raise ConfigError("monitor samples must be at least 2 (the scan compares within ask)")


def parse_alarms(text: str | None) -> tuple[str, ...]:
    """`length,drift` as alarm names; `all` is every alarm."""
    if not text:
        return ()
    names = tuple(p.strip() for p in text.split(",") if p.strip())
    if names == ("all",):
        return ALARMS
    return names


def missing_extra() -> list[str]:
    """The modules of the `train` extra this interpreter cannot import."""
    return [m for m in EXTRA_MODULES if importlib.util.find_spec(m) is None]


def require_extra(what: str = "whileai train") -> None:
    """ConfigError naming the missing modules and the install line, before any work."""
    missing = missing_extra()
    if missing:
        raise ConfigError(
            f"{what} needs the train extra ({', '.join(missing)} not installed): {INSTALL_HINT}"
        )


def default_output(run_id: str) -> Path:
    from ..settings import home

    return home() / "train" / run_id
