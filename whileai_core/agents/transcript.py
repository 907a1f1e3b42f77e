"""Turning an agent's steps into the OpenAI chat transcript, and checking what came back.

Agents outside the engine (a callable, a command) report steps; rows carry both steps and
the `messages` a trainer reads, so the transcript is rebuilt here, one way for all of them.
"""

from __future__ import annotations

from typing import Any

import orjson

from .base import AgentError, RolloutResult


def messages_from_steps(
    prompt: str, steps: list[dict[str, Any]], final_text: str
) -> list[dict[str, Any]]:
    """User opener, then each step as the message(s) it stands for, then the final reply."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
    for i, step in enumerate(steps):
        if step.get("tool") is not None:
            args = step.get("arguments")
            call_id = f"call_{i}"
            encoded = args if isinstance(args, str) else orjson.dumps(args or {}).decode()
            messages.append(
                {
                    "role": "assistant",
                    "content": step.get("text") or "",
                    "tool_calls": [
                        {
                            "id": call_id,
                            "type": "function",
                            "function": {"name": step["tool"], "arguments": encoded},
                        }
                    ],
                }
            )
            result = step.get("result")
            content = result if isinstance(result, str) else orjson.dumps(result).decode()
            messages.append(
                {"role": "tool", "tool_call_id": call_id, "name": step["tool"], "content": content}
            )
        elif step.get("role") == "user":
            messages.append({"role": "user", "content": str(step.get("text") or "")})
        elif step.get("text"):
            messages.append({"role": "assistant", "content": str(step["text"])})
    messages.append({"role": "assistant", "content": final_text})
    return messages


def check_steps(raw: Any, where: str) -> list[dict[str, Any]]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise AgentError(f"{where}: 'steps' must be a list, got {type(raw).__name__}")
    for i, step in enumerate(raw):
        if not isinstance(step, dict):
            raise AgentError(f"{where}: steps[{i}] must be an object, got {type(step).__name__}")
        tool = step.get("tool")
        if tool is not None and not isinstance(tool, str):
            raise AgentError(f"{where}: steps[{i}].tool must be a string")
        args = step.get("arguments")
        if tool is not None and args is not None and not isinstance(args, (dict, str)):
            raise AgentError(f"{where}: steps[{i}].arguments must be an object")
    return raw


def result_from_output(out: Any, prompt: str, where: str) -> RolloutResult:
    """Check `{"steps": [...], "final_text": "..."}` and build the rollout; AgentError if not.
    An optional `seeded` list (the mistakes the agent planted on purpose) rides along.

    A bare string is the wrong shape too: it says nothing of the steps, so a row built
    from it would claim an agent that called no tool (and a judge would grade that)."""
    if not isinstance(out, dict):
        raise AgentError(
            f"{where}: returned {type(out).__name__}; "
            "expected {'steps': [...], 'final_text': str}"
        )
    final = out.get("final_text")
    if not isinstance(final, str):
        raise AgentError(f"{where}: 'final_text' must be a string, got {type(final).__name__}")
    steps = check_steps(out.get("steps"), where)
    messages = out.get("messages")
    if not (isinstance(messages, list) and all(isinstance(m, dict) for m in messages)):
        messages = messages_from_steps(prompt, steps, final)
    finish = out.get("finish_reason")
    finish = finish if isinstance(finish, str) else "stop"
    usage = out.get("usage") if isinstance(out.get("usage"), dict) else None
    # An agent that plants labelled mistakes says which (the row's `seeded`), as ours does.
    seeded = out.get("seeded")
    labels = [str(s) for s in seeded] if isinstance(seeded, list) else None
    return RolloutResult(
        messages=messages,
        steps=steps,
        final_text=final,
        finish_reason=finish,
        usage=usage,
        seeded=labels,
    )
