"""The model agent and the model writer against the loopback stub."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from whileai_core.agents.base import AgentError, Episode, RolloutResult
from whileai_core.agents.model import ModelAgent, make_agent
from whileai_core.models import AllowanceExhausted, ModelClient, parse_model_spec
from whileai_core.models.options import ModelOptions
from whileai_core.people.model import ModelWriter, make_writer, person_brief
from whileai_core.registry import is_model_ref
from whileai_core.simulate.execute import load_execute
from whileai_core.spec import Spec, load_spec
from whileai_core.testing import (
    OpenAIStub,
    Request,
    answer,
    http_error,
    raw_tool_call,
    tool_call,
    tool_calls,
)

from ..helpers import ORDERS_SPEC, play


class RecordingWorld:
    """A tiny real backend: orders in a dict, every call recorded."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.orders = {"A1": "delivered", "B2": "shipped"}

    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        self.calls.append((name, arguments))
        order = arguments.get("order_id")
        if order not in self.orders:
            return {"status": "not_found", "missing": [order]}
        return {"status": "ok", "data": {"order_id": order, "state": self.orders[order]}}


class ScriptedUser:
    def __init__(self, lines: list[str]) -> None:
        self.lines = list(lines)
        self.seen: list[list[dict[str, Any]]] = []

    async def reply(self, messages: list[dict[str, Any]]) -> str | None:
        self.seen.append(messages)
        return self.lines.pop(0) if self.lines else None


@pytest.fixture(scope="module")
def spec() -> Spec:
    return load_spec(ORDERS_SPEC)


def _episode(spec: Spec, world: Any = None, **kwargs: Any) -> Episode:
    return Episode(
        spec=spec,
        prompt="Where is my order A1?",
        scenario_id="sc-1",
        rollout_index=0,
        world=world or RecordingWorld(),
        seed=7,
        **kwargs,
    )


def _play(stub: OpenAIStub, episode: Episode, **kwargs: Any) -> RolloutResult:
    client = ModelClient(parse_model_spec(stub.base_url, model="m"), backoff=0.01, retries=2)
    agent = ModelAgent(client, **kwargs)
    return play(agent, episode)


def test_tool_call_round_trips_over_several_turns(spec: Spec) -> None:
    world = RecordingWorld()
    script = [
        tool_call("get_order", {"order_id": "A1"}, usage=(20, 4)),
        tool_call("refund_order", {"order_id": "A1"}, usage=(30, 6)),
        answer("Refunded order A1.", usage=(40, 8)),
    ]
    with OpenAIStub(script) as stub:
        result = _play(stub, _episode(spec, world))
        bodies = stub.bodies
    assert world.calls == [("get_order", {"order_id": "A1"}), ("refund_order", {"order_id": "A1"})]
    assert result.final_text == "Refunded order A1."
    assert result.finish_reason == "stop" and not result.truncated
    assert [s.get("tool") for s in result.steps] == ["get_order", "refund_order", None]
    assert result.steps[0]["result"]["data"]["state"] == "delivered"
    # the model saw the system prompt and tools every turn, and each tool result
    assert all(b["messages"][0] == {"role": "system", "content": spec.policy} for b in bodies)
    assert [t["function"]["name"] for t in bodies[0]["tools"]] == [t.name for t in spec.tools]
    tool_msg = bodies[1]["messages"][-1]
    assert tool_msg["role"] == "tool" and json.loads(tool_msg["content"])["status"] == "ok"
    assert tool_msg["tool_call_id"] == bodies[1]["messages"][-2]["tool_calls"][0]["id"]
    # row messages: no system prompt, OpenAI shape
    assert result.messages[0] == {"role": "user", "content": "Where is my order A1?"}
    assert [m["role"] for m in result.messages] == [
        "user", "assistant", "tool", "assistant", "tool", "assistant",
    ]  # fmt: skip


def test_usage_is_recorded_per_step_and_summed(spec: Spec) -> None:
    script = [
        tool_call("get_order", {"order_id": "A1"}, usage=(20, 4)),
        answer("ok", usage=(40, 8)),
    ]
    with OpenAIStub(script) as stub:
        result = _play(stub, _episode(spec))
    assert result.steps[0]["usage"] == {"input_tokens": 20, "output_tokens": 4}
    assert result.steps[1]["usage"] == {"input_tokens": 40, "output_tokens": 8}
    assert result.usage == {"input_tokens": 60, "output_tokens": 12}


def test_parallel_tool_calls_all_run_and_all_answer(spec: Spec) -> None:
    world = RecordingWorld()
    both = tool_calls([("get_order", {"order_id": "A1"}), ("get_order", {"order_id": "ZZ"})])
    with OpenAIStub([both, answer("A1 delivered; ZZ not found.")]) as stub:
        result = _play(stub, _episode(spec, world))
        second = stub.bodies[1]["messages"]
    assert [c[1]["order_id"] for c in world.calls] == ["A1", "ZZ"]
    tool_msgs = [m for m in second if m["role"] == "tool"]
    assert [json.loads(m["content"])["status"] for m in tool_msgs] == ["ok", "not_found"]
    assert {m["tool_call_id"] for m in tool_msgs} == {"call_0", "call_1"}
    assert [s["tool"] for s in result.steps[:2]] == ["get_order", "get_order"]


def test_invalid_json_arguments_go_back_to_the_model_as_a_tool_error(spec: Spec) -> None:
    world = RecordingWorld()
    script = [
        raw_tool_call("get_order", '{"order_id": "A1"'),
        tool_call("get_order", {"order_id": "A1"}),
        answer("Delivered."),
    ]
    with OpenAIStub(script) as stub:
        result = _play(stub, _episode(spec, world))
        feedback = json.loads(stub.bodies[1]["messages"][-1]["content"])
    assert feedback["status"] == "error" and "not valid JSON" in feedback["error"]
    assert result.steps[0]["error"] == "bad_arguments"
    assert result.steps[0]["arguments"] == '{"order_id": "A1"'
    assert world.calls == [("get_order", {"order_id": "A1"})]  # the broken call never ran
    assert result.final_text == "Delivered."


def test_unknown_tool_is_an_error_result_not_a_crash(spec: Spec) -> None:
    with OpenAIStub([tool_call("delete_everything", {}), answer("Sorry.")]) as stub:
        result = _play(stub, _episode(spec))
        feedback = json.loads(stub.bodies[1]["messages"][-1]["content"])
    assert "unknown tool 'delete_everything'" in feedback["error"]
    assert "get_order" in feedback["error"]
    assert result.steps[0]["error"] == "unknown_tool"


def test_a_model_that_never_stops_calling_tools_hits_the_turn_cap(spec: Spec) -> None:
    forever = tool_call("get_order", {"order_id": "A1"})
    with OpenAIStub(default=forever) as stub:
        result = _play(stub, _episode(spec, max_turns=4))
        assert stub.calls == 4
    assert result.truncated and result.finish_reason == "tool"
    assert len([s for s in result.steps if "tool" in s]) == 4


def test_a_turn_cut_at_the_token_cap_is_truncated(spec: Spec) -> None:
    with OpenAIStub([answer("Your order is on its way and", finish_reason="length")]) as stub:
        result = _play(stub, _episode(spec))
    assert result.truncated and result.finish_reason == "length"
    assert result.final_text == "Your order is on its way and"


def test_the_simulated_user_takes_several_turns_up_to_the_cap(spec: Spec) -> None:
    user = ScriptedUser(["and B2?", "thanks, one more: ZZ?", "bye", "never said"])
    script = [
        tool_call("get_order", {"order_id": "A1"}),
        answer("A1 is delivered."),
        tool_call("get_order", {"order_id": "B2"}),
        answer("B2 has shipped."),
        answer("ZZ: let me check."),
        answer("Bye!"),
    ]
    with OpenAIStub(script) as stub:
        result = _play(stub, _episode(spec, user=user, max_user_turns=3))
        assert stub.calls == 6
    user_steps = [s["text"] for s in result.steps if s.get("role") == "user"]
    assert user_steps == ["and B2?", "thanks, one more: ZZ?", "bye"]
    assert result.final_text == "Bye!" and result.finish_reason == "stop"
    assert user.seen[0][-1] == {"role": "assistant", "content": "A1 is delivered."}
    assert all(m.get("role") != "system" for m in user.seen[0])  # the person never sees policy


def test_logprobs_per_turn_and_totals_on_the_result(spec: Spec) -> None:
    script = [answer("one two", logprobs=[-0.5, -0.25])]
    with OpenAIStub(script) as stub:
        result = _play(stub, _episode(spec), logprobs="tokens")
        assert stub.bodies[0]["logprobs"] is True
    assert result.steps[-1]["logprob"] == pytest.approx(-0.75)
    assert result.steps[-1]["n_tokens"] == 2
    assert result.extra["logprob"] == pytest.approx(-0.75) and result.extra["n_tokens"] == 2
    assert [t["token"] for t in result.extra["tokens"]] == ["one", "two"]


def test_a_failed_model_call_drops_the_rollout_as_an_agent_error(spec: Spec) -> None:
    with OpenAIStub(default=http_error(500)) as stub, pytest.raises(AgentError, match="http_500"):
        _play(stub, _episode(spec))


def test_a_spent_allowance_stops_the_run_rather_than_the_rollout(spec: Spec) -> None:
    spent = http_error(429, message="allowance spent", code="insufficient_quota")
    with OpenAIStub(default=spent) as stub, pytest.raises(AllowanceExhausted):
        _play(stub, _episode(spec))


def test_execute_world_answers_tool_calls_and_its_errors_reach_the_model(
    spec: Spec, tmp_path: Any
) -> None:
    backend = tmp_path / "backend.py"
    backend.write_text(
        "def execute(name, arguments):\n"
        "    if arguments.get('order_id') == 'BAD':\n"
        "        raise RuntimeError('db down')\n"
        "    return ['real', name, arguments['order_id']]\n"
    )
    world = load_execute(f"{backend}:execute")
    script = [
        tool_calls([("get_order", {"order_id": "A1"}), ("get_order", {"order_id": "BAD"})]),
        answer("done"),
    ]
    with OpenAIStub(script) as stub:
        result = _play(stub, _episode(spec, world))
    assert result.steps[0]["result"] == {"status": "ok", "data": ["real", "get_order", "A1"]}
    assert result.steps[1]["error"] == "tool_raised"
    assert "db down" in result.steps[1]["result"]["error"]


def test_factory_gives_the_agent_and_the_writer_a_client_each_and_reads_env_sampling(
    spec: Spec, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WHILEAI_TEMPERATURE", "0.3")
    monkeypatch.setenv("WHILEAI_MAX_TOKENS", "64")
    options = ModelOptions(model="m", top_p=0.9)
    assert is_model_ref("openai:gpt-4.1-mini") and not is_model_ref("seeded")
    with OpenAIStub([answer("hi")]) as stub:
        agent = make_agent(stub.base_url, spec, options)
        writer = make_writer(stub.base_url, spec, options)
        assert isinstance(agent, ModelAgent) and isinstance(writer, ModelWriter)
        # One client per role (their traffic is reported apart), one per endpoint each.
        assert agent.client is not writer.client
        assert agent.client is make_agent(stub.base_url, spec, options).client
        assert writer.sampling["max_tokens"] == 400  # the writer's own cap, not the agent's

        async def go() -> RolloutResult:
            try:
                return await agent.run(_episode(spec))
            finally:
                await agent.aclose()

        asyncio.run(go())
        body = stub.bodies[0]
    assert (body["temperature"], body["max_tokens"], body["top_p"]) == (0.3, 64, 0.9)


def _situation() -> dict[str, Any]:
    return {
        "scenario_id": "sc-9",
        "world": {
            "tool": "refund_order",
            "rule": "Refund only delivered orders.",
            "world_state": "entity exists",
            "tool_condition": "timeout",
            "history": "prior_failure",
        },
        "human": {
            "stance": "boundary",
            "tone": "impatient",
            "texture": "typo",
            "persona": "returning",
            "length": "short",
            "ask_family": "tool",
        },
        "tools": ["refund_order"],
        "entities": {"order_id": "ORD-4412"},
        "faults": {"refund_order": {"mode": "timeout", "rate": 1.0}},
        "hidden_state": {"secret": "internal note"},
        "reference": "Follow the rule: Refund only delivered orders.",
    }


def test_the_writer_prompt_never_contains_the_policy_text(spec: Spec) -> None:
    situation = _situation()
    calls: list[Request] = []

    def respond(request: Request) -> Any:
        calls.append(request)
        if any(m.get("role") == "assistant" for m in request.body["messages"]):
            return answer("it is ORD-4412, the one I tried to get refunded yesterday")
        return answer("need a refund on ORD-4412 pls, tried yesterday")

    with OpenAIStub(default=respond) as stub:
        client = ModelClient(parse_model_spec(stub.base_url, model="w"))
        writer = ModelWriter(client, spec)
        user = writer.user(situation, seed=1)
        assert user is not None

        async def go() -> tuple[str, str | None]:
            try:
                opener = await writer.opener(situation, seed=1)
                convo = [
                    {"role": "system", "content": spec.policy},
                    {"role": "user", "content": opener},
                    {"role": "assistant", "content": "Which order? " + spec.rules[1]},
                ]
                return opener, await user.reply(convo)
            finally:
                await writer.aclose()

        opener, follow = asyncio.run(go())
    assert opener.startswith("need a refund") and follow
    sent = json.dumps([r.body for r in calls])
    assert "ORD-4412" in sent and "refund_order" in sent
    assert spec.policy not in sent
    for rule in spec.rules:
        assert rule not in sent, rule
    for hidden in ("internal note", "timeout", "Follow the rule"):
        assert hidden not in sent
    assert "ORD-4412" in person_brief(situation, spec)


def test_the_user_simulator_ends_on_done(spec: Spec) -> None:
    with OpenAIStub([answer("DONE")]) as stub:
        writer = ModelWriter(ModelClient(parse_model_spec(stub.base_url, model="w")), spec)
        user = writer.user(_situation(), seed=1)
        assert user is not None
        convo = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Done."}]

        async def go() -> str | None:
            try:
                return await user.reply(convo)
            finally:
                await writer.aclose()

        assert asyncio.run(go()) is None


def test_the_model_user_simulator_takes_several_turns(spec: Spec) -> None:
    """Agent and person on one stub: the person speaks twice, then says DONE."""
    lines = iter(["ok and what about B2?", "great, and refund A1 please", "DONE"])

    def respond(request: Request) -> Any:
        body = request.body
        if body.get("tools"):  # the agent
            return answer(f"Agent reply {len(body['messages'])}.")
        return answer(next(lines))  # the simulated person

    with OpenAIStub(default=respond) as stub:
        client = ModelClient(parse_model_spec(stub.base_url, model="m"))
        writer = ModelWriter(client, spec, owns_client=False)
        user = writer.user(_situation(), seed=2)
        result = _play(stub, _episode(spec, user=user, max_user_turns=5))
        person_calls = [b for b in stub.bodies if not b.get("tools")]
    said = [s["text"] for s in result.steps if s.get("role") == "user"]
    assert said == ["ok and what about B2?", "great, and refund A1 please"]
    assert result.final_text == "Agent reply 6." and result.finish_reason == "stop"
    # roles are flipped for the person's model: the agent's lines arrive as "user" turns
    last = person_calls[-1]["messages"]
    assert last[0]["role"] == "system" and last[-1] == {"role": "user", "content": "Agent reply 6."}
    assert {"role": "assistant", "content": "ok and what about B2?"} in last
