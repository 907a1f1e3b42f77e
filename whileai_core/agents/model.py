"""The model agent: a chat model on an OpenAI-compatible endpoint plays the rollout.

It gets the spec's system prompt and tools, and loops: ask the model; run every tool
call it made (parallel calls in the order given) against `episode.world`; feed the
results back; until it answers without a call. Then the simulated user, if any, gets a
turn, and the loop goes on. Two caps end it early, both marking the row `truncated`:
`episode.max_turns` model calls (finish_reason `tool` when calls were still pending) and
the server's token cap on one turn (finish_reason `length`).

Mistakes of the model are data, not crashes: arguments that are not a JSON object and
calls to tools the spec does not have go back to the model as a tool error (it may fix
them) and stay on the step with an `error` key. Only a model call that fails for good
raises: `AgentError` for one broken call (the engine drops and counts the rollout), or
the client's `AllowanceExhausted`/`EndpointRefused`, which stop the run.

The model sees the system prompt on every call; the agent's own messages leave it out
and simulate's row builder puts it first in the row (with `lineage.system_prompt_sha`).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from ..models.client import ChatResult, ModelCallError, ModelClient
from ..models.factory import client_for, sampling_from
from ..models.options import ModelOptions
from ..row import call_function
from ..spec import Spec
from .base import Agent, AgentError, Episode, RolloutResult

_FINISH = {"stop": "stop", "length": "length", "tool_calls": "stop", "function_call": "stop"}


class ModelAgent:
    """Implements the `Agent` protocol over one shared `ModelClient`."""

    def __init__(
        self,
        client: ModelClient,
        *,
        sampling: dict[str, Any] | None = None,
        logprobs: bool | str = False,
        name: str | None = None,
        owns_client: bool = True,
    ) -> None:
        self.client = client
        self.sampling = {k: v for k, v in (sampling or {}).items() if v is not None}
        self.logprobs = logprobs
        self.name = name or client.spec.label
        self._owns_client = owns_client

    @property
    def stats(self) -> dict[str, Any]:
        """The client's traffic counts, for the run report."""
        return self.client.stats.as_dict()

    async def aclose(self) -> None:
        if self._owns_client:
            await self.client.aclose()

    async def run(self, episode: Episode) -> RolloutResult:
        spec = episode.spec
        tools = spec.openai_tools() or None
        known = [t.name for t in spec.tools]
        system = [{"role": "system", "content": spec.policy}] if spec.policy else []
        messages: list[dict[str, Any]] = [{"role": "user", "content": episode.prompt}]
        steps: list[dict[str, Any]] = []
        usage = {"input_tokens": 0, "output_tokens": 0}
        totals = {"logprob": 0.0, "n_tokens": 0}
        all_tokens: list[dict[str, Any]] = []
        user_cap = episode.max_user_turns
        if user_cap is None:
            user_cap = episode.max_turns // 2
        salt = f"{episode.scenario_id}|{episode.rollout_index}|{episode.seed}"
        sampling = dict(self.sampling)
        if self.logprobs:
            sampling["logprobs"] = True
        final_text = ""
        finish = "stop"
        truncated = False
        turns = user_turns = 0
        pending_calls = False
        while True:
            if turns >= episode.max_turns:
                truncated = True
                finish = "tool" if pending_calls else "stop"
                break
            try:
                result = await self.client.chat(
                    system + messages, tools, cache_salt=salt, **sampling
                )
            except ModelCallError as exc:
                raise AgentError(f"model call {turns + 1} failed ({exc.kind}): {exc}") from exc
            turns += 1
            usage["input_tokens"] += result.usage["input_tokens"]
            usage["output_tokens"] += result.usage["output_tokens"]
            meta = self._turn_meta(result)
            if result.logprob is not None:
                totals["logprob"] += result.logprob
                totals["n_tokens"] += result.n_tokens or 0
                all_tokens.extend(result.tokens or [])
            text = result.text
            calls = [] if result.finish_reason == "length" else result.tool_calls
            assistant: dict[str, Any] = {"role": "assistant", "content": text}
            if calls:
                assistant["tool_calls"] = [_wire_call(c, turns, i) for i, c in enumerate(calls)]
            messages.append(assistant)
            if calls:
                first = len(steps)
                if text:
                    steps.append({"text": text})
                for call in assistant["tool_calls"]:
                    step, reply = await self._run_call(call, episode, known)
                    steps.append(step)
                    messages.append(
                        {
                            "role": "tool",
                            "tool_call_id": call["id"],
                            "name": call["function"]["name"],
                            "content": json.dumps(reply, default=str),
                        }
                    )
                steps[first].update(meta)
                pending_calls = True
                continue
            pending_calls = False
            final_text = text
            steps.append({"text": text, **meta})
            if result.finish_reason == "length":
                truncated = True
                finish = "length"
                break
            finish = _FINISH.get(result.finish_reason, "error")
            if finish == "error" or episode.user is None or user_turns >= user_cap:
                break
            try:
                line = await episode.user.reply([dict(m) for m in messages])
            except ModelCallError as exc:
                raise AgentError(f"simulated user failed ({exc.kind}): {exc}") from exc
            if not line:
                break
            user_turns += 1
            messages.append({"role": "user", "content": line})
            steps.append({"role": "user", "text": line})
        extra: dict[str, Any] = {"agent_turns": turns}
        if self.logprobs:
            extra["logprob"] = totals["logprob"]
            extra["n_tokens"] = totals["n_tokens"]
            if self.logprobs == "tokens":
                extra["tokens"] = all_tokens
        return RolloutResult(
            messages=messages,
            steps=steps,
            final_text=final_text,
            finish_reason=finish,
            usage=usage,
            truncated=truncated,
            extra=extra,
        )

    def _turn_meta(self, result: ChatResult) -> dict[str, Any]:
        meta: dict[str, Any] = {"usage": dict(result.usage)}
        if self.logprobs and result.logprob is not None:
            meta["logprob"] = result.logprob
            meta["n_tokens"] = result.n_tokens
            if self.logprobs == "tokens":
                meta["tokens"] = result.tokens
        return meta

    async def _run_call(
        self, call: dict[str, Any], episode: Episode, known: list[str]
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """One tool call: (the step to record, the result the model sees)."""
        name = call["function"]["name"]
        raw = call["function"]["arguments"]
        arguments, problem = parse_arguments(raw)
        if name not in known:
            available = ", ".join(known) or "none"
            reply = {"status": "error", "error": f"unknown tool {name!r}; available: {available}"}
            return _step(name, arguments or raw, reply, "unknown_tool"), reply
        if problem is not None or arguments is None:
            reply = {"status": "error", "error": f"invalid arguments: {problem}"}
            return _step(name, raw, reply, "bad_arguments"), reply
        world = episode.world
        try:
            if getattr(world, "blocking", False):
                reply = await asyncio.to_thread(world.call, name, arguments)
            else:
                reply = world.call(name, arguments)
        except Exception as exc:  # the user's real world raised: the model hears about it
            reply = {"status": "error", "error": f"{type(exc).__name__}: {exc}"}
            return _step(name, arguments, reply, "tool_raised"), reply
        if not isinstance(reply, dict):
            reply = {"status": "ok", "data": reply}
        return _step(name, arguments, reply, None), reply


def _step(name: str, arguments: Any, result: dict[str, Any], error: str | None) -> dict[str, Any]:
    step = {"tool": name, "arguments": arguments, "result": result}
    if error is not None:
        step["error"] = error
    return step


def parse_arguments(raw: Any) -> tuple[dict[str, Any] | None, str | None]:
    """A tool call's arguments as a dict, or (None, what is wrong with them)."""
    if isinstance(raw, dict):
        return raw, None
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return {}, None
    if not isinstance(raw, str):
        return None, f"expected a JSON object, got {type(raw).__name__}"
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        return None, f"not valid JSON ({exc.msg} at char {exc.pos})"
    if not isinstance(value, dict):
        return None, f"expected a JSON object, got {type(value).__name__}"
    return value, None


def _wire_call(call: Any, turn: int, index: int) -> dict[str, Any]:
    """The OpenAI wire shape with an id, whatever almost-right shape the server sent."""
    if not isinstance(call, dict):
        call = {"function": {"name": "", "arguments": str(call)}}
    fn = call_function(call)
    arguments = fn.get("arguments")
    if isinstance(arguments, (dict, list)):
        arguments = json.dumps(arguments)
    return {
        "id": str(call.get("id") or f"call_{turn}_{index}"),
        "type": "function",
        "function": {"name": str(fn.get("name") or ""), "arguments": arguments or ""},
    }


def make_agent(ref: str, spec: Spec, options: ModelOptions) -> Agent:
    """A `ModelAgent` for `--agent openai:…` (or any model reference)."""
    sampling_from(options)  # fail on bad sampling before the first rollout
    client = client_for(ref, options, role="agent")
    return ModelAgent(client, sampling=sampling_from(options), logprobs=options.logprobs)
