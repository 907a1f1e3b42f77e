"""OTLP JSON export requests -> spans, checked field by field.

The JSON comes from anyone who holds a key, so every field is checked for the type the
OTLP JSON mapping gives it, and a wrong one is a `BadRequest` that says where it was
(`resourceSpans[0].scopeSpans[1].spans[7].startTimeUnixNano: ...`), never a crash.
Before the body is parsed at all, its structure is counted on the raw bytes
(`limits.json_skeleton`): a body that would nest too deep or parse into more values than
the limits allow is refused without allocating them. Unknown fields are ignored, as the
OTLP spec asks of receivers.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
from collections.abc import Callable
from typing import Any, TypeVar

from ..store.base import BadRequest
from ..store.json_pieces import loads_in_pieces
from ..store.limits import AttributeBudget, Limits, json_value_count, refuse

T = TypeVar("T")

Span = dict[str, Any]
LogRecord = dict[str, Any]
UINT64 = 2**64
INT64 = 2**63
_MAX_DIGITS = 20  # 2**64 has 20 digits: a longer number is refused before int() sees it


def spans_from_json_bytes(raw: bytes | bytearray, limits: Limits) -> list[Span]:
    """Counted before it is parsed (what parsing would allocate), checked for depth before
    it is walked, and parsed a piece at a time (`json_pieces`): the server's other threads
    run between the pieces."""
    return spans_from_json(_parsed(raw, limits), limits, consume=True)


def logs_from_json_bytes(raw: bytes | bytearray, limits: Limits) -> list[LogRecord]:
    """An OTLP JSON logs export request, under the same counts as a trace export."""
    return logs_from_json(_parsed(raw, limits), limits, consume=True)


def _parsed(raw: bytes | bytearray, limits: Limits) -> Any:
    values = json_value_count(raw, limits.max_json_values)
    if values > limits.max_json_values:
        raise refuse(
            "max_spans",
            f"the export request holds more than {limits.max_json_values:,} JSON values"
            " (max_spans x (max_attributes + 16))",
            limits.max_spans,
        )
    try:
        doc, depth = loads_in_pieces(raw, limits.max_depth)
    except json.JSONDecodeError as exc:  # orjson's own error is one too
        raise BadRequest(f"body is not valid JSON ({exc.msg})") from None
    if depth > limits.max_depth:
        raise refuse(
            "max_depth",
            f"the export request nests deeper than {limits.max_depth} levels",
            limits.max_depth,
        )
    return doc


def spans_from_json(doc: Any, limits: Limits | None = None, consume: bool = False) -> list[Span]:
    """Spans of an OTLP JSON export request (`resourceSpans` / `scopeSpans`). With
    `consume`, each span is let go of in `doc` once read (see `_let_go`)."""
    limits = limits or Limits()
    if not isinstance(doc, dict) or not isinstance(doc.get("resourceSpans"), list):
        raise BadRequest("not an OTLP trace export: expected an object with 'resourceSpans'")
    reader = _Reader(limits)
    scopes = ("scopeSpans", "instrumentationLibrarySpans")
    return _walk(doc["resourceSpans"], "resourceSpans", scopes, "spans", "spans", limits,
                 consume, reader, reader.span)  # fmt: skip


def logs_from_json(
    doc: Any, limits: Limits | None = None, consume: bool = False
) -> list[LogRecord]:
    """Log records of an OTLP JSON logs export request (`resourceLogs` / `scopeLogs`),
    let go of in `doc` as they are read when `consume` is set."""
    limits = limits or Limits()
    if not isinstance(doc, dict) or not isinstance(doc.get("resourceLogs"), list):
        raise BadRequest("not an OTLP logs export: expected an object with 'resourceLogs'")
    reader = _Reader(limits)
    return _walk(doc["resourceLogs"], "resourceLogs", ("scopeLogs",), "logRecords",
                 "log records", limits, consume, reader, reader.log_record)  # fmt: skip


def _walk(
    resources: list[Any],
    top: str,
    scope_keys: tuple[str, ...],
    items_key: str,
    noun: str,
    limits: Limits,
    consume: bool,
    reader: _Reader,
    read: Callable[[Any, str, Any], T],
) -> list[T]:
    """Every item under resource -> scope -> `items_key`, read with its resource's
    attributes, at most `limits.max_spans` of them (spans and log records share the cap).
    The first of `scope_keys` a resource holds names its scopes (the older
    `instrumentationLibrarySpans` is read when `scopeSpans` is absent)."""
    out: list[T] = []
    for i, res in enumerate(resources):
        where = f"{top}[{i}]"
        res = _object(res, where)
        resource_obj = _object(res.get("resource"), f"{where}.resource", optional=True)
        resource = reader.attributes(resource_obj.get("attributes"), f"{where}.resource")
        scopes_key = next((k for k in scope_keys if k in res), scope_keys[0])
        for j, scope in enumerate(_list(res.get(scopes_key), f"{where}.{scopes_key}")):
            scope_where = f"{where}.{scopes_key}[{j}]"
            scope = _object(scope, scope_where, optional=True)
            items = _list(scope.get(items_key), f"{scope_where}.{items_key}")
            for k, item in enumerate(items):
                _let_go(items, k, consume)
                if len(out) >= limits.max_spans:
                    raise refuse(
                        "max_spans",
                        f"the export request has more than {limits.max_spans:,} {noun}",
                        limits.max_spans,
                    )
                out.append(read(item, f"{scope_where}.{items_key}[{k}]", resource))
    return out


def _let_go(items: list[Any], k: int, consume: bool) -> None:
    """Drop the parsed document's hold on item `k` (the loop still holds it while it is
    read): freeing a whole document at once is one uninterrupted cascade of deallocations
    that holds the interpreter lock (0.2 s for an export at the 16 MiB cap), item by item
    it is a few microseconds at a time."""
    if consume:
        items[k] = None


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}.get(
        type(value), "null" if value is None else "a number"
    )


def _object(value: Any, where: str, optional: bool = False) -> dict[str, Any]:
    if value is None and optional:
        return {}
    if not isinstance(value, dict):
        raise BadRequest(f"{where}: expected an object, got {_kind(value)}")
    return value


def _list(value: Any, where: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise BadRequest(f"{where}: expected a list, got {_kind(value)}")
    return value


def _text(value: Any, where: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise BadRequest(f"{where}: expected a string, got {_kind(value)}")
    return value


def _integer(value: Any, where: str, low: int, high: int) -> int:
    """An OTLP 64-bit integer: a JSON number, or (the mapping's usual form) a decimal string."""
    if isinstance(value, bool):
        raise BadRequest(f"{where}: expected an integer, got a boolean")
    if isinstance(value, float):
        if not value.is_integer():
            raise BadRequest(f"{where}: expected an integer, got {value!r}")
        value = int(value) if math.isfinite(value) and abs(value) < 2**65 else None
        if value is None:
            raise BadRequest(f"{where}: integer out of range")
    if isinstance(value, str):
        digits = value.strip()
        body = digits[1:] if digits[:1] == "-" else digits
        if not (body.isascii() and body.isdigit()) or len(body) > _MAX_DIGITS:
            shown = value if len(value) <= 40 else value[:40] + "..."
            raise BadRequest(f"{where}: expected an integer, got {shown!r}")
        value = int(digits)
    if not isinstance(value, int):
        raise BadRequest(f"{where}: expected an integer, got {_kind(value)}")
    if not low <= value < high:
        raise BadRequest(f"{where}: integer out of range ({low} to {high - 1})")
    return value


def _double(value: Any, where: str) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str) and value in ("NaN", "Infinity", "-Infinity"):
        return float(value.replace("Infinity", "inf"))
    if isinstance(value, str) and len(value) <= 64:
        try:
            return float(value)
        except ValueError:
            pass
    raise BadRequest(f"{where}: expected a number, got {_kind(value)}")


def _span_id(value: Any, where: str, size: int, required: bool) -> str:
    """Hex (the OTLP JSON mapping) or base64 (protobuf's generic JSON mapping) of exactly
    `size` bytes; ids of any other length would never match a span of a real trace."""
    if value in (None, "") and not required:
        return ""
    if not isinstance(value, str) or not value:
        raise BadRequest(f"{where}: expected a {size}-byte id in hex, got {_kind(value)}")
    if len(value) == 2 * size:
        try:
            bytes.fromhex(value)
            return value.lower()
        except ValueError:
            pass
    if len(value) <= 4 * size:
        try:
            decoded = base64.b64decode(value, validate=True)
        except (ValueError, binascii.Error):
            decoded = b""
        if len(decoded) == size:
            return decoded.hex()
    shown = value if len(value) <= 40 else value[:40] + "..."
    raise BadRequest(f"{where}: {shown!r} is not a {size}-byte id in hex or base64")


class _Reader:
    """Converts one request, counting each span's attributes against `max_attributes`."""

    def __init__(self, limits: Limits) -> None:
        self.budget = AttributeBudget(limits)

    def span(self, s: Any, where: str, resource: dict[str, Any]) -> Span:
        s = _object(s, where)
        self.budget.start(where)
        for n, item in enumerate(_list(s.get("links"), f"{where}.links")):  # counted, not kept
            item = _object(item, f"{where}.links[{n}]")
            attrs = _list(item.get("attributes"), f"{where}.links[{n}].attributes")
            self.budget.spend(1 + len(attrs))
        events = [
            self._event(e, f"{where}.events[{n}]")
            for n, e in enumerate(_list(s.get("events"), f"{where}.events"))
        ]
        span = {
            "traceId": _span_id(s.get("traceId"), f"{where}.traceId", 16, required=True),
            "spanId": _span_id(s.get("spanId"), f"{where}.spanId", 8, required=False),
            "parentSpanId": _span_id(s.get("parentSpanId"), f"{where}.parentSpanId", 8, False),
            "name": _text(s.get("name"), f"{where}.name"),
            "start": self._time(s.get("startTimeUnixNano"), f"{where}.startTimeUnixNano"),
            "end": self._time(s.get("endTimeUnixNano"), f"{where}.endTimeUnixNano"),
            "attributes": self._key_values(s.get("attributes"), f"{where}.attributes"),
            "resource": resource,
        }
        if events:  # the older GenAI conventions put each message in a span event
            span["events"] = events
        return span

    def _event(self, item: Any, where: str) -> dict[str, Any]:
        """A span event, its attributes spending the span's budget."""
        item = _object(item, where)
        self.budget.spend()
        return {
            "name": _text(item.get("name"), f"{where}.name"),
            "time": self._time(item.get("timeUnixNano"), f"{where}.timeUnixNano"),
            "attributes": self._key_values(item.get("attributes"), f"{where}.attributes"),
        }

    def log_record(self, r: Any, where: str, resource: dict[str, Any]) -> LogRecord:
        """One OTLP log record: its event name, time, trace and span ids, attributes and
        body (an AnyValue, spending the record's attribute budget like its attributes)."""
        r = _object(r, where)
        self.budget.start(where)
        time = self._time(r.get("timeUnixNano"), f"{where}.timeUnixNano")
        if not time:
            time = self._time(r.get("observedTimeUnixNano"), f"{where}.observedTimeUnixNano")
        body = None
        if r.get("body") is not None:
            self.budget.spend()
            body = self._value(r.get("body"), f"{where}.body")
        return {
            "traceId": _span_id(r.get("traceId"), f"{where}.traceId", 16, required=False),
            "spanId": _span_id(r.get("spanId"), f"{where}.spanId", 8, required=False),
            "name": _text(r.get("eventName"), f"{where}.eventName"),
            "time": time,
            "attributes": self._key_values(r.get("attributes"), f"{where}.attributes"),
            "body": body,
            "resource": resource,
        }

    @staticmethod
    def _time(value: Any, where: str) -> int:
        return 0 if value is None else _integer(value, where, 0, UINT64)

    def attributes(self, items: Any, where: str) -> dict[str, Any]:
        """A resource's or scope's attributes, with a budget of their own."""
        self.budget.start(where)
        return self._key_values(items, f"{where}.attributes")

    def _key_values(self, items: Any, at: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for n, kv in enumerate(_list(items, at)):
            kv_at = f"{at}[{n}]"
            kv = _object(kv, kv_at)
            key = kv.get("key")
            if not isinstance(key, str):
                raise BadRequest(f"{kv_at}.key: expected a string, got {_kind(key)}")
            self.budget.spend()
            out[key] = self._value(kv.get("value"), f"{kv_at}.value")
        return out

    def _value(self, value: Any, at: str) -> Any:
        value = _object(value, at, optional=True)
        if "stringValue" in value:
            return _text(value["stringValue"], f"{at}.stringValue")
        if "intValue" in value:
            return _integer(value["intValue"], f"{at}.intValue", -INT64, INT64)
        if "doubleValue" in value:
            return _double(value["doubleValue"], f"{at}.doubleValue")
        if "boolValue" in value:
            if not isinstance(value["boolValue"], bool):
                got = _kind(value["boolValue"])
                raise BadRequest(f"{at}.boolValue: expected a boolean, got {got}")
            return value["boolValue"]
        if "arrayValue" in value:
            array = _object(value["arrayValue"], f"{at}.arrayValue", optional=True)
            values = _list(array.get("values"), f"{at}.arrayValue.values")
            out = []
            for n, item in enumerate(values):
                self.budget.spend()
                out.append(self._value(item, f"{at}.arrayValue.values[{n}]"))
            return out
        if "kvlistValue" in value:
            kvlist = _object(value["kvlistValue"], f"{at}.kvlistValue", optional=True)
            return self._key_values(kvlist.get("values"), f"{at}.kvlistValue.values")
        if "bytesValue" in value:
            return _text(value["bytesValue"], f"{at}.bytesValue")
        return None
