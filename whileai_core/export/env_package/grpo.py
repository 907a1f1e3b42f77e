"""The reward TRL's GRPOTrainer trains with on `data/grpo/<split>.jsonl`.

    from datasets import load_dataset
    from trl import GRPOTrainer
    from <this package> import grpo_data, whileai_reward

    data = load_dataset("json", data_files=grpo_data("train"), split="train")
    GRPOTrainer(model=..., reward_funcs=[whileai_reward], train_dataset=data).train()

Each line is TRL's conversational prompt-only shape: `prompt` (the system prompt and the
person's opening turn) and the columns the reward reads, which the trainer hands it but
never renders into the model's input: `task_id`, `world` (the task's world state, fault
plan and grid coordinates, as JSON) and `tools` (the schemas offered). The reward runs
each completion through a fresh world of its task, the tool calls it makes (the message's
`tool_calls`, or `<tool_call>{...}</tool_call>` blocks in its text, as Qwen and Hermes
templates write them) answered by the world, and grades the result with the spec's
`reward` (by default the judge `whileai grade` uses). A judge that gives no verdict is
None (TRL leaves it out of the mean), never a made-up 0.

Copied verbatim into every package `whileai export --env` writes.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from typing import Any

from . import HERE, load_spec
from ._whileai_core.models.toolcalls import message_calls
from .rows import graded_row, keep_row, resolve

SPEC = load_spec()


def grpo_data(split: str = "train") -> str:
    """The path of a split's GRPO file (`train` or `holdout`)."""
    if split not in ("train", "holdout"):
        raise ValueError(f"split {split!r}: expected train or holdout")
    return str(HERE / "data" / "grpo" / f"{split}.jsonl")


def whileai_reward(
    prompts: list[Any], completions: list[Any], task_id: list[str], world: list[str], **_: Any
) -> list[float | None]:
    """One reward per completion (TRL's reward-function contract)."""
    return [
        _reward(prompt, completion, task, plan)
        for prompt, completion, task, plan in zip(prompts, completions, task_id, world, strict=True)
    ]


def _reward(prompt: Any, completion: Any, task: str, plan: str) -> float | None:
    info = {**json.loads(plan), "task_id": task}
    the_world = resolve(SPEC["world"])({**info, "tools": SPEC["tools"]})
    messages = [dict(m) for m in prompt] if isinstance(prompt, list) else []
    if isinstance(prompt, str):
        messages = [{"role": "user", "content": prompt}]
    replies = completion if isinstance(completion, list) else [
        {"role": "assistant", "content": str(completion)}]  # fmt: skip
    for reply in replies:
        if not isinstance(reply, dict) or reply.get("role", "assistant") != "assistant":
            continue
        text, calls = message_calls(reply)
        message: dict[str, Any] = {"role": "assistant", "content": text}
        if calls:
            message["tool_calls"] = calls
        messages.append(message)
        for call in calls:
            messages.append(_answer(the_world, call))
    ask = next((m.get("content") for m in messages if m.get("role") == "user"), "")
    row = graded_row(messages, str(ask or ""), info, list(getattr(the_world, "fired", [])), SPEC)
    verdict = resolve(SPEC["reward"])(row)
    if inspect.isawaitable(verdict):
        verdict = asyncio.run(_settled(verdict))
    from ._whileai_core.judges.contract import verdict_fields

    fields = verdict_fields(verdict)
    keep_row(row, fields)
    if fields.get("judge_status") != "ok" or fields.get("reward") is None:
        return None
    return float(fields["reward"])


async def _settled(pending: Any) -> Any:
    return await pending


def _answer(the_world: Any, call: dict[str, Any]) -> dict[str, Any]:
    """The world's answer to one call, as the tool message that follows it."""
    fn = call["function"]
    try:
        arguments = json.loads(fn["arguments"] or "{}")
    except json.JSONDecodeError:
        arguments = None
    if isinstance(arguments, dict):
        try:
            result: Any = the_world.call(fn["name"], arguments)
        except Exception as exc:  # a world bug is the rollout's tool error, not a crash
            result = {"status": "error", "error": f"{type(exc).__name__}: {exc}"}
    else:
        result = {"status": "rejected", "error": "arguments are not a JSON object"}
    content = result if isinstance(result, str) else json.dumps(result)
    return {"role": "tool", "tool_call_id": call["id"], "content": content}
