"""Two GRPO steps with TRL on an exported environment's GRPO file, its reward unchanged.

    python grpo_train.py ENV_PACKAGE_PARENT PACKAGE OUT_DIR

Runs in the side venv `make` builds (side/train: TRL, transformers, torch). The model is
built here, from nothing downloaded: a byte-level BPE tokenizer trained on the dataset's
own text, a ChatML template, and a tiny randomly initialised Qwen2. Prints the trainer's
log history as JSON on the last line.
"""

from __future__ import annotations

import importlib
import json
import sys

CHATML = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
SPECIAL = ["<|im_start|>", "<|im_end|>", "<|pad|>"]


def tokenizer_for(texts: list[str]):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    raw = Tokenizer(models.BPE())
    raw.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    raw.decoder = decoders.ByteLevel()
    raw.train_from_iterator(texts, trainers.BpeTrainer(
        vocab_size=512, special_tokens=SPECIAL,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))  # fmt: skip
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=raw, bos_token="<|im_start|>", eos_token="<|im_end|>",
        pad_token="<|pad|>",
    )  # fmt: skip
    tokenizer.chat_template = CHATML
    return tokenizer


def main() -> None:
    parent, package, out = sys.argv[1:4]
    sys.path.insert(0, parent)
    import torch
    from datasets import load_dataset
    from transformers import Qwen2Config, Qwen2ForCausalLM
    from trl import GRPOConfig, GRPOTrainer

    env = importlib.import_module(package)
    data = load_dataset("json", data_files=env.grpo_data("train"), split="train")
    texts = [m["content"] for row in data for m in row["prompt"]]
    texts += ['<tool_call>{"name": "get_order", "arguments": {"order_id": "ORD-1042"}}</tool_call>']
    tokenizer = tokenizer_for(texts)
    torch.manual_seed(0)
    config = Qwen2Config(
        vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=4096,
        pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id,
        bos_token_id=tokenizer.bos_token_id, tie_word_embeddings=True,
    )  # fmt: skip
    model = Qwen2ForCausalLM(config)
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
