"""A trained reward model as a judge: `--judge rm:RUN` (or `whileai reward-model RUN`).

A reward model gives a conversation one score; a judge gives a row a reward in [0, 1].
The bridge is the run's threshold, fitted when it trained: the cut between the scores of
its training pairs' passing (`chosen`) and failing (`rejected`) sides that sorts the most
pairs right (ties go to the midpoint of the two sides' means). A row scoring at or above
it passes: `reward` 1, else 0, and the raw score is kept as `rm_score` in `judge_meta`.

The row is read as the exporter reads it for training (`training_samples`, TRL's
conversational shape, with the spec's system prompt and tools when a spec is given), so
the model scores a row in the shape it was trained on. A row with no agent turn has
nothing to score: `invalid_result`, never a 0.

`RUN` is a run id on the store (its `adapter`), or the adapter folder itself.
"""

from __future__ import annotations

import threading
from itertools import pairwise
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, InvalidVerdict
from ..judges.contract import Judge

if TYPE_CHECKING:
    from ..spec import Spec


def score_conversation(
    model: Any,
    tokenizer: Any,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None,
    max_length: int,
) -> float:
    """The reward model's score for one conversation."""
    import torch

    from .model import template_messages

    text = tokenizer.apply_chat_template(
        template_messages(messages), tools=tools or None, tokenize=False
    )
    encoded = tokenizer(
        text, return_tensors="pt", add_special_tokens=False, truncation=True, max_length=max_length
    )
    device = next(model.parameters()).device
    with torch.no_grad():
        was_training = model.training
        model.eval()
        logits = model(**{k: v.to(device) for k, v in encoded.items()}).logits
        if was_training:
            model.train()
    return float(logits[0, 0])


def _sides(line: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    prompt = line.get("prompt") or []
    prompt = prompt if isinstance(prompt, list) else [{"role": "user", "content": str(prompt)}]
    return [*prompt, *line["chosen"]], [*prompt, *line["rejected"]]


def best_threshold(chosen: list[float], rejected: list[float]) -> tuple[float, float]:
    """(threshold, share of pairs it sorts right: chosen >= t > rejected)."""
    if not chosen or not rejected:
        raise ConfigError("a reward model's threshold needs scored pairs")
    midpoint = (sum(chosen) / len(chosen) + sum(rejected) / len(rejected)) / 2
    values = sorted({*chosen, *rejected})
    cuts = [midpoint, values[0], values[-1] + 1e-6, *((a + b) / 2 for a, b in pairwise(values))]

    def right(t: float) -> float:
        return sum((c >= t) + (r < t) for c, r in zip(chosen, rejected, strict=True)) / (
            2 * len(chosen)
        )

    best = max(cuts, key=lambda t: (right(t), -abs(t - midpoint)))
    return best, right(best)


def fit_threshold(
    model: Any, tokenizer: Any, lines: list[dict[str, Any]], max_length: int
) -> dict[str, float]:
    """Score the training pairs; the threshold and what it says about them."""
    chosen, rejected = [], []
    for line in lines:
        good, bad = _sides(line)
        tools = line.get("tools")
        chosen.append(score_conversation(model, tokenizer, good, tools, max_length))
        rejected.append(score_conversation(model, tokenizer, bad, tools, max_length))
    threshold, right = best_threshold(chosen, rejected)
    ordered = sum(c > r for c, r in zip(chosen, rejected, strict=True)) / len(chosen)
    return {"rm_threshold": threshold, "rm_threshold_accuracy": right, "rm_pair_accuracy": ordered}


def reward_model_judge(ref: str, *, spec: Spec | None = None, max_length: int = 2048) -> Judge:
    """The reward model `ref` trained (run id or adapter folder) as a judge."""
    from .options import require_extra

    require_extra("--judge rm:")
    from .adapters import adapter_folder, run_file

    folder = adapter_folder(ref)
    about = run_file(folder)
    if about.get("method") != "rm" or not isinstance(about.get("threshold"), (int, float)):
        raise ConfigError(f"{ref}: not a reward model run (method {about.get('method')!r})")
    threshold = float(about["threshold"])
    from peft import PeftModel
    from transformers import AutoModelForSequenceClassification

    from .model import load_tokenizer

    base = AutoModelForSequenceClassification.from_pretrained(about["base_model"], num_labels=1)
    model = PeftModel.from_pretrained(base, str(folder))
    model.eval()
    tokenizer = load_tokenizer(str(folder))
    lock = threading.Lock()
    from ..export.context import Context
    from ..export.training import training_samples

    context = Context.of_spec(spec)

    def judge(row: dict[str, Any]) -> dict[str, Any]:
        samples = list(
            training_samples(
                [row], fmt="trl", include_failures=True, context=context, keep_meta=False
            )
        )
        if not samples:
            raise InvalidVerdict("the row has no agent turn for the reward model to score")
        sample = samples[0]
        messages = sample.get("messages") or [*sample["prompt"], *sample["completion"]]
        with lock:
            score = score_conversation(model, tokenizer, messages, sample.get("tools"), max_length)
        passed = score >= threshold
        return {
            "reward": 1.0 if passed else 0.0,
            "rm_score": score,
            "reason": f"reward model score {score:.4g} "
            f"{'>=' if passed else '<'} threshold {threshold:.4g}",
        }

    name = f"rm:{about.get('run_id') or ref}"
    return Judge(
        name=name,
        fn=judge,
        meta={"version": name, "rm_threshold": threshold, "base_model": about["base_model"]},
    )
