"""OTLP/HTTP trace export bodies -> trace rows.

The standard OpenTelemetry exporters send `ExportTraceServiceRequest` either as protobuf
(`application/x-protobuf`, the Python exporter's default) or as OTLP JSON
(`application/json`, ids in hex, 64-bit integers as strings), optionally gzip'd. Both
decode here to one plain span shape, and the spans of one trace fold into one row in the
toolkit's row vocabulary:

- agent: `gen_ai.agent.name`, else the resource's `service.name`
- model: `gen_ai.response.model`, else `gen_ai.request.model`
- usage: `gen_ai.usage.input_tokens` / `output_tokens`, summed over the trace's spans
- steps: spans that execute a tool (`gen_ai.operation.name = execute_tool` or a
  `gen_ai.tool.name`), in start order, with `gen_ai.tool.call.arguments` / `.result`
- scenario: `zeroproof.scenario_id` (what the original SDK emits) or `whileai.scenario_id`
- reward: `whileai.reward` (or `zeroproof.reward`) when the grader ran inline
- prompt / final text: `gen_ai.prompt` / `gen_ai.completion`, or the first user and last
  assistant entries of `gen_ai.input.messages` / `gen_ai.output.messages`

A trace can arrive over several export requests, so the store keeps a trace's spans and
rebuilds its row from all of them each time.
"""

from __future__ import annotations

import base64
import zlib
from collections.abc import Iterable
from datetime import datetime, timezone
from typing import Any

import orjson

from .base import BadRequest

MAX_BODY = 64 * 1024 * 1024  # decompressed; a gzip bomb stops here
SCENARIO_KEYS = ("zeroproof.scenario_id", "whileai.scenario_id", "scenario_id")
REWARD_KEYS = ("whileai.reward", "zeroproof.reward")
PASS_AT = 1.0  # a trace score at or above this is a pass (a 0..1 quality number is not)

Span = dict[str, Any]


def decompress(body: bytes, content_encoding: str | None) -> bytes:
    encoding = (content_encoding or "identity").strip().lower()
    if encoding in ("", "identity"):
        return body
    if encoding not in ("gzip", "deflate"):
        raise BadRequest(f"unsupported Content-Encoding {content_encoding!r} (gzip or none)")
    wbits = 16 + zlib.MAX_WBITS if encoding == "gzip" else zlib.MAX_WBITS
    inflater = zlib.decompressobj(wbits)
    try:
        data = inflater.decompress(body, MAX_BODY)
    except zlib.error as exc:
        raise BadRequest(f"body is not valid {encoding}: {exc}") from None
    if inflater.unconsumed_tail:
        raise BadRequest(f"decompressed body exceeds {MAX_BODY // (1024 * 1024)} MB")
    return data


def decode_request(
    body: bytes, content_type: str, content_encoding: str | None = None
) -> list[Span]:
    """Every span of an export request, with resource attributes attached."""
    raw = decompress(body, content_encoding)
    kind = (content_type or "").split(";")[0].strip().lower()
    if kind in ("application/x-protobuf", "application/protobuf"):
        return _from_protobuf(raw)
    if kind in ("application/json", ""):
        try:
            doc = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise BadRequest(f"body is not valid JSON ({exc.msg})") from None
        return spans_from_json(doc)
    raise BadRequest(
        f"unsupported Content-Type {content_type!r} (application/x-protobuf or application/json)"
    )


# --- protobuf -------------------------------------------------------------------------


def _from_protobuf(raw: bytes) -> list[Span]:
    from google.protobuf.message import DecodeError
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    request = ExportTraceServiceRequest()
    try:
        request.ParseFromString(raw)
    except DecodeError as exc:
        raise BadRequest(f"body is not an OTLP protobuf export request ({exc})") from None
    spans: list[Span] = []
    for rs in request.resource_spans:
        resource = {kv.key: _pb_value(kv.value) for kv in rs.resource.attributes}
        for ss in rs.scope_spans:
            for s in ss.spans:
                spans.append(
                    {
                        "traceId": s.trace_id.hex(),
                        "spanId": s.span_id.hex(),
                        "parentSpanId": s.parent_span_id.hex(),
                        "name": s.name,
                        "start": int(s.start_time_unix_nano),
                        "end": int(s.end_time_unix_nano),
                        "attributes": {kv.key: _pb_value(kv.value) for kv in s.attributes},
                        "resource": resource,
                    }
                )
    return spans


def _pb_value(value: Any) -> Any:
    which = value.WhichOneof("value")
    if which is None:
        return None
    if which == "array_value":
        return [_pb_value(v) for v in value.array_value.values]
    if which == "kvlist_value":
        return {kv.key: _pb_value(kv.value) for kv in value.kvlist_value.values}
    if which == "bytes_value":
        return base64.b64encode(value.bytes_value).decode()
    return getattr(value, which)


# --- JSON -----------------------------------------------------------------------------


def spans_from_json(doc: Any) -> list[Span]:
    """Spans of an OTLP JSON export request (`resourceSpans` / `scopeSpans`)."""
    if not isinstance(doc, dict) or not isinstance(doc.get("resourceSpans"), list):
        raise BadRequest("not an OTLP trace export: expected an object with 'resourceSpans'")
    spans: list[Span] = []
    for rs in doc["resourceSpans"]:
        if not isinstance(rs, dict):
            raise BadRequest("resourceSpans entries must be objects")
        resource = _json_attrs((rs.get("resource") or {}).get("attributes"))
        scopes = rs.get("scopeSpans") or rs.get("instrumentationLibrarySpans") or []
        for ss in scopes:
            for s in (ss or {}).get("spans") or []:
                if not isinstance(s, dict) or not s.get("traceId"):
                    raise BadRequest("every span needs a traceId")
                spans.append(
                    {
                        "traceId": _json_id(s["traceId"]),
                        "spanId": _json_id(s.get("spanId") or ""),
                        "parentSpanId": _json_id(s.get("parentSpanId") or ""),
                        "name": str(s.get("name") or ""),
                        "start": int(s.get("startTimeUnixNano") or 0),
                        "end": int(s.get("endTimeUnixNano") or 0),
                        "attributes": _json_attrs(s.get("attributes")),
                        "resource": resource,
                    }
                )
    return spans


def _json_id(value: Any) -> str:
    """OTLP JSON ids are hex; some exporters send base64 (protobuf's JSON mapping)."""
    text = str(value)
    try:
        bytes.fromhex(text)
        return text.lower()
    except ValueError:
        try:
            return base64.b64decode(text, validate=True).hex()
        except ValueError:
            raise BadRequest(f"span id {text!r} is neither hex nor base64") from None


def _json_attrs(items: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kv in items or []:
        if isinstance(kv, dict) and isinstance(kv.get("key"), str):
            out[kv["key"]] = _json_value(kv.get("value") or {})
    return out


def _json_value(value: dict[str, Any]) -> Any:
    if "stringValue" in value:
        return value["stringValue"]
    if "intValue" in value:
        return int(value["intValue"])
    if "doubleValue" in value:
        return float(value["doubleValue"])
    if "boolValue" in value:
        return bool(value["boolValue"])
    if "arrayValue" in value:
        return [_json_value(v) for v in (value["arrayValue"] or {}).get("values") or []]
    if "kvlistValue" in value:
        return _json_attrs((value["kvlistValue"] or {}).get("values"))
    if "bytesValue" in value:
        return value["bytesValue"]
    return None


# --- spans -> row ---------------------------------------------------------------------


def group_by_trace(spans: Iterable[Span]) -> dict[str, list[Span]]:
    traces: dict[str, list[Span]] = {}
    for span in spans:
        traces.setdefault(span["traceId"], []).append(span)
    return traces


def _first(spans: list[Span], keys: Iterable[str]) -> Any:
    for key in keys:
        for span in spans:
            value = span["attributes"].get(key)
            if value not in (None, ""):
                return value
    return None


def _decoded(value: Any) -> Any:
    """Tool arguments and results travel as JSON strings; keep them as objects when they are."""
    if isinstance(value, str) and value[:1] in ("{", "["):
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            return value
    return value


def _is_tool_span(span: Span) -> bool:
    attrs = span["attributes"]
    return attrs.get("gen_ai.operation.name") == "execute_tool" or "gen_ai.tool.name" in attrs


def _message_text(messages: Any, role: str, last: bool) -> str | None:
    if not isinstance(messages, list):
        return None
    ordered = reversed(messages) if last else iter(messages)
    for m in ordered:
        if isinstance(m, dict) and m.get("role") == role:
            content = m.get("content")
            if isinstance(content, str):
                return content
            parts = m.get("parts")
            if isinstance(parts, list):
                texts = [p.get("content") for p in parts if isinstance(p, dict)]
                return "".join(t for t in texts if isinstance(t, str))
    return None


def declared_agent(spans: list[Span]) -> str | None:
    """The agent a span names itself (`gen_ai.agent.name`); only this registers an agent,
    so the service name of a half-arrived trace never leaves a stray agent behind."""
    value = _first(spans, ["gen_ai.agent.name"])
    return str(value) if value is not None else None


def span_reward(spans: list[Span]) -> float | None:
    value = _first(spans, REWARD_KEYS)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def trace_row(spans: list[Span], scores: dict[str, float] | None = None) -> dict[str, Any]:
    """One row for one trace. The verdict is the `score` sent after the run, else the reward
    the span carried; a trace without either is ungraded (no `reward` key)."""
    spans = sorted(spans, key=lambda s: (s["start"], s["spanId"]))
    agent = _first(spans, ["gen_ai.agent.name"])
    if agent is None:
        agent = next((s["resource"].get("service.name") for s in spans if s["resource"]), None)
    inputs = _decoded(_first(spans, ["gen_ai.input.messages"]))
    outputs = _decoded(_first(spans, ["gen_ai.output.messages"]))
    prompt = _first(spans, ["whileai.prompt", "gen_ai.prompt"])
    if not isinstance(prompt, str):
        prompt = _message_text(inputs, "user", last=False) or ""
    final = _first(spans, ["whileai.final_text", "gen_ai.completion"])
    if not isinstance(final, str):
        final = _message_text(outputs, "assistant", last=True)
    steps = [
        {
            "tool": s["attributes"].get("gen_ai.tool.name") or s["name"],
            "arguments": _decoded(s["attributes"].get("gen_ai.tool.call.arguments", {})),
            "result": _decoded(s["attributes"].get("gen_ai.tool.call.result", {})),
        }
        for s in spans
        if _is_tool_span(s)
    ]
    usage = {"input_tokens": 0, "output_tokens": 0}
    for s in spans:
        for key, field in (
            ("gen_ai.usage.input_tokens", "input_tokens"),
            ("gen_ai.usage.output_tokens", "output_tokens"),
        ):
            value = s["attributes"].get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                usage[field] += value
    start = min((s["start"] for s in spans if s["start"]), default=0)
    row: dict[str, Any] = {"prompt": prompt}
    if isinstance(inputs, list):
        row["messages"] = inputs
    row["steps"] = steps
    if final is not None:
        row["final_text"] = final
    scenario = _first(spans, SCENARIO_KEYS)
    if scenario is not None:
        row["scenario_id"] = str(scenario)
    model = _first(spans, ["gen_ai.response.model", "gen_ai.request.model"])
    if model is not None:
        row["model_version"] = str(model)
    row["usage"] = usage
    row["tools_used"] = sorted({step["tool"] for step in steps})
    row["trace_id"] = spans[0]["traceId"]
    if agent is not None:
        row["agent"] = str(agent)
    if start:
        row["started_at"] = datetime.fromtimestamp(start / 1e9, tz=timezone.utc).isoformat()
    verdict = (scores or {}).get("score")
    if verdict is None:
        verdict = span_reward(spans)
    if verdict is not None:
        row["reward"] = verdict
        row["judge_name"] = "trace-score"
        row["judge_status"] = "ok"
    if scores:
        row["scores"] = dict(scores)
    row["schema_version"] = "1"
    return row
