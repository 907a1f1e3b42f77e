"""Issue 21's server attacks, each sent to a real server on loopback, each now failing
closed: a quadratic email, a delegated credential turned into a key, trickling uploads,
an unauthenticated disk fill, one trace appended to forever, a rotated X-Forwarded-For,
email enumeration on an invite-only server, and clients that hang up mid-upload.

Where the attack used to stall the whole server (1, 3, 5), `/health` is polled while it
is in flight and must answer within a generous bound (the precise figures are
`bench/otlp_flood.py`'s email, slow and append rounds).
"""

from __future__ import annotations

import gzip
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import orjson
import pytest

from whileai_core.store.limits import Limits
from whileai_core.testing import serve_process
from whileai_server import accounts
from whileai_server.accounts import valid_email
from whileai_server.config import BodyPace, ServerConfig, UploadSlots
from whileai_server.ratelimit import Rate

from ..platform_fixtures import LiveServer, approve, live_server

HEALTH_BOUND = 3.0  # seconds: generous; the bench measures the real figure (goal < 1 s)
# While a 16 MiB export is ingested (several seconds here): bench/server_ingest.py has the
# real figure (goal < 1 s; ~0.1 s measured).
INGEST_BOUND = 2.0


def _email() -> str:
    return f"attack-{time.monotonic_ns()}@example.com"


@contextmanager
def health_watch(url: str) -> Iterator[list[float]]:
    """Polls `/health` while the block runs; yields the list of answer times (seconds)."""
    times: list[float] = []
    done = threading.Event()

    def poll() -> None:
        with httpx.Client(base_url=url, timeout=60) as client:
            while not done.is_set():
                t0 = time.perf_counter()
                client.get("/health").raise_for_status()
                times.append(time.perf_counter() - t0)
                time.sleep(0.05)

    thread = threading.Thread(target=poll)
    thread.start()
    try:
        yield times
    finally:
        done.set()
        thread.join()


def _csrf(client: httpx.Client, code: str) -> str:
    page = client.get("/device", params={"code": code})
    return page.text.split("name='csrf' value='")[1].split("'")[0]


# --- 1. patterns that backtrack --------------------------------------------------------


def test_a_quadratic_email_is_refused_at_once_and_health_keeps_answering(
    tmp_path: Path,
) -> None:
    email = "a@" + "." * 1_000_000 + "@"  # ~1 MB: hours for the old pattern
    quotes = b"[" * 100 + b'"' + b'\\"' * 400_000  # the raw-JSON scan's worst case
    with (
        serve_process(tmp_path / "srv") as (_, url),
        health_watch(url) as health,
        httpx.Client(base_url=url, timeout=30) as client,
    ):
        signup = client.post("/signup", json={"email": "a@" + "." * 60_000 + "@"})
        assert signup.status_code == 400 and signup.json()["error"] == "invalid_email"
        huge = client.post("/signup", json={"email": email})
        assert huge.status_code == 400 and "at most 254" in huge.json()["message"]
        code = client.post("/device/code", json={}).json()["user_code"]
        form = {"user_code": code, "csrf": _csrf(client, code), "email": email[:900_000]}
        page = client.post("/device/approve", data=form)
        assert page.status_code == 400 and "254" in page.text
        scan = client.post("/signup", content=quotes, headers={"Content-Type": "application/json"})
        assert scan.status_code == 400 and "not valid JSON" in scan.json()["error"]
    assert health and max(health) < HEALTH_BOUND, max(health)


def test_the_email_check_is_a_plain_string_check() -> None:
    assert valid_email("a@b.co") and valid_email("first.last+tag@mail.example.org")
    for bad in ("", "a@b", "@b.co", "a@.co", "a@b.", "a b@c.de", "a@b@c.de", "a@" + "." * 300):
        assert not valid_email(bad), bad
    assert not valid_email("a" * 250 + "@b.co")  # past 254 characters


# --- 2. a delegated credential makes nothing lasting -----------------------------------


def test_a_delegated_credential_cannot_approve_a_login_or_mint(server: LiveServer) -> None:
    key = server.signup()
    with server.client(key) as client:
        credential = client.post("/auth/issue-credential", json={"ttlSeconds": 60}).json()[
            "credential"
        ]
        account = client.get("/me").json()["user_id"]
    with server.client(credential) as delegated:
        assert delegated.get("/me").status_code == 200  # it opens the account's data
        again = delegated.post("/auth/issue-credential", json={"ttlSeconds": 60})
        assert again.status_code == 403 and "delegated credential" in again.json()["error"]
    code = httpx.post(f"{server.url}/device/code", json={}).json()
    page = approve(server.url, code["user_code"], api_key=credential)
    assert page.status_code == 403 and "cannot approve a login" in page.text
    poll = {"device_code": code["device_code"], "user_code": code["user_code"]}
    token = httpx.post(f"{server.url}/device/token", json=poll).json()
    assert token.get("error") == "authorization_pending" and "api_key" not in token
    with server.storage() as storage:
        keys = storage.query("SELECT COUNT(*) FROM api_keys WHERE account = ?", (account,))
    assert keys[0][0] == 1  # the signup's key, and no other


# --- 3. trickling uploads --------------------------------------------------------------


def _trickle(link: str, ended: list[tuple[str, float]], byte_every: float = 0.5) -> None:
    """A PUT that declares 100 kB and sends one byte every `byte_every` seconds; records
    (status or "closed", seconds) when the server ends it, ("open", ...) after 30 s."""
    parts = urlsplit(link)
    t0 = time.perf_counter()
    with socket.create_connection((parts.hostname or "", parts.port or 80)) as sock:
        head = (
            f"PUT {parts.path}?{parts.query} HTTP/1.1\r\nHost: {parts.netloc}\r\n"
            "Content-Type: application/jsonl\r\nContent-Length: 100000\r\n\r\n"
        )
        sock.sendall(head.encode())
        sock.settimeout(byte_every)
        while time.perf_counter() - t0 < 30:
            try:
                answer = sock.recv(200)
            except TimeoutError:
                try:
                    sock.sendall(b"{")
                except OSError:
                    ended.append(("closed", time.perf_counter() - t0))
                    return
                continue
            status = answer.split(b" ")[1].decode() if answer else "closed"
            ended.append((status, time.perf_counter() - t0))
            return
    ended.append(("open", time.perf_counter() - t0))


def test_forty_trickling_uploads_do_not_lock_other_accounts_out(tmp_path: Path) -> None:
    config = ServerConfig.relaxed(
        body_pace=BodyPace(idle=2.0, min_rate=1024.0, grace=3.0),
        uploads=UploadSlots(wait=4.0),
    )
    with live_server(tmp_path / "srv", config) as live:
        attacker, reader = live.signup(), live.signup()
        with live.client(attacker) as client:
            links = [
                client.post("/datasets", json={"name": f"slow-{i}"}).json()["uploadUrl"]
                for i in range(40)
            ]
        ended: list[tuple[str, float]] = []
        threads = [threading.Thread(target=_trickle, args=(link, ended)) for link in links]
        reads: list[float] = []
        with health_watch(live.url) as health, live.client(reader) as client:
            for thread in threads:
                thread.start()
            time.sleep(1.0)  # every upload is in, holding its slot or waiting for one
            while any(t.is_alive() for t in threads):
                for path in ("/me", "/datasets"):
                    t0 = time.perf_counter()
                    assert client.get(path).status_code == 200
                    reads.append(time.perf_counter() - t0)
                time.sleep(0.2)
            for thread in threads:
                thread.join()
        statuses = {status for status, _ in ended}
        assert len(ended) == 40 and statuses <= {"408", "429"}, ended
        assert "408" in statuses  # the body pace ended the ones that got a slot
        assert max(seconds for _, seconds in ended) < 20
        assert max(reads) < HEALTH_BOUND and max(health) < HEALTH_BOUND, (reads, health)
        assert list((live.data / "datasets").glob("*.part")) == []


def test_a_stalled_json_body_is_refused_with_408(tmp_path: Path) -> None:
    config = ServerConfig.relaxed(body_pace=BodyPace(idle=1.0, min_rate=1024.0, grace=30.0))
    with live_server(tmp_path / "srv", config) as live:
        parts = urlsplit(live.url)
        with socket.create_connection((parts.hostname or "", parts.port or 80)) as sock:
            sock.sendall(
                b"POST /signup HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                b'Content-Length: 100\r\n\r\n{"email": '
            )
            sock.settimeout(10)
            answer = _read_answer(sock)
        assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
        assert b"body_idle_timeout" in answer


def _read_answer(sock: socket.socket) -> bytes:
    """A whole HTTP response (headers and a Content-Length body) from a raw socket."""
    answer = b""
    while b"\r\n\r\n" not in answer and (chunk := sock.recv(4096)):
        answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":")[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    while len(body) < length and (chunk := sock.recv(4096)):
        body += chunk
    return head + b"\r\n\r\n" + body


# --- 4. unauthenticated disk fill ------------------------------------------------------


def test_device_codes_cap_their_name_and_are_rate_limited(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = ServerConfig.relaxed(device_code_rate=Rate(5, 60))
    assert ServerConfig().device_code_rate is not None  # on by default
    with live_server(tmp_path / "srv", config) as live:
        huge = httpx.post(f"{live.url}/device/code", json={"name": "n" * 1_000_000})
        assert huge.status_code == 400 and "longer than 200" in huge.json()["error"]
        answers = [
            httpx.post(f"{live.url}/device/code", json={"name": "laptop"}).status_code
            for _ in range(9)
        ]
        assert answers[:4] == [200] * 4 and answers[-1] == 429
        with live.storage() as storage:
            rows = storage.query("SELECT name FROM device_codes")
        assert len(rows) == 4 and all(len(r[0] or "") <= 200 for r in rows)
    # However many addresses ask, the codes waiting at once are capped server-wide.
    monkeypatch.setattr(accounts, "MAX_PENDING_CODES", 3)
    with live_server(tmp_path / "srv2") as live:
        answers = [httpx.post(f"{live.url}/device/code", json={}).status_code for _ in range(4)]
        assert answers == [200, 200, 200, 429]


def test_stored_fields_of_keyed_routes_are_capped(server: LiveServer) -> None:
    with server.client(server.signup()) as client:
        long_name = client.post("/datasets", json={"name": "d" * 5000})
        assert long_name.status_code == 400 and "longer than 200" in long_name.json()["error"]
        long_agent = client.post("/agents", json={"slug": "s" * 5000})
        assert long_agent.status_code == 400
        credential = client.post(
            "/auth/issue-credential", json={"ttlSeconds": 60, "name": "c" * 5000}
        )
        assert credential.status_code == 400
        assert client.get("/datasets", params={"status": "pending"}).json()["datasets"] == []


# --- 5. one trace, appended to ---------------------------------------------------------


def _trace_export(trace_id: str, first: int, n: int, attr_bytes: int = 0) -> bytes:
    spans = [
        {
            "traceId": trace_id,
            "spanId": f"{first + i + 1:016x}",
            "name": "step",
            "startTimeUnixNano": str(1_700_000_000_000_000_000 + first + i),
            "attributes": [
                {"key": "gen_ai.agent.name", "value": {"stringValue": "append-bot"}},
                {"key": "app.note", "value": {"stringValue": "x" * attr_bytes}},
            ],
        }
        for i in range(n)
    ]
    return orjson.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]})


def _post_trace(client: httpx.Client, body: bytes, **headers: str) -> httpx.Response:
    return client.post(
        "/v1/traces",
        content=gzip.compress(body, 1),
        headers={"Content-Type": "application/json", "Content-Encoding": "gzip", **headers},
    )


def test_a_trace_appended_to_past_its_span_cap_is_refused(tmp_path: Path) -> None:
    trace = "ab" * 16
    args = ["--max-trace-spans", "3000"]
    with serve_process(tmp_path / "srv", args=args) as (_, url), health_watch(url) as health:
        key = httpx.post(f"{url}/signup", json={"email": _email()}).json()["api_key"]
        with httpx.Client(base_url=url, headers={"X-Api-Key": key}, timeout=60) as client:
            answers = [
                _post_trace(client, _trace_export(trace, batch * 1500, 1500)) for batch in range(4)
            ]
            assert [a.status_code for a in answers] == [200, 200, 413, 413]
            refused = answers[2].json()
            assert (
                refused["limit"] == "max_trace_spans"
                and "1,500 spans dropped" in (refused["error"])
            )
            # A request for the full trace and a new one keeps the new one, counts the rest.
            mixed = orjson.loads(_trace_export(trace, 9000, 10))
            other = orjson.loads(_trace_export("cd" * 16, 0, 2))
            mixed["resourceSpans"] += other["resourceSpans"]
            partial = _post_trace(client, orjson.dumps(mixed))
            assert partial.status_code == 200, partial.text
            answer = partial.json()
            assert answer["partialSuccess"]["rejectedSpans"] == 10
            assert "max_trace_spans" in answer["partialSuccess"]["errorMessage"]
            assert answer["traces"] == ["cd" * 16] and answer["rejectedTraces"] == [trace]
            listed = {t["traceId"] for t in client.get("/traces").json()["traces"]}
            assert listed == {trace, "cd" * 16}
    assert health and max(health) < HEALTH_BOUND, max(health)


def test_a_trace_past_its_byte_cap_is_refused_without_reading_it(
    tmp_path: Path,
) -> None:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceResponse,
    )

    trace = "ef" * 16
    limits = Limits(max_trace_bytes=64 * 1024)
    with live_server(tmp_path / "srv", limits=limits) as live:
        client = live.client(live.signup())
        assert _post_trace(client, _trace_export(trace, 0, 40, 1000)).status_code == 200
        over = _post_trace(client, _trace_export(trace, 40, 40, 1000))
        assert over.status_code == 413 and over.json()["limit"] == "max_trace_bytes"
        with live.storage() as storage:
            count, size = storage.query(
                "SELECT span_count, span_bytes FROM traces WHERE trace_id = ?", (trace,)
            )[0]
            assert count == 40 and size <= 64 * 1024
            # Were a refusal to read the stored spans, this would break it: it must not.
            with storage.tx() as db:
                db.execute("UPDATE traces SET spans = 'not json' WHERE trace_id = ?", (trace,))
        again = _post_trace(client, _trace_export(trace, 80, 40, 1000))
        assert again.status_code == 413 and again.json()["limit"] == "max_trace_bytes"
        # The protobuf answer counts dropped spans as OTLP says, when some were kept.
        pb = _protobuf_export([(trace, 200, 30_000), ("12" * 16, 1, 10)])
        kept = client.post(
            "/v1/traces", content=pb, headers={"Content-Type": "application/x-protobuf"}
        )
        assert kept.status_code == 200
        answer = ExportTraceServiceResponse.FromString(kept.content)
        assert answer.partial_success.rejected_spans == 1
        assert "max_trace_bytes" in answer.partial_success.error_message


def _protobuf_export(traces: list[tuple[str, int, int]]) -> bytes:
    """(trace id, first span number, attribute bytes): one span each."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    request = ExportTraceServiceRequest()
    spans = request.resource_spans.add().scope_spans.add().spans
    for trace, first, size in traces:
        span = spans.add()
        span.trace_id = bytes.fromhex(trace)
        span.span_id = (first + 1).to_bytes(8, "big")
        span.name = "step"
        attr = span.attributes.add()
        attr.key, attr.value.string_value = "app.note", "x" * size
    return bytes(request.SerializeToString())


def _export_at_the_cap() -> bytes:
    """10,000 spans (the most one request may carry) of 20 attributes each, 50 to a trace,
    padded to just under the 16 MiB `max_otlp_bytes`: the largest JSON export the server
    takes whole."""

    def build(pad: str) -> bytes:
        spans = [
            {
                "traceId": f"{i // 50:032x}",
                "spanId": f"{i + 1:016x}",
                "name": "step",
                "startTimeUnixNano": str(1_700_000_000_000_000_000 + i),
                "attributes": [
                    {"key": f"app.attr.{k}", "value": {"stringValue": f"{pad} {i} {k}"}}
                    for k in range(19)
                ]
                + [{"key": "gen_ai.agent.name", "value": {"stringValue": "cap-bot"}}],
            }
            for i in range(10_000)
        ]
        return orjson.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]})

    room = Limits().max_otlp_bytes - 64 * 1024 - len(build(""))
    return build("v" * (room // (10_000 * 19)))


def test_health_and_another_account_answer_while_a_16_mib_export_is_ingested(
    tmp_path: Path,
) -> None:
    """The parse of an export at the cap used to hold the interpreter lock in one call (and
    the collections it set off, 0.5 s each): /health waited up to a second. Now, while that
    export and then appends of 5,000 spans to one trace (kept, kept, past the trace's span
    cap) go in, every /health and every /me of another account answers within the bound."""
    big = _export_at_the_cap()
    assert 15 * 2**20 < len(big) <= Limits().max_otlp_bytes
    trace = "ab" * 16
    appends = [_trace_export(trace, batch * 5000, 5000, 200) for batch in range(3)]
    with serve_process(tmp_path / "srv") as (_, url):
        key = httpx.post(f"{url}/signup", json={"email": _email()}).json()["api_key"]
        other = httpx.post(f"{url}/signup", json={"email": _email()}).json()["api_key"]
        answers: list[httpx.Response] = []

        def ingest() -> None:
            headers = {"X-Api-Key": key, "Content-Type": "application/json"}
            with httpx.Client(base_url=url, headers=headers, timeout=600) as client:
                for body in [big, *appends]:
                    answers.append(client.post("/v1/traces", content=body))

        sender = threading.Thread(target=ingest)
        times: dict[str, list[float]] = {"/health": [], "/me": []}
        with httpx.Client(base_url=url, headers={"X-Api-Key": other}, timeout=60) as reader:
            sender.start()
            while sender.is_alive():
                for path, seen in times.items():
                    t0 = time.perf_counter()
                    reader.get(path).raise_for_status()
                    seen.append(time.perf_counter() - t0)
                time.sleep(0.02)
        sender.join()
    assert [a.status_code for a in answers] == [200, 200, 200, 413], [a.text for a in answers]
    assert answers[0].json()["accepted"] == 10_000 and len(answers[0].json()["traces"]) == 200
    assert answers[3].json()["limit"] == "max_trace_spans"
    assert len(times["/health"]) >= 5  # polled throughout, not once before and once after
    slowest = {path: max(seen) for path, seen in times.items()}
    assert all(t < INGEST_BOUND for t in slowest.values()), slowest


# --- 6. X-Forwarded-For ----------------------------------------------------------------


def _wrong_keys(url: str, n: int, rotate: bool) -> list[int]:
    return [
        httpx.get(
            f"{url}/me",
            headers={
                "X-Api-Key": f"wai_wrong{i}",
                **({"X-Forwarded-For": f"10.9.{i}.1"} if rotate else {}),
            },
        ).status_code
        for i in range(n)
    ]


def test_a_rotated_forwarded_for_does_not_escape_the_rate_limits(tmp_path: Path) -> None:
    args = ["--bad-key-rate", "3/min", "--signup-rate", "2/h"]
    env = {k: v for k, v in os.environ.items() if k != "WHILEAI_FORWARDED_ALLOW_IPS"}
    env["FORWARDED_ALLOW_IPS"] = "*"  # uvicorn's own variable: not believed either
    with serve_process(tmp_path / "srv", args=args, env=env) as (_, url):
        assert _wrong_keys(url, 5, rotate=True) == [401, 401, 401, 429, 429]
        signups = [
            httpx.post(
                f"{url}/signup",
                json={"email": _email()},
                headers={"X-Forwarded-For": f"10.8.{i}.1"},
            ).status_code
            for i in range(4)
        ]
        assert signups == [201, 201, 429, 429]


@pytest.mark.parametrize("how", ["flag", "environment"])
def test_forwarded_for_is_believed_from_a_named_proxy(tmp_path: Path, how: str) -> None:
    env = dict(os.environ)
    args = ["--bad-key-rate", "3/min"]
    if how == "flag":
        args += ["--forwarded-allow-ips", "127.0.0.1"]
    else:
        env["WHILEAI_FORWARDED_ALLOW_IPS"] = "127.0.0.1"
    with serve_process(tmp_path / "srv", args=args, env=env) as (_, url):
        # Each forwarded client has its own bucket; the proxy's own address is not one.
        assert _wrong_keys(url, 5, rotate=True) == [401] * 5
        assert _wrong_keys(url, 4, rotate=False) == [401, 401, 401, 429]


# --- 7. email enumeration --------------------------------------------------------------


@pytest.mark.parametrize("mode", ["invite", "closed"])
def test_a_known_and_an_unknown_email_are_answered_alike(tmp_path: Path, mode: str) -> None:
    known = _email()
    with live_server(tmp_path / "srv", ServerConfig.relaxed(signup="invite")) as live:
        with live.storage() as storage:
            (code,) = accounts.mint_invites(storage, 1, 3600)
        made = httpx.post(f"{live.url}/signup", json={"email": known, "invite": code})
        assert made.status_code == 201
    with live_server(tmp_path / "srv", ServerConfig.relaxed(signup=mode)) as live:

        def both(ask: Callable[[str], httpx.Response]) -> list[Any]:
            answers = [ask(known), ask(_email())]
            return [(a.status_code, _refusal_text(a)) for a in answers]

        signup = both(lambda e: httpx.post(f"{live.url}/signup", json={"email": e}))
        assert signup[0] == signup[1] and signup[0][0] == 403, signup

        def approval(email: str) -> httpx.Response:
            code = httpx.post(f"{live.url}/device/code", json={}).json()["user_code"]
            return approve(live.url, code, email=email)

        page = both(approval)
        assert page[0] == page[1] and page[0][0] == 403, page


def _refusal_text(response: httpx.Response) -> str:
    if response.headers.get("content-type", "").startswith("application/json"):
        return str(response.json())
    return response.text.split("class='err'>")[1].split("<")[0]


# --- 8. clients that hang up -----------------------------------------------------------


def test_a_client_hanging_up_mid_upload_is_one_log_line(tmp_path: Path) -> None:
    log = tmp_path / "serve.log"
    with log.open("wb") as sink, serve_process(tmp_path / "srv", stderr=sink) as (_, url):
        key = httpx.post(f"{url}/signup", json={"email": _email()}).json()["api_key"]
        with httpx.Client(base_url=url, headers={"X-Api-Key": key}) as client:
            links = [
                client.post("/datasets", json={"name": f"cut-{i}"}).json()["uploadUrl"]
                for i in range(3)
            ]
        for link in links:
            parts = urlsplit(link)
            with socket.create_connection((parts.hostname or "", parts.port or 80)) as sock:
                sock.sendall(
                    f"PUT {parts.path}?{parts.query} HTTP/1.1\r\nHost: x\r\n"
                    "Content-Length: 100000\r\n\r\n".encode()
                    + b'{"prompt": "p"}\n' * 100
                )
                time.sleep(0.2)
        deadline = time.monotonic() + 15
        while log.read_text().count("client aborted") < 3 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert httpx.get(f"{url}/health").status_code == 200
    text = log.read_text()
    assert text.count("client aborted PUT /upload/") == 3, text
    assert "Traceback" not in text and "unhandled" not in text and " 500" not in text, text
    assert list((tmp_path / "srv" / "datasets").glob("*")) == []
