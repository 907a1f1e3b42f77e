"""The LLM rubric judge against the loopback OpenAI-compatible stub."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from whileai_core.errors import ConfigError, WhileaiError
from whileai_core.judges import grade_rows
from whileai_core.judges.llm import llm_judge, parse_verdict, prompt_sha
from whileai_core.models.options import ModelOptions
from whileai_core.testing import OpenAIStub, answer, http_error

from ..helpers import SDK_ROWS, run_cli

RUBRIC = "Pass when the agent looked the order up before answering and said what it found."
ROW: dict[str, Any] = {
    "scenario_id": "s1",
    "prompt": "Where is ORD-1?",
    "steps": [
        {
            "tool": "get_order",
            "arguments": {"order_id": "ORD-1"},
            "result": {"status": "ok", "data": {"status": "shipped"}},
        }
    ],
    "final_text": "ORD-1 has shipped.",
    "privileged": {"reference": "SECRET-ANSWER-KEY"},
}


def _opts(**kwargs: Any) -> ModelOptions:
    return ModelOptions(model="judge-m", **kwargs)


def _grade(stub: OpenAIStub, rows: list[dict[str, Any]], **kwargs: Any) -> list[dict[str, Any]]:
    kwargs.setdefault("rubric", RUBRIC)
    judge = llm_judge(stub.base_url, options=_opts(retries=2, backoff=0.01), **kwargs)
    return list(grade_rows(rows, judge, concurrency=4, timeout=10))


def test_good_verdict_lands_with_provenance() -> None:
    with OpenAIStub([answer('{"reward": 1, "reason": "looked it up and said so"}')]) as stub:
        (out,) = _grade(stub, [ROW])
        body = stub.requests[0].body
    assert out["reward"] == 1 and out["judge_status"] == "ok"
    assert out["reason"] == "looked it up and said so"
    meta = out["judge_meta"]
    assert meta["model"] == "judge-m" and meta["temperature"] == 0.0
    assert meta["prompt_sha"] == prompt_sha(RUBRIC)
    assert meta["version"] == f"judge-m@{prompt_sha(RUBRIC)}"
    assert body["model"] == "judge-m" and RUBRIC in body["messages"][0]["content"]
    assert "get_order" in body["messages"][1]["content"]
    assert "SECRET-ANSWER-KEY" not in orjson.dumps(body).decode()


def test_privileged_is_read_only_when_asked() -> None:
    with OpenAIStub([answer('{"reward": 0}')]) as stub:
        _grade(stub, [ROW], use_privileged=True)
        assert "SECRET-ANSWER-KEY" in stub.requests[0].body["messages"][1]["content"]


def test_malformed_judge_reply_is_invalid_result() -> None:
    with OpenAIStub([answer("Looks good to me!"), answer('{"reward": 7}')]) as stub:
        out = _grade(stub, [ROW, {**ROW, "scenario_id": "s2"}])
    assert [r["judge_status"] for r in out] == ["invalid_result", "invalid_result"]
    assert all(r["reward"] is None for r in out)


def test_a_500_is_retried_then_succeeds() -> None:
    with OpenAIStub([http_error(500), answer('{"reward": 0.5, "reason": "half"}')]) as stub:
        (out,) = _grade(stub, [ROW])
        assert stub.calls == 2
    assert out["judge_status"] == "ok" and out["reward"] == 0.5


def test_a_500_that_persists_is_error_and_grading_goes_on() -> None:
    script = [http_error(500)] * 3 + [answer('{"reward": 1}')]
    with OpenAIStub(script) as stub:
        # One row at a time, so the three 500s (a call and two retries) all hit the first.
        judge = llm_judge(stub.base_url, rubric=RUBRIC, options=_opts(retries=2, backoff=0.01))
        first, second = grade_rows([ROW, {**ROW, "scenario_id": "s2"}], judge, concurrency=1)
    assert first["judge_status"] == "error" and first["reward"] is None
    assert "http_500" in first["reason"]
    assert second["judge_status"] == "ok"


def test_a_refused_key_stops_grading() -> None:
    with (
        OpenAIStub([http_error(401, message="bad key")]) as stub,
        pytest.raises(WhileaiError, match="401"),
    ):
        _grade(stub, [ROW])


def test_no_rubric_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="needs a rubric"):
        llm_judge("http://127.0.0.1:9/v1", options=ModelOptions(model="m"))


def test_an_edited_rubric_is_a_new_judge() -> None:
    assert prompt_sha(RUBRIC) != prompt_sha(RUBRIC + " Be strict.")


def test_verdict_parser_reads_fenced_json_and_rejects_prose() -> None:
    assert parse_verdict('Sure.\n```json\n{"reward": 0, "reason": "no"}\n```')["reward"] == 0
    with pytest.raises(Exception, match="verdict"):
        parse_verdict("I would say yes")


def test_llm_judge_from_the_command_line(tmp_path: Path) -> None:
    rubric = tmp_path / "rubric.md"
    rubric.write_text(RUBRIC)
    with OpenAIStub(default=answer('{"reward": 1, "reason": "ok"}')) as stub:
        result = run_cli(
            "grade",
            str(SDK_ROWS),
            "--judge",
            stub.base_url,
            "--model",
            "judge-m",
            "--rubric",
            str(rubric),
            "-c",
            "8",
        )
        calls = stub.calls
    assert result.returncode == 0, result.stderr
    rows = [orjson.loads(line) for line in result.stdout.splitlines()]
    assert len(rows) == 40 and calls == 40
    assert {r["judge_name"] for r in rows} == {"llm:judge-m"}
    assert "judge model judge-m: 40 ok" in result.stderr.decode()


def test_the_spec_rubric_is_the_default(tmp_path: Path) -> None:
    from whileai_core.spec import load_spec

    spec = load_spec(Path(__file__).parents[2] / "specs" / "orders")
    assert spec.rubric
    with OpenAIStub([answer('{"reward": 1}')]) as stub:
        judge = llm_judge(stub.base_url, spec=spec, options=_opts(retries=0))
        (out,) = grade_rows([ROW], judge)
        system = stub.requests[0].body["messages"][0]["content"]
    assert spec.rubric.strip() in system
    assert out["judge_meta"]["prompt_sha"] == prompt_sha(spec.rubric)
