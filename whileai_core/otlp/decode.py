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

import hashlib
import zlib
from collections.abc import Iterable
from datetime import datetime, timezone
from typing import IO, Any

import orjson

from ..store.base import BadRequest, Signal, TooLarge
from ..store.limits import Limits, refuse
from . import genai as otlp_genai
from .json import logs_from_json_bytes, spans_from_json, spans_from_json_bytes
from .proto import logs_from_protobuf, spans_from_protobuf

SCENARIO_KEYS = ("zeroproof.scenario_id", "whileai.scenario_id", "scenario_id")
REWARD_KEYS = ("whileai.reward", "zeroproof.reward")
PASS_AT = 1.0  # a trace score at or above this is a pass (a 0..1 quality number is not)
CHUNK = 256 * 1024

Span = dict[str, Any]
__all__ = ["decode_logs", "decode_request", "decompress", "spans_from_json", "trace_row"]


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
    return _refusing(body, content_type, content_encoding, limits, "traces")


def decode_logs(
    body: bytes | IO[bytes],
    content_type: str,
    content_encoding: str | None = None,
    limits: Limits | None = None,
) -> tuple[list[Span], int]:
    """A logs export request (what GenAI instrumentations send their message events as):
    its records as entries of their traces (`log_entries`), and how many records named
    no trace and so could not be joined to a run. Refused as a trace request is."""
    records = _refusing(body, content_type, content_encoding, limits, "logs")
    entries = log_entries(records)
    return entries, len(records) - len(entries)


def _refusing(
    body: bytes | IO[bytes],
    content_type: str,
    content_encoding: str | None,
    limits: Limits | None,
    signal: Signal,
) -> list[Span]:
    try:
        return _decode(body, content_type, content_encoding, limits or Limits(), signal)
    except (BadRequest, TooLarge) as exc:
        refusal = exc
    # Raised afresh: the traceback would hold the frames, and with them the inflated body
    # and the parsed document, until the garbage collector happens upon the cycle.
    refusal.__traceback__ = None
    raise refusal


def _decode(
    body: bytes | IO[bytes],
    content_type: str,
    content_encoding: str | None,
    limits: Limits,
    signal: Signal,
) -> list[Span]:
    kind = (content_type or "").split(";")[0].strip().lower()
    if kind not in ("application/x-protobuf", "application/protobuf", "application/json", ""):
        raise BadRequest(
            f"unsupported Content-Type {content_type!r} "
            "(application/x-protobuf or application/json)"
        )
    raw = decompress(body, content_encoding, limits)
    protobuf = kind in ("application/x-protobuf", "application/protobuf")
    if signal == "logs":
        return logs_from_protobuf(raw, limits) if protobuf else logs_from_json_bytes(raw, limits)
    if protobuf:
        return spans_from_protobuf(raw, limits)
    return spans_from_json_bytes(raw, limits)


def log_entries(records: Iterable[dict[str, Any]]) -> list[Span]:
    """Log records as entries of their trace, stored and merged like spans: `kind: log`,
    the span they belong to as `parentSpanId`, and a key made of their content, so a
    record exported twice is kept once. Records outside any trace cannot be joined to a
    run and are left out (the count is `len(records) - len(entries)`)."""
    entries: list[Span] = []
    for record in records:
        if not record["traceId"]:
            continue
        name = record["name"] or record["attributes"].get("event.name") or ""
        content = orjson.dumps(
            [record["spanId"], name, record["time"], record["attributes"], record["body"]],
            option=orjson.OPT_SORT_KEYS,
        )
        entries.append(
            {
                "traceId": record["traceId"],
                "spanId": "log:" + hashlib.sha256(content).hexdigest()[:24],
                "parentSpanId": record["spanId"],
                "kind": "log",
                "name": str(name),
                "start": record["time"],
                "end": record["time"],
                "attributes": record["attributes"],
                "body": record["body"],
                "resource": record["resource"],
            }
        )
    return entries


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


def _plain(value: Any) -> str | None:
    """A prompt or completion sent as plain text; a JSON message list (the deprecated
    `gen_ai.prompt` form) is read as messages instead."""
    if not isinstance(value, str):
        return None
    if value[:1] == "[" and isinstance(_decoded(value), list):
        return None
    return value


# Token counts by convention, newest first: a span counts the first of each it carries.
_USAGE_KEYS = {
    "input_tokens": (
        "gen_ai.usage.input_tokens",
        "gen_ai.usage.prompt_tokens",
        "llm.token_count.prompt",
    ),
    "output_tokens": (
        "gen_ai.usage.output_tokens",
        "gen_ai.usage.completion_tokens",
        "llm.token_count.completion",
    ),
}


def usage_of(spans: Iterable[Span]) -> dict[str, int]:
    """Input and output tokens summed over the trace's spans, whichever names they use."""
    usage = {"input_tokens": 0, "output_tokens": 0}
    for s in spans:
        for field, keys in _USAGE_KEYS.items():
            for key in keys:
                value = s["attributes"].get(key)
                if isinstance(value, int) and not isinstance(value, bool):
                    usage[field] += value
                    break
    return usage


def trace_context(row: dict[str, Any]) -> tuple[list[dict[str, Any]], str | None]:
    """The tool schemas and system prompt a trace's model calls carried (for its agent),
    read off the row `trace_row` built: its `tools` and its leading system message."""
    messages = row.get("messages") or []
    first = messages[0] if messages and isinstance(messages[0], dict) else {}
    system = first.get("content") if first.get("role") == "system" else None
    return list(row.get("tools") or []), system if isinstance(system, str) else None


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
    everything = sorted(spans, key=lambda s: (s["start"], s["spanId"]))
    logs = [s for s in everything if s.get("kind") == "log"]
    spans = [s for s in everything if s.get("kind") != "log"]
    agent = _first(spans, ["gen_ai.agent.name"])
    if agent is None:
        agent = next((s["resource"].get("service.name") for s in everything if s["resource"]), None)
    talk = otlp_genai.conversation(spans, logs)
    messages = talk.messages if talk is not None else []
    prompt = _plain(_first(spans, ["whileai.prompt", "gen_ai.prompt"]))
    if prompt is None:
        prompt = next((m["content"] for m in messages if m["role"] == "user"), "")
    final = _plain(_first(spans, ["whileai.final_text", "gen_ai.completion"]))
    if final is None and messages:
        final = next(
            (m["content"] for m in reversed(messages) if m["role"] == "assistant" and m["content"]),
            "",
        )
    steps = [
        {
            "tool": s["attributes"].get("gen_ai.tool.name") or s["name"],
            "arguments": _decoded(s["attributes"].get("gen_ai.tool.call.arguments", {})),
            "result": _decoded(s["attributes"].get("gen_ai.tool.call.result", {})),
        }
        for s in spans
        if _is_tool_span(s)
    ] or otlp_genai.steps_of(messages)
    start = min((s["start"] for s in everything if s["start"]), default=0)
    row: dict[str, Any] = {"prompt": prompt}
    if messages:
        row["messages"] = messages
    row["steps"] = steps
    if final is not None:
        row["final_text"] = final
    if talk is not None and talk.tools:
        row["tools"] = talk.tools
    scenario = _first(spans, SCENARIO_KEYS)
    if scenario is not None:
        row["scenario_id"] = str(scenario)
    model = _first(spans, ["gen_ai.response.model", "gen_ai.request.model"])
    if model is not None:
        row["model_version"] = str(model)
    row["usage"] = usage_of(spans)
    row["tools_used"] = sorted({step["tool"] for step in steps})
    row["trace_id"] = everything[0]["traceId"]
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
