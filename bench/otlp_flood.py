"""Ten OTLP amplification requests at once against `whileai serve` on loopback.

Each request is ~1 MB of gzip that inflates to ~60 MB of tiny, valid spans (the attack
that took the server from 49 MB to 849 MB RSS per request, and stalled `/health` for
9 s with three in flight). The bench posts ten at once, in JSON and in protobuf, polls
`/health` meanwhile, and reports the server's peak RSS (VmHWM; goal < 300 MB) and the
slowest `/health` answer (goal < 1 s). The same again at 15 MB, just under the 16 MiB
cap, so the requests get past inflating and are refused by the span count instead; and a
last round of ten requests that sit inside every limit (accepted and stored), to show what
honest heavy traffic costs. Run by hand:

    .venv/bin/python bench/otlp_flood.py [--rounds json:60,protobuf:15,inside]
"""

from __future__ import annotations

import argparse
import gzip
import os
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

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


def _round(url: str, key: str, pid: int, body: bytes, content_type: str) -> dict[str, object]:
    done = threading.Event()
    worst_health = 0.0
    peak_rss = 0

    def watch() -> None:
        nonlocal worst_health, peak_rss
        with httpx.Client(base_url=url, timeout=30) as client:
            while not done.is_set():
                t0 = time.perf_counter()
                client.get("/health").raise_for_status()
                worst_health = max(worst_health, time.perf_counter() - t0)
                peak_rss = max(peak_rss, _status_kb(pid, "VmRSS"))
                time.sleep(0.02)

    def post(_: int) -> tuple[int, str]:
        headers = {
            "X-Api-Key": key,
            "Content-Type": content_type,
            "Content-Encoding": "gzip",
        }
        response = httpx.post(f"{url}/v1/traces", content=body, headers=headers, timeout=300)
        text = response.text if response.headers.get("content-type", "").endswith("json") else ""
        return response.status_code, text[:160]

    watcher = threading.Thread(target=watch)
    watcher.start()
    t0 = time.perf_counter()
    with ThreadPoolExecutor(CONCURRENT) as pool:
        answers = list(pool.map(post, range(CONCURRENT)))
    elapsed = time.perf_counter() - t0
    time.sleep(0.1)
    done.set()
    watcher.join()
    return {
        "answers": sorted({a[0] for a in answers}),
        "sample": answers[0][1],
        "seconds": elapsed,
        "worst_health": worst_health,
        "peak_rss_mb": max(peak_rss, _status_kb(pid, "VmHWM")) / 1024,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--rounds",
        default="json:60,json:15,protobuf:60,protobuf:15,inside",
        help="KIND:MB (the inflated size of each flood request) or inside",
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
            build, content_type = builders[kind]
            body = build(int(mb or 0))
            # A fresh server per round, so each peak RSS is that round's own.
            with serve_process(work / f"srv-{kind}-{mb}", env=env) as (server, url):
                idle = _status_kb(server.pid, "VmRSS") / 1024
                signup = httpx.post(f"{url}/signup", json={"email": f"{kind}{mb}@example.com"})
                key = signup.json()["api_key"]
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
