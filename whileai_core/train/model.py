"""The model side of training and serving: load a base (or a base plus a trained adapter),
the LoRA a run trains, and one chat turn generated locally.

`--base-model` is a Hub name or a local folder `from_pretrained` reads; a folder holding a
PEFT adapter (`adapter_config.json`) is its base with the adapter merged in, so a GRPO run
can start from an SFT run's adapter. Nothing is downloaded unless the name asks for it.

`chat` is the one local generation every part uses (the holdout's rollouts, the hack
monitor's samples, `serve-model`): the conversation through the tokenizer's chat template
with the offered tools, sampled or greedy, and the reply read back with the one tool-call
reader (`models.toolcalls`), so a call the model writes as `<tool_call>{...}</tool_call>`
reaches a client as an OpenAI `tool_calls` entry.

torch, transformers and peft are imported inside the functions: the core imports without
the `train` extra.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from ..models.toolcalls import split_tool_calls

_GENERATE = threading.Lock()  # one generation at a time per process (CPU-bound anyway)


def adapter_base(path: str | Path) -> str | None:
    """The base a PEFT adapter folder was trained on, or None when `path` is not one."""
    config = Path(path) / "adapter_config.json"
    if not config.is_file():
        return None
    base = json.loads(config.read_text(encoding="utf-8")).get("base_model_name_or_path")
    return str(base) if base else None


def load_tokenizer(name: str) -> Any:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(name)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer


def load_model(name: str, *, method: str = "sft") -> Any:
    """The base to train: a causal LM, or for `rm` a one-score sequence classifier. An
    adapter folder is loaded onto its base and merged."""
    from transformers import AutoModelForCausalLM, AutoModelForSequenceClassification

    base = adapter_base(name)
    if base is not None:
        if method == "rm":
            from ..errors import ConfigError

            raise ConfigError(f"{name}: a reward model starts from a base model, not an adapter")
        from peft import PeftModel

        merged = PeftModel.from_pretrained(AutoModelForCausalLM.from_pretrained(base), name)
        return merged.merge_and_unload()
    if method == "rm":
        return AutoModelForSequenceClassification.from_pretrained(name, num_labels=1)
    return AutoModelForCausalLM.from_pretrained(name)


def lora_config(method: str, r: int, alpha: int | None, seed: int = 0) -> Any:
    """LoRA on every linear layer; a reward model also trains its score head."""
    from peft import LoraConfig, TaskType

    return LoraConfig(
        r=r,
        lora_alpha=alpha or 2 * r,
        lora_dropout=0.0,
        target_modules="all-linear",
        task_type=TaskType.SEQ_CLS if method == "rm" else TaskType.CAUSAL_LM,
        modules_to_save=["score"] if method == "rm" else None,
    )


def load_served(base: str, adapter: str | None) -> tuple[Any, Any]:
    """(model, tokenizer) for serving: `base` with the run's `adapter` on it."""
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(base)
    tokenizer_from = base
    if adapter:
        from peft import PeftModel

        model = PeftModel.from_pretrained(model, adapter)
        if (Path(adapter) / "tokenizer_config.json").is_file():
            tokenizer_from = adapter
    model.eval()
    return model, load_tokenizer(tokenizer_from)


def template_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI wire messages as a chat template reads them: arguments as objects, content
    never None."""
    out = []
    for message in messages:
        m = {k: v for k, v in message.items() if v is not None}
        m["content"] = m.get("content") if isinstance(m.get("content"), str) else ""
        calls = []
        for call in m.get("tool_calls") or []:
            fn = dict(call.get("function") or call)
            arguments = fn.get("arguments")
            if isinstance(arguments, str):
                try:
                    fn["arguments"] = json.loads(arguments or "{}")
                except json.JSONDecodeError:
                    fn["arguments"] = {}
            calls.append({"type": "function", "id": call.get("id"), "function": fn})
        if calls:
            m["tool_calls"] = calls
        else:
            m.pop("tool_calls", None)
        out.append(m)
    return out


def chat(
    model: Any,
    tokenizer: Any,
    messages: list[dict[str, Any]],
    *,
    tools: list[dict[str, Any]] | None = None,
    max_new_tokens: int = 64,
    temperature: float = 0.0,
    top_p: float = 1.0,
    seed: int | None = None,
    n: int = 1,
) -> list[dict[str, Any]]:
    """`n` replies to `messages`: each `{"message", "finish_reason", "prompt_tokens",
    "completion_tokens", "text"}`, the message in the OpenAI wire shape."""
    import torch

    rendered = tokenizer.apply_chat_template(
        template_messages(messages),
        tools=tools or None,
        add_generation_prompt=True,
        tokenize=False,
    )
    encoded = tokenizer(rendered, return_tensors="pt", add_special_tokens=False)
    device = next(model.parameters()).device
    ids = encoded["input_ids"].to(device)
    sample = temperature > 0
    options: dict[str, Any] = {
        "max_new_tokens": max(1, int(max_new_tokens)),
        "do_sample": sample,
        "num_return_sequences": n,
        "pad_token_id": tokenizer.pad_token_id,
        "eos_token_id": tokenizer.eos_token_id,
    }
    if sample:
        options.update(temperature=float(temperature), top_p=float(top_p))
    with _GENERATE, torch.no_grad():
        was_training = model.training
        model.eval()
        if seed is not None:
            torch.manual_seed(seed)
        out = model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), **options)
        if was_training:
            model.train()
    replies = []
    for row in out:
        new = row[ids.shape[1] :].tolist()
        stopped = tokenizer.eos_token_id in new
        if stopped:
            new = new[: new.index(tokenizer.eos_token_id)]
        text = tokenizer.decode(new, skip_special_tokens=True)
        content, calls = split_tool_calls(text)
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if calls:
            message["tool_calls"] = calls
        finish = "tool_calls" if calls else "stop" if stopped else "length"
        replies.append(
            {
                "message": message,
                "finish_reason": finish,
                "text": text,
                "prompt_tokens": int(ids.shape[1]),
                "completion_tokens": len(new),
            }
        )
    return replies
