"""The environment, written against `verifiers` (imported only inside `build_environment`).

Each rollout gets a fresh world built from its task's `info` by the spec's `world`
factory (`world(info)` returns an object with `call(name, arguments) -> dict`), every
tool call the policy makes is answered by it, and the episode ends at the turn cap or at
an agent reply with no tool calls. The spec's `reward` follows whileai's judge contract:
it receives a row dict (prompt, messages, steps, final_text and the task's coordinates)
and returns a number or a dict with `reward`. A judge that raises or returns no number
scores 0 for the update but is logged as `judge_ok = 0` (weight 0), never hidden.

The helpers above `build_environment` need no `verifiers` and are what it is built from.
"""

from __future__ import annotations

import importlib
import inspect
import json
from collections.abc import Callable
from typing import Any

from . import load_spec, load_tasks


def resolve(ref: str) -> Any:
    """Import `package.module:attr`."""
    module, _, attr = ref.partition(":")
    return getattr(importlib.import_module(module), attr)


def field_of(obj: Any, name: str) -> Any:
    """Messages arrive as dicts or as client objects; read either."""
    if isinstance(obj, dict):
        return obj.get(name)
    return getattr(obj, name, None)


def tool_calls(message: Any) -> list[tuple[str, str, Any]]:
    """(call id, tool name, arguments object or None when they do not decode)."""
    out: list[tuple[str, str, Any]] = []
    for call in field_of(message, "tool_calls") or []:
        function = field_of(call, "function") or call
        arguments = field_of(function, "arguments")
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments) if arguments.strip() else {}
            except json.JSONDecodeError:
                arguments = None
        out.append((field_of(call, "id") or "", field_of(function, "name") or "", arguments))
    return out


def task_info(info: Any) -> dict[str, Any]:
    """A task's `info` as it was written: without the null fields a dataset adds.

    A `datasets.Dataset` stores `info` as one struct type for all tasks, so every task
    comes back with every key any task had, the missing ones null (a fault plan for one
    tool then names every tool). Dropping nulls restores each task's own info.
    """
    cleaned = _drop_nulls(info)
    return cleaned if isinstance(cleaned, dict) else {}


def _drop_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_nulls(v) for v in value]
    return value


def is_final(message: Any) -> bool:
    """An agent turn with no tool calls ends the episode."""
    return field_of(message, "role") == "assistant" and not tool_calls(message)


def answer_tool_calls(world: Any, message: Any) -> list[dict[str, Any]]:
    """One tool message per call in `message`, answered by `world`."""
    replies = []
    for call_id, name, arguments in tool_calls(message):
        if not isinstance(arguments, dict):
            result: Any = {"status": "rejected", "error": "arguments are not a JSON object"}
        else:
            try:
                result = world.call(name, arguments)
            except Exception as exc:
                result = {"status": "error", "error": f"{type(exc).__name__}: {exc}"}
        content = result if isinstance(result, str) else json.dumps(result)
        replies.append({"role": "tool", "tool_call_id": call_id, "name": name, "content": content})
    return replies


def plain(message: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "role": field_of(message, "role"),
        "content": field_of(message, "content"),
    }
    calls = tool_calls(message)
    if calls:
        out["tool_calls"] = [
            {"id": i, "type": "function", "function": {"name": n, "arguments": a}}
            for i, n, a in calls
        ]
    for key in ("tool_call_id", "name"):
        if field_of(message, key):
            out[key] = field_of(message, key)
    return out


def rollout_row(
    question: str,
    messages: list[Any],
    info: dict[str, Any],
    faults_fired: list[Any] | None = None,
) -> dict[str, Any]:
    """A whileai row for the judge: the conversation, its tool steps, the task's info, and
    the faults the world actually fired (what a checklist reward checks acknowledgement of)."""
    msgs = [plain(m) for m in messages]
    steps: list[dict[str, Any]] = []
    results = {m.get("tool_call_id"): m.get("content") for m in msgs if m["role"] == "tool"}
    final = ""
    for message in msgs:
        if message["role"] != "assistant":
            continue
        for call in message.get("tool_calls") or []:
            raw = results.get(call["id"])
            try:
                result = json.loads(raw) if isinstance(raw, str) else raw
            except json.JSONDecodeError:
                result = raw
            fn = call["function"]
            steps.append({"tool": fn["name"], "arguments": fn["arguments"], "result": result})
        if isinstance(message.get("content"), str) and message["content"]:
            final = message["content"]
    row: dict[str, Any] = {"prompt": question, "messages": msgs, "steps": steps}
    row["final_text"] = final
    row.update({k: v for k, v in info.items() if k not in ("oai_tools", "calibration")})
    row["faults_fired"] = list(faults_fired or [])
    return row


async def score(judge: Callable[..., Any], row: dict[str, Any]) -> float | None:
    """The judge's reward for `row`, or None when it failed (raised, no number)."""
    try:
        verdict = judge(row)
        if inspect.isawaitable(verdict):
            verdict = await verdict
    except Exception:
        return None
    if isinstance(verdict, dict):
        verdict = verdict.get("reward")
    if isinstance(verdict, bool) or not isinstance(verdict, (int, float)):
        return None
    return float(verdict)


def build_environment(split: str = "train", **kwargs: Any) -> Any:
    """A `verifiers.MultiTurnEnv` over `split`, eval on holdout, rubric = the spec's reward."""
    import verifiers as vf
    from datasets import Dataset

    spec = load_spec()
    judge = resolve(spec["reward"])
    make_world = resolve(spec["world"])

    def dataset(name: str) -> Any:
        rows = [
            {
                "question": t["question"],
                "answer": t.get("answer", ""),
                "task": t.get("task", spec["name"]),
                "info": t.get("info") or {},
            }
            for t in load_tasks(name)
        ]
        return Dataset.from_list(rows) if rows else None

    def setup(state: dict[str, Any]) -> dict[str, Any]:
        info = task_info(state.get("info") or {})
        state["world"] = make_world({**info, "oai_tools": spec["tools"]})
        state["n_calls"] = 0
        state["oai_tools"] = spec["tools"]
        return state

    def respond(messages: list[Any], state: dict[str, Any]) -> list[dict[str, Any]]:
        if "world" not in state:
            setup(state)
        replies = answer_tool_calls(state["world"], messages[-1])
        state["n_calls"] = state.get("n_calls", 0) + len(replies)
        return replies

    env_class: type
    if hasattr(vf, "stop"):
        # verifiers with stop conditions: env_response returns the messages alone.
        class StopConditionEnv(vf.MultiTurnEnv):
            async def setup_state(self, state: dict[str, Any], **kw: Any) -> dict[str, Any]:
                return setup(state)

            @vf.stop
            async def agent_answered(self, state: dict[str, Any], **kw: Any) -> bool:
                trajectory = state.get("trajectory") or []
                if not trajectory:
                    return False
                completion = field_of(trajectory[-1], "completion") or []
                return bool(completion) and is_final(completion[-1])

            async def env_response(
                self, messages: list[Any], state: dict[str, Any], **kw: Any
            ) -> list[dict[str, Any]]:
                return respond(messages, state)

        env_class = StopConditionEnv
    else:
        # Earlier verifiers: is_completed(messages, state); env_response returns (messages, state).
        class CompletedCheckEnv(vf.MultiTurnEnv):
            async def setup_state(self, state: dict[str, Any], **kw: Any) -> dict[str, Any]:
                return setup(state)

            async def is_completed(
                self, messages: list[Any], state: dict[str, Any], **kw: Any
            ) -> bool:
                return bool(messages) and is_final(messages[-1])

            async def env_response(
                self, messages: list[Any], state: dict[str, Any], **kw: Any
            ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
                return respond(messages, state), state

        env_class = CompletedCheckEnv

    async def reward(prompt: Any, completion: Any, info: Any, state: Any, **kw: Any) -> float:
        question = next(
            (field_of(m, "content") for m in prompt if field_of(m, "role") == "user"), ""
        )
        fired = getattr(state.get("world"), "fired", None)
        row = rollout_row(str(question), [*prompt, *completion], task_info(info), fired)
        value = await score(judge, row)
        state["judge_ok"] = value is not None
        return 0.0 if value is None else value

    def judge_ok(state: Any, **kw: Any) -> float:
        return 1.0 if state.get("judge_ok") else 0.0

    def n_calls(state: Any, **kw: Any) -> float:
        return float(state.get("n_calls", 0))

    rubric = vf.Rubric(funcs=[reward, judge_ok, n_calls], weights=[1.0, 0.0, 0.0])
    return env_class(
        dataset=dataset(split),
        eval_dataset=dataset("holdout"),
        system_prompt=spec["system_prompt"],
        # Tools go to the environment, not into each task's info: one struct type for all
        # tasks would merge every tool's parameters into every tool's schema.
        oai_tools=spec["tools"],
        rubric=rubric,
        max_turns=spec["max_turns"],
        **kwargs,
    )
