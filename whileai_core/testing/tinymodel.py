"""A tiny chat model built from nothing downloaded, for tests and benchmarks that train.

    python -m whileai_core.testing.tinymodel OUT_DIR rows.jsonl [more.jsonl ...] [--hidden 64]

writes a model folder `from_pretrained` loads (and `whileai train --base-model OUT_DIR`
takes): a byte-level BPE tokenizer trained on the given files' own text, and a randomly
initialised Qwen2 of a few layers (hidden 32 by default), seeded, so two builds from the
same text are the same model.

The tokenizer carries Qwen2.5's chat template exactly as TRL ships it (read from TRL's
installed wheel), so TRL recognises it like a real Qwen2.5: SFT's assistant-only loss gets
TRL's generation-marked training template, tool calls render as `<tool_call>` blocks, and
the special tokens are Qwen's. What trains on this model takes the path a real one does.

Needs the `train` extra (transformers, tokenizers, torch, TRL); the module imports none of
them until a function is called.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import orjson

IM_START, IM_END, PAD = "<|im_start|>", "<|im_end|>", "<|endoftext|>"
SPECIAL = [PAD, IM_START, IM_END]
# Text the chat template and the tool-call format write around every turn, so the BPE
# merges cover it as they would in a real tokenizer.
FRAME = [
    "<|im_start|>system\n<|im_end|>\n<|im_start|>user\n<|im_start|>assistant\n",
    '<tool_call>\n{"name": "", "arguments": {}}\n</tool_call>',
    "<tool_response>\n</tool_response>",
    "# Tools\n<tools></tools>",
]


def qwen25_template() -> str:
    """Qwen2.5's chat template as TRL's wheel ships it (TRL matches templates exactly)."""
    from importlib import resources

    return (resources.files("trl") / "chat_templates" / "qwen2_5.jinja").read_text(encoding="utf-8")


def texts_of(value: Any) -> Iterator[str]:
    """Every string inside a JSON value, keys included."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from texts_of(item)
    elif isinstance(value, list):
        for item in value:
            yield from texts_of(item)


def file_texts(paths: Iterable[str | Path]) -> list[str]:
    """The strings of every JSONL line of `paths` (a `.json` file is one value), and each
    JSON value whole as text too, so the merges cover JSON as a chat template writes it
    (tool schemas, arguments)."""
    out: list[str] = []
    for path in paths:
        raw = Path(path).read_bytes()
        values = [raw] if str(path).endswith(".json") else raw.splitlines()
        for line in values:
            if line.strip():
                value = orjson.loads(line)
                out.extend(texts_of(value))
                out.append(json.dumps(value))
    return out


def tokenizer_for(texts: list[str], *, vocab_size: int = 4096) -> Any:
    """A byte-level BPE tokenizer trained on `texts`, with Qwen's special tokens and
    Qwen2.5's chat template."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    raw = Tokenizer(models.BPE())
    raw.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    raw.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    raw.train_from_iterator([*FRAME, *texts], trainer)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=raw, eos_token=IM_END, pad_token=PAD, padding_side="right"
    )
    # Qwen's tokenizer has its tool-call tags as added (not special) tokens: one token
    # each, and kept by decode(skip_special_tokens=True), where the tool-call reader finds them.
    tokenizer.add_tokens(["<tool_call>", "</tool_call>"])
    tokenizer.chat_template = qwen25_template()
    return tokenizer


def tiny_model(
    tokenizer: Any,
    *,
    hidden: int = 32,
    layers: int = 2,
    heads: int = 4,
    seed: int = 0,
    init_range: float = 0.3,
) -> Any:
    """A randomly initialised Qwen2ForCausalLM sized for `tokenizer`, seeded.

    `init_range` is the weights' initial standard deviation. A real model's 0.02 leaves a
    hidden size of 32 with logits within a fraction of a nat of uniform, and LoRA (which
    never trains the tied embeddings that are also the output layer) can then barely
    move them: a test that needs the model to learn something in a few dozen steps would
    wait for ever. At 0.3 the output layer has room, as a trained model's does."""
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(seed)
    config = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=hidden,
        intermediate_size=2 * hidden,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=max(1, heads // 2),
        max_position_embeddings=4096,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=None,
        tie_word_embeddings=True,
        initializer_range=init_range,
    )
    model = Qwen2ForCausalLM(config)
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    return model


def build(out: str | Path, texts: list[str], **model_options: Any) -> Path:
    """Write a tiny model and its tokenizer to `out`; returns the folder."""
    folder = Path(out)
    tokenizer = tokenizer_for(texts)
    model = tiny_model(tokenizer, **model_options)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def main(argv: list[str] | None = None) -> None:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m whileai_core.testing.tinymodel")
    parser.add_argument("out")
    parser.add_argument("files", nargs="+", help="JSONL (or .json) files whose text it learns")
    parser.add_argument("--hidden", type=int, default=32)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    texts = file_texts(args.files)
    print(build(args.out, texts, hidden=args.hidden, layers=args.layers, seed=args.seed))


if __name__ == "__main__":
    main()
