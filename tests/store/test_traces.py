"""Traces: OTLP in (protobuf from the real OpenTelemetry exporter, JSON, gzip), scores after
the run, and cuts into train/holdout datasets, on both stores."""

from __future__ import annotations

import gc
import gzip
from pathlib import Path

import orjson
import pytest
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from whileai_core.errors import TooLarge
from whileai_core.otlp.decode import decode_request, trace_row
from whileai_core.platform.cut import parse_band, select
from whileai_core.store import BadRequest
from whileai_core.store.base import parse_since
from whileai_core.store.limits import Limits
from whileai_core.store.local import Storage

from .. import platform_fixtures
from ..platform_fixtures import LiveServer, cli, jsonl, ok, stdout_json

_run, _export = platform_fixtures.otlp_run, platform_fixtures.otlp_export


def test_span_from_the_opentelemetry_sdk_exporter_lands_as_a_trace(server: LiveServer) -> None:
    key = server.signup()
    provider = TracerProvider(resource=Resource.create({"service.name": "checkout"}))
    exporter = OTLPSpanExporter(
        endpoint=f"{server.url}/v1/traces",
        headers={"X-Api-Key": key},
        compression=Compression.Gzip,
    )
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("agent")
    with tracer.start_as_current_span("invoke_agent") as root:
        root.set_attribute("gen_ai.agent.name", "refund-bot")
        root.set_attribute("gen_ai.request.model", "gpt-test")
        root.set_attribute("gen_ai.usage.input_tokens", 321)
        root.set_attribute("gen_ai.usage.output_tokens", 45)
        root.set_attribute("zeroproof.scenario_id", "sc-42")
        root.set_attribute("gen_ai.prompt", "refund order 7")
        root.set_attribute("whileai.reward", 1.0)
        with tracer.start_as_current_span("execute_tool refund_order") as tool:
            tool.set_attribute("gen_ai.operation.name", "execute_tool")
            tool.set_attribute("gen_ai.tool.name", "refund_order")
            tool.set_attribute("gen_ai.tool.call.arguments", '{"order_id": "7"}')
        trace_id = format(root.get_span_context().trace_id, "032x")
    provider.shutdown()
    traces = server.client(key).get("/traces", params={"agent": "refund-bot"}).json()["traces"]
    assert len(traces) == 1
    row = traces[0]
    assert row["trace_id"] == trace_id and row["agent"] == "refund-bot"
    assert row["model_version"] == "gpt-test" and row["scenario_id"] == "sc-42"
    assert row["usage"] == {"input_tokens": 321, "output_tokens": 45}
    assert row["steps"] == [{"tool": "refund_order", "arguments": {"order_id": "7"}, "result": {}}]
    assert row["prompt"] == "refund order 7" and row["reward"] == 1.0
    agents = server.client(key).get("/agents").json()["agents"]
    assert [(a["slug"], a["traces"]) for a in agents] == [("refund-bot", 1)]


def test_json_and_gzip_bodies_decode_to_the_same_spans() -> None:
    _, spans = _run("a", "s", "p")
    body = _export(spans)
    plain = decode_request(body, "application/json")
    assert decode_request(gzip.compress(body), "application/json", "gzip") == plain
    row = trace_row(plain)
    assert row["agent"] == "a" and row["tools_used"] == ["get_order"] and "reward" not in row
    with pytest.raises(BadRequest, match="Content-Type"):
        decode_request(body, "text/plain")
    with pytest.raises(BadRequest, match="resourceSpans"):
        decode_request(b"{}", "application/json")
    with pytest.raises(BadRequest, match="gzip"):
        decode_request(b"nope", "application/json", "gzip")


def test_a_trace_split_over_two_exports_is_one_trace(store_env: str, tmp_path: Path) -> None:
    trace_id, spans = _run("split-bot", "s1", "hello")
    (tmp_path / "a.json").write_bytes(_export(spans[:1]))
    (tmp_path / "b.json").write_bytes(_export(spans[1:]))
    ok("traces", "ingest", str(tmp_path / "a.json"))
    ok("traces", "ingest", str(tmp_path / "b.json"))
    listed = stdout_json(ok("traces", "list", "--agent", "split-bot", "--json"))["traces"]
    assert len(listed) == 1 and listed[0]["trace_id"] == trace_id
    assert listed[0]["steps"][0]["tool"] == "get_order"


def test_score_after_the_run_and_a_correction(store_env: str, tmp_path: Path) -> None:
    trace_id, spans = _run("score-bot", "s1", "hello")
    path = tmp_path / "t.json.gz"
    path.write_bytes(gzip.compress(_export(spans)))
    assert ok("traces", "ingest", str(path)).stdout.split() == [trace_id]
    ok("score", trace_id, "0.0")
    ok("score", trace_id, "0.7", "--name", "quality")
    ok("score", trace_id, "1.0")  # the same name again corrects the verdict
    row = stdout_json(ok("traces", "list", "--json"))["traces"][0]
    assert row["reward"] == 1.0 and row["scores"] == {"score": 1.0, "quality": 0.7}
    missing = cli("score", "f" * 32, "1")
    assert missing.exit_code == 1 and "not found" in str(missing.exception)
    ok("traces", "delete", trace_id)
    assert stdout_json(ok("traces", "list", "--json"))["traces"] == []


def _ingest_shop(tmp_path: Path) -> None:
    """Scenario pass patterns: mixed (2 of 4), always (2 of 2), never (0 of 2), and one
    0.9 'quality' that must not count as a pass, plus an ungraded run."""
    spans = []
    plan = {
        "mixed": [1.0, 0.0, 1.0, 0.0],
        "easy": [1.0, 1.0],
        "hard": [0.0, 0.0],
        "almost": [0.9, 0.0, 0.5],
    }
    for scenario, rewards in plan.items():
        for reward in rewards:
            spans += _run("shop", scenario, f"ask {scenario}", reward)[1]
    spans += _run("shop", "ungraded", "ask ungraded")[1]
    spans += _run("other-agent", "mixed", "ask mixed", 1.0)[1]
    (tmp_path / "shop.json").write_bytes(_export(spans))
    ok("traces", "ingest", str(tmp_path / "shop.json"))


def test_cut_rl_keeps_the_prompts_in_the_band(store_env: str, tmp_path: Path) -> None:
    _ingest_shop(tmp_path)
    made = stdout_json(ok("cut", "--agent", "shop", "--kind", "rl", "--holdout", "0", "--json"))
    report = made["report"]
    assert report["traces"] == 12 and report["ungraded"] == 1
    assert {k: g["kept"] for k, g in report["groups"].items()} == {
        "mixed": 4,
        "easy": 0,
        "hard": 0,
        "almost": 0,
    }
    assert report["dropped"] == {"tooEasy": 1, "tooHard": 2, "unanimous": 0, "neverPassed": 0}
    assert made["holdout"] is None
    ok("pull", made["train"]["datasetId"], "-o", str(tmp_path / "rl.jsonl"))
    rows = jsonl(tmp_path / "rl.jsonl")
    assert sorted(r["reward"] for r in rows) == [0.0, 0.0, 1.0, 1.0]
    assert {r["scenario_id"] for r in rows} == {"mixed"} and {r["agent"] for r in rows} == {"shop"}
    datasets = stdout_json(ok("datasets", "--json"))["datasets"]
    assert [(d["mode"], d["agent"], d["purpose"]) for d in datasets] == [("rl", "shop", "train")]


def test_cut_sft_keeps_the_best_passing_run_per_prompt(store_env: str, tmp_path: Path) -> None:
    _ingest_shop(tmp_path)
    made = stdout_json(ok("cut", "--agent", "shop", "--kind", "sft", "--holdout", "0", "--json"))
    groups = made["report"]["groups"]
    assert {k: g["kept"] for k, g in groups.items()} == {
        "mixed": 1,
        "easy": 1,
        "hard": 0,
        "almost": 0,
    }
    ok("pull", made["train"]["datasetId"], "-o", str(tmp_path / "sft.jsonl"))
    rows = jsonl(tmp_path / "sft.jsonl")
    assert sorted(r["scenario_id"] for r in rows) == ["easy", "mixed"]
    assert all(r["reward"] == 1.0 for r in rows)


def test_cut_with_holdout_splits_prompts_and_prints_both_ids(store_env: str, tmp_path) -> None:
    spans = []
    for i in range(12):
        for reward in (1.0, 0.0):
            spans += _run("wide", f"task-{i}", f"ask {i}", reward)[1]
    (tmp_path / "wide.json").write_bytes(_export(spans))
    ok("traces", "ingest", str(tmp_path / "wide.json"))
    printed = ok("cut", "--agent", "wide", "--kind", "rl", "--holdout", "0.3").stdout.split()
    assert len(printed) == 2
    ok("pull", printed[0], "-o", str(tmp_path / "train.jsonl"))
    ok("pull", printed[1], "-o", str(tmp_path / "held.jsonl"))
    train = {r["scenario_id"] for r in jsonl(tmp_path / "train.jsonl")}
    held = {r["scenario_id"] for r in jsonl(tmp_path / "held.jsonl")}
    assert train and held and not train & held and len(train | held) == 12


def test_cut_with_nothing_scored_fails_clearly(store_env: str, tmp_path: Path) -> None:
    (tmp_path / "u.json").write_bytes(_export(_run("quiet", "s", "p")[1]))
    ok("traces", "ingest", str(tmp_path / "u.json"))
    result = cli("cut", "--agent", "quiet", "--kind", "rl")
    assert result.exit_code == 1 and "nothing to cut" in str(result.exception)
    dry = stdout_json(ok("cut", "--agent", "quiet", "--dry-run", "--json"))
    assert dry["report"]["ungraded"] == 1 and dry["train"] is None


def test_purge_agent_removes_its_traces(store_env: str, tmp_path: Path) -> None:
    _ingest_shop(tmp_path)
    dry = stdout_json(ok("purge", "--agent", "shop", "--dry-run", "--json"))
    assert dry["planned"] == {"datasets": 0, "traces": 12, "agent": 1, "unfinished": 0}
    ok("purge", "--agent", "shop", "--yes")
    left = stdout_json(ok("traces", "list", "--json"))["traces"]
    assert [t["agent"] for t in left] == ["other-agent"]


def test_since_and_band_parsing() -> None:
    assert parse_since("7d", now=1_000_000.0) == 1_000_000.0 - 7 * 86400
    assert parse_since(None) is None
    assert parse_band("0.3,0.7") == (0.3, 0.7)
    from whileai_core.errors import ConfigError

    with pytest.raises(ConfigError):
        parse_since("seven days")
    with pytest.raises(ConfigError):
        parse_band("0.9,0.1")


def test_select_band_edges_are_inclusive() -> None:
    rows = [{"scenario_id": "a", "reward": r, "prompt": "x"} for r in (1.0, 0.0, 0.0, 0.0, 0.0)]
    kept, report = select(rows, "rl", (0.2, 0.8))
    assert len(kept) == 5 and report.kept_prompts == 1


def test_cut_rows_carry_the_verdict_as_a_pass_or_fail_reward(store_env: str, tmp_path) -> None:
    """A trace passes at 1.0, a row at 0.5: a cut row's reward is the verdict's pass/fail,
    so the stored set's profile and calibration agree with the cut about 0.9 and 0.5."""
    spans = []
    for reward in (0.9, 1.0, 0.5):
        spans += _run("shop", "almost", "ask almost", reward)[1]
    (tmp_path / "almost.json").write_bytes(_export(spans))
    ok("traces", "ingest", str(tmp_path / "almost.json"))
    made = stdout_json(ok("cut", "--agent", "shop", "--band", "0,1", "--holdout", "0", "--json"))
    assert made["report"]["groups"]["almost"] == {
        "runs": 3,
        "passes": 1,
        "passRate": 0.3333,
        "kept": 3,
    }
    dataset_id = made["train"]["datasetId"]
    ok("pull", dataset_id, "-o", str(tmp_path / "cut.jsonl"))
    rows = jsonl(tmp_path / "cut.jsonl")
    assert [r["reward"] for r in rows] == [0.0, 1.0, 0.0]
    assert sorted(r["verdict"] for r in rows if "verdict" in r) == [0.5, 0.9]


def test_cut_rl_drops_unanimous_prompts_even_when_the_band_admits_them(
    store_env: str, tmp_path: Path
) -> None:
    """The one RL rule (select.rl.group_verdict): zero advantage is dropped at any band."""
    _ingest_shop(tmp_path)
    made = stdout_json(ok("cut", "--agent", "shop", "--band", "0,1", "--dry-run", "--json"))
    report = made["report"]
    assert {k: g["kept"] for k, g in report["groups"].items()} == {
        "mixed": 4, "easy": 0, "hard": 0, "almost": 0,
    }  # fmt: skip
    assert report["dropped"]["unanimous"] == 3


def _many_spans(trace_ids: list[str], spans_each: int, first: int = 0) -> bytes:
    spans = [
        {
            "traceId": trace_id,
            "spanId": f"{first + n * spans_each + i + 1:016x}",
            "name": "step",
            "attributes": [
                {"key": f"app.attr.{k}", "value": {"stringValue": f"value {i} {k}"}}
                for k in range(10)
            ],
        }
        for n, trace_id in enumerate(trace_ids)
        for i in range(spans_each)
    ]
    return orjson.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]})


def test_an_export_is_ingested_without_a_cycle_collection(tmp_path: Path) -> None:
    """Each collection the decode's allocations set off walked every live object holding
    the interpreter lock (0.5 s at a time on a 16 MiB export): the server stopped
    answering. An ingest, kept or refused, sets off no full collection, and leaves the
    collector on."""
    storage = Storage(tmp_path / "srv", Limits(max_trace_spans=3000))
    started: list[int] = []

    def watch(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started.append(info["generation"])

    first, second = _many_spans(["ab" * 16], 2000), _many_spans(["ab" * 16], 2000, first=2000)
    assert gc.isenabled()
    gc.callbacks.append(watch)
    try:
        kept = storage.traces.ingest("acct", first, "application/json")
        with pytest.raises(TooLarge, match="max_trace_spans") as refused:
            storage.traces.ingest("acct", second, "application/json")
    finally:
        gc.callbacks.remove(watch)
        storage.close()
    # At most the young generation, once the collector is back on: nothing the request
    # made is left to walk by then.
    assert kept["accepted"] == 2000 and max(started, default=0) == 0, started
    assert gc.isenabled()
    # The refusal carries no frame that still holds the request's spans (the collector,
    # off while they were made, would be what freed them).
    frames = []
    tb = refused.value.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    assert "ingest_spans" not in [f.f_code.co_name for f in frames]
    assert all(not f.f_locals.get("spans") for f in frames)
