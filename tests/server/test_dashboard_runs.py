"""The dashboard watching training in a real browser (Debian's Chromium via Playwright):
a running run's page reloads itself and shows the new points; a run whose trainer went
quiet reads stale, then crashed; two runs overlaid on one chart; grad_norm, gold_reward
and the alarms drawn; a trace's own page with its turns, tool calls and scores."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from whileai_core.runs import training_run
from whileai_core.store.http import HttpStore

from ..platform_fixtures import LiveServer, live_server, otlp_export, otlp_run

CHROMIUM = Path("/usr/bin/chromium")
pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="Debian's chromium is missing (.ci/run installs it)"
)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with live_server(tmp_path_factory.mktemp("dashboard-runs"), url_ttl=60) as live:
        yield live


def _sign_in(page: Any, live: LiveServer, key: str) -> None:
    page.goto(f"{live.url}/ui/signin")
    page.fill("#api_key", key)
    page.click("#signin")
    page.wait_for_url("**/ui/datasets")


def _browser(pw: Any) -> Any:
    return pw.chromium.launch(executable_path=str(CHROMIUM))


def test_a_running_run_refreshes_and_a_silent_one_turns_stale_then_crashed(
    site: LiveServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from playwright.sync_api import sync_playwright

    # The server runs in this process: its heartbeat limits are these.
    monkeypatch.setenv("WHILEAI_RUN_STALE_SECONDS", "3")
    monkeypatch.setenv("WHILEAI_RUN_CRASHED_SECONDS", "6")
    key = site.signup()
    store = HttpStore(site.url, key)
    # A live trainer: it logs now and then, and its handle's heartbeat fills the gaps.
    live = training_run("live-sft", total_steps=20, store=store, flush_every=1,
                        heartbeat_seconds=0.5)  # fmt: skip
    for step in range(1, 4):
        live.log(step, loss=2.0 / step)
    live.flush()
    with sync_playwright() as pw:
        browser = _browser(pw)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        _sign_in(page, site, key)
        page.goto(f"{site.url}/ui/runs/{live.run_id}")
        assert page.locator("#status").inner_text() == "running"
        assert page.locator("meta[http-equiv=refresh]").count() == 1
        page.wait_for_selector("#chart-loss[data-ready='1']")
        assert page.evaluate("() => Chart.getChart('chart-loss').data.datasets[0].data.length") == 3
        # The trainer logs on; the open page reloads itself and draws the new points.
        for step in range(4, 11):
            live.log(step, loss=2.0 / step)
        live.flush()
        page.wait_for_selector("text=step 10/20", timeout=30_000)
        page.wait_for_selector("#chart-loss[data-ready='1']")
        drawn = page.evaluate("() => Chart.getChart('chart-loss').data.datasets[0].data.length")
        assert drawn == 10
        # A trainer that died: a point, then nothing (its process gone: no heartbeat either).
        dead = training_run("dead-grpo", total_steps=20, store=store, flush_every=1)
        dead.log(1, loss=1.0)
        dead.close()
        # Its page: stale once past 3 s, crashed past 6 s, and then no more reloads.
        page.goto(f"{site.url}/ui/runs/{dead.run_id}")
        page.wait_for_selector("#status >> text=stale", timeout=30_000)
        page.wait_for_selector("#status >> text=crashed", timeout=30_000)
        assert page.locator("meta[http-equiv=refresh]").count() == 0
        # Meanwhile the live run's heartbeat kept it live, though it logged nothing since.
        time.sleep(3.5)
        page.goto(f"{site.url}/ui/runs")
        text = page.locator("table.runs").inner_text()
        assert "live-sft\trunning" in text.replace(" ", "\t") or "running" in text
        assert "crashed" in text
        browser.close()
    live.finish("done")
    listed = {r["name"]: r for r in store.list_runs()}
    assert listed["dead-grpo"]["status"] == "running"  # the stored status is untouched
    assert listed["dead-grpo"]["liveness"] == "crashed"
    assert listed["live-sft"]["liveness"] is None  # finished: its status says how it ended
    store.close()


def test_two_runs_overlaid_and_the_monitor_drawn(site: LiveServer, tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    key = site.signup()
    store = HttpStore(site.url, key)
    ids = []
    for name, lr in (("grpo-lr-1e-5", 1e-5), ("grpo-lr-1e-4", 1e-4)):
        with training_run(name, total_steps=12, store=store,
                          config={"method": "grpo", "learning_rate": lr}) as run:  # fmt: skip
            for step in range(1, 13):
                run.log(step, loss=1.0 / step, grad_norm=0.5 + lr * 1000 * step,
                        reward=0.1 * step, kl=0.01 * step)  # fmt: skip
                if step % 3 == 0:
                    run.log(step, gold_reward=0.2, proxy_reward=0.1 * step,
                            holdout_length=40.0 + 10 * step)  # fmt: skip
            run.log(9, alarm_length=1.0)
            line = "length: holdout completions 70 -> 130 chars (+86%) over steps 3-9"
            run.note(alarms={"length": line})
        ids.append(run.run_id)
    with sync_playwright() as pw:
        browser = _browser(pw)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        _sign_in(page, site, key)
        # One run: grad_norm, gold beside proxy, held-out length and the alarm, drawn.
        page.goto(f"{site.url}/ui/runs/{ids[0]}")
        for chart_id in ("chart-grad", "chart-gold", "chart-length", "chart-alarms"):
            page.wait_for_selector(f"#{chart_id}[data-ready='1']")
        assert page.locator("#chart-gold").get_attribute("data-series") == "2"
        assert "length: holdout completions" in page.locator("#alarms").inner_text()
        assert page.locator("meta[http-equiv=refresh]").count() == 0  # finished: no reloads
        # Overlay: check both runs on the list, one chart per metric, one line per run.
        page.goto(f"{site.url}/ui/runs")
        for run_id in ids:
            page.check(f"input[name=id][value={run_id}]")
        page.click("#overlay")
        page.wait_for_url("**/ui/runs/overlay?**")
        page.wait_for_selector("#chart-loss-loss[data-ready='1']")
        assert page.locator("#chart-loss-loss").get_attribute("data-series") == "2"
        assert page.locator("#chart-grad-grad-norm").get_attribute("data-series") == "2"
        labels = page.evaluate(
            "() => Chart.getChart('chart-loss-loss').data.datasets.map(d => d.label)"
        )
        assert sorted(label.split(" (")[0] for label in labels) == ["grpo-lr-1e-4", "grpo-lr-1e-5"]
        assert "learning_rate=0.0001" in page.locator("table.overlay").inner_text()
        page.screenshot(path=str(tmp_path / "overlay.png"), full_page=True)
        # One run is no overlay.
        response = page.goto(f"{site.url}/ui/runs/overlay?id={ids[0]}")
        assert response is not None and response.status == 400
        browser.close()
    store.close()


def test_a_trace_has_its_own_page_linked_from_the_list(site: LiveServer) -> None:
    from playwright.sync_api import sync_playwright

    key = site.signup()
    store = HttpStore(site.url, key)
    trace_id, spans = otlp_run("orders-bot", "sc-7", "where is my order ORD-1042?")
    store.ingest_otlp(otlp_export(spans), "application/json")
    store.score_trace(trace_id, 0.75, "quality")
    assert store.get_trace(trace_id[:16])["traceId"] == trace_id
    with sync_playwright() as pw:
        browser = _browser(pw)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        _sign_in(page, site, key)
        page.goto(f"{site.url}/ui/traces")
        page.click("a.trace")
        page.wait_for_url(f"**/ui/traces/{trace_id}")
        about = page.locator("section.about").inner_text()
        assert "orders-bot" in about and "sc-7" in about and "quality 0.75" in about
        turns = page.locator("#turns").inner_text()
        assert "where is my order ORD-1042?" in turns
        assert page.locator("#steps table.steps tbody tr").count() >= 1
        response = page.goto(f"{site.url}/ui/traces/{'f' * 32}")
        assert response is not None and response.status == 404
        browser.close()
    store.close()
