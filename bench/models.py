"""Model-agent throughput against the loopback stub with a fixed latency per call.

Run by hand (`python bench/models.py [--latency 0.1] [--concurrency 64] [--rollouts N]`);
never a timed test. The stub runs in its own process, so this process's CPU time is the
client side alone: the agent loop, JSON, httpx and the event loop. Every rollout costs
exactly two calls (a tool call, then an answer after its result), so the ideal rate is
concurrency / (2 x latency) rollouts per second; the target is >= 90% of it.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from typing import Any

from _measure import loopback_stub

from whileai_core.agents.base import Episode
from whileai_core.agents.model import ModelAgent, make_agent
from whileai_core.models.options import ModelOptions
from whileai_core.spec import Spec, Tool

CALLS_PER_ROLLOUT = 2


class _World:
    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return {"status": "ok", "data": {"order_id": arguments.get("order_id"), "state": "done"}}


def _spec() -> Spec:
    tool = Tool(
        name="get_order",
        description="Look an order up.",
        parameters={"type": "object", "properties": {"order_id": {"type": "string"}}},
    )
    return Spec(name="bench", tools=[tool], policy="You are a support agent. Be brief.")


async def _run(agent: ModelAgent, spec: Spec, rollouts: int, concurrency: int) -> int:
    gate = asyncio.Semaphore(concurrency)
    done = 0

    async def one(i: int) -> None:
        nonlocal done
        episode = Episode(spec=spec, prompt=f"Where is order A{i}?", scenario_id=f"sc-{i}",
                          rollout_index=0, world=_World(), seed=i)  # fmt: skip
        async with gate:
            result = await agent.run(episode)
        done += result.extra["agent_turns"] == CALLS_PER_ROLLOUT

    await asyncio.gather(*(one(i) for i in range(rollouts)))
    return done


async def _measure(
    agent: ModelAgent, spec: Spec, rollouts: int, concurrency: int
) -> tuple[int, int, float, float]:
    """(rollouts done right, model calls, CPU s, wall s) after a warm-up that opens the pool."""
    try:
        await _run(agent, spec, concurrency, concurrency)
        calls0 = agent.client.stats.requests
        cpu0, wall0 = time.process_time(), time.perf_counter()
        ok = await _run(agent, spec, rollouts, concurrency)
        cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
        return ok, agent.client.stats.requests - calls0, cpu, wall
    finally:
        await agent.aclose()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--rollouts", type=int, default=2560)
    args = parser.parse_args()
    with loopback_stub(args.latency, order_id="A1") as (base_url, stub):
        spec = _spec()
        options = ModelOptions(model="bench", concurrency=args.concurrency, retries=0)
        agent = make_agent(base_url, spec, options)
        assert isinstance(agent, ModelAgent)
        ok, calls, cpu, wall = asyncio.run(_measure(agent, spec, args.rollouts, args.concurrency))
        stub.terminate()
        _, _, usage = os.wait4(stub.pid, 0)
        stub.returncode = 0
    ideal = args.concurrency / (CALLS_PER_ROLLOUT * args.latency)
    rate = args.rollouts / wall
    print(
        f"rollouts: {args.rollouts} ({ok} with exactly {CALLS_PER_ROLLOUT} calls), "
        f"model calls: {calls}, concurrency {args.concurrency}, "
        f"latency {args.latency * 1000:.0f} ms"
    )
    print(f"wall: {wall:.2f} s   rollouts/s: {rate:.1f}   ideal: {ideal:.1f}   "
          f"ratio: {100 * rate / ideal:.1f}% (target >= 90%)")  # fmt: skip
    print(f"client CPU: {cpu:.2f} s total, {1000 * cpu / max(calls, 1):.3f} ms per model call")
    stub_cpu = usage.ru_utime + usage.ru_stime
    print(f"stub CPU (its own process, warm-up included): {stub_cpu:.2f} s")
    return 0 if rate >= 0.9 * ideal else 1


if __name__ == "__main__":
    sys.exit(main())
