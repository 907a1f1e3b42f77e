"""Traces in the store: spans merged per trace, the row rebuilt from all of them.

A trace can arrive over several export requests, so its spans are kept and its row is
rebuilt from every span each time one arrives. An export request is decoded whole, inside
the limits, before anything is written, and written in one transaction: a request that is
refused, or that fails half way, leaves nothing of itself behind.

Rebuilding costs what the whole trace does, so a trace is capped across requests
(`max_trace_spans`, `max_trace_bytes`): a request's spans for a trace that would pass a
cap are dropped, counted and named in the answer (OTLP's `partialSuccess`), and a request
none of whose spans fit is refused with 413. The check reads the count and size stored
beside the spans, so adding to a full trace costs only the request's own spans, and
merging never costs more than one full trace. The check counts a retried span as new, so
near a cap a retry may be dropped: it was stored the first time.
"""

from __future__ import annotations

import gc
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, TYPE_CHECKING, Any

import orjson

from ..otlp import decode as otlp
from . import quotas
from .agents import carry_context, ensure_agent
from .base import TRACE_PAGE_SIZE, BadRequest, NotFound, StoreError, TooLarge, check_score
from .json_pieces import loads_in_pieces
from .limits import Limits, refuse

if TYPE_CHECKING:
    from .local import Storage
    from .sql import Conn

MAX_TRACE_PAGE = 1000
# Past this a page number cannot name a page (OFFSET is a 64-bit integer in SQLite).
MAX_PAGE = 10**9
# Decoding an export request holds the GIL, so decoding two at once is no faster than one
# after the other; one at a time keeps what a burst of large requests costs to one's worth.
_DECODE = threading.Lock()


@contextmanager
def _cycle_collector_paused() -> Iterator[None]:
    """The cycle collector off while a request is decoded and merged. The request becomes
    millions of small objects (an export at the 16 MiB cap: ~3 million), and each burst of
    them sets off a full collection that walks every one while holding the interpreter
    lock: 0.5 s at a time in which no other thread, the event loop included, runs. Spans
    hold no cycles, so none of that work ever frees anything; what is left behind is freed
    by reference counting when the request's spans go, before the collector comes back."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def _let_go(spans: list[otlp.Span]) -> None:
    """Free a list of spans a thousand at a time: freeing 10,000 at once is one cascade of
    deallocations that holds the interpreter lock (~75 ms); in steps, other threads run
    between them."""
    while spans:
        del spans[-1000:]


def _stored(text: str) -> Any:
    """A stored trace's spans or row (up to `max_trace_bytes` of JSON this module wrote),
    parsed a piece at a time (`json_pieces`): in one call, 16 MiB holds the interpreter
    lock for 0.1-0.5 s."""
    return loads_in_pieces(text.encode(), sys.maxsize)[0]


def traces_of(account: str) -> str:
    """The key that serializes an account's trace writes: a trace's spans are merged from
    what is stored (two exports of one trace must not both start from the same spans),
    and its new traces and tokens count toward the day's quotas."""
    return f"traces of {account}"


class TraceTable:
    def __init__(self, storage: Storage) -> None:
        self.storage = storage

    def ingest(
        self,
        account: str,
        body: bytes | IO[bytes],
        content_type: str,
        content_encoding: str | None = None,
    ) -> dict[str, Any]:
        """Decode an OTLP export request (within the storage's limits) and merge its spans."""
        with _DECODE, _cycle_collector_paused():
            spans = otlp.decode_request(body, content_type, content_encoding, self.storage.limits)
            return self._merged(account, spans)

    def ingest_logs(
        self,
        account: str,
        body: bytes | IO[bytes],
        content_type: str,
        content_encoding: str | None = None,
    ) -> dict[str, Any]:
        """Decode an OTLP logs export request and merge its records into their traces (a
        GenAI instrumentation's message events join the span they name); records outside
        any trace are counted as `unjoined`."""
        with _DECODE, _cycle_collector_paused():
            limits = self.storage.limits
            entries, unjoined = otlp.decode_logs(body, content_type, content_encoding, limits)
            return {**self._merged(account, entries), "unjoined": unjoined}

    def _merged(self, account: str, spans: list[otlp.Span]) -> dict[str, Any]:
        """`ingest_spans`, then the request's spans let go of (`_let_go`). A refusal goes
        up without its traceback: the frames in it would keep the spans alive until the
        cycle collector found them."""
        try:
            return self.ingest_spans(account, spans)
        except StoreError as exc:
            refusal = exc
        finally:
            _let_go(spans)
        refusal.__traceback__ = None
        raise refusal

    def ingest_spans(self, account: str, spans: list[otlp.Span]) -> dict[str, Any]:
        """Merge spans into their traces (a trace may arrive over several requests). The
        new traces and the tokens the request adds count toward the account's day; a
        request that would pass a daily quota is refused whole, before anything is kept.
        A trace's spans that would take it past `max_trace_spans` or `max_trace_bytes`
        are dropped and counted (`rejected`); when every span is, the request is refused."""
        by_trace = otlp.group_by_trace(spans)
        _, limits = self.storage.quotas_for(account)
        caps = self.storage.limits
        full: dict[str, tuple[int, str]] = {}  # trace -> (spans dropped, the cap passed)
        with self.storage.tx() as db:
            db.serialize(traces_of(account))
            new_traces = tokens = 0
            for trace_id, new in by_trace.items():
                cap = _cap_passed(self._stored_size(db, account, trace_id), new, caps)
                if cap is not None:
                    full[trace_id] = (len(new), cap)
                    continue
                prior = self._prior_trace(db, account, trace_id)
                merged = {s["spanId"]: s for s in _stored(prior["spans"])} if prior else {}
                merged.update({s["spanId"]: s for s in new})
                all_spans = list(merged.values())
                merged.clear()
                try:
                    stored = orjson.dumps(all_spans)
                    if len(all_spans) > caps.max_trace_spans:
                        full[trace_id] = (len(new), "max_trace_spans")
                        continue
                    if len(stored) > caps.max_trace_bytes:
                        full[trace_id] = (len(new), "max_trace_bytes")
                        continue
                    scores = orjson.loads(prior["scores"]) if prior else {}
                    row = self._write_trace(db, account, trace_id, all_spans, scores, stored)
                finally:
                    _let_go(all_spans)
                new_traces += prior is None
                tokens += _tokens(row) - (_tokens(_stored(prior["row"])) if prior else 0)
            rejected = sum(n for n, _ in full.values())
            if rejected and rejected == len(spans):
                raise _over_caps(full, caps)
            day = quotas.usage_today(db, account)
            what = "export request refused"
            quotas.refuse_if_over(
                "max_daily_traces",
                limits,
                day["traces"],
                new_traces,
                f"{what}: {new_traces:,} new traces",
            )
            quotas.refuse_if_over(
                "max_daily_tokens", limits, day["tokens"], tokens, f"{what}: {tokens:,} tokens"
            )
            quotas.add_usage(db, account, traces=new_traces, tokens=max(0, tokens))
        result: dict[str, Any] = {
            "accepted": len(spans) - rejected,
            "traces": sorted(t for t in by_trace if t not in full),
        }
        if full:
            result["rejected"] = rejected
            result["rejectedTraces"] = sorted(full)
            result["problem"] = str(_over_caps(full, caps))
        return result

    @staticmethod
    def _stored_size(db: Conn, account: str, trace_id: str) -> tuple[int | None, int]:
        """(spans, bytes) a trace holds, read without its spans; the count is None for a
        trace stored before counts were kept (its size is measured by the database)."""
        found = db.execute(
            "SELECT span_count, COALESCE(span_bytes, LENGTH(spans)) FROM traces"
            " WHERE account = ? AND trace_id = ?",
            (account, trace_id),
        ).fetchone()
        if found is None:
            return 0, 0
        count = found[0]
        return (int(count) if count is not None else None), int(found[1] or 0)

    @staticmethod
    def _prior_trace(db: Conn, account: str, trace_id: str) -> Any:
        """What is stored of a trace (its spans and scores), inside the caller's write."""
        return db.execute(
            "SELECT spans, scores, row FROM traces WHERE account = ? AND trace_id = ?",
            (account, trace_id),
        ).fetchone()

    def _write_trace(
        self,
        db: Conn,
        account: str,
        trace_id: str,
        spans: list[otlp.Span],
        scores: dict[str, float],
        stored: bytes | None = None,
        arrived: bool = True,
    ) -> dict[str, Any]:
        """Write a trace's spans (`stored`: them as JSON, when the caller has it already),
        with their count and size, and its row rebuilt from them; when spans `arrived` (not
        a score), what its model calls carried goes onto its declared agent."""
        row = otlp.trace_row(spans, scores)
        start = min((s["start"] for s in spans if s["start"]), default=0) / 1e9 or time.time()
        stored = orjson.dumps(spans) if stored is None else stored
        db.execute(
            "INSERT INTO traces (account, trace_id, agent, scenario_id, started_at, spans, scores,"
            " row, span_count, span_bytes) VALUES (?,?,?,?,?,?,?,?,?,?)"
            " ON CONFLICT (account, trace_id) DO UPDATE SET"
            " agent = excluded.agent, scenario_id = excluded.scenario_id,"
            " started_at = excluded.started_at, spans = excluded.spans,"
            " scores = excluded.scores, row = excluded.row,"
            " span_count = excluded.span_count, span_bytes = excluded.span_bytes",
            (
                account,
                trace_id,
                row.get("agent"),
                row.get("scenario_id"),
                start,
                stored.decode(),
                orjson.dumps(scores).decode(),
                orjson.dumps(row).decode(),
                len(spans),
                len(stored),
            ),
        )
        declared = otlp.declared_agent(spans)
        if declared:
            ensure_agent(db, account, declared)
            if arrived:
                carry_context(db, account, declared, *otlp.trace_context(row))
        return row

    def list(
        self,
        account: str,
        agent: str | None,
        page: int,
        since: float | None,
        limit: int = TRACE_PAGE_SIZE,
    ) -> dict[str, Any]:
        if not 1 <= page <= MAX_PAGE:
            raise BadRequest(f"page must be between 1 and {MAX_PAGE:,}")
        if not 1 <= limit <= MAX_TRACE_PAGE:
            raise BadRequest(f"limit must be between 1 and {MAX_TRACE_PAGE}")
        where = ["account = ?"]
        args: list[Any] = [account]
        if agent is not None:
            where.append("agent = ?")
            args.append(agent)
        if since is not None:
            where.append("started_at >= ?")
            args.append(since)
        found = self.storage.query(
            f"SELECT trace_id, row FROM traces WHERE {' AND '.join(where)}"
            " ORDER BY started_at DESC, trace_id LIMIT ? OFFSET ?",
            (*args, limit + 1, (page - 1) * limit),
        )
        total = self.storage.query(
            f"SELECT COUNT(*) FROM traces WHERE {' AND '.join(where)}", args
        )[0][0]
        traces = [{"traceId": r["trace_id"], **orjson.loads(r["row"])} for r in found[:limit]]
        return {
            "traces": traces,
            "page": page,
            "pages": max(1, -(-total // limit)),
            "total": total,
            "nextPage": page + 1 if len(found) > limit else None,
        }

    def get(self, account: str, trace_id: str) -> dict[str, Any]:
        """One trace's row (its turns, tool calls and scores), by its id or a prefix."""
        full = self.full_id(account, trace_id)
        found = self.storage.query(
            "SELECT trace_id, row FROM traces WHERE account = ? AND trace_id = ?",
            (account, full),
        )
        row = found[0]
        return {"traceId": row["trace_id"], **orjson.loads(row["row"])}

    def full_id(self, account: str, trace_id: str) -> str:
        """The stored id `trace_id` names: itself, or the one trace it starts (8 or more hex
        digits; the original SDK's examples shorten trace ids to 16)."""
        exact = "SELECT 1 FROM traces WHERE account = ? AND trace_id = ?"
        if self.storage.query(exact, (account, trace_id)):
            return trace_id
        prefix = trace_id.lower()
        if len(prefix) >= 8 and all(c in "0123456789abcdef" for c in prefix):
            found = self.storage.query(
                "SELECT trace_id FROM traces WHERE account = ? AND trace_id LIKE ? LIMIT 2",
                (account, prefix + "%"),
            )
            if len(found) == 1:
                return str(found[0][0])
            if found:
                raise BadRequest(f"trace id {trace_id} starts more than one trace: give more of it")
        raise NotFound(f"trace {trace_id} not found")

    def delete(self, account: str, trace_id: str) -> None:
        sql = "DELETE FROM traces WHERE account = ? AND trace_id = ?"
        self.storage.delete_one("trace", sql, account, self.full_id(account, trace_id))

    def score(self, account: str, trace_id: str, value: float, name: str) -> dict[str, Any]:
        value = check_score(value, name)
        trace_id = self.full_id(account, trace_id)
        with self.storage.tx() as db:
            db.serialize(traces_of(account))  # an ingest merging into it waits, or goes first
            prior = self._prior_trace(db, account, trace_id)
            if prior is None:
                raise NotFound(f"trace {trace_id} not found")
            scores = orjson.loads(prior["scores"])
            scores[name] = float(value)
            spans = orjson.loads(prior["spans"])
            row = self._write_trace(db, account, trace_id, spans, scores, arrived=False)
        return {"traceId": trace_id, "name": name, "value": float(value), "row": row}


def _cap_passed(held: tuple[int | None, int], new: list[otlp.Span], caps: Limits) -> str | None:
    """The cap `new` spans would take a trace holding `held` (spans, bytes) past, or None.
    Every new span counts as an addition (a retried one would only replace itself), and is
    measured as its JSON; a trace of unknown count is checked by size here, and counted
    exactly once its spans are read."""
    count, size = held
    if (count or 0) + len(new) > caps.max_trace_spans:
        return "max_trace_spans"
    added = sum(len(orjson.dumps(span)) + 1 for span in new)
    return "max_trace_bytes" if size + added > caps.max_trace_bytes else None


def _over_caps(full: dict[str, tuple[int, str]], caps: Limits) -> TooLarge:
    """Why spans were dropped: how many, the traces they belonged to, the cap they passed."""
    names = sorted(full)
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3:,} more" if len(names) > 3 else "")
    dropped = sum(n for n, _ in full.values())
    cap = full[names[0]][1]
    return refuse(
        cap,
        f"{dropped:,} spans dropped: trace {shown} would pass the most one trace holds",
        getattr(caps, cap),
    )


def _tokens(row: dict[str, Any]) -> int:
    """The tokens a trace's row reports (input and output, summed over its spans)."""
    usage = row.get("usage") or {}
    total = 0
    for key in ("input_tokens", "output_tokens"):
        value = usage.get(key) if isinstance(usage, dict) else None
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            total += int(value)
    return total
