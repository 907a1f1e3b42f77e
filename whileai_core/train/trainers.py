"""TRL's trainers, one per method, built from the knobs (torch, TRL and peft lazily).

    sft   SFTTrainer     conversational `messages` with assistant-only loss (TRL swaps in
                         the template's generation-marked training version), or
                         `prompt`/`completion` with completion-only loss
    dpo   DPOTrainer     `prompt`/`chosen`/`rejected`; the reference is the base (the LoRA
                         adapter switched off), `--beta` its beta
    grpo  GRPOTrainer    prompt-only lines and the reward function; `--generations`
                         completions per prompt, `--beta` the KL coefficient (KL is logged
                         when it is above 0)
    rm    RewardTrainer  the same pairs as DPO on a one-score sequence classifier; logs
                         pair accuracy and margin

Every trainer logs each step, saves nothing on its own (the run saves the adapter once at
the end) and trains on CPU unless a GPU is there.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .options import Knobs


def common_args(knobs: Knobs, output_dir: Path) -> dict[str, Any]:
    import torch

    args: dict[str, Any] = {
        "output_dir": str(output_dir),
        "num_train_epochs": knobs.epochs,
        "max_steps": knobs.steps if knobs.steps else -1,
        "learning_rate": knobs.learning_rate,
        "per_device_train_batch_size": knobs.batch_size,
        "logging_steps": 1,
        "report_to": "none",
        "save_strategy": "no",
        "seed": knobs.seed,
        "data_seed": knobs.seed,
        "dataloader_num_workers": 0,
        "use_cpu": not torch.cuda.is_available(),
        "disable_tqdm": True,
    }
    return args


def build_trainer(
    method: str,
    model: Any,
    tokenizer: Any,
    dataset: Any,
    knobs: Knobs,
    output_dir: Path,
    *,
    callbacks: list[Any],
    reward: Any = None,
) -> Any:
    """The trainer for `method`, with a LoRA of `knobs.lora_r` on `model`."""
    from .model import lora_config

    peft = lora_config(method, knobs.lora_r, knobs.lora_alpha, knobs.seed)
    args = common_args(knobs, output_dir)
    shared = {
        "model": model,
        "train_dataset": dataset,
        "processing_class": tokenizer,
        "peft_config": peft,
        "callbacks": callbacks,
    }
    if method == "sft":
        from trl import SFTConfig, SFTTrainer

        conversational = "messages" in dataset.column_names
        config = SFTConfig(**args, assistant_only_loss=conversational, max_length=knobs.max_length)
        return SFTTrainer(args=config, **shared)
    if method == "dpo":
        from trl import DPOConfig, DPOTrainer

        extra = {"beta": knobs.beta} if knobs.beta is not None else {}
        return DPOTrainer(args=DPOConfig(**args, max_length=knobs.max_length, **extra), **shared)
    if method == "rm":
        from trl import RewardConfig, RewardTrainer

        return RewardTrainer(args=RewardConfig(**args, max_length=knobs.max_length), **shared)
    from trl import GRPOConfig, GRPOTrainer

    generations = knobs.generations
    # One step's batch holds whole groups: a multiple of the completions per prompt.
    per_device = max(generations, knobs.batch_size // generations * generations)
    args["per_device_train_batch_size"] = per_device
    extra = {"beta": knobs.beta} if knobs.beta is not None else {}
    config = GRPOConfig(
        **args,
        num_generations=generations,
        max_completion_length=knobs.max_completion_length,
        **extra,
    )
    return GRPOTrainer(reward_funcs=[reward], args=config, **shared)
