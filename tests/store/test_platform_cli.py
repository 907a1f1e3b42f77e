"""Every platform command, run against the embedded store and against a live server."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import orjson

from whileai_core.row.privileged import has_privileged
from whileai_core.testing import serve_process

from .. import platform_fixtures
from ..helpers import REPO, SDK_ROWS, hears_sigint
from ..platform_fixtures import SERVING, LiveServer, cli, jsonl, ok, stdout_json


def _graded(rows: list[dict], passes: dict[str, list[int]]) -> list[dict]:
    """Rows of a few scenarios with the given pass/fail pattern per scenario."""
    out = []
    base = rows[0]
    for sid, pattern in passes.items():
        for i, verdict in enumerate(pattern):
            row = dict(base, scenario_id=sid, rollout_index=i, reward=float(verdict))
            row["judge_status"] = "ok"
            row["privileged"] = {"reference": "secret answer"}
            out.append(row)
    return out


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    return path


def test_sdk_rows_push_and_pull_without_losing_a_key(store_env: str, tmp_path: Path) -> None:
    pushed = ok("push", str(SDK_ROWS), "--name", "orders-explore", "--no-gate")
    dataset_id = pushed.stdout.strip()
    assert dataset_id.startswith("ds_")
    ok("pull", dataset_id, "-o", str(tmp_path / "back.jsonl"))
    original = jsonl(SDK_ROWS)
    back = jsonl(tmp_path / "back.jsonl")
    assert len(back) == len(original) == 40
    for before, after in zip(original, back, strict=True):
        before.pop("privileged", None)
        assert after == before
        assert list(after) == list(before)
    # A pulled training file is an ordinary file (the umask's mode), not mkstemp's 0600.
    umask = os.umask(0)
    os.umask(umask)
    assert (tmp_path / "back.jsonl").stat().st_mode & 0o777 == 0o666 & ~umask


def test_push_strips_privileged_everywhere(store_env: str, tmp_path: Path, sdk_rows) -> None:
    rows = _graded(sdk_rows, {"a": [1, 0], "b": [1, 0]})
    dataset_id = ok("push", str(_write(tmp_path / "g.jsonl", rows)), "--name", "g").stdout.strip()
    back = ok("pull", dataset_id).stdout_bytes.splitlines()
    assert len(back) == 4
    assert not any(has_privileged(orjson.loads(line)) for line in back)


def test_push_reads_stdin_and_lists_with_row_counts(store_env: str) -> None:
    ok("push", "-", "--name", "from-stdin", "--no-gate", input=SDK_ROWS.read_bytes())
    listed = stdout_json(ok("datasets", "--json"))["datasets"]
    assert [(d["name"], d["rows"], d["purpose"]) for d in listed] == [("from-stdin", 40, "train")]


def test_retried_push_creates_no_duplicate(store_env: str) -> None:
    first = ok("push", str(SDK_ROWS), "--name", "nightly", "--no-gate", "--holdout", "0.3")
    again = ok("push", str(SDK_ROWS), "--name", "nightly", "--no-gate", "--holdout", "0.3")
    assert first.stdout == again.stdout
    assert "already stored" in again.stderr
    assert len(stdout_json(ok("datasets", "--json"))["datasets"]) == 2


def test_holdout_is_a_linked_set_split_by_scenario(store_env: str, tmp_path: Path) -> None:
    result = ok("push", str(SDK_ROWS), "--name", "split", "--no-gate", "--holdout", "0.3", "--json")
    pushed = stdout_json(result)
    train, held = pushed["train"], pushed["holdout"]
    assert held["purpose"] == "holdout" and held["parentDatasetId"] == train["datasetId"]
    assert train["rows"] + held["rows"] == 40 and held["rows"] > 0
    ok("pull", train["datasetId"], "-o", str(tmp_path / "t.jsonl"))
    ok("pull", held["datasetId"], "-o", str(tmp_path / "h.jsonl"))
    train_ids = {r["scenario_id"] for r in jsonl(tmp_path / "t.jsonl")}
    held_ids = {r["scenario_id"] for r in jsonl(tmp_path / "h.jsonl")}
    assert train_ids and held_ids and not train_ids & held_ids


def test_gate_refuses_ungraded_rl_rows_unless_no_gate(store_env: str) -> None:
    refused = cli("push", str(SDK_ROWS), "--name", "rl")
    assert refused.exit_code == 1
    assert "publish gate" in str(refused.exception) and "--no-gate" in str(refused.exception)
    assert stdout_json(ok("datasets", "--json"))["datasets"] == []


def test_push_records_purpose_mode_agent_parent(store_env: str) -> None:
    parent = ok("push", str(SDK_ROWS), "--name", "v1", "--no-gate").stdout.strip()
    child = ok(
        "push",
        str(SDK_ROWS),
        "--name",
        "v2",
        "--no-gate",
        "--purpose",
        "eval",
        "--mode",
        "rl",
        "--agent",
        "orders-bot",
        "--parent",
        parent,
        "--description",
        "second try",
    ).stdout.strip()
    records = {d["datasetId"]: d for d in stdout_json(ok("datasets", "--json"))["datasets"]}
    assert records[child]["purpose"] == "eval" and records[child]["mode"] == "rl"
    assert records[child]["agent"] == "orders-bot" and records[child]["parentDatasetId"] == parent
    assert records[child]["description"] == "second try"
    agents = stdout_json(ok("agents", "--json"))["agents"]
    assert [(a["slug"], a["datasets"]) for a in agents] == [("orders-bot", {"eval": 1})]


def test_profile_counts_pass_rate_and_mixed_tasks(store_env: str, tmp_path, sdk_rows) -> None:
    rows = _graded(sdk_rows, {"a": [1, 0, 0, 1], "b": [1, 1], "c": [0, 0]})
    dataset_id = ok("push", str(_write(tmp_path / "g.jsonl", rows)), "--name", "g").stdout.strip()
    report = stdout_json(ok("profile", dataset_id, "--json"))
    assert report["rows"] == 8 and report["tasks"] == 3 and report["mixedTasks"] == 1
    assert report["passRate"] == 0.5
    assert report["toolUse"] == {"get_order": 8}


def test_delete_removes_a_dataset_and_unknown_id_fails(store_env: str) -> None:
    dataset_id = ok("push", str(SDK_ROWS), "--name", "gone", "--no-gate").stdout.strip()
    ok("delete", dataset_id)
    assert stdout_json(ok("datasets", "--json"))["datasets"] == []
    missing = cli("pull", dataset_id)
    assert missing.exit_code == 1 and "not found" in str(missing.exception)


def test_purge_dry_run_changes_nothing(store_env: str) -> None:
    ok("push", str(SDK_ROWS), "--name", "a", "--no-gate", "--agent", "demo-agent")
    before = stdout_json(ok("datasets", "--json"))
    dry = stdout_json(ok("purge", "--agent", "demo-agent", "--dry-run", "--json"))
    assert dry["planned"] == {"datasets": 1, "traces": 0, "agent": 1, "unfinished": 0}
    assert dry["deleted"] is None
    assert stdout_json(ok("datasets", "--json")) == before
    assert len(stdout_json(ok("agents", "--json"))["agents"]) == 1


def test_purge_asks_and_no_keeps_everything(store_env: str) -> None:
    ok("push", str(SDK_ROWS), "--name", "a", "--no-gate", "--agent", "demo-agent")
    answered_no = cli("purge", "--agent", "demo-agent", input="n\n")
    assert answered_no.exit_code == 1
    assert len(stdout_json(ok("datasets", "--json"))["datasets"]) == 1
    ok("purge", "--agent", "demo-agent", input="y\n")
    assert stdout_json(ok("datasets", "--json"))["datasets"] == []
    assert stdout_json(ok("agents", "--json"))["agents"] == []


def test_purge_empty_by_max_rows(store_env: str, tmp_path: Path, sdk_rows) -> None:
    small = _write(tmp_path / "small.jsonl", sdk_rows[:2])
    ok("push", str(small), "--name", "tiny", "--no-gate")
    ok("push", str(SDK_ROWS), "--name", "big", "--no-gate")
    done = stdout_json(ok("purge", "--empty", "--max-rows", "2", "--yes", "--json"))
    assert done["deleted"]["datasets"] == 1
    assert [d["name"] for d in stdout_json(ok("datasets", "--json"))["datasets"]] == ["big"]


def test_purge_needs_exactly_one_target(store_env: str) -> None:
    assert cli("purge").exit_code == 1
    assert cli("purge", "--agent", "a", "--empty").exit_code == 1


def test_bad_input_line_names_file_and_line_and_stores_nothing(store_env: str, tmp_path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_bytes(SDK_ROWS.read_bytes().splitlines(keepends=True)[0] + b"{not json\n")
    result = cli("push", str(path), "--name", "bad", "--no-gate")
    assert result.exit_code == 1 and f"{path}:2" in str(result.exception)
    assert stdout_json(ok("datasets", "--json"))["datasets"] == []


def test_status_embedded_needs_no_key() -> None:
    info = stdout_json(ok("status", "--json"))
    assert info["store"] == "embedded" and info["location"] == os.environ["WHILEAI_HOME"]


def test_status_shows_masked_key_and_its_source(server: LiveServer, monkeypatch) -> None:
    key = server.signup()
    monkeypatch.setenv("WHILEAI_API_URL", server.url)
    monkeypatch.setenv("WHILEAI_API_KEY", key)
    result = ok("status", "--json")
    info = stdout_json(result)
    assert info["keySource"] == "WHILEAI_API_KEY" and key not in result.output
    assert info["key"].startswith(key[:6]) and info["key"].endswith(key[-4:])
    flagged = stdout_json(ok("status", "--json", "--api-key", key))
    assert flagged["keySource"] == "--api-key"


def test_signup_saves_key_mode_0600_and_logout_removes_it(server: LiveServer, monkeypatch) -> None:
    monkeypatch.setenv("WHILEAI_API_URL", server.url)
    ok("signup", "--email", f"signup-{time.monotonic_ns()}@example.com")
    path = Path(os.environ["WHILEAI_HOME"]) / "credentials.json"
    assert path.stat().st_mode & 0o777 == 0o600
    info = stdout_json(ok("status", "--json"))
    assert info["keySource"] == str(path) and info["account"]["tier"] == "self-hosted"
    ok("push", str(SDK_ROWS), "--name", "with-saved-key", "--no-gate")
    ok("logout")
    assert not path.exists()
    assert cli("datasets").exit_code == 1


def test_login_without_server_says_no_login_needed() -> None:
    result = cli("login")
    assert result.exit_code == 1 and "needs no login" in str(result.exception)


def _start_login(env: dict[str, str]) -> tuple[subprocess.Popen[bytes], str, str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "whileai_cli", "login", "--name", "laptop"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=REPO,
        preexec_fn=hears_sigint,  # it is interrupted with SIGINT
    )
    assert proc.stderr is not None
    link = code = ""
    deadline = time.monotonic() + 30
    while not code and time.monotonic() < deadline:
        line = proc.stderr.readline().decode()
        if not line:
            break
        if "/device?code=" in line:
            link = line.strip()
        if line.startswith("Code:"):
            code = line.split(":", 1)[1].strip()
    assert link and code, "login did not print a link and a code"
    return proc, link, code


def test_device_login_end_to_end_with_resume(server: LiveServer) -> None:
    home = os.environ["WHILEAI_HOME"]
    env = {**os.environ, "WHILEAI_API_URL": server.url, "NO_COLOR": "1"}
    first, link, code = _start_login(env)
    first.send_signal(signal.SIGINT)  # interrupted before anyone approved
    first.wait(timeout=20)
    second, link_again, code_again = _start_login(env)
    assert (link_again, code_again) == (link, code)
    page = httpx.get(link)
    assert page.status_code == 200 and code in page.text and "<form" in page.text
    approved = server.approve(code, email=f"login-{time.monotonic_ns()}@example.com")
    assert approved.status_code == 200 and "Approved" in approved.text
    assert second.wait(timeout=30) == 0
    credentials = Path(home) / "credentials.json"
    assert credentials.stat().st_mode & 0o777 == 0o600
    saved = orjson.loads(credentials.read_bytes())
    assert saved["api_key"].startswith("wai_") and saved["api_url"] == server.url
    assert not (Path(home) / "login-pending.json").exists()
    me = httpx.get(f"{server.url}/me", headers={"X-Api-Key": saved["api_key"]})
    assert me.status_code == 200


def test_datasets_without_json_prints_one_tab_separated_line_per_set(store_env: str) -> None:
    dataset_id = ok("push", str(SDK_ROWS), "--name", "shown", "--no-gate").stdout.strip()
    lines = ok("datasets").stdout.splitlines()
    assert lines[0].split("\t")[:3] == ["id", "name", "purpose"]
    assert lines[1].split("\t")[:4] == [dataset_id, "shown", "train", "-"]


def test_status_reports_an_unreachable_server_instead_of_failing(monkeypatch) -> None:
    monkeypatch.setattr("whileai_core.store.http.RETRY_DELAYS", (0.01,))
    monkeypatch.setenv("WHILEAI_API_URL", f"http://127.0.0.1:{platform_fixtures.free_port()}")
    monkeypatch.setenv("WHILEAI_API_KEY", "wai_0123456789abcdef")
    info = stdout_json(ok("status", "--json"))
    assert info["account"] is None and "cannot reach" in info["error"]
    assert info["key"] == "wai_01…cdef"


def test_whileai_serve_runs_as_a_process_and_serves_the_cli(tmp_path: Path, monkeypatch) -> None:
    with serve_process(tmp_path / "srv", stderr=subprocess.PIPE) as (_, url):
        monkeypatch.setenv("WHILEAI_API_URL", url)
        ok("signup", "--email", "proc@example.com")
        dataset_id = ok("push", str(SDK_ROWS), "--name", "via-serve", "--no-gate").stdout.strip()
        assert [d["datasetId"] for d in stdout_json(ok("datasets", "--json"))["datasets"]] == [
            dataset_id
        ]
    assert (tmp_path / "srv" / "store.db").exists()
    assert (tmp_path / "srv" / "server-secret").stat().st_mode & 0o777 == 0o600


def test_a_refused_key_names_the_server_and_where_the_key_came_from(
    server: LiveServer, monkeypatch
) -> None:
    monkeypatch.setenv("WHILEAI_API_URL", server.url)
    monkeypatch.setenv("WHILEAI_API_KEY", "wai_not-a-real-key-at-all")
    result = cli("datasets")
    assert result.exit_code == 1
    message = str(result.exception)
    assert server.url in message and "WHILEAI_API_KEY" in message
    assert "wai_not-a-real-key-at-all" not in message


def test_purge_takes_stale_unfinished_uploads_on_both_stores(store_env: str) -> None:
    from whileai_core.store import NewDataset, open_store
    from whileai_core.store.base import STALE_UPLOAD_SECONDS
    from whileai_core.store.local import Storage

    store = open_store()
    try:
        stale = store.create_dataset(NewDataset(name="killed-push"))["datasetId"]
        store.create_dataset(NewDataset(name="running-push"))
    finally:
        store.close()
    url = os.environ.get("WHILEAI_API_URL")
    with (
        (
            SERVING[url].storage()
            if url
            else contextlib.closing(Storage(os.environ["WHILEAI_HOME"]))
        ) as storage,
        storage.tx() as db,
    ):
        db.execute(
            "UPDATE datasets SET created_at = created_at - ? WHERE id = ?",
            (STALE_UPLOAD_SECONDS + 60, stale),
        )
    listed = stdout_json(ok("datasets", "--pending", "--json"))["datasets"]
    assert sorted(d["name"] for d in listed) == ["killed-push", "running-push"]
    assert stdout_json(ok("datasets", "--json"))["datasets"] == []
    dry = stdout_json(ok("purge", "--empty", "--dry-run", "--json"))
    assert dry["planned"]["unfinished"] == 1
    done = ok("purge", "--empty", "--yes", "--json")
    assert stdout_json(done)["deleted"]["unfinished"] == 1
    assert "1 unfinished uploads" in done.stderr
    store = open_store()
    try:
        assert [d["name"] for d in store.list_datasets(status="pending")] == ["running-push"]
    finally:
        store.close()


def test_pull_into_a_directory_is_a_clear_error(store_env: str, tmp_path: Path) -> None:
    dataset_id = ok("push", str(SDK_ROWS), "--name", "x", "--no-gate").stdout.strip()
    result = cli("pull", dataset_id, "-o", str(tmp_path))
    assert result.exit_code == 1 and "is a directory" in str(result.exception)
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_a_url_that_is_not_a_whileai_server_is_a_clear_error(monkeypatch) -> None:
    """WHILEAI_API_URL pointing at some other web server answers HTML, not a traceback."""
    import http.server
    import threading

    class Html(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(b"<html>hello</html>")

        def log_message(self, *args: object) -> None:
            pass

    web = http.server.HTTPServer(("127.0.0.1", 0), Html)
    thread = threading.Thread(target=web.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{web.server_address[1]}"
        monkeypatch.setenv("WHILEAI_API_URL", url)
        monkeypatch.setenv("WHILEAI_API_KEY", "wai_0123456789abcdef")
        result = cli("datasets")
        assert result.exit_code == 1
        assert url in str(result.exception) and "not answer JSON" in str(result.exception)
    finally:
        web.shutdown()


def test_stdin_on_a_terminal_is_a_clear_error_not_a_hang(tmp_path: Path) -> None:
    import pty

    primary, terminal = pty.openpty()
    try:
        for args in (("push", "--name", "x"), ("traces", "ingest", "-")):
            done = subprocess.run(
                [sys.executable, "-m", "whileai_cli", *args],
                stdin=terminal,
                capture_output=True,
                timeout=60,
                env={**os.environ, "WHILEAI_HOME": str(tmp_path)},
            )
            assert done.returncode == 1 and b"no input" in done.stderr
    finally:
        os.close(primary)
        os.close(terminal)


def test_serve_on_a_taken_port_or_a_file_is_one_line(tmp_path: Path) -> None:
    import socket

    (tmp_path / "file").write_text("x")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        for extra, expected in (
            (("--data", str(tmp_path / "srv")), b"cannot listen on 127.0.0.1:"),
            (("--data", str(tmp_path / "file")), b"not a directory"),
        ):
            done = subprocess.run(
                [sys.executable, "-m", "whileai_cli", "serve", "--port", port, *extra],
                capture_output=True,
                timeout=60,
                env={**os.environ, "WHILEAI_HOME": str(tmp_path)},
            )
            assert done.returncode == 1 and expected in done.stderr
            assert done.stderr.count(b"\n") == 1 and b"listening" not in done.stderr
