"""The dashboard in a real browser: Debian's Chromium driven by Playwright against a live
`whileai serve`, asserting on the DOM and saving a screenshot of every page.

Playwright comes from PyPI (a dev extra) and is pointed at /usr/bin/chromium; it never
downloads a browser of its own. `.ci/run` installs chromium where it is missing.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from whileai_core.platform.push import agent_spec, push_rows
from whileai_core.runs import training_run
from whileai_core.store.http import HttpStore

from ..helpers import ORDERS_SPEC, SDK_ROWS
from ..platform_fixtures import (
    BACKENDS,
    LiveServer,
    backend_named,
    live_server,
    otlp_export,
    otlp_run,
)

CHROMIUM = Path("/usr/bin/chromium")
pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="Debian's chromium is missing (.ci/run installs it)"
)


@pytest.fixture(scope="module", params=BACKENDS)
def site(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    database = backend_named(request, request.param).database()
    with live_server(
        tmp_path_factory.mktemp("dashboard-data"), url_ttl=60, database=database
    ) as live:
        yield live


def _graded(passes_by_task: dict[str, list[int]]) -> list[dict[str, Any]]:
    base = orjson.loads(SDK_ROWS.read_bytes().splitlines()[0])
    return [
        dict(base, scenario_id=task, rollout_index=i, reward=float(v), judge_status="ok")
        for task, pattern in passes_by_task.items()
        for i, v in enumerate(pattern)
    ]


def _populate(live: LiveServer, tmp_path: Path) -> dict[str, Any]:
    """One account with a graded set (and its holdout), an agent with a spec, a run with
    loss, reward and KL curves, a holdout that went up and a delta report, and a trace."""
    key = live.signup()
    store = HttpStore(live.url, key)
    rng = random.Random(7)
    tasks = {f"task-{i:02d}": [int(rng.random() < i / 12) for _ in range(4)] for i in range(12)}
    rows = tmp_path / "graded.jsonl"
    rows.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in _graded(tasks)))
    pushed = push_rows(
        store,
        [str(rows)],
        name="orders-rl-v1",
        mode="rl",
        agent="orders-bot",
        holdout=0.25,
        gate=False,
        agent_spec=agent_spec(str(ORDERS_SPEC)),
    )
    with training_run(
        "grpo-orders",
        dataset=pushed["train"]["datasetId"],
        base_model="Qwen/Qwen3-4B",
        total_steps=40,
        store=store,
    ) as run:
        for step in range(40):
            run.log(step, loss=2.0 * 0.95**step, reward=0.2 + step * 0.01, kl=0.002 * step)
        run.holdout(before=0.42, after=0.58)
    moved = {"mean_a": 0.42, "mean_b": 0.58, "delta": 0.16, "ci95": [0.05, 0.27]}
    moved |= {"p_value": 0.004, "verdict": "b_better"}
    run.attach_delta({"headline_verdict": "PASS", "metrics": {"pass_at_1": moved}})
    trace_id, spans = otlp_run("orders-bot", "sc-7", "where is my order?")
    store.ingest_otlp(otlp_export(spans), "application/json")
    store.score_trace(trace_id, 1.0)
    store.close()
    return {"key": key, "train": pushed["train"], "holdout": pushed["holdout"], "run": run.run_id}


def _sign_in(page: Any, live: LiveServer, key: str) -> None:
    page.goto(f"{live.url}/ui/datasets")
    assert page.url.endswith("/ui/signin")  # not signed in: sent to the form
    page.fill("#api_key", key)
    page.click("#signin")
    page.wait_for_url("**/ui/datasets")


def _shot(page: Any, path: Path) -> None:
    page.screenshot(path=str(path), full_page=True)
    assert path.stat().st_size > 10_000  # a rendered page, not a blank one


def test_sign_in_see_the_histogram_the_curve_and_the_word_then_sign_out(
    site: LiveServer, tmp_path: Path
) -> None:
    from playwright.sync_api import sync_playwright

    made = _populate(site, tmp_path)
    outside: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM))
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        page = context.new_page()
        page.on(
            "request",
            lambda r: outside.append(r.url) if not r.url.startswith(site.url) else None,
        )
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.on(
            "console",
            lambda m: errors.append(m.text) if m.type == "error" else None,
        )
        _sign_in(page, site, made["key"])

        # The session cookie: unreadable by script, never sent by another site.
        session = next(c for c in context.cookies() if c["name"] == "whileai_session")
        assert session["httpOnly"] and session["sameSite"] == "Strict"

        # Datasets, grouped by purpose, with mode, rows and lineage.
        train = page.locator("#purpose-train")
        assert "orders-rl-v1" in train.inner_text()
        assert "rl" in train.inner_text()
        held = page.locator("#purpose-holdout")
        assert "orders-rl-v1-holdout" in held.inner_text()
        assert "from orders-rl-v1" in held.inner_text()
        _shot(page, tmp_path / "datasets.png")

        # The dataset page: pass rate, mixed tasks, the per-task histogram, tool use, rows.
        train.locator("a.dataset", has_text="orders-rl-v1").first.click()
        page.wait_for_selector("#chart-histogram[data-ready='1']")
        page.wait_for_selector("#chart-tools[data-ready='1']")
        rows = made["train"]["rows"]
        assert page.locator("dl.facts >> text=rows").count() >= 1
        assert page.locator("#pass-rate").inner_text().endswith("%")
        counts = page.locator("table.histogram tbody tr td:nth-child(2)").all_text_contents()
        assert len(counts) == 10 and sum(int(c) for c in counts) > 0
        assert int(page.locator("#mixed-tasks").inner_text()) > 0
        assert page.locator("article.row").count() == min(5, rows)
        _shot(page, tmp_path / "dataset.png")

        # The run: its loss curve, reward and KL, the word, the delta table.
        page.click("header nav >> text=Runs")
        page.click("a.run >> text=grpo-orders")
        page.wait_for_selector("#chart-loss[data-ready='1']")
        page.wait_for_selector("#chart-reward[data-ready='1']")
        page.wait_for_selector("#chart-kl[data-ready='1']")
        assert page.locator("#holdout-word").inner_text() == "Better"
        assert "42.0% → 58.0%" in page.locator("section.verdict").inner_text()
        delta = page.locator("#delta")
        assert "PASS" in delta.inner_text() and "pass_at_1" in delta.inner_text()
        drawn = page.evaluate("() => Chart.getChart('chart-loss').data.datasets[0].data.length")
        assert drawn == 40
        _shot(page, tmp_path / "run.png")

        # Traces with their scores; agents with their tools and system prompt.
        page.click("header nav >> text=Traces")
        assert "score 1" in page.locator("table.traces").inner_text()
        _shot(page, tmp_path / "traces.png")
        page.click("header nav >> text=Agents")
        agent = page.locator("#agent-orders-bot")
        assert "get_order" in agent.locator("table.tools").inner_text()
        assert agent.locator("pre.prompt").inner_text().strip()
        _shot(page, tmp_path / "agents.png")

        # Sign out: the session is gone on the server, not just the cookie.
        page.click("#signout")
        page.wait_for_url("**/ui/signin")
        page.goto(f"{site.url}/ui/runs/{made['run']}")
        assert page.url.endswith("/ui/signin")
        _shot(page, tmp_path / "signin.png")
        browser.close()
    assert outside == []  # charts and styles come from the server itself: works offline
    assert errors == []


def test_a_second_account_sees_none_of_it(site: LiveServer, tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    made = _populate(site, tmp_path)
    other = site.signup()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM))
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        _sign_in(page, site, other)
        assert "orders-rl-v1" not in page.locator("main").inner_text()
        assert page.locator("a.dataset").count() == 0
        _shot(page, tmp_path / "other-datasets.png")
        for path in (f"/ui/datasets/{made['train']['datasetId']}", f"/ui/runs/{made['run']}"):
            response = page.goto(site.url + path)
            assert response is not None and response.status == 404
            assert "not found" in page.locator("main").inner_text()
        page.goto(f"{site.url}/ui/runs")
        assert page.locator("a.run").count() == 0
        page.goto(f"{site.url}/ui/agents")
        assert "orders-bot" not in page.locator("main").inner_text()
        _shot(page, tmp_path / "other-agents.png")
        browser.close()


def test_forms_are_refused_from_another_site_and_without_their_token(site: LiveServer) -> None:
    key = site.signup()
    with httpx.Client(base_url=site.url, timeout=30, follow_redirects=False) as browser:
        form = browser.get("/ui/signin")
        csrf = form.text.split("name='csrf' value='")[1].split("'")[0]
        assert form.headers["content-security-policy"].startswith("default-src 'none'")
        forged = browser.post(
            "/ui/signin",
            data={"api_key": key, "csrf": csrf},
            headers={"origin": "https://evil.example"},
        )
        assert forged.status_code == 403 and "whileai_session" not in forged.cookies
        assert browser.post("/ui/signin", data={"api_key": key, "csrf": "x"}).status_code == 403
        wrong = browser.post("/ui/signin", data={"api_key": "wai_wrong", "csrf": csrf})
        assert wrong.status_code == 401 and "not signed in" in wrong.text
        signed = browser.post("/ui/signin", data={"api_key": key, "csrf": csrf})
        assert signed.status_code == 303 and "whileai_session" in signed.cookies
        assert browser.get("/ui/datasets").status_code == 200
        # Sign-out needs the page's token: a bare post (another site's form) does nothing.
        assert browser.post("/ui/signout", data={}).status_code == 403
        assert browser.get("/ui/datasets").status_code == 200
        page = browser.get("/ui/datasets").text
        token = page.split("name='csrf' value='")[1].split("'")[0]
        assert browser.post("/ui/signout", data={"csrf": token}).status_code == 303
        assert browser.get("/ui/datasets").status_code == 303
    # The chart library is served from the package, with its license beside it in the tree.
    script = httpx.get(f"{site.url}/ui/static/chart.umd.min.js")
    assert script.status_code == 200 and "Chart.js v4.6.1" in script.text[:200]
    assert httpx.get(f"{site.url}/ui/static/../server.py").status_code == 404


def test_the_device_approval_page_works_in_a_real_browser(site: LiveServer) -> None:
    """The login approval form posts from Chromium (whose Origin header the form check
    reads) and the terminal's poll then gets a key."""
    from playwright.sync_api import sync_playwright

    key = site.signup()
    code = httpx.post(f"{site.url}/device/code", json={"name": "laptop"}).json()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM))
        page = browser.new_page()
        page.goto(code["verification_uri_complete"])
        page.fill("input[name=api_key]", key)
        page.click("button[type=submit]")
        page.wait_for_selector("text=Approved")
        browser.close()
    token = httpx.post(
        f"{site.url}/device/token",
        json={"device_code": code["device_code"], "user_code": code["user_code"]},
    )
    assert token.status_code == 200 and token.json()["api_key"].startswith("wai_")


def test_a_session_opened_with_a_delegated_credential_ends_when_it_is_revoked(
    site: LiveServer,
) -> None:
    key = site.signup()
    with site.client(key) as api:
        credential = api.post("/auth/issue-credential", json={"ttlSeconds": 600}).json()
    with httpx.Client(base_url=site.url, timeout=30, follow_redirects=False) as browser:
        form = browser.get("/ui/signin").text
        csrf = form.split("name='csrf' value='")[1].split("'")[0]
        signed = browser.post(
            "/ui/signin", data={"api_key": credential["credential"], "csrf": csrf}
        )
        assert signed.status_code == 303
        assert browser.get("/ui/runs").status_code == 200
        with site.client(key) as api:
            api.post("/auth/revoke-credential", json={"credential": credential["credential"]})
        assert browser.get("/ui/runs").status_code == 303  # back to the sign-in form
