"""Floods against `whileai serve` on loopback: OTLP amplification, and the attacks of
issue 21 that held the server (a quadratic email, slow uploads, one trace appended to).

Every round runs on a fresh server process and reports the server's peak RSS (VmHWM; goal
< 300 MB) and the slowest `/health` answer while the attack was in flight (goal < 1 s).

The OTLP rounds: ten amplification requests at once.

Each request is ~1 MB of gzip that inflates to ~60 MB of tiny, valid spans (the attack
that took the server from 49 MB to 849 MB RSS per request, and stalled `/health` for
9 s with three in flight). The bench posts ten at once, in JSON and in protobuf, polls
`/health` meanwhile, and reports the server's peak RSS (VmHWM; goal < 300 MB) and the
slowest `/health` answer (goal < 1 s). The same again at 15 MB, just under the 16 MiB
cap, so the requests get past inflating and are refused by the span count instead; and a
last round of ten requests that sit inside every limit (accepted and stored), to show what
honest heavy traffic costs.

The attack rounds (issue 21):

- `email`: `POST /signup` with `"a@" + "." * 1,000,000 + "@"`, the approval form with
  the same email, and a body of 100 brackets and 400,000 escaped quotes (what made the
  raw-JSON depth check quadratic): how long each takes to be refused.
- `slow`: 40 uploads of one account sending a byte every 2 s, while another account
  reads `/me` and `/datasets`: the slowest read, and how the uploads ended.
- `append:N`: N exports of 5,000 spans (20 attributes each) to one trace id, one after
  another: what each answered, the slowest, and the peak RSS (the attack took the
  server from 47 to 638 MB and a request from 0.5 to 12 s before traces were capped).

Run by hand:

    .venv/bin/python bench/otlp_flood.py [--rounds json:60,protobuf:15,inside,email,slow,append:36]
"""

from __future__ import annotations

import argparse
import gzip
import os
import socket
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import orjson

from whileai_core.testing import serve_process

CONCURRENT = 10


def _status_kb(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def _json_flood(megabytes: int) -> bytes:
    """Tiny spans (ids and a one-letter name) up to `megabytes` of JSON, gzip'd."""
    target = megabytes * 1_000_000
    parts, size, i = [], 0, 0
    while size < target:
        span = b'{"traceId":"%032x","spanId":"%016x","name":"x"}' % (i // 8, i)
        parts.append(span)
        size += len(span) + 1
        i += 1
    doc = b'{"resourceSpans":[{"scopeSpans":[{"spans":[' + b",".join(parts) + b"]}]}]}"
    return gzip.compress(doc, 9)


def _protobuf_flood(megabytes: int) -> bytes:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    request = ExportTraceServiceRequest()
    spans = request.resource_spans.add().scope_spans.add().spans
    n = megabytes * 1_000_000 // 40  # a tiny span is ~40 bytes on the wire
    for i in range(n):
        span = spans.add()
        span.trace_id = (i // 8).to_bytes(16, "big")
        span.span_id = i.to_bytes(8, "big")
        span.name = "x"
    return gzip.compress(request.SerializeToString(), 9)


def _inside_limits() -> bytes:
    """5,000 spans of 20 attributes each (~9 MB): large, honest, accepted."""
    spans = []
    for i in range(5_000):
        attrs = [
            {"key": f"app.attr.{k}", "value": {"stringValue": f"value {i} {k} " * 4}}
            for k in range(19)
        ]
        attrs.append({"key": "gen_ai.agent.name", "value": {"stringValue": "flood-bench"}})
        spans.append(
            {
                "traceId": f"{i // 30:032x}",
                "spanId": f"{i:016x}",
                "name": "step",
                "startTimeUnixNano": str(1_700_000_000_000_000_000 + i),
                "attributes": attrs,
            }
        )
    doc = {"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}
    return gzip.compress(orjson.dumps(doc), 6)


class Watch:
    """Polls `/health` every 20 ms and the server's RSS while a round runs."""

    def __init__(self, url: str, pid: int) -> None:
        self.url, self.pid = url, pid
        self.worst_health = 0.0
        self.peak_rss = 0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run)

    def _run(self) -> None:
        with httpx.Client(base_url=self.url, timeout=60) as client:
            while not self._done.is_set():
                t0 = time.perf_counter()
                client.get("/health").raise_for_status()
                self.worst_health = max(self.worst_health, time.perf_counter() - t0)
                self.peak_rss = max(self.peak_rss, _status_kb(self.pid, "VmRSS"))
                time.sleep(0.02)

    @property
    def peak_rss_mb(self) -> float:
        return max(self.peak_rss, _status_kb(self.pid, "VmHWM")) / 1024


@contextmanager
def watching(url: str, pid: int) -> Iterator[Watch]:
    watch = Watch(url, pid)
    watch._thread.start()
    try:
        yield watch
    finally:
        time.sleep(0.1)
        watch._done.set()
        watch._thread.join()


def _round(url: str, key: str, pid: int, body: bytes, content_type: str) -> dict[str, object]:
    def post(_: int) -> tuple[int, str]:
        headers = {
            "X-Api-Key": key,
            "Content-Type": content_type,
            "Content-Encoding": "gzip",
        }
        response = httpx.post(f"{url}/v1/traces", content=body, headers=headers, timeout=300)
        text = response.text if response.headers.get("content-type", "").endswith("json") else ""
        return response.status_code, text[:160]

    with watching(url, pid) as watch:
        t0 = time.perf_counter()
        with ThreadPoolExecutor(CONCURRENT) as pool:
            answers = list(pool.map(post, range(CONCURRENT)))
        elapsed = time.perf_counter() - t0
    return {
        "answers": sorted({a[0] for a in answers}),
        "sample": answers[0][1],
        "seconds": elapsed,
        "worst_health": watch.worst_health,
        "peak_rss_mb": watch.peak_rss_mb,
    }


# --- issue 21's attacks ----------------------------------------------------------------


def _signup(url: str, email: str) -> str:
    return str(httpx.post(f"{url}/signup", json={"email": email}).json()["api_key"])


def _verdict(watch: Watch) -> str:
    return (
        f"server RSS peak {watch.peak_rss_mb:.0f} MB (goal < 300); slowest /health "
        f"{watch.worst_health * 1000:.0f} ms (goal < 1000)"
    )


def _timed(fn: Callable[[], httpx.Response]) -> str:
    t0 = time.perf_counter()
    response = fn()
    return f"{response.status_code} in {(time.perf_counter() - t0) * 1000:.0f} ms"


def email_round(url: str, pid: int) -> None:
    """The quadratic email, on /signup and on the approval form, and the raw-JSON scan."""
    email = "a@" + "." * 1_000_000 + "@"
    quotes = b"[" * 100 + b'"' + b'\\"' * 400_000
    with watching(url, pid) as watch, httpx.Client(base_url=url, timeout=3600) as client:
        signup = _timed(lambda: client.post("/signup", json={"email": email}))
        code = client.post("/device/code", json={}).json()["user_code"]
        page = client.get("/device", params={"code": code})
        csrf = page.text.split("name='csrf' value='")[1].split("'")[0]
        form = {"user_code": code, "csrf": csrf, "email": email[:900_000]}
        approve = _timed(lambda: client.post("/device/approve", data=form))
        scan = _timed(
            lambda: client.post(
                "/signup", content=quotes, headers={"Content-Type": "application/json"}
            )
        )
    print(
        f"email        1 MB email to /signup: {signup}; to the approval form: {approve};"
        f" 0.8 MB of escaped quotes: {scan}; {_verdict(watch)}"
    )


def _trickle(url: str, seconds: float, ended: list[str]) -> None:
    """One PUT that declares 1 MB and sends a byte every 2 s; records how it ended."""
    parts = urlsplit(url)
    t0 = time.perf_counter()
    with socket.create_connection((parts.hostname or "", parts.port or 80)) as sock:
        sock.sendall(
            f"PUT {parts.path}?{parts.query} HTTP/1.1\r\nHost: {parts.netloc}\r\n"
            "Content-Type: application/jsonl\r\nContent-Length: 1000000\r\n\r\n".encode()
        )
        sock.settimeout(2.0)
        while time.perf_counter() - t0 < seconds:
            try:
                answer = sock.recv(200)
            except TimeoutError:
                try:
                    sock.sendall(b"{")
                except OSError:
                    ended.append(f"closed after {time.perf_counter() - t0:.0f} s")
                    return
                continue
            status = answer.split(b" ")[1].decode() if answer else "closed"
            ended.append(f"{status} after {time.perf_counter() - t0:.0f} s")
            return
    ended.append("still open")


def slow_round(url: str, pid: int, uploads: int = 40, seconds: float = 60.0) -> None:
    """40 trickling uploads of one account while another reads."""
    attacker, reader = _signup(url, "trickle@example.com"), _signup(url, "reader@example.com")
    with httpx.Client(base_url=url, headers={"X-Api-Key": attacker}, timeout=60) as client:
        links = [
            client.post("/datasets", json={"name": f"slow-{i}"}).json()["uploadUrl"]
            for i in range(uploads)
        ]
    ended: list[str] = []
    worst_read = 0.0
    with watching(url, pid) as watch:
        threads = [threading.Thread(target=_trickle, args=(u, seconds, ended)) for u in links]
        for thread in threads:
            thread.start()
        with httpx.Client(base_url=url, headers={"X-Api-Key": reader}, timeout=60) as client:
            while any(t.is_alive() for t in threads):
                for path in ("/me", "/datasets"):
                    t0 = time.perf_counter()
                    client.get(path).raise_for_status()
                    worst_read = max(worst_read, time.perf_counter() - t0)
                time.sleep(0.2)
        for thread in threads:
            thread.join()
    how: dict[str, int] = {}
    for end in ended:
        kind = end.split(" after ")[0]
        how[kind] = how.get(kind, 0) + 1
    last = max((int(e.split(" after ")[1].split()[0]) for e in ended if " after " in e), default=0)
    print(
        f"slow         {uploads} uploads at a byte / 2 s: ended {how} (the last after {last} s);"
        f" another account's slowest /me or /datasets {worst_read * 1000:.0f} ms;"
        f" {_verdict(watch)}"
    )


def _append_batch(trace_id: str, batch: int, spans: int = 5_000) -> bytes:
    """`spans` spans of 20 attributes each, all of one trace."""
    out = []
    for i in range(spans):
        n = batch * spans + i
        attrs = [
            {"key": f"app.attr.{k}", "value": {"stringValue": f"value {n} {k} " * 4}}
            for k in range(19)
        ]
        attrs.append({"key": "gen_ai.agent.name", "value": {"stringValue": "append-bench"}})
        out.append(
            {
                "traceId": trace_id,
                "spanId": f"{n + 1:016x}",
                "name": "step",
                "startTimeUnixNano": str(1_700_000_000_000_000_000 + n),
                "attributes": attrs,
            }
        )
    doc = {"resourceSpans": [{"scopeSpans": [{"spans": out}]}]}
    return gzip.compress(orjson.dumps(doc), 6)


def append_round(url: str, pid: int, times: int) -> None:
    """`times` 5,000-span exports to one trace id, one after another."""
    key = _signup(url, "append@example.com")
    headers = {"X-Api-Key": key, "Content-Type": "application/json", "Content-Encoding": "gzip"}
    trace_id = "ab" * 16
    answers: dict[int, int] = {}
    slowest = 0.0
    with watching(url, pid) as watch, httpx.Client(base_url=url, timeout=600) as client:
        for batch in range(times):
            body = _append_batch(trace_id, batch)
            t0 = time.perf_counter()
            status = client.post("/v1/traces", content=body, headers=headers).status_code
            slowest = max(slowest, time.perf_counter() - t0)
            answers[status] = answers.get(status, 0) + 1
        stored = client.get("/traces", headers={"X-Api-Key": key}).json()["traces"]
    steps = len(stored[0].get("steps", [])) if stored else 0
    print(
        f"append:{times:<5d} {times} x 5,000 spans to one trace: answers {answers}, slowest"
        f" request {slowest:.2f} s, {len(stored)} trace stored ({steps} steps);"
        f" {_verdict(watch)}"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--rounds",
        default="json:60,json:15,protobuf:60,protobuf:15,inside,email,slow,append:36",
        help="KIND:MB (the inflated size of each flood request), inside, email, slow or"
        " append:N (N exports to one trace)",
    )
    opts = parser.parse_args()
    builders: dict[str, tuple[Callable[[int], bytes], str]] = {
        "json": (_json_flood, "application/json"),
        "protobuf": (_protobuf_flood, "application/x-protobuf"),
        "inside": (lambda _: _inside_limits(), "application/json"),
    }
    with tempfile.TemporaryDirectory(prefix="whileai-flood-") as tmp:
        work = Path(tmp)
        env = {**os.environ, "WHILEAI_HOME": str(work / "home"), "NO_COLOR": "1"}
        for name in opts.rounds.split(","):
            kind, _, mb = name.partition(":")
            # A fresh server per round, so each peak RSS is that round's own.
            with serve_process(work / f"srv-{kind}-{mb}", env=env) as (server, url):
                if kind == "email":
                    email_round(url, server.pid)
                    continue
                if kind == "slow":
                    slow_round(url, server.pid)
                    continue
                if kind == "append":
                    append_round(url, server.pid, int(mb or 36))
                    continue
                build, content_type = builders[kind]
                body = build(int(mb or 0))
                idle = _status_kb(server.pid, "VmRSS") / 1024
                key = _signup(url, f"{kind}{mb}@example.com")
                result = _round(url, key, server.pid, body, content_type)
            print(
                f"{name:12s} {CONCURRENT} x {len(body) / 1e6:.2f} MB gzip: answers "
                f"{result['answers']} in {result['seconds']:.2f} s; server RSS idle {idle:.0f} MB,"
                f" peak {result['peak_rss_mb']:.0f} MB (goal < 300); slowest /health "
                f"{result['worst_health'] * 1000:.0f} ms (goal < 1000)"
            )
            if result["sample"]:
                print(f"             first answer: {result['sample']}")


if __name__ == "__main__":
    main()
