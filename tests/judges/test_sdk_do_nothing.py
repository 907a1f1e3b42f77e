"""Do-nothing replies never pass, on rows the original SDK wrote (issue 23).

The SDK 0.131 (its own venv, `make sdk-venv`) simulates `tests/fixtures/orders-spec.json`
with its own seeded agent and its own wording. Its clean rows (`seeded == []`) whose ask
carries an id are the actionable asks; each becomes the do-nothing probes (a polite
refusal, an ask-back for the id the person gave, the ask echoed back, a success claimed
with no call, a call with empty arguments, a fault blamed with no call), and the default
judge must fail every one, whatever cell the row sits in and whether or not it carries
grid coordinates, while passing at least 75% of the untouched rows. The rows are written
fresh by the SDK, so nothing here was tuned on them.
"""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest

from whileai_core.judges.evidence import identifiers

from ..helpers import ORDERS_SPEC, REPO, run_cli

SDK_PYTHON = Path(os.environ.get("WHILEAI_SDK_PYTHON", REPO / ".venv-sdk" / "bin" / "python"))
DO_NOTHING = ("polite_refusal", "ask_back", "echo", "success_claim", "empty_call", "fault_claim")

WRITE = """
import json, sys, warnings
warnings.simplefilter("ignore")
import whileai as wai
spec = json.load(open(sys.argv[1]))
for seed in (1, 2, 3):
    agent = wai.seeded_agent(spec["tools"], seed=seed)
    data = wai.simulate(agent, tools=spec["tools"], system_prompt=spec["system_prompt"],
                        simulator=False, budget=60, seed=seed)
    for row in data.rows():
        print(json.dumps(row, default=str))
"""


@pytest.fixture(scope="module")
def sdk_rows(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    if not SDK_PYTHON.exists():
        pytest.skip(f"the original SDK's venv ({SDK_PYTHON}) is missing: `make sdk-venv`")
    home = tmp_path_factory.mktemp("sdk-home")
    done = subprocess.run(
        [str(SDK_PYTHON), "-c", textwrap.dedent(WRITE), str(ORDERS_SPEC)],
        capture_output=True,
        text=True,
        env={"PATH": os.environ.get("PATH", ""), "HOME": str(home), "WHILEAI_HOME": str(home)},
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def _actionable(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in rows if r.get("seeded") == [] and identifiers(str(r.get("prompt") or ""))]


def test_every_do_nothing_reply_fails_on_the_sdks_rows(
    sdk_rows: list[dict[str, Any]], tmp_path: Path
) -> None:
    controls = _actionable(sdk_rows)
    assert len(controls) >= 60
    cells = {(r.get("scenario_dimensions") or {}).get("tool") for r in controls}
    assert {"multi_tool", "unrelated"} <= cells  # the cells where do-nothing used to pass
    path = tmp_path / "controls.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in controls))
    done = run_cli("probes", str(path), "--probes", ",".join(DO_NOTHING), "--json", timeout=600)
    report = json.loads(done.stdout)
    for name in DO_NOTHING:
        probe = report["probes"][name]
        assert probe["tried"] >= 60 and probe["passed"] == 0, (name, probe["examples"])
    assert report["unjudged"] == 0 and done.returncode == 0


def test_the_same_rows_without_their_coordinates_still_fail_every_probe(
    sdk_rows: list[dict[str, Any]], tmp_path: Path
) -> None:
    """A row with its grid coordinates stripped (written by something that keeps none)."""
    dims = ("scenario_dimensions", "ask_family", "stance", "world_state", "faults_fired")
    bare = [{k: v for k, v in r.items() if k not in dims} for r in _actionable(sdk_rows)]
    path = tmp_path / "bare.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in bare))
    done = run_cli("probes", str(path), "--probes", ",".join(DO_NOTHING), "--json", timeout=600)
    report = json.loads(done.stdout)
    for name in DO_NOTHING:
        assert report["probes"][name]["passed"] == 0, (name, report["probes"][name]["examples"])
    assert report["unjudged"] == 0


def test_most_of_the_untouched_rows_pass(sdk_rows: list[dict[str, Any]], tmp_path: Path) -> None:
    controls = _actionable(sdk_rows)
    path = tmp_path / "controls.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in controls))
    done = run_cli("grade", str(path), timeout=600)
    assert done.returncode == 0, done.stderr.decode()
    graded = [json.loads(line) for line in done.stdout.splitlines()]
    assert all(r["judge_status"] == "ok" for r in graded)
    rate = sum(r["reward"] == 1.0 for r in graded) / len(graded)
    assert rate >= 0.75, [r["reason"] for r in graded if r["reward"] != 1.0]


def test_the_clean_rows_it_fails_are_the_sdks_own_conduct_faults(
    sdk_rows: list[dict[str, Any]], tmp_path: Path
) -> None:
    """The SDK marks a row clean (`seeded == []`) when it planted no mistake, not when its
    seeded agent did the right thing: it looks up `order_id='the record'` when no id was
    given, cancels an order the person only asked to look up, writes before reading a
    partial state. Every clean row the default judge fails must fail for such a fault, read
    off the row itself: an argument value the prompt never said, or a write tool called."""
    clean = [r for r in sdk_rows if r.get("seeded") == []]
    path = tmp_path / "clean.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in clean))
    done = run_cli("grade", str(path), timeout=600)
    assert done.returncode == 0, done.stderr.decode()
    graded = [json.loads(line) for line in done.stdout.splitlines()]
    failed = [r for r in graded if r["reward"] != 1.0]
    assert len(failed) <= len(graded) // 3
    writes = {"cancel_order", "refund_order"}
    for row in failed:
        reason = str(row["reason"])
        prompt = str(row.get("prompt") or "").lower()
        calls = [
            call
            for message in row.get("messages") or []
            for call in message.get("tool_calls") or []
        ]
        names = {str(call.get("name") or call.get("function", {}).get("name")) for call in calls}
        if reason.startswith("grounded: invented "):
            value = reason.split("=", 1)[1].split("'")[1].lower()
            assert value and value not in prompt, (reason, prompt)
        elif reason.startswith("target_succeeded"):
            asked = (row.get("scenario_dimensions") or {}).get("tool")
            assert asked not in names, (reason, names)
        else:
            assert names & writes, (reason, names)
