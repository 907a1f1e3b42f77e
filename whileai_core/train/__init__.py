"""Training on what `export` writes: `whileai train`, the hack monitor, a reward model as a
judge, a served adapter. The `train` extra (TRL, PEFT, transformers, torch) is imported
only inside a run; this package and everything it names import without it.

    options.py   what a run is asked (TrainOptions, Knobs, MonitorOptions), no torch
    data.py      the source read and shaped per method through the exporters
    model.py     load a base (or base + adapter), the LoRA, one local chat turn
    trainers.py  TRL's SFT/DPO/GRPO/Reward trainers from the knobs
    holdout.py   the holdout played by the policy (pinned simulate) and graded, twice
    run.py       `train()`: the store run from first line to adapter
    alarms.py    the four hack alarms over the monitor's looks, no torch
    monitor.py   HackMonitor, the TrainerCallback that looks
    adapters.py  where a run's adapter is, and what `whileai-run.json` says it is
    rm.py        the trained reward model as a judge (`rm:RUN`)
    serve.py     a model behind an OpenAI-compatible /v1/chat/completions
    served.py    which models `serve-model` is serving on this machine
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

_NAMES = {
    "train": ".run",
    "TrainingFailed": ".run",
    "TrainOptions": ".options",
    "Knobs": ".options",
    "MonitorOptions": ".options",
    "HackMonitor": ".monitor",
    "reward_model_judge": ".rm",
    "ModelServer": ".serve",
}
__all__ = [
    "HackMonitor",
    "Knobs",
    "ModelServer",
    "MonitorOptions",
    "TrainOptions",
    "TrainingFailed",
    "reward_model_judge",
    "train",
]
__getattr__, __dir__ = lazy_exports(__name__, _NAMES)

if TYPE_CHECKING:
    from .monitor import HackMonitor
    from .options import Knobs, MonitorOptions, TrainOptions
    from .rm import reward_model_judge
    from .run import TrainingFailed, train
    from .serve import ModelServer
