"""The original SDK (whileai 0.131, from PyPI, in its own venv) against `whileai serve`:
its training-run calls, unchanged, must land as records our server and CLI read back.

`make test` builds the venv (`make sdk-venv`); the test only skips, and says why, when that
install was impossible. The SDK runs as a real subprocess with the server's URL and a key
in the variables it reads (WHILEAI_API_URL, WHILEAI_API_KEY), as a user's script would.
"""

from __future__ import annotations

import os
import subprocess
import textwrap
from pathlib import Path

import orjson
import pytest

from whileai_core.platform.push import push_rows
from whileai_core.row.privileged import has_privileged, leaks_answer_key
from whileai_core.store.http import HttpStore

from ..helpers import SDK_PYTHON, SDK_ROWS, sdk_seeded_rows
from ..platform_fixtures import LiveServer


def _sdk(script: str, live: LiveServer, key: str, home: Path, **env: str) -> dict:  # type: ignore[type-arg]
    if not SDK_PYTHON.exists():
        pytest.skip(
            f"the original SDK's venv ({SDK_PYTHON}) is missing: `make sdk-venv` installs "
            "whileai==0.131 from PyPI, which this machine could not reach"
        )
    full_env = {
        "PATH": os.environ.get("PATH", ""),
        "WHILEAI_API_URL": live.url,
        "WHILEAI_API_KEY": key,
        "WHILEAI_HOME": str(home),
        "HOME": str(home),
        **env,
    }
    done = subprocess.run(
        [str(SDK_PYTHON), "-c", textwrap.dedent(script)],
        capture_output=True,
        text=True,
        env=full_env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return orjson.loads(done.stdout.strip().splitlines()[-1])


TRAIN = """
import json, random, warnings
warnings.simplefilter("error")  # a send the SDK had to retry shows up as a failure here
from whileai.simulations.training import (
    TrainerCallback, attach_delta, attach_holdout, get_run, list_runs, training_run,
)

out = {}
# Your own loop: points buffered (flush every 7), a holdout, a finish with summary and
# adapter, then a note after the finish (the SDK re-sends /finish for it).
run = training_run(
    "sft-loop", dataset=DATASET, base_model="Qwen/Qwen3-4B", total_steps=60,
    config={"lr": 1e-4, "epochs": 2}, flush_every=7,
)
for step in range(60):
    run.log(step, loss=2.0 - step * 0.02, lr=1e-4, reward=0.1 + step * 0.01, kl=0.001 * step)
run.holdout(before=0.42, after=0.58)
run.finish(summary={"final_loss": 0.82}, adapter="s3://bucket/adapter")
run.note(seed=3)
out["loop"] = run.run_id

# The context manager: an exception finishes the run as failed.
try:
    with training_run("crashes", dataset=DATASET) as crash:
        crash.log(1, loss=3.0)
        raise RuntimeError("CUDA out of memory")
except RuntimeError:
    pass
out["crash"] = crash.run_id

# The Transformers/TRL callback, driven the way a Trainer drives it.
class State:
    def __init__(self, **kw):
        self.__dict__.update(kw)

cb_run = training_run("trl", dataset=DATASET, trainer="trl")
cb = TrainerCallback(cb_run)
cb.on_train_begin(state=State(max_steps=20, global_step=0))
for step in range(1, 21):
    logs = {"loss": 1.5 - step * 0.05, "learning_rate": 2e-5, "epoch": step / 10,
            "grad_norm": 0.5, "train_runtime": 9.9}
    if step % 10 == 0:
        logs["eval_loss"] = 1.4 - step * 0.04
    cb.on_log(state=State(global_step=step), logs=logs)
cb.on_train_end(state=State(global_step=20, log_history=[{"train_loss": 0.9}]))
out["callback"] = cb_run.run_id

# After the fact: the holdout of a finished run, then a delta report on the first run.
attach_holdout(cb_run.run_id, before=0.5, after=0.3)
rows = [json.loads(line) for line in open(ROWS)]
random.seed(0)
before = [dict(r, reward=float(random.random() < 0.3)) for r in rows]
after = [dict(r, reward=float(random.random() < 0.8)) for r in rows]
report = attach_delta(run.run_id, before, after)
out["delta_headline"] = report["headline_verdict"]

got = get_run(run.run_id)
out["sdk_series"] = len(got["series"])
out["sdk_first_step"] = got["series"][0]["step"]
out["listed"] = sorted(r["runId"] for r in list_runs())
print(json.dumps(out))
"""


def test_the_original_sdk_training_calls_work_against_serve(
    server: LiveServer, tmp_path: Path
) -> None:
    key = server.signup()
    store = HttpStore(server.url, key)
    try:
        dataset = push_rows(store, [str(SDK_ROWS)], name="sft-data", gate=False)["train"]
        script = f"DATASET = {dataset['datasetId']!r}\nROWS = {str(SDK_ROWS)!r}\n" + TRAIN
        out = _sdk(script, server, key, tmp_path)

        loop = store.get_run(out["loop"])
        assert loop["status"] == "done"
        assert loop["datasetId"] == dataset["datasetId"]
        assert loop["baseModel"] == "Qwen/Qwen3-4B" and loop["totalSteps"] == 60
        assert loop["config"] == {"lr": 1e-4, "epochs": 2}
        assert loop["adapter"] == "s3://bucket/adapter"
        # Every point, oldest first, each with what was logged.
        assert [p["step"] for p in loop["series"]] == list(range(60))
        assert out["sdk_series"] == 60 and out["sdk_first_step"] == 0
        assert loop["series"][10]["loss"] == pytest.approx(1.8)
        assert {"lr", "reward", "kl", "ts"} <= set(loop["series"][10])
        # The finish, the note sent after it and the delta all merged into one summary.
        summary = loop["summary"]
        assert summary["final_loss"] == 0.82 and summary["seed"] == 3
        assert summary["holdoutPassBefore"] == 0.42 and summary["holdoutPassAfter"] == 0.58
        assert summary["delta"]["headline_verdict"] == out["delta_headline"]
        assert summary["delta"]["metrics"]["pass_at_1"]["mean_b"] > 0.5
        assert loop["holdout"]["word"] == "Better"

        crash = store.get_run(out["crash"])
        assert crash["status"] == "failed"
        assert "CUDA out of memory" in crash["error"]
        assert [p["step"] for p in crash["series"]] == [1]

        trl = store.get_run(out["callback"])
        assert trl["status"] == "done" and trl["totalSteps"] == 20
        assert trl["summary"]["train_loss"] == 0.9
        logged = [p for p in trl["series"] if "loss" in p]
        assert [p["step"] for p in logged] == list(range(1, 21))
        assert {"loss", "lr", "epoch", "grad_norm"} <= set(logged[0])
        assert "train_runtime" not in logged[0]
        assert [p["step"] for p in trl["series"] if "eval_loss" in p] == [10, 20]
        assert trl["holdout"] == {
            "metric": "pass",
            "before": 0.5,
            "after": 0.3,
            "change": pytest.approx(-0.2),
            "word": "Worse",
            "basis": trl["holdout"]["basis"],
        }
        assert out["listed"] == sorted([out["loop"], out["crash"], out["callback"]])
    finally:
        store.close()


def test_another_account_cannot_reach_a_run_the_sdk_made(
    server: LiveServer, tmp_path: Path
) -> None:
    owner, stranger = server.signup(), server.signup()
    script = """
    import json
    from whileai.simulations.training import training_run
    run = training_run("private")
    run.log(1, loss=1.0)
    run.finish()
    print(json.dumps({"run": run.run_id}))
    """
    run_id = _sdk(script, server, owner, tmp_path)["run"]
    with server.client(stranger) as client:
        assert client.get(f"/runs/{run_id}").status_code == 404
        assert client.post(f"/runs/{run_id}/log", json={"points": [{"step": 2}]}).status_code == 404
        assert client.get("/runs").json() == {"runs": []}
    probe = """
    import json
    from whileai.simulations.training import get_run
    try:
        get_run(RUN)
    except Exception as exc:
        print(json.dumps({"error": str(exc)}))
    """
    refused = _sdk(f"RUN = {run_id!r}\n" + textwrap.dedent(probe), server, stranger, tmp_path)
    assert "404" in refused["error"]


CARDS = """
import json, os
from whileai.auth import account
from whileai.simulations.ingest.platform import (
    catalog, preview, publish, pull, push_rows, register_agent, unpublish, update_dataset,
)

rows = [json.loads(line) for line in open(ROWS)]
pushed = push_rows(rows, "sdk-pushed", agent="sdk-bot", mode="rl")
dataset = pushed["datasetId"]
register_agent("sdk-bot", description="made by the SDK", tools=[{"type": "function",
               "function": {"name": "get_order", "description": "x"}}], system_prompt="Be kind.")
update_dataset(dataset, purpose="eval")
card = publish(dataset, agent="sdk-bot", description="public rows")
out = {"dataset": dataset, "card_rows": card["rows"], "preview": len(preview(dataset)["rows"]),
       "catalog": [c["datasetId"] for c in catalog()["datasets"]], "me": account()}
os.environ.pop("WHILEAI_API_KEY")
out["pulled"] = len(pull(dataset))  # no key: the public copy
os.environ["WHILEAI_API_KEY"] = KEY
unpublish(dataset)
print(json.dumps(out))
"""


def test_the_original_sdk_pushes_publishes_and_pulls_a_public_set_without_a_key(
    server: LiveServer, tmp_path: Path
) -> None:
    key = server.signup()
    script = f"ROWS = {str(SDK_ROWS)!r}\nKEY = {key!r}\n" + CARDS
    out = _sdk(script, server, key, tmp_path)
    assert out["card_rows"] == 40 and out["pulled"] == 40 and out["preview"] == 3
    assert out["dataset"] in out["catalog"]
    assert out["me"]["tier"] == "self-hosted" and out["me"]["usage"]["today"]["rowsPushed"] == 40
    store = HttpStore(server.url, key)
    try:
        record = store.get_dataset(out["dataset"])
        assert record["purpose"] == "eval" and record["public"] is False
        agent = next(a for a in store.list_agents() if a["slug"] == "sdk-bot")
        assert agent["description"] == "made by the SDK" and agent["system_prompt"] == "Be kind."
    finally:
        store.close()


PUSH_AS_WRITTEN = """
import json
from whileai.simulations.ingest.platform import push_rows

out = {}
rows = [json.loads(line) for line in open(ROWS)]
out["entry"] = push_rows(rows, "sdk-privileged", mode="explore")
# Rows with nothing left to store once the block is out: a refused upload.
named = [dict(rows[0], final_text="my notes: {'privileged': {'reference': 'x'}}")]
try:
    push_rows(named, "sdk-refused")
except Exception as exc:
    out["refused"] = str(exc)
print(json.dumps(out))
"""


def test_the_original_sdks_push_of_rows_with_their_privileged_block_is_stored_without_it(
    server: LiveServer, tmp_path: Path
) -> None:
    """The SDK sends `SimulationData.trajectories` as they are, privileged block and all:
    serve stores them without it and says so; a row that repeats its answer key stays out,
    and a refused upload leaves no pending dataset behind."""
    rows_path = sdk_seeded_rows(tmp_path / "seeded.jsonl", budget=40, seed=7)
    rows = [orjson.loads(line) for line in rows_path.read_bytes().splitlines()]
    with_block = sum(isinstance(r.get("privileged"), dict) for r in rows)
    leaks = [r for r in rows if leaks_answer_key(r)]
    assert with_block > 30 and leaks
    key = server.signup()
    out = _sdk(f"ROWS = {str(rows_path)!r}\n" + PUSH_AS_WRITTEN, server, key, tmp_path)
    entry = out["entry"]
    assert entry["rows"] == len(rows) - len(leaks)
    assert entry["privilegedRemoved"] == with_block - len(leaks)
    assert entry["leftOut"] == {"quotes_privileged": len(leaks)}
    assert any("removed the privileged block" in w for w in entry["warnings"])
    assert "400" in out["refused"] and "privileged" in out["refused"]
    store = HttpStore(server.url, key)
    try:
        stored = b"".join(store.download(entry["datasetId"]))
        assert len(stored.splitlines()) == len(rows) - len(leaks)
        assert b"privileged" not in stored
        assert not any(has_privileged(orjson.loads(line)) for line in stored.splitlines())
        for leak in leaks:
            assert leak["final_text"].encode() not in stored
        assert store.list_datasets(status="pending") == []
        assert [d["name"] for d in store.list_datasets()] == ["sdk-privileged"]
    finally:
        store.close()
