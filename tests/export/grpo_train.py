"""Two GRPO steps with TRL on an exported environment's GRPO file, its reward unchanged.

    python grpo_train.py ENV_PACKAGE_PARENT PACKAGE OUT_DIR

Runs in the side venv `make` builds (side/train: TRL, transformers, torch). The model is
the toolkit's tiny test model (`whileai_core.testing.tinymodel`), built from nothing
downloaded: a byte-level BPE tokenizer trained on the dataset's own text with Qwen2.5's
chat template, and a tiny randomly initialised Qwen2. Prints the trainer's log history as
JSON on the last line.
"""

from __future__ import annotations

import importlib
import json
import sys


def main() -> None:
    parent, package, out = sys.argv[1:4]
    sys.path.insert(0, parent)
    from datasets import load_dataset
    from trl import GRPOConfig, GRPOTrainer

    from whileai_core.testing.tinymodel import tiny_model, tokenizer_for

    env = importlib.import_module(package)
    data = load_dataset("json", data_files=env.grpo_data("train"), split="train")
    texts = [m["content"] for row in data for m in row["prompt"]]
    texts += ['<tool_call>{"name": "get_order", "arguments": {"order_id": "ORD-1042"}}</tool_call>']
    tokenizer = tokenizer_for(texts)
    model = tiny_model(tokenizer, seed=0)
    args = GRPOConfig(
        output_dir=out, max_steps=2, per_device_train_batch_size=2, num_generations=2,
        max_completion_length=16, learning_rate=1e-3, logging_steps=1, report_to="none",
        save_strategy="no", use_cpu=True, seed=0, dataloader_num_workers=0,
    )  # fmt: skip
    trainer = GRPOTrainer(
        model=model, reward_funcs=[env.whileai_reward], args=args, train_dataset=data,
        processing_class=tokenizer,
    )  # fmt: skip
    trainer.train()
    print(json.dumps(trainer.state.log_history))


if __name__ == "__main__":
    main()
