"""What one request may cost the server: malformed OTLP, every named limit, uploads and
finalize, each sent to a real server on loopback. Every attack must fail closed: a 4xx
with a message (413 naming the limit when one was passed), and nothing of it stored."""

from __future__ import annotations

import copy
import gzip
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from whileai_core.row.limits import parse_size
from whileai_core.store.limits import Limits, json_value_count
from whileai_core.testing import serve_process
from whileai_server.config import ServerConfig

from ..platform_fixtures import BACKENDS, LiveServer, backend_named, live_server

SPAN: dict[str, Any] = {
    "traceId": "ab" * 16,
    "spanId": "cd" * 8,
    "name": "run",
    "startTimeUnixNano": "1700000000000000000",
    "attributes": [{"key": "gen_ai.agent.name", "value": {"stringValue": "limits-bot"}}],
}


def _export(span: Any = None, **resource_spans: Any) -> dict[str, Any]:
    rs: dict[str, Any] = {"scopeSpans": [{"spans": [SPAN if span is None else span]}]}
    rs.update(resource_spans)
    return {"resourceSpans": [rs]}


def _span(**changes: Any) -> dict[str, Any]:
    span = copy.deepcopy(SPAN)
    span.update(changes)
    return span


def _nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {"stringValue": "leaf"}
    for _ in range(depth):
        value = {"arrayValue": {"values": [value]}}
    return value


MALFORMED: dict[str, Any] = {
    "resource is a string": _export(resource="x"),
    "resource attributes are an object": _export(resource={"attributes": {"a": 1}}),
    "scopeSpans is a string": {"resourceSpans": [{"scopeSpans": "x"}]},
    "spans is an object": {"resourceSpans": [{"scopeSpans": [{"spans": {}}]}]},
    "a span is a string": _export("x"),
    "resourceSpans entry is a number": {"resourceSpans": [5]},
    "startTimeUnixNano is not a number": _export(_span(startTimeUnixNano="abc")),
    "startTimeUnixNano has 5,000 digits": _export(_span(startTimeUnixNano="9" * 5000)),
    "startTimeUnixNano is -1e20": _export(_span(startTimeUnixNano=-1e20)),
    "endTimeUnixNano is a fraction": _export(_span(endTimeUnixNano=1.5)),
    "startTimeUnixNano is negative": _export(_span(startTimeUnixNano="-5")),
    "startTimeUnixNano is a boolean": _export(_span(startTimeUnixNano=True)),
    "attributes is a number": _export(_span(attributes=5)),
    "an attribute is a list": _export(_span(attributes=[[1]])),
    "an attribute key is a number": _export(_span(attributes=[{"key": 5, "value": {}}])),
    "an attribute value is a string": _export(_span(attributes=[{"key": "k", "value": "x"}])),
    "intValue has 5,000 digits": _export(
        _span(attributes=[{"key": "k", "value": {"intValue": "1" * 5000}}])
    ),
    "intValue is past int64": _export(
        _span(attributes=[{"key": "k", "value": {"intValue": str(2**63)}}])
    ),
    "doubleValue is text": _export(
        _span(attributes=[{"key": "k", "value": {"doubleValue": "abc"}}])
    ),
    "boolValue is text": _export(_span(attributes=[{"key": "k", "value": {"boolValue": "yes"}}])),
    "arrayValue is a list": _export(_span(attributes=[{"key": "k", "value": {"arrayValue": []}}])),
    "arrayValue values is a number": _export(
        _span(attributes=[{"key": "k", "value": {"arrayValue": {"values": 5}}}])
    ),
    "kvlistValue holds a number": _export(
        _span(attributes=[{"key": "k", "value": {"kvlistValue": {"values": [5]}}}])
    ),
    "traceId is a number": _export(_span(traceId=123)),
    "traceId is not hex or base64": _export(_span(traceId="zz" * 16)),
    "traceId is a megabyte": _export(_span(traceId="a" * 1_000_000)),
    "traceId is missing": _export({k: v for k, v in SPAN.items() if k != "traceId"}),
    "spanId is a list": _export(_span(spanId=["a"])),
    "name is an object": _export(_span(name={"a": 1})),
    "events is a string": _export(_span(events="x")),
    "the body is a list": [SPAN],
    "the body is null": None,
}
DEEP = {
    "an attribute nested 300 deep": _export(
        _span(attributes=[{"key": "k", "value": _nested(100)}])
    ),
    "an unknown field nested 300 deep": _export(junk=json.loads("[" * 300 + "]" * 300)),
}


def _post(client: httpx.Client, body: bytes, **headers: str) -> httpx.Response:
    return client.post(
        "/v1/traces", content=body, headers={"Content-Type": "application/json", **headers}
    )


@pytest.mark.parametrize("shape", sorted(MALFORMED))
def test_malformed_otlp_json_is_a_400_that_says_where(server: LiveServer, shape: str) -> None:
    client = server.client(server.signup())
    response = _post(client, orjson.dumps(MALFORMED[shape]))
    assert response.status_code == 400, (shape, response.text)
    message = response.json()["error"]
    assert message and "internal" not in message, shape
    assert client.get("/traces").json()["traces"] == [], shape


def test_there_are_at_least_seventeen_malformed_shapes() -> None:
    assert len(MALFORMED) >= 17


@pytest.mark.parametrize("shape", sorted(DEEP))
def test_otlp_nested_past_max_depth_is_a_413_naming_it(server: LiveServer, shape: str) -> None:
    client = server.client(server.signup())
    response = _post(client, json.dumps(DEEP[shape]).encode())  # orjson stops at 255 deep
    assert response.status_code == 413, response.text
    assert response.json()["limit"] == "max_depth" and "--max-depth" in response.json()["error"]
    assert client.get("/traces").json()["traces"] == []


def test_invalid_json_and_broken_gzip_are_400s(server: LiveServer) -> None:
    client = server.client(server.signup())
    for body, headers in (
        (b'{"resourceSpans": [', {}),
        (b"[" * 2000 + b"]" * 2000, {}),  # past the JSON parser's own nesting limit
        (b"not gzip", {"Content-Encoding": "gzip"}),
        (gzip.compress(orjson.dumps(_export()))[:-9], {"Content-Encoding": "gzip"}),
        (orjson.dumps(_export()), {"Content-Encoding": "br"}),
        (b"\x0a\xff\xff\xff\xff\x0f", {"Content-Type": "application/x-protobuf"}),
        (b"\x0b", {"Content-Type": "application/x-protobuf"}),  # wire type 3 (a group)
    ):
        response = _post(client, body, **headers)
        assert response.status_code in (400, 413), (body[:20], response.text)
        assert response.json()["error"], body[:20]


def test_a_huge_page_number_or_limit_is_a_400_not_a_500(server: LiveServer) -> None:
    client = server.client(server.signup())
    for params in (
        {"page": "99999999999999999999"},
        {"page": "9" * 5000},
        {"page": "0"},
        {"page": "-1"},
        {"limit": "99999999999999999999"},
        {"page": "1e3"},
        {"since": "nan"},
    ):
        response = client.get("/traces", params=params)
        assert response.status_code == 400, (params, response.text)
        assert response.json()["error"]
    assert client.get("/datasets/x/preview", params={"n": "9" * 50}).status_code == 400


def _finalize(client: httpx.Client, body: bytes) -> tuple[str, httpx.Response]:
    created = client.post("/datasets", json={"name": "deep"}).json()
    httpx.put(created["uploadUrl"], content=body).raise_for_status()
    return created["datasetId"], client.post(f"/datasets/{created['datasetId']}/finalize")


def test_a_row_400_deep_at_finalize_is_a_413_naming_its_line(server: LiveServer) -> None:
    client = server.client(server.signup())
    deep = b'{"prompt": "hi", "x": ' + b"[" * 400 + b"]" * 400 + b"}\n"
    dataset_id, response = _finalize(client, b'{"prompt": "ok"}\n' + deep)
    assert response.status_code == 413, response.text
    assert "line 2" in response.json()["error"] and response.json()["limit"] == "max_depth"
    assert client.get(f"/datasets/{dataset_id}").status_code == 404  # nothing left pending
    assert client.get("/datasets").json()["datasets"] == []


# --- a server with small limits ----------------------------------------------------------

SMALL = Limits(
    max_spans=5,
    max_attributes=6,
    max_depth=14,
    max_otlp_bytes=64 * 1024,
    max_upload_bytes=256 * 1024,
    max_line_bytes=4 * 1024,
)


@pytest.fixture(scope="module", params=BACKENDS)
def small(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
    config = ServerConfig.relaxed(limits=SMALL)
    database = backend_named(request, request.param).database()
    with live_server(tmp_path_factory.mktemp("small-limits"), config, database=database) as live:
        yield live


def _spans(n: int, attrs: int = 1) -> list[dict[str, Any]]:
    return [
        _span(
            spanId=f"{i + 1:016x}",
            attributes=[{"key": f"a{k}", "value": {"intValue": k}} for k in range(attrs)],
        )
        for i in range(n)
    ]


def _protobuf(n: int, attrs: int = 1, depth: int = 0) -> bytes:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    request = ExportTraceServiceRequest()
    spans = request.resource_spans.add().scope_spans.add().spans
    for i in range(n):
        span = spans.add(trace_id=b"\x01" * 16, span_id=(i + 1).to_bytes(8, "big"), name="s")
        for k in range(attrs):
            kv = span.attributes.add(key=f"a{k}")
            value = kv.value
            for _ in range(depth):
                value = value.array_value.values.add()
            value.int_value = k
    return request.SerializeToString()


def _refused(response: httpx.Response, limit: str) -> None:
    assert response.status_code == 413, response.text
    body = response.json()
    assert body["limit"] == limit and limit in body["error"], body


def test_each_otlp_limit_refuses_the_whole_request(small: LiveServer) -> None:
    client = small.client(small.signup())
    pb = {"Content-Type": "application/x-protobuf"}
    listed = {"key": "k", "value": {"arrayValue": {"values": [{"intValue": 1}] * 6}}}
    nested = {"key": "k", "value": {"arrayValue": {"values": [_nested(1)]}}}
    six = {"resourceSpans": [{"scopeSpans": [{"spans": _spans(6)}]}]}
    cases = [
        ("max_spans", orjson.dumps(six), {}),
        ("max_attributes", orjson.dumps(_export(_spans(1, attrs=7)[0])), {}),
        ("max_attributes", orjson.dumps(_export(_span(attributes=[listed]))), {}),
        ("max_depth", orjson.dumps(_export(_span(attributes=[nested]))), {}),
        ("max_spans", _protobuf(6), pb),
        ("max_attributes", _protobuf(1, attrs=7), pb),
        ("max_attributes", _protobuf(1, attrs=4, depth=1), pb),  # list entries count
        ("max_depth", _protobuf(1, attrs=1, depth=5), pb),
        ("max_otlp_bytes", b" " * (65 * 1024), {}),
    ]
    for limit, body, headers in cases:
        _refused(_post(client, body, **headers), limit)
    assert client.get("/traces").json()["traces"] == []
    # Inside every limit, the same shapes are taken.
    inside = {"resourceSpans": [{"scopeSpans": [{"spans": _spans(5, attrs=2)}]}]}
    assert _post(client, orjson.dumps(inside)).status_code == 200
    assert _post(client, _protobuf(5, attrs=3, depth=1), **pb).status_code == 200
    assert _post(client, _protobuf(1, attrs=1, depth=4), **pb).status_code == 200


def test_a_gzip_bomb_stops_at_the_decompressed_cap(small: LiveServer) -> None:
    client = small.client(small.signup())
    tiny = [_span(attributes=[])] * 30_000  # 2.5 MB of spans in a few kB of gzip
    bomb = gzip.compress(orjson.dumps({"resourceSpans": [{"scopeSpans": [{"spans": tiny}]}]}))
    assert len(bomb) < 64 * 1024  # small on the wire: only inflating it is costly
    _refused(_post(client, bomb, **{"Content-Encoding": "gzip"}), "max_otlp_bytes")
    assert client.get("/traces").json()["traces"] == []


def test_an_upload_past_the_cap_is_refused_and_leaves_no_file(small: LiveServer) -> None:
    client = small.client(small.signup())
    created = client.post("/datasets", json={"name": "big"}).json()
    row = b'{"prompt": "' + b"x" * 1000 + b'"}\n'

    def body():  # streamed without a length: the server counts as it reads
        for _ in range(300):
            yield row

    _refused(httpx.put(created["uploadUrl"], content=body()), "max_upload_bytes")
    declared = httpx.put(created["uploadUrl"], content=row * 300)  # with a Content-Length
    _refused(declared, "max_upload_bytes")
    assert list((small.data / "datasets").glob(f"{created['datasetId']}.*")) == []
    nothing = client.post(f"/datasets/{created['datasetId']}/finalize")
    assert nothing.status_code == 400 and "nothing uploaded" in nothing.json()["error"]


def test_a_line_past_the_cap_is_refused_at_upload(small: LiveServer) -> None:
    client = small.client(small.signup())
    created = client.post("/datasets", json={"name": "long"}).json()
    long_line = b'{"prompt": "' + b"y" * 5000 + b'"}\n'
    response = httpx.put(created["uploadUrl"], content=b'{"prompt": "a"}\n' + long_line)
    _refused(response, "max_line_bytes")
    assert "line 2" in response.json()["error"]


def test_limits_read_sizes_and_environment_and_refuse_nonsense() -> None:
    assert parse_size("16MB") == 16 * 1024 * 1024 and parse_size("5000") == 5000
    assert parse_size("1.5k") == 1536
    env = {"WHILEAI_MAX_SPANS": "7", "WHILEAI_MAX_LINE_BYTES": "1MiB"}
    assert Limits.from_env(env) == Limits(max_spans=7, max_line_bytes=1024 * 1024)
    from whileai_core.errors import ConfigError

    for bad in ({"WHILEAI_MAX_SPANS": "lots"}, {"WHILEAI_MAX_DEPTH": "100000"}):
        with pytest.raises(ConfigError):
            Limits.from_env(bad)


def test_value_count_ignores_structure_inside_strings() -> None:
    doc = orjson.dumps({"a": ["x,y", "{[", 'q\\",', 1, 2], "b": {"c": "d"}})
    assert json_value_count(doc, 100) == 13  # the cheap count, inside strings included
    assert json_value_count(doc, 10) == 9  # the exact one, when the cheap one is over


def test_serve_flags_and_environment_set_the_limits(tmp_path: Path) -> None:
    import os

    env = {**os.environ, "WHILEAI_MAX_SPANS": "2"}
    with serve_process(tmp_path / "srv", env=env, args=["--max-attributes", "3"]) as (_, url):
        key = httpx.post(f"{url}/signup", json={"email": "flags@example.com"}).json()["api_key"]
        with httpx.Client(base_url=url, headers={"X-Api-Key": key}) as client:
            _refused(
                _post(
                    client,
                    orjson.dumps({"resourceSpans": [{"scopeSpans": [{"spans": _spans(3)}]}]}),
                ),
                "max_spans",
            )
            _refused(_post(client, orjson.dumps(_export(_spans(1, attrs=4)[0]))), "max_attributes")
    bad = subprocess.run(
        [sys.executable, "-m", "whileai_cli", "serve", "--max-upload-bytes", "lots"],
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 2 and "--max-upload-bytes" in bad.stderr


def test_serve_help_states_the_library_defaults() -> None:
    from typer.testing import CliRunner

    from whileai_cli.app import app
    from whileai_server import config

    text = " ".join(
        CliRunner().invoke(app, ["serve", "--help"], env={"COLUMNS": "200"}).output.split()
    )
    defaults = Limits()
    for fragment in (
        f"Default {defaults.max_spans:,}.",
        f"Default {defaults.max_attributes}.",
        f"Default {defaults.max_depth}.",
        f"Default {defaults.max_otlp_bytes // 2**20}MiB.",
        f"Default {defaults.max_upload_bytes // 2**20}MiB.",
        f"Default {defaults.max_line_bytes // 2**20}MiB.",
        f"Default {defaults.max_trace_spans:,}.",
        f"Default {defaults.max_trace_bytes // 2**20}MiB.",
        f"(default {config.DEVICE_CODE_RATE})",
        "--forwarded-allow-ips",
        f"(default {config.SIGNUP_RATE})",
        f"(default {config.BAD_KEY_RATE})",
        f"(default {config.APPROVE_RATE})",
    ):
        assert fragment in text, fragment
