"""The environment, written against verifiers 0.4 (`import verifiers.v1 as vf`).

- `WhileaiTaskset`: one task per exported ask, from `data/<split>.jsonl`
  (`--env.taskset.split holdout` for the held-out asks). A task is the ask as its prompt,
  the spec's system prompt, and `info` (task id, grid coordinates, fault plan, world
  state, the person's brief); never the privileged block.
- `WhileaiHarness`: the chat loop the policy runs in, in process. Every model call goes
  through the rollout's interception endpoint (what verifiers records the trace from);
  every tool call is answered by a fresh world per rollout (the spec's `world`, by
  default whileai's mock world), the spec's tools are offered on every call, and a
  segment ends at an agent reply without tool calls.
- `WhileaiEnv`: one agent and the person. After each agent reply the offline person
  simulate uses (the template writer's) answers a question back, pushes back, or stops;
  `max_turns` model calls end the rollout.
- The reward is the spec's `reward` (`module:function`, row -> verdict; by default the
  judge `whileai grade` uses, from the copy of the toolkit in `_whileai_core/`) on a
  whileai row built from the trace, so the environment grades exactly as whileai does.
  A judge that returns no verdict errors the rollout; a
  rollout cut at the turn or token cap scores 0 and is logged as `truncated`.
  With `WHILEAI_ENV_ROWS=<file>` every graded rollout is appended there as a row.
"""

from __future__ import annotations

import inspect
import json
from typing import Any

import httpx
import verifiers.v1 as vf
from pydantic import Field
from verifiers.v1.dialects.chat import message_to_wire

from . import load_spec, load_tasks

# The toolkit's code this package carries (a copy of whileai_core, see its pyproject).
from ._whileai_core.export.env_defaults import offline_person
from ._whileai_core.judges.contract import verdict_fields
from .rows import graded_row, keep_row, resolve

SPEC = load_spec()


class WhileaiTaskData(vf.TaskData):
    """One ask: the prompt is the person's opener; `info` is read server-side only."""

    info: dict[str, Any] = Field(default_factory=dict)


class WorldState(vf.State):
    """What the harness's world leaves for the reward."""

    faults_fired: list[dict[str, Any]] = Field(default_factory=list)
    tool_calls: int = 0


class WhileaiTask(vf.Task[WhileaiTaskData, WorldState, vf.TaskConfig]):
    @property
    def key(self) -> str:
        return self.data.id or self.hash

    @vf.metric
    async def n_calls(self, trace: vf.Trace) -> float:
        return float(trace.state.tool_calls)

    @vf.metric
    async def truncated(self, trace: vf.Trace) -> float:
        return float(trace.is_truncated)

    @vf.reward(weight=1.0)
    async def whileai_reward(self, trace: vf.Trace) -> float:
        row = rollout_row(trace.messages, self.data, trace.state.faults_fired)
        if trace.is_truncated:
            # Cut at the turn or token cap: no finished trajectory to judge, so 0.
            row["truncated"] = True
            keep_row(row, {"reward": 0.0, "reason": "truncated at the cap", "judge_status": "ok"})
            return 0.0
        verdict = resolve(SPEC["reward"])(row)
        if inspect.isawaitable(verdict):
            verdict = await verdict
        fields = verdict_fields(verdict)
        if fields.get("judge_status") != "ok" or fields.get("reward") is None:
            raise RuntimeError(f"reward {SPEC['reward']}: {fields.get('reason') or 'no verdict'}")
        keep_row(row, fields)
        return float(fields["reward"])


class WhileaiTasksetConfig(vf.TasksetConfig):
    split: str = "train"
    """Which exported split to load: train or holdout."""


class WhileaiTaskset(vf.Taskset[WhileaiTask, WhileaiTasksetConfig]):
    def load(self) -> list[WhileaiTask]:
        return [
            WhileaiTask(
                WhileaiTaskData(
                    id=str(task["info"].get("task_id") or ""),
                    prompt=task["question"],
                    system_prompt=SPEC["system_prompt"],
                    info=task.get("info") or {},
                ),
                self.config.task,
            )
            for task in load_tasks(self.config.split)
        ]


class WorldSession(vf.HarnessSession):
    """One rollout's conversation and world, kept across the person's turns."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        info = dict(getattr(self.data, "info", {}) or {})
        self.world = resolve(SPEC["world"])({**info, "tools": SPEC["tools"]})
        self.messages: list[dict[str, Any]] = []

    async def _run(self, messages: Any) -> vf.ProgramResult:
        if messages is None:
            system, prompt = self.harness.resolve_prompt(self.data)
            self.messages = [{"role": "system", "content": system}] if system else []
            self.messages += _wire(prompt)
        else:
            self.messages += _wire(messages)
        headers = {"Authorization": f"Bearer {self.secret}"}
        url = self.endpoint.rstrip("/") + "/chat/completions"
        async with httpx.AsyncClient(timeout=httpx.Timeout(None, connect=10.0)) as client:
            while True:
                body = {"model": self.ctx.model, "messages": self.messages, "tools": SPEC["tools"]}
                response = await client.post(url, json=body, headers=headers)
                if response.status_code != 200:
                    # A turn cap or a stop ends the rollout through the interception.
                    return vf.ProgramResult(1, "", response.text[-2000:])
                message = response.json()["choices"][0]["message"]
                self.messages.append(message)
                calls = message.get("tool_calls") or []
                if not calls:
                    return vf.ProgramResult(0, "", "")
                for call in calls:
                    self.messages.append(self._answer(call))

    def _answer(self, call: dict[str, Any]) -> dict[str, Any]:
        fn = call.get("function") or {}
        try:
            arguments = json.loads(fn.get("arguments") or "{}")
        except json.JSONDecodeError:
            arguments = None
        if isinstance(arguments, dict):
            try:
                result: Any = self.world.call(str(fn.get("name") or ""), arguments)
            except Exception as exc:  # a world bug is the rollout's tool error, not a crash
                result = {"status": "error", "error": f"{type(exc).__name__}: {exc}"}
        else:
            result = {"status": "rejected", "error": "arguments are not a JSON object"}
        state = self.trace.state
        state.tool_calls += 1
        state.faults_fired = list(getattr(self.world, "fired", []) or [])
        content = result if isinstance(result, str) else json.dumps(result)
        return {"role": "tool", "tool_call_id": call.get("id") or "", "content": content}


def _wire(prompt: Any) -> list[dict[str, Any]]:
    if prompt is None:
        return []
    if isinstance(prompt, str):
        return [{"role": "user", "content": prompt}]
    return [m if isinstance(m, dict) else message_to_wire(m) for m in prompt]


class WhileaiHarness(vf.Harness[vf.HarnessConfig]):
    """The policy's chat loop; tools are answered in process by the task's world."""

    APPENDS_SYSTEM_PROMPT = True
    SUPPORTS_RESUME = True
    EXECUTES_CODE = False
    NEEDS_CONTAINER = False

    async def session(self, ctx: Any, trace: Any, runtime: Any, endpoint: str, secret: str,
                      mcp_urls: dict[str, str], data: Any,
                      tool_interception_url: str | None = None) -> WorldSession:  # fmt: skip
        return WorldSession(self, ctx, trace, runtime, endpoint, secret, mcp_urls, data,
                            tool_interception_url)  # fmt: skip

    async def launch(self, ctx: Any, trace: Any, runtime: Any, endpoint: str, secret: str,
                     mcp_urls: dict[str, str], data: Any,
                     tool_interception_url: str | None = None) -> vf.ProgramResult:  # fmt: skip
        session = await self.session(ctx, trace, runtime, endpoint, secret, mcp_urls, data)
        return await session._run(None)


class WhileaiEnvConfig(vf.EnvConfig):
    agent: vf.AgentConfig = vf.AgentConfig(
        runtime=vf.SubprocessConfig(), max_turns=int(SPEC["max_turns"])
    )
    """The policy's seat; the harness runs in process, so no sandbox is needed."""


class WhileaiEnv(vf.Env[WhileaiEnvConfig]):
    """The agent, and the offline person answering it until they have nothing to add."""

    async def run(self, task: Any, agents: Any) -> None:
        info = task.data.info
        person = offline_person(info, max(0, int(SPEC["max_turns"]) // 2 - 1))
        # The person reads the whole conversation, as in `whileai simulate`: what they
        # already said decides whether the agent still waits on them.
        prompt = task.data.prompt if isinstance(task.data.prompt, str) else ""
        said_so_far: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
        async with agents.agent.interaction(task) as chat:
            segment = await chat.turn()
            while person is not None and not segment.terminated:
                said_so_far.append({"role": "assistant", "content": segment.last_reply})
                said = await person.reply(said_so_far)
                if not said:
                    break
                said_so_far.append({"role": "user", "content": said})
                segment = await chat.turn(said)


def rollout_row(messages: Any, data: Any, faults_fired: list[dict[str, Any]]) -> dict[str, Any]:
    """The trace's messages on the wire, as the row the judge grades (`rows.py`)."""
    wire = [m if isinstance(m, dict) else message_to_wire(m) for m in messages]
    prompt = data.prompt if isinstance(data.prompt, str) else ""
    return graded_row(wire, prompt, dict(data.info), faults_fired, SPEC)


__all__ = ["WhileaiEnv", "WhileaiHarness", "WhileaiTaskset"]
