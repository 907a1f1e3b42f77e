"""OTLP protobuf export requests -> spans, counted on the wire before they are parsed.

A protobuf parser allocates for every repeated entry it meets, and an empty `KeyValue`
is two bytes on the wire: 16 MB of them would be eight million objects. So the request
is first walked as raw wire format (tags and lengths only, skipping every payload),
counting spans, each span's attributes and how deep messages nest, and it is refused the
moment a count passes its limit. Only a request inside every limit reaches the parser.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

from ..store.base import BadRequest
from ..store.limits import AttributeBudget, Limits, refuse

Span = dict[str, Any]
_LEN = 2


class _Scan:
    """One pass over the wire format. Field numbers are OTLP's trace.proto/common.proto."""

    def __init__(
        self, buf: bytes | bytearray | memoryview, limits: Limits, signal: str = "traces"
    ) -> None:
        self.buf = buf
        self.limits = limits
        self.logs = signal == "logs"
        self.spans = 0
        self.budget = AttributeBudget(limits)

    def _varint(self, pos: int, end: int) -> tuple[int, int]:
        buf, result, shift = self.buf, 0, 0
        while True:
            if pos >= end:
                raise BadRequest("body is not an OTLP protobuf export request (truncated)")
            byte = buf[pos]
            pos += 1
            result |= (byte & 0x7F) << shift
            if byte < 0x80:
                return result, pos
            shift += 7
            if shift > 63:
                raise BadRequest("body is not an OTLP protobuf export request (bad varint)")

    def fields(self, pos: int, end: int, depth: int) -> Iterator[tuple[int, int, int]]:
        """(field number, payload start, payload end) of each length-delimited field."""
        if depth > self.limits.max_depth:
            raise refuse(
                "max_depth",
                f"the export request nests deeper than {self.limits.max_depth} messages",
                self.limits.max_depth,
            )
        while pos < end:
            key, pos = self._varint(pos, end)
            wire = key & 7
            if wire == 0:
                _, pos = self._varint(pos, end)
                continue
            if wire == 1:
                stop = pos + 8
            elif wire == 5:
                stop = pos + 4
            elif wire == _LEN:
                size, pos = self._varint(pos, end)
                stop = pos + size
            else:
                raise BadRequest(f"body is not an OTLP protobuf export request (wire type {wire})")
            if stop > end:
                raise BadRequest("body is not an OTLP protobuf export request (truncated)")
            if wire == _LEN:
                yield key >> 3, pos, stop
            pos = stop

    def count(self) -> None:
        self.budget.spend()

    def request(self) -> None:
        for field, a, b in self.fields(0, len(self.buf), 1):
            if field == 1:
                self.resource_spans(a, b, 2)

    def resource_spans(self, pos: int, end: int, depth: int) -> None:
        for field, a, b in self.fields(pos, end, depth):
            if field == 1:  # Resource: attributes = 1
                self.owned("a resource", a, b, depth + 1, attributes=(1,))
            elif field == 2:  # ScopeSpans: scope = 1, spans = 2
                for inner, c, d in self.fields(a, b, depth + 1):
                    if inner == 1:
                        self.owned("a scope", c, d, depth + 2, attributes=(3,))
                    elif inner == 2:
                        self.spans += 1
                        what = "log records" if self.logs else "spans"
                        if self.spans > self.limits.max_spans:
                            cap = self.limits.max_spans
                            raise refuse(
                                "max_spans",
                                f"the export request has more than {cap:,} {what}",
                                self.limits.max_spans,
                            )
                        if self.logs:  # LogRecord: attributes = 6, body = 5 (an AnyValue)
                            self.owned(
                                f"log record {self.spans}", c, d, depth + 2, attributes=(6,),
                                values=(5,),
                            )  # fmt: skip
                        else:
                            self.owned(
                                f"span {self.spans}",
                                c,
                                d,
                                depth + 2,
                                attributes=(9,),
                                children=(11, 13),
                            )

    def owned(
        self,
        owner: str,
        pos: int,
        end: int,
        depth: int,
        attributes: tuple[int, ...],
        children: tuple[int, ...] = (),
        values: tuple[int, ...] = (),
    ) -> None:
        """A message with its own attribute budget; `children` (events = 11, links = 13)
        count one each and spend the same budget with their attributes (3 and 4), as do
        `values` (a log record's body)."""
        self.budget.start(owner)
        for field, a, b in self.fields(pos, end, depth):
            if field in attributes:
                self.key_value(a, b, depth + 1)
            elif field in values:
                self.count()
                self.any_value(a, b, depth + 1)
            elif field in children:
                self.count()
                for inner, c, d in self.fields(a, b, depth + 1):
                    if inner == (3 if field == 11 else 4):
                        self.key_value(c, d, depth + 2)

    def key_value(self, pos: int, end: int, depth: int) -> None:
        self.count()
        for field, a, b in self.fields(pos, end, depth):
            if field == 2:
                self.any_value(a, b, depth + 1)

    def any_value(self, pos: int, end: int, depth: int) -> None:
        for field, a, b in self.fields(pos, end, depth):
            if field == 5:  # ArrayValue: values = 1 (AnyValue)
                for inner, c, d in self.fields(a, b, depth + 1):
                    if inner == 1:
                        self.count()
                        self.any_value(c, d, depth + 2)
            elif field == 6:  # KeyValueList: values = 1 (KeyValue)
                for inner, c, d in self.fields(a, b, depth + 1):
                    if inner == 1:
                        self.key_value(c, d, depth + 2)


def spans_from_protobuf(raw: bytes | bytearray, limits: Limits) -> list[Span]:
    _Scan(raw, limits).request()
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
                where = f"span {len(spans) + 1}"
                spans.append(
                    {
                        "traceId": _pb_id(s.trace_id, 16, f"{where}: trace_id", required=True),
                        "spanId": _pb_id(s.span_id, 8, f"{where}: span_id"),
                        "parentSpanId": _pb_id(s.parent_span_id, 8, f"{where}: parent_span_id"),
                        "name": s.name,
                        "start": int(s.start_time_unix_nano),
                        "end": int(s.end_time_unix_nano),
                        "attributes": {kv.key: _pb_value(kv.value) for kv in s.attributes},
                        "resource": resource,
                    }
                )
                if s.events:  # the older GenAI conventions put each message in an event
                    spans[-1]["events"] = [
                        {
                            "name": e.name,
                            "time": int(e.time_unix_nano),
                            "attributes": {kv.key: _pb_value(kv.value) for kv in e.attributes},
                        }
                        for e in s.events
                    ]
    return spans


def logs_from_protobuf(raw: bytes | bytearray, limits: Limits) -> list[dict[str, Any]]:
    """Log records of an `ExportLogsServiceRequest`, scanned under the same limits first."""
    _Scan(raw, limits, "logs").request()
    from google.protobuf.message import DecodeError
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

    request = ExportLogsServiceRequest()
    try:
        request.ParseFromString(raw)
    except DecodeError as exc:
        raise BadRequest(f"body is not an OTLP protobuf logs export request ({exc})") from None
    records: list[dict[str, Any]] = []
    for rl in request.resource_logs:
        resource = {kv.key: _pb_value(kv.value) for kv in rl.resource.attributes}
        for sl in rl.scope_logs:
            for r in sl.log_records:
                where = f"log record {len(records) + 1}"
                records.append(
                    {
                        "traceId": _pb_id(r.trace_id, 16, f"{where}: trace_id"),
                        "spanId": _pb_id(r.span_id, 8, f"{where}: span_id"),
                        "name": getattr(r, "event_name", ""),  # proto < 1.5 has none
                        "time": int(r.time_unix_nano or r.observed_time_unix_nano),
                        "attributes": {kv.key: _pb_value(kv.value) for kv in r.attributes},
                        "body": _pb_value(r.body) if r.HasField("body") else None,
                        "resource": resource,
                    }
                )
    return records


def _pb_id(value: bytes, size: int, where: str, required: bool = False) -> str:
    if not value and not required:
        return ""
    if len(value) != size:
        raise BadRequest(f"{where} must be {size} bytes, got {len(value)}")
    return value.hex()


def _pb_value(value: Any) -> Any:
    """An AnyValue as plain data; the scan bounded how deep this recurses."""
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
