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

import zlib
from collections.abc import Iterable
from datetime import datetime, timezone
from typing import IO, Any

import orjson

from .base import BadRequest, TooLarge
from .limits import Limits, refuse
from .otlp_json import spans_from_json, spans_from_json_bytes
from .otlp_proto import spans_from_protobuf

SCENARIO_KEYS = ("zeroproof.scenario_id", "whileai.scenario_id", "scenario_id")
REWARD_KEYS = ("whileai.reward", "zeroproof.reward")
PASS_AT = 1.0  # a trace score at or above this is a pass (a 0..1 quality number is not)
CHUNK = 256 * 1024

Span = dict[str, Any]
__all__ = ["decode_request", "decompress", "spans_from_json", "trace_row"]


def _chunks(body: bytes | IO[bytes]) -> Iterable[bytes]:
    if isinstance(body, (bytes, bytearray)):
        for at in range(0, len(body), CHUNK):
            yield bytes(body[at : at + CHUNK])
        return
    while chunk := body.read(CHUNK):
        yield chunk


def decompress(
    body: bytes | IO[bytes], content_encoding: str | None, limits: Limits | None = None
) -> bytearray:
    """The body as the exporter meant it, inflated a chunk at a time and stopped the moment
    it passes `max_otlp_bytes`: a gzip bomb costs the cap, not what it would inflate to."""
    cap = (limits or Limits()).max_otlp_bytes
    encoding = (content_encoding or "identity").strip().lower()
    if encoding not in ("", "identity", "gzip", "x-gzip", "deflate"):
        raise BadRequest(f"unsupported Content-Encoding {content_encoding!r} (gzip or none)")
    out = bytearray()
    if encoding in ("", "identity"):
        for chunk in _chunks(body):
            out += chunk
            if len(out) > cap:
                raise refuse("max_otlp_bytes", "the export request is too large", cap)
        return out
    wbits = zlib.MAX_WBITS if encoding == "deflate" else 16 + zlib.MAX_WBITS
    inflater = zlib.decompressobj(wbits)
    try:
        for chunk in _chunks(body):
            while chunk:
                out += inflater.decompress(chunk, cap + 1 - len(out))
                if len(out) > cap:
                    raise refuse(
                        "max_otlp_bytes", "the export request inflates past the limit", cap
                    )
                chunk = inflater.unconsumed_tail
                if inflater.eof:  # a second gzip member may follow (RFC 1952 allows it)
                    chunk = inflater.unused_data + chunk
                    if not chunk:
                        break
                    inflater = zlib.decompressobj(wbits)
    except zlib.error as exc:
        raise BadRequest(f"body is not valid {encoding}: {exc}") from None
    if not inflater.eof:
        raise BadRequest(f"body is not valid {encoding}: it ends before the stream does")
    return out


def decode_request(
    body: bytes | IO[bytes],
    content_type: str,
    content_encoding: str | None = None,
    limits: Limits | None = None,
) -> list[Span]:
    """Every span of an export request, with resource attributes attached; a request over
    any limit is refused whole (`TooLarge`), a malformed one with where it went wrong."""
    try:
        return _decode(body, content_type, content_encoding, limits or Limits())
    except (BadRequest, TooLarge) as exc:
        refusal = exc
    # Raised afresh: the traceback would hold the frames, and with them the inflated body
    # and the parsed document, until the garbage collector happens upon the cycle.
    refusal.__traceback__ = None
    raise refusal


def _decode(
    body: bytes | IO[bytes], content_type: str, content_encoding: str | None, limits: Limits
) -> list[Span]:
    kind = (content_type or "").split(";")[0].strip().lower()
    if kind not in ("application/x-protobuf", "application/protobuf", "application/json", ""):
        raise BadRequest(
            f"unsupported Content-Type {content_type!r} "
            "(application/x-protobuf or application/json)"
        )
    raw = decompress(body, content_encoding, limits)
    if kind in ("application/x-protobuf", "application/protobuf"):
        return spans_from_protobuf(raw, limits)
    return spans_from_json_bytes(raw, limits)


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
