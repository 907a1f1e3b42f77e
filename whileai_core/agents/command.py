"""An external program as the agent: a long-lived process speaking JSONL on stdin/stdout.

The protocol (also in the README): whileai writes an `episode` line; the program answers
with any number of `tool_call` lines (each answered by a `tool_result` line from the
world) and `ask_user` lines (answered by `user_reply`, whose text is null when the person
has nothing to add), then one `final` line, or an `error` line. Every line carries the
episode's `id`. A process plays one episode at a time; up to `processes` run side by side.
Anything that is not a JSON line on stdout, a wrong id, an exit or a silence longer than
`timeout` loses that rollout (counted by the engine) and the process is restarted.
"""

from __future__ import annotations

import asyncio
import contextlib
import shlex
from typing import Any

import orjson

from ..errors import ConfigError
from ..spec import Spec
from .base import AgentError, Episode, RolloutResult
from .transcript import check_steps, messages_from_steps


class _Proc:
    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc

    async def send(self, obj: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(orjson.dumps(obj) + b"\n")
            await self.proc.stdin.drain()
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise AgentError(f"agent command stopped reading its input ({exc})") from None

    async def recv(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = await self.proc.stdout.readline()
        if not line:
            code = await self.proc.wait()
            raise AgentError(f"agent command exited with status {code} mid-episode")
        try:
            msg = orjson.loads(line)
        except orjson.JSONDecodeError:
            raise AgentError(f"agent command wrote a non-JSON line: {line[:80]!r}") from None
        if not isinstance(msg, dict):
            raise AgentError("agent command wrote a JSON line that is not an object")
        return msg

    async def kill(self) -> None:
        if self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.kill()
            await self.proc.wait()


class CommandAgent:
    """`cmd:python my_agent.py` — see the module docstring for the protocol."""

    def __init__(
        self, command: str, spec: Spec, *, processes: int = 4, timeout: float = 120.0
    ) -> None:
        self.argv = shlex.split(command)
        if not self.argv:
            raise ConfigError("agent 'cmd:': give a command after 'cmd:'")
        self.name = f"cmd:{self.argv[-1]}"
        self.spec = spec
        self.processes = max(1, processes)
        self.timeout = timeout
        self._idle: list[_Proc] = []
        self._all: list[_Proc] = []
        self._slots = asyncio.Semaphore(self.processes)

    async def _spawn(self) -> _Proc:
        try:
            proc = await asyncio.create_subprocess_exec(
                *self.argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                limit=1 << 24,
            )
        except OSError as exc:
            raise ConfigError(f"agent command {self.argv[0]!r} cannot start: {exc}") from None
        wrapped = _Proc(proc)
        self._all.append(wrapped)
        return wrapped

    async def run(self, episode: Episode) -> RolloutResult:
        async with self._slots:
            proc = self._idle.pop() if self._idle else await self._spawn()
            try:
                result = await asyncio.wait_for(self._episode(proc, episode), self.timeout)
            except asyncio.TimeoutError:
                await proc.kill()
                raise AgentError(f"agent command silent for {self.timeout:g}s") from None
            except BaseException:
                await proc.kill()
                raise
            self._idle.append(proc)
            return result

    async def _episode(self, proc: _Proc, ep: Episode) -> RolloutResult:
        eid = f"{ep.scenario_id}#{ep.rollout_index}"
        await proc.send(
            {
                "type": "episode",
                "id": eid,
                "prompt": ep.prompt,
                "system_prompt": self.spec.policy,
                "tools": self.spec.openai_tools(),
                "scenario_id": ep.scenario_id,
                "rollout_index": ep.rollout_index,
                "seed": ep.seed,
            }
        )
        steps: list[dict[str, Any]] = []
        while True:
            msg = await proc.recv()
            if msg.get("id") != eid:
                raise AgentError(f"agent command answered id {msg.get('id')!r}, expected {eid!r}")
            kind = msg.get("type")
            if kind == "tool_call":
                name, args = msg.get("name"), msg.get("arguments") or {}
                if not isinstance(name, str) or not isinstance(args, dict):
                    raise AgentError(
                        "agent command: tool_call needs a 'name' and 'arguments' object"
                    )
                result = ep.world.call(name, args)
                steps.append({"tool": name, "arguments": args, "result": result})
                await proc.send({"type": "tool_result", "id": eid, "result": result})
            elif kind == "ask_user":
                text = str(msg.get("text") or "")
                reply = None
                if ep.user is not None:
                    reply = await ep.user.reply(messages_from_steps(ep.prompt, steps, text))
                steps.append({"text": text})
                if reply:
                    steps.append({"role": "user", "text": reply})
                await proc.send({"type": "user_reply", "id": eid, "text": reply})
            elif kind == "final":
                final = msg.get("final_text")
                if not isinstance(final, str):
                    raise AgentError("agent command: 'final' needs a string 'final_text'")
                if msg.get("steps") is not None:
                    steps = check_steps(msg.get("steps"), "agent command")
                return RolloutResult(
                    messages=messages_from_steps(ep.prompt, steps, final),
                    steps=steps,
                    final_text=final,
                    usage=msg.get("usage") if isinstance(msg.get("usage"), dict) else None,
                )
            elif kind == "error":
                raise AgentError(f"agent command reported: {msg.get('error')}")
            else:
                raise AgentError(f"agent command sent unknown message type {kind!r}")

    async def aclose(self) -> None:
        for proc in self._all:
            if proc.proc.returncode is None and proc.proc.stdin is not None:
                with contextlib.suppress(Exception):
                    proc.proc.stdin.close()
        for proc in self._all:
            try:
                await asyncio.wait_for(proc.proc.wait(), 2.0)
            except asyncio.TimeoutError:
                await proc.kill()
        self._all.clear()
        self._idle.clear()
