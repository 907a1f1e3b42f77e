"""Training runs from the trainer's side: the handle a loop logs into, and the callback a
Transformers or TRL trainer takes. The records themselves live in the store
(`whileai_core.store.runs`), embedded or on `whileai serve`.

    from whileai_core.runs import TrainerCallback, training_run

    with training_run("sft-v3", dataset="ds_...", total_steps=1000) as run:
        for step, batch in enumerate(loader):
            run.log(step, loss=train_step(batch), lr=scheduler.get_last_lr()[0])
    run.holdout(before=0.42, after=0.58)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

_NAMES = {
    "training_run": ".handle",
    "TrainingRun": ".handle",
    "TrainerCallback": ".callback",
}
__all__ = ["TrainerCallback", "TrainingRun", "training_run"]
__getattr__, __dir__ = lazy_exports(__name__, _NAMES)

if TYPE_CHECKING:
    from .callback import TrainerCallback
    from .handle import TrainingRun, training_run
