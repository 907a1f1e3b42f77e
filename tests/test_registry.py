"""One registry: built-ins by decorator, plug-ins by entry point (judges, agents, writers
and model providers), and every model-backed role (agent, writer, judge) reaching its
model the same way."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import orjson
import pytest

from whileai_core.errors import ConfigError
from whileai_core.judges import JudgeOptions, parse_judge
from whileai_core.models.options import ModelOptions
from whileai_core.models.spec import model_name, parse_model_spec, same_model
from whileai_core.registry import (
    AGENTS,
    JUDGES,
    PROVIDERS,
    WRITERS,
    Entry,
    Registry,
    is_model_ref,
)
from whileai_core.testing import OpenAIStub, answer

from .helpers import run_cli

ROW = {
    "scenario_id": "s1",
    "prompt": "Where is ORD-1?",
    "steps": [{"tool": "get_order", "arguments": {"order_id": "ORD-1"}, "result": {"ok": 1}}],
    "final_text": "ORD-1 has shipped.",
}


def test_built_ins_are_found_by_name_in_one_registry() -> None:
    assert {"exact-match", "regex", "code-exec", "conduct", "checklist"} <= set(JUDGES.names())
    assert "seeded" in AGENTS.names() and "template" in WRITERS.names()
    assert parse_judge("regex(^ORD)").name == "regex(^ORD)"
    with pytest.raises(ConfigError, match="json-field: needs a value"):
        parse_judge("json-field")


def test_every_model_provider_is_a_registered_name() -> None:
    assert {"openai", "vllm", "ollama", "url"} <= set(PROVIDERS.names())
    for ref in ("openai:m", "vllm:m@http://h/v1", "ollama:m", "http://h/v1", "https://h/v1"):
        assert is_model_ref(ref)
    for ref in ("seeded", "my_mod:fn", "pkg.mod:fn", "./agent.py:fn", "cmd:python a.py",
                "all:exact-match,json-valid", "url:http://h/v1", "http:nothing"):  # fmt: skip
        assert not is_model_ref(ref), ref


def test_a_model_is_the_same_through_any_provider_or_endpoint() -> None:
    """The self-judged warning and the staleness check share one rule (they had two: one
    kept the `@URL`, the other compared case)."""
    assert model_name("vllm:Qwen/Qwen3-4B@http://h/v1") == "Qwen/Qwen3-4B"
    assert model_name("ollama:llama3.1") == "llama3.1" and model_name("judge-m") == "judge-m"
    assert model_name("http://h/v1") == "http://h/v1"
    assert same_model("vllm:Qwen/Qwen3-4B@http://h/v1", "qwen/qwen3-4b")
    assert same_model("openai:gpt-4.1-mini", "gpt-4.1-mini")
    assert not same_model("openai:gpt-4.1-mini", "openai:gpt-4.1")


def _plugin(tmp_path: Path) -> dict[str, str]:
    """A third-party package installed the way pip leaves one: a module and a dist-info
    folder whose entry points name a judge, an agent and a writer."""
    (tmp_path / "whileai_plug.py").write_text(
        textwrap.dedent(
            """
            from whileai_core.people.template import TemplateWriter

            def make_judge(*, threshold=0.5):
                def judge(row):
                    return {"reward": float(len(row.get("final_text", "")) > threshold)}
                return judge

            def make_agent(spec, options):
                from whileai_core.agents.seeded import SeededAgent
                agent = SeededAgent(spec)
                agent.name = "plug-agent"
                return agent

            def make_writer(spec, options, *, avg_turns=12):
                writer = TemplateWriter(avg_turns=avg_turns)
                writer.name = "plug-writer"
                return writer
            """
        )
    )
    info = tmp_path / "whileai_plug-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: whileai-plug\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[whileai.judges]\nlong-enough = whileai_plug:make_judge\n\n"
        "[whileai.agents]\nplug = whileai_plug:make_agent\n\n"
        "[whileai.writers]\nplug = whileai_plug:make_writer\n"
    )
    return {"PYTHONPATH": str(tmp_path)}


def _provider_plugin(tmp_path: Path, base_url: str) -> dict[str, str]:
    """A package whose entry point adds the model provider `stubby:MODEL`, an endpoint of
    its own (here the loopback stub)."""
    (tmp_path / "whileai_stubby.py").write_text(
        textwrap.dedent(
            f"""
            from whileai_core.models.spec import ModelSpec, clean_url

            def stubby(ref):
                name = ref.name("stubby:some-model")
                return ModelSpec(ref.text, "stubby", name, clean_url({base_url!r}, ref.text))
            """
        )
    )
    info = tmp_path / "whileai_stubby-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: whileai-stubby\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[whileai.providers]\nstubby = whileai_stubby:stubby\n")
    return {"PYTHONPATH": str(tmp_path)}


def test_a_package_adds_a_model_provider_through_an_entry_point(tmp_path: Path) -> None:
    """`stubby:` is no built-in: the agent, the writer and the judge all reach it once the
    package's entry point names it, and rows record it as any provider's model."""
    with OpenAIStub(default=answer('{"reward": 1, "reason": "fine"}')) as stub:
        env = _provider_plugin(tmp_path, stub.base_url)
        made = run_cli(
            "simulate", "specs/orders", "--agent", "stubby:agent-m", "--budget", "2", env=env
        )  # fmt: skip
        assert made.returncode == 0, made.stderr.decode()
        first = orjson.loads(made.stdout.splitlines()[0])
        assert first["model_version"] == "stubby:agent-m"
        graded = run_cli(
            "grade", "-", "--judge", "stubby:judge-m", "--rubric", "README.md",
            input=orjson.dumps(ROW) + b"\n", env=env,
        )  # fmt: skip
        assert graded.returncode == 0, graded.stderr.decode()
        assert orjson.loads(graded.stdout)["judge_meta"]["model"] == "stubby:judge-m"
        assert stub.calls >= 2
    unknown = run_cli("simulate", "specs/orders", "--agent", "stubby:agent-m", "--budget", "2")
    assert unknown.returncode != 0  # without the package, `stubby:` is a module:function


def test_a_provider_that_returns_no_spec_is_one_clear_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    PROVIDERS.names()  # the built-ins are in; this one is removed again after the test
    broken = Entry("broken", lambda ref: "http://h/v1", source="whileai_broken:make")
    monkeypatch.setitem(PROVIDERS._entries, "broken", broken)
    with pytest.raises(ConfigError, match=r"provider 'broken' .* not a ModelSpec"):
        parse_model_spec("broken:m")


def test_a_package_adds_a_judge_agent_and_writer_through_entry_points(tmp_path: Path) -> None:
    env = _plugin(tmp_path)
    rows = orjson.dumps(ROW) + b"\n"
    graded = run_cli("grade", "-", "--judge", "long-enough(threshold=5)", input=rows, env=env)
    assert graded.returncode == 0, graded.stderr.decode()
    out = orjson.loads(graded.stdout)
    assert out["reward"] == 1.0 and out["judge_name"] == "long-enough(threshold=5)"
    made = run_cli(
        "simulate", "specs/orders", "--agent", "plug", "--writer", "plug", "--budget", "2", env=env
    )
    assert made.returncode == 0, made.stderr.decode()
    first = orjson.loads(made.stdout.splitlines()[0])
    assert first["model_version"] == "plug-agent" and first["writer_model"] == "plug-writer"


def test_an_entry_point_that_fails_to_import_is_one_clear_error(tmp_path: Path) -> None:
    env = _plugin(tmp_path)
    (tmp_path / "whileai_plug.py").write_text("raise ImportError('broken plug-in')\n")
    done = run_cli("grade", "-", "--judge", "long-enough", input=orjson.dumps(ROW), env=env)
    assert done.returncode == 1
    assert "long-enough" in done.stderr.decode() and "broken plug-in" in done.stderr.decode()


def test_registry_loads_built_in_modules_only_when_asked() -> None:
    marker = "whileai_test_registry_builtin"
    reg = Registry("thing", builtins=(marker,), group="whileai.nothing")
    sys.modules.pop(marker, None)
    assert marker not in sys.modules
    with pytest.raises(ModuleNotFoundError):
        reg.names()


def test_ollama_judge_reaches_its_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    """`--judge ollama:MODEL` used to fail with "cannot import ollama" while the agent
    took the same prefix; the prefix table is now one."""
    with OpenAIStub(default=answer('{"reward": 1, "reason": "fine"}')) as stub:
        monkeypatch.setenv("OLLAMA_BASE_URL", stub.base_url)
        judge = parse_judge("ollama:judge-m", JudgeOptions(rubric="Pass when it answers."))
        assert judge.name == "llm:ollama:judge-m"
        done = run_cli(
            "grade", "-", "--judge", "ollama:judge-m", "--rubric", "README.md",
            input=orjson.dumps(ROW) + b"\n", env={"OLLAMA_BASE_URL": stub.base_url},
        )  # fmt: skip
        assert done.returncode == 0, done.stderr.decode()
        assert orjson.loads(done.stdout)["judge_meta"]["model"] == "ollama:judge-m"
        rows = run_cli(
            "simulate", "specs/orders", "--budget", "2", "--grader", "ollama:judge-m",
            env={"OLLAMA_BASE_URL": stub.base_url},
        )  # fmt: skip
        assert rows.returncode == 0, rows.stderr.decode()
        names = {orjson.loads(r)["judge_name"] for r in rows.stdout.splitlines()}
        assert names == {"llm:ollama:judge-m"}


def test_llm_judge_shares_the_run_client_and_its_cache(tmp_path: Path) -> None:
    """The judge gets its client from the agents' factory: one client per endpoint per run,
    and `grade --cache` pays for a repeated row once."""
    options = ModelOptions(model="judge-m", cache=True)
    with OpenAIStub(default=answer('{"reward": 0, "reason": "no"}')) as stub:
        first = parse_judge(stub.base_url, JudgeOptions(rubric="r", models=options))
        second = parse_judge(stub.base_url, JudgeOptions(rubric="r", models=options))
        clients = [c for k, c in options.clients.items() if k != "__cache__"]
        assert len(clients) == 1 and first.name == second.name
        rows = orjson.dumps(ROW) + b"\n"
        for _ in range(2):
            done = run_cli(
                "grade", "-", "--judge", stub.base_url, "--model", "judge-m", "--rubric",
                "README.md", "--cache", input=rows,
            )  # fmt: skip
            assert done.returncode == 0, done.stderr.decode()
        assert stub.calls == 1
