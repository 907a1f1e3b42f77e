"""Does `whileai serve` keep answering while a big OTLP export is ingested? (issue 21, 5)

Two rounds against a real `whileai serve` on loopback, each on a fresh server process:

- `big`: one OTLP/JSON export just under the 16 MiB `--max-otlp-bytes` cap (10,000 spans
  of 20 attributes, 50 spans a trace, tool spans among them), posted uncompressed.
- `append:N`: N exports of 5,000 spans to one trace id, one after another (the trace cap
  drops what passes `max_trace_spans`; each request is still decoded whole).

Meanwhile `/health` and another account's `/me` are polled every 20 ms. Reported: how
long the ingest took, the slowest `/health` and `/me` answers while it ran (goal < 1 s),
how many polls there were, and the server's peak RSS (VmHWM).

Run by hand (with PYTHONPATH naming the tree to measure):

    .venv/bin/python bench/server_ingest.py [--rounds big,append:36]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import threading
import time
from pathlib import Path

import httpx
import orjson

from whileai_core.testing import serve_process

CAP = 16 * 1024 * 1024


def _status_mb(pid: int, field: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return 0.0


def _span(trace: int, n: int, text: str) -> dict[str, object]:
    attrs = [
        {"key": f"app.attr.{k}", "value": {"stringValue": f"{text} {n} {k}"}} for k in range(17)
    ]
    attrs.append({"key": "gen_ai.agent.name", "value": {"stringValue": "ingest-bench"}})
    attrs.append({"key": "gen_ai.usage.input_tokens", "value": {"intValue": "12"}})
    if n % 5 == 0:
        attrs.append({"key": "gen_ai.tool.name", "value": {"stringValue": "lookup"}})
    else:
        attrs.append({"key": "gen_ai.request.model", "value": {"stringValue": "bench-model"}})
    return {
        "traceId": f"{trace:032x}",
        "spanId": f"{n + 1:016x}",
        "name": "step",
        "startTimeUnixNano": str(1_700_000_000_000_000_000 + n),
        "endTimeUnixNano": str(1_700_000_000_000_000_100 + n),
        "attributes": attrs,
    }


def big_export(limit: int = CAP, spans: int = 10_000, per_trace: int = 50) -> bytes:
    """`spans` spans whose attribute text is padded so the body lands just under `limit`."""

    def build(pad: int) -> bytes:
        text = "v" * pad
        out = [_span(i // per_trace, i, text) for i in range(spans)]
        return orjson.dumps({"resourceSpans": [{"scopeSpans": [{"spans": out}]}]})

    base = len(build(0))
    per_span_attr = spans * 17  # padding lands in 17 strings a span
    return build(max(0, (limit - 4096 - base) // per_span_attr))


def append_export(trace_id: int, batch: int, spans: int = 5_000) -> bytes:
    out = [_span(trace_id, batch * spans + i, "value " * 4) for i in range(spans)]
    return orjson.dumps({"resourceSpans": [{"scopeSpans": [{"spans": out}]}]})


class Poll:
    """`/health` (no key) and `/me` (another account's key) every 20 ms, each timed."""

    def __init__(self, url: str, key: str) -> None:
        self.url, self.key = url, key
        self.worst = {"/health": 0.0, "/me": 0.0}
        self.polls = 0
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run)

    def _run(self) -> None:
        with httpx.Client(base_url=self.url, timeout=120) as client:
            while not self.done.is_set():
                for path in ("/health", "/me"):
                    t0 = time.perf_counter()
                    client.get(path, headers={"X-Api-Key": self.key}).raise_for_status()
                    self.worst[path] = max(self.worst[path], time.perf_counter() - t0)
                self.polls += 1
                time.sleep(0.02)

    def __enter__(self) -> Poll:
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.done.set()
        self.thread.join()


def _signup(url: str, email: str) -> str:
    return str(httpx.post(f"{url}/signup", json={"email": email}).json()["api_key"])


def _round(url: str, pid: int, payloads: list[bytes]) -> str:
    key, other = _signup(url, "ingest@example.com"), _signup(url, "reader@example.com")
    headers = {"X-Api-Key": key, "Content-Type": "application/json"}
    answers: dict[int, int] = {}
    slowest = 0.0
    with Poll(url, other) as poll, httpx.Client(base_url=url, timeout=600) as client:
        time.sleep(0.2)
        t0 = time.perf_counter()
        for body in payloads:
            t1 = time.perf_counter()
            status = client.post("/v1/traces", content=body, headers=headers).status_code
            slowest = max(slowest, time.perf_counter() - t1)
            answers[status] = answers.get(status, 0) + 1
        took = time.perf_counter() - t0
    return (
        f"{len(payloads)} x {len(payloads[0]) / 2**20:.1f} MiB: answers {answers}, ingest"
        f" {took:.1f} s (slowest request {slowest:.1f} s); slowest /health"
        f" {poll.worst['/health'] * 1000:.0f} ms, /me {poll.worst['/me'] * 1000:.0f} ms"
        f" (goal < 1000) over {poll.polls} polls; server RSS peak"
        f" {_status_mb(pid, 'VmHWM'):.0f} MB"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", default="big,append:36", help="big and/or append:N")
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="whileai-ingest-") as tmp:
        work = Path(tmp)
        env = {**os.environ, "WHILEAI_HOME": str(work / "home"), "NO_COLOR": "1"}
        for i, name in enumerate(opts.rounds.split(",")):
            kind, _, n = name.partition(":")
            if kind == "big":
                bodies = [big_export()]
            else:
                bodies = [append_export(7, b) for b in range(int(n or 36))]
            with serve_process(work / f"srv-{i}", env=env) as (server, url):
                line = _round(url, server.pid, bodies)
            print(f"{name:10s} {line}", flush=True)


if __name__ == "__main__":
    main()
