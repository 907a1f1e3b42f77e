"""The model-call cache: a re-run pays nothing, repeats stay separate samples, CLI reports."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from whileai_core.agents.base import Episode, RolloutResult
from whileai_core.agents.model import make_agent
from whileai_core.models import ModelCache, ModelCallError, ModelClient, parse_model_spec
from whileai_core.models.factory import model_stats
from whileai_core.models.options import ModelOptions
from whileai_core.settings import home
from whileai_core.spec import load_spec
from whileai_core.testing import OpenAIStub, answer, http_error, tool_call

from ..helpers import ORDERS_SPEC, play, run_cli

MSGS = [{"role": "user", "content": "hi"}]


class EchoWorld:
    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return {"status": "ok", "data": {"tool": name, **arguments}}


def _rollout(stub: OpenAIStub, options: ModelOptions, rollout_index: int = 0) -> RolloutResult:
    spec = load_spec(ORDERS_SPEC)
    agent = make_agent(stub.base_url, spec, options)
    episode = Episode(
        spec=spec,
        prompt="Where is A1?",
        scenario_id="sc-1",
        rollout_index=rollout_index,
        world=EchoWorld(),
        seed=3,
    )
    return play(agent, episode)


def _replies() -> list[Any]:
    return [tool_call("get_order", {"order_id": "A1"}), answer("A1 is delivered.")]


def test_a_rerun_with_the_cache_pays_for_no_calls() -> None:
    with OpenAIStub(_replies() * 2) as stub:
        first = _rollout(stub, ModelOptions(model="m", cache=True))
        assert stub.calls == 2
        options = ModelOptions(model="m", cache=True)
        second = _rollout(stub, options)
        assert stub.calls == 2  # every completion came from the cache
    assert second.messages == first.messages and second.steps == first.steps
    assert model_stats(options)["agent m"]["cache_hits"] == 2
    assert (home() / "cache" / "models.sqlite3").exists()


def test_without_the_cache_a_rerun_calls_again() -> None:
    with OpenAIStub(_replies() * 2) as stub:
        _rollout(stub, ModelOptions(model="m"))
        _rollout(stub, ModelOptions(model="m"))
        assert stub.calls == 4


def test_repeats_of_one_phrasing_are_not_served_from_each_other() -> None:
    with OpenAIStub(_replies() * 2) as stub:
        _rollout(stub, ModelOptions(model="m", cache=True), rollout_index=0)
        _rollout(stub, ModelOptions(model="m", cache=True), rollout_index=1)
        assert stub.calls == 4


def test_errors_are_not_cached(tmp_path: Path) -> None:
    cache = ModelCache(tmp_path / "c.sqlite3")
    with OpenAIStub([http_error(400), answer("fine")]) as stub:
        spec = parse_model_spec(stub.base_url, model="m")

        async def go() -> str:
            client = ModelClient(spec, cache=cache, retries=0)
            try:
                with pytest.raises(ModelCallError):
                    await client.chat(MSGS)
                return (await client.chat(MSGS)).text
            finally:
                await client.aclose()

        assert asyncio.run(go()) == "fine"
        assert stub.calls == 2


def test_the_key_changes_with_endpoint_model_messages_tools_and_sampling() -> None:
    base = {"model": "m", "messages": MSGS, "temperature": 0.2}
    keys = {
        ModelCache.key("http://a/v1", base),
        ModelCache.key("http://b/v1", base),
        ModelCache.key("http://a/v1", {**base, "model": "n"}),
        ModelCache.key("http://a/v1", {**base, "messages": [*MSGS, *MSGS]}),
        ModelCache.key("http://a/v1", {**base, "tools": [{"type": "function"}]}),
        ModelCache.key("http://a/v1", {**base, "temperature": 0.3}),
        ModelCache.key("http://a/v1", base, salt="r1"),
    }
    assert len(keys) == 7
    assert ModelCache.key("http://a/v1", base) == ModelCache.key("http://a/v1", dict(base))


def test_cache_stats_and_clear_from_the_cli() -> None:
    with OpenAIStub(_replies()) as stub:
        _rollout(stub, ModelOptions(model="m", cache=True))
    stats = run_cli("cache", "stats", "--json")
    assert stats.returncode == 0, stats.stderr
    report = json.loads(stats.stdout)
    assert report["entries"] == 2 and report["models"] == {"m": 2}
    cleared = run_cli("cache", "clear", "--json")
    assert json.loads(cleared.stdout)["removed"] == 2
    again = json.loads(run_cli("cache", "stats", "--json").stdout)
    assert again["entries"] == 0
    human = run_cli("cache", "stats")
    assert b"0 completions" in human.stdout  # the report asked for: stdout


def test_a_file_that_is_not_a_cache_is_named_and_clear_removes_it(tmp_path: Path) -> None:
    from whileai_core.models.cache import UnreadableCache

    path = tmp_path / "models.sqlite3"
    path.write_bytes(b"not a database at all, just text" * 4)
    with pytest.raises(UnreadableCache, match="not a model cache"):
        ModelCache(path).stats()
    assert ModelCache(path).clear() == 0 and not path.exists()
    assert ModelCache(path).stats().entries == 0
