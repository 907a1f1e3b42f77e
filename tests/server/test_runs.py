"""Training runs: the HTTP contract's edges, the library handle (buffering, retry after a
failed send, failed on an exception), our TrainerCallback, the CLI, and 50 loggers and
50 pushes at once against one server losing nothing."""

from __future__ import annotations

import threading
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from whileai_core.runs import TrainerCallback, training_run
from whileai_core.store import StoreError
from whileai_core.store.bound import LocalStore
from whileai_core.store.http import HttpStore
from whileai_core.store.runs import NewRun

from ..platform_fixtures import FIFTY_SETS, LiveServer, fifty_concurrent_pushes, ok, stdout_json


def test_the_plain_http_contract(server: LiveServer) -> None:
    key = server.signup()
    with server.client(key) as client:
        created = client.post("/runs", json={"name": "http-run", "total_steps": 3})
        assert created.status_code == 201
        run_id = created.json()["runId"]
        assert run_id.startswith("run_") and created.json()["status"] == "running"
        batch = {"points": [{"step": 2, "loss": 1.0}, {"step": 1, "loss": 1.5, "lr": 1e-4}]}
        assert client.post(f"/runs/{run_id}/log", json=batch).json()["points"] == 2
        too_many = {"points": [{"step": i} for i in range(501)]}
        refused = client.post(f"/runs/{run_id}/log", json=too_many)
        assert refused.status_code == 413 and refused.json()["limit"] == "max_run_points"
        bad = client.post(f"/runs/{run_id}/log", json={"points": [{"step": 3, "loss": "x"}]})
        assert bad.status_code == 400 and "points[0].loss" in bad.json()["error"]
        assert client.post(f"/runs/{run_id}/log", json={"points": [{"loss": 1}]}).status_code == 400
        # Arrival order, not step order: a resumed trainer's history reads as it happened.
        got = client.get(f"/runs/{run_id}").json()
        assert [p["step"] for p in got["series"]] == [2, 1] and got["points"] == 2
        assert client.post(f"/runs/{run_id}/finish", json={"status": "ok"}).status_code == 400
        wrong_rate = {"status": "done", "summary": {"holdoutPassBefore": 42}}
        assert client.post(f"/runs/{run_id}/finish", json=wrong_rate).status_code == 400
        done = client.post(f"/runs/{run_id}/finish", json={"status": "done", "summary": {"a": 1}})
        first_finish = done.json()["finishedAt"]
        # Finished again to add to the summary (what the SDK does): merged, status kept.
        again = client.post(
            f"/runs/{run_id}/finish",
            json={"status": "done", "summary": {"holdoutLossBefore": 1.2, "holdoutLossAfter": 0.9}},
        ).json()
        assert again["summary"] == {"a": 1, "holdoutLossBefore": 1.2, "holdoutLossAfter": 0.9}
        assert again["finishedAt"] == first_finish
        assert again["holdout"]["metric"] == "loss" and again["holdout"]["word"] == "Better"
        delta = {"metrics": {"pass_at_1": {"mean_a": 0.5, "mean_b": 0.51, "verdict": "x"}}}
        attached = client.post(f"/runs/{run_id}/delta", json=delta).json()
        assert attached["summary"]["delta"] == delta
        assert attached["summary"]["holdoutPassBefore"] == 0.5
        missing = client.post("/runs", json={"name": "x", "dataset_id": "ds_0000000000000000"})
        assert missing.status_code == 404
        assert client.delete(f"/runs/{run_id}").status_code == 200
        assert client.get(f"/runs/{run_id}").status_code == 404


class _Flaky:
    """A store whose first `fail` log calls fail, as a server restarting would."""

    def __init__(self, inner: Any, fail: int) -> None:
        self.inner, self.fail, self.calls = inner, fail, 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def log_run(self, *args: Any) -> Any:
        self.calls += 1
        if self.calls <= self.fail:
            raise StoreError("cannot reach the server")
        return self.inner.log_run(*args)


def test_a_failed_send_is_retried_on_the_next_flush_and_the_loop_never_sees_it(
    tmp_path: Path,
) -> None:
    local = LocalStore(tmp_path)
    flaky = _Flaky(local, fail=2)
    run = training_run("flaky", store=flaky, flush_every=5, flush_seconds=3600)  # type: ignore[arg-type]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for step in range(12):
            run.log(step, loss=1.0 / (step + 1), bad=float("nan"), note="text")
        # The sender thread may have made some of the tries already; by the third at the
        # latest everything buffered goes.
        assert any(run.flush() for _ in range(3))
    assert run.errors == 2 and run.unsent == 0 and run.dropped == 24
    assert len([w for w in caught if "kept and sent on the next flush" in str(w.message)]) == 1
    run.finish(summary={"final": 1})
    got = local.get_run(run.run_id)
    assert [p["step"] for p in got["series"]] == list(range(12))
    assert got["status"] == "done" and got["summary"] == {"final": 1}
    local.close()


def test_context_manager_fails_the_run_on_an_exception_and_holdout_after(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    with pytest.raises(ZeroDivisionError), training_run("boom", store=store) as run:
        run.log(1, loss=2.0)
        _ = 1 / 0
    run.holdout(before=0.6, after=0.61)  # after the block, as the reference shows
    got = store.get_run(run.run_id)
    assert got["status"] == "failed" and "ZeroDivisionError" in got["error"]
    assert got["holdout"]["word"] == "About the same"
    with pytest.raises(Exception, match="a pass rate is 0 to 1"):
        run.holdout(before=42, after=58)
    store.close()


class _State:
    def __init__(self, **fields: Any) -> None:
        self.__dict__.update(fields)


def test_our_trainer_callback_logs_what_a_trainer_logs_then_finishes(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    run = training_run("trl", store=store, trainer="trl")
    callback = TrainerCallback(run)
    callback.on_init_end()  # an event it does not use is a no-op, as on the real base
    callback.on_train_begin(state=_State(max_steps=4, global_step=0))
    for step in range(1, 5):
        logs = {"loss": 1.0 / step, "learning_rate": 1e-5, "epoch": step / 4, "grad_norm": 0.3,
                "rewards/format": 0.5, "objective/kl": 0.01, "train_runtime": 3.2}  # fmt: skip
        if step == 4:
            logs["eval_loss"] = 0.4
        callback.on_log(state=_State(global_step=step), logs=logs)
    callback.on_train_end(state=_State(log_history=[{"train_loss": 0.52}]))
    got = store.get_run(run.run_id)
    assert got["status"] == "done" and got["totalSteps"] == 4
    assert got["summary"]["train_loss"] == 0.52
    logged = [p for p in got["series"] if "loss" in p]
    assert {"loss", "lr", "epoch", "grad_norm", "reward_format", "kl"} <= set(logged[0])
    assert "train_runtime" not in logged[0] and logged[-1]["eval_loss"] == 0.4
    store.close()


def test_runs_commands(store_env: str) -> None:
    from whileai_core.store import open_store

    store = open_store()
    run = training_run("cli-run", store=store, total_steps=10)
    for step in range(10):
        run.log(step, loss=3.0 - step * 0.2, reward=step / 10, kl=0.01)
    run.holdout(before=0.3, after=0.2)
    run.finish(adapter="hf://me/adapter")
    store.close()
    listed = stdout_json(ok("runs", "--json"))["runs"]
    assert [(r["name"], r["status"], r["points"]) for r in listed] == [("cli-run", "done", 10)]
    table = ok("runs").stdout.splitlines()
    assert table[0].split("\t")[:3] == ["id", "name", "status"]
    assert "Worse (pass 30.0% -> 20.0%)" in table[1]
    shown = ok("runs", "show", run.run_id).stdout
    assert "cli-run: done, step 9/10, 10 points" in shown
    assert "holdout: Worse" in shown and "loss: 3 at step 0 -> 1.2 at step 9" in shown
    assert "adapter: hf://me/adapter" in shown
    assert stdout_json(ok("runs", "show", run.run_id, "--json"))["series"][0]["loss"] == 3.0
    ok("runs", "delete", run.run_id)
    assert stdout_json(ok("runs", "--json"))["runs"] == []


def test_fifty_loggers_and_fifty_pushes_at_once_lose_nothing(
    server: LiveServer, tmp_path: Path
) -> None:
    key = server.signup()
    points = 240  # 10 batches of 24 each: every logger's batches interleave with the others

    def logger(i: int) -> str:
        store = HttpStore(server.url, key)
        run = training_run(f"logger-{i}", store=store, flush_every=24, flush_seconds=3600)
        for step in range(points):
            run.log(step, loss=i + step / 1000)
        run.finish(summary={"logger": i})
        store.close()
        assert run.errors == 0
        return run.run_id

    pushed: list[dict] = []  # type: ignore[type-arg]

    def pushes() -> None:
        pushed.extend(fifty_concurrent_pushes(tmp_path, lambda: HttpStore(server.url, key)))

    pusher = threading.Thread(target=pushes)
    pusher.start()
    with ThreadPoolExecutor(max_workers=50) as pool:
        run_ids = list(pool.map(logger, range(50)))
    pusher.join(timeout=300)

    check = HttpStore(server.url, key)
    try:
        assert len(check.list_runs()) == 50
        for i, run_id in enumerate(run_ids):
            got = check.get_run(run_id)
            assert got["status"] == "done" and got["summary"] == {"logger": i}
            assert got["points"] == points
            assert [p["step"] for p in got["series"]] == list(range(points))
            assert {p["loss"] for p in got["series"]} == {i + s / 1000 for s in range(points)}
        assert {d["name"]: d["rows"] for d in check.list_datasets()} == FIFTY_SETS
        assert len(pushed) == 50
        assert sum(r["rows"] for r in pushed) == sum(FIFTY_SETS.values())
    finally:
        check.close()


def test_new_run_spec_round_trips_the_wire() -> None:
    spec = NewRun(name="x", dataset_id="ds_1", total_steps=5, config={"lr": 1})
    assert NewRun.from_wire(spec.wire()) == spec
