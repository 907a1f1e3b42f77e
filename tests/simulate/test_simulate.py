"""`whileai simulate`: budgets, reproducibility, resume, agents, seeded labels, the report."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from whileai_core.agents.seeded import APOLOGY, FLATTERY, HEDGE, PADDING
from whileai_core.row.privileged import leaks_answer_key
from whileai_core.simulate.run import run_simulation
from whileai_core.simulate.scheduler import MODES, SimulateConfig
from whileai_core.spec import load_spec

from ..helpers import ORDERS_SPEC, REPO, run_cli

SPEC = load_spec(ORDERS_SPEC)


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _run(tmp_path: Path, name: str = "rows.jsonl", **kw: object) -> tuple[list[dict], object]:
    out = tmp_path / name
    out.unlink(missing_ok=True)  # a fresh run each time (simulate refuses to overwrite rows)
    agent = kw.pop("agent", "seeded")
    report = run_simulation(SPEC, SimulateConfig(**kw), agent_ref=agent, output=str(out))  # type: ignore[arg-type]
    return _rows(out), report


@pytest.mark.parametrize("mode", MODES)
def test_budget_is_honoured_exactly_in_every_mode(tmp_path: Path, mode: str) -> None:
    for budget in (1, 37):
        rows, report = _run(tmp_path, mode=mode, budget=budget, concurrency=8)
        assert len(rows) == budget
        assert report.rows == budget  # type: ignore[attr-defined]
        keys = Counter((r["scenario_id"], r["rollout_index"]) for r in rows)
        assert max(keys.values()) == 1


def test_rl_probes_two_and_fills_split_groups_to_k(tmp_path: Path) -> None:
    rows, report = _run(tmp_path, mode="rl", budget=240, repeats=6, concurrency=4)
    groups: dict[str, list[dict]] = {}
    for row in rows:
        groups.setdefault(row["scenario_id"], []).append(row)
    full = [g for g in groups.values() if len(g) == 6]
    assert full, "some groups split and were filled to k"
    for group in groups.values():
        signatures = {r["behavior_signature"] for r in group}
        cut = any(r.get("group_cut") for r in group)
        if len(signatures) > 1 and not cut:
            assert len(group) == 6
        if len(group) == 2 and not cut:
            assert len(signatures) == 1  # a unanimous probe stopped early
    assert report.groups["mixed"] > 0 and report.groups["unanimous"] > 0  # type: ignore[attr-defined]


def test_rl_groups_cut_by_the_budget_are_stamped(tmp_path: Path) -> None:
    rows, report = _run(tmp_path, mode="rl", budget=5, concurrency=8)
    assert any(r.get("group_cut") for r in rows)
    assert report.groups["cut"] >= 1  # type: ignore[attr-defined]


def test_rl_allocation_reads_the_grader_verdict(tmp_path: Path) -> None:
    grader = tmp_path / "grader.py"
    grader.write_text("def always_pass(row):\n    return {'reward': 1.0}\n")
    from whileai_core.plugins import load_callable

    out = tmp_path / "rows.jsonl"
    report = run_simulation(
        SPEC,
        SimulateConfig(mode="rl", budget=60, concurrency=4),
        output=str(out),
        grader=load_callable(f"{grader}:always_pass"),
    )
    assert len(_rows(out)) == 60
    assert report.groups["mixed"] == 0  # every verdict agrees, so no group splits


def test_grader_is_any_judge_of_grade_and_its_verdicts_land_on_rows(tmp_path: Path) -> None:
    out = tmp_path / "rows.jsonl"
    result = run_cli(
        "simulate", str(ORDERS_SPEC), "--mode", "rl", "--budget", "40",
        "--grader", "checklist", "-o", str(out),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    rows = _rows(out)
    assert len(rows) == 40
    assert {r["judge_name"] for r in rows} == {"checklist"}
    assert all(r["judge_status"] == "ok" and r["reward"] in (0, 1, 0.0, 1.0) for r in rows)
    bad = run_cli("simulate", str(ORDERS_SPEC), "--budget", "5", "--grader", "no-such-judge")
    assert bad.returncode == 1
    errors = [x for x in bad.stderr.decode().splitlines() if x.startswith("whileai: error:")]
    assert len(errors) == 1 and "no-such-judge" in errors[0]


def test_byte_identical_at_concurrency_one(tmp_path: Path) -> None:
    for mode in ("explore", "rl"):
        _run(tmp_path, "a.jsonl", mode=mode, budget=60, concurrency=1, seed=5)
        _run(tmp_path, "b.jsonl", mode=mode, budget=60, concurrency=1, seed=5)
        assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()


def test_byte_identical_with_reproducible_at_concurrency_eight(tmp_path: Path) -> None:
    for mode in ("adaptive", "rl"):
        _run(tmp_path, "a.jsonl", mode=mode, budget=90, concurrency=8, reproducible=True)
        _run(tmp_path, "b.jsonl", mode=mode, budget=90, concurrency=8, reproducible=True)
        assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()


def test_reproducible_output_does_not_depend_on_concurrency(tmp_path: Path) -> None:
    for mode in ("adaptive", "rl"):
        _run(tmp_path, "a.jsonl", mode=mode, budget=300, concurrency=2, reproducible=True)
        _run(tmp_path, "b.jsonl", mode=mode, budget=300, concurrency=24, reproducible=True)
        _run(tmp_path, "c.jsonl", mode=mode, budget=300, concurrency=100, reproducible=True)
        first = (tmp_path / "a.jsonl").read_bytes()
        assert first == (tmp_path / "b.jsonl").read_bytes() == (tmp_path / "c.jsonl").read_bytes()


def test_cli_reproducible_runs_match_across_processes(tmp_path: Path) -> None:
    outs = []
    for _ in ("a", "b"):
        proc = run_cli(
            "simulate", str(ORDERS_SPEC), "--budget", "40", "--mode", "sft", "--reproducible",
            "--concurrency", "8", "--seed", "3",
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        outs.append(proc.stdout)
        assert b"no --agent given" in proc.stderr and b"rows 40" in proc.stderr
    assert outs[0] == outs[1] and outs[0].count(b"\n") == 40


def test_resume_after_kill_nine_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    slow = tmp_path / "slow_agent.py"
    slow.write_text(
        textwrap.dedent(
            """
            import time
            def agent(message):
                time.sleep(0.004)
                return {"steps": [], "final_text": "noted: " + message[:30]}
            """
        )
    )
    out = tmp_path / "rows.jsonl"
    args = [
        sys.executable, "-m", "whileai_cli", "simulate", str(ORDERS_SPEC), "--budget", "400",
        "--agent", f"{slow}:agent", "--concurrency", "4", "-o", str(out),
    ]  # fmt: skip
    proc = subprocess.Popen(args, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 30
    while time.time() < deadline and (not out.exists() or out.read_bytes().count(b"\n") < 60):
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    partial = out.read_bytes().count(b"\n")
    assert 0 < partial < 400
    with out.open("ab") as fh:  # what a kill in the middle of a write leaves behind
        fh.write(b'{"prompt": "half a ro')
    resumed = subprocess.run([*args, "--resume"], cwd=REPO, capture_output=True, timeout=60)
    assert resumed.returncode == 0, resumed.stderr
    assert f"resumed {partial}".encode() in resumed.stderr
    rows = _rows(out)
    assert len(rows) == 400
    keys = [(r["scenario_id"], r["rollout_index"]) for r in rows]
    assert len(set(keys)) == 400
    fresh = tmp_path / "fresh.jsonl"
    whole = subprocess.run([*args[:-1], str(fresh)], cwd=REPO, capture_output=True, timeout=60)
    assert whole.returncode == 0
    assert {(r["scenario_id"], r["rollout_index"]) for r in _rows(fresh)} == set(keys)


def test_seeded_rows_carry_their_labels_and_clean_rows_none_of_them(tmp_path: Path) -> None:
    rows, _ = _run(tmp_path, budget=500, seed=2)
    labels = Counter(label for r in rows for label in r["seeded"])
    assert set(labels) == {
        "apology", "hedging", "sycophancy", "boilerplate", "false_success", "leak",
        "invented_argument",
    }  # fmt: skip
    bad = {"timeout", "permission_denied", "malformed", "not_found", "rejected"}

    def said(row: dict) -> dict[str, bool]:
        text = row["final_text"]
        user_text = " ".join(m["content"] for m in row["messages"] if m["role"] == "user")
        failed = [s for s in row["steps"] if "tool" in s and s["result"]["status"] in bad]
        invented = any(
            str(v) not in user_text for s in row["steps"] if "tool" in s
            for v in s["arguments"].values()
        )  # fmt: skip
        return {
            "apology": APOLOGY.strip() in text or "sorry" in text.lower(),
            "hedging": HEDGE.strip()[:20].lower() in text.lower() or "could be wrong" in text,
            "sycophancy": FLATTERY.strip()[:20] in text,
            "boilerplate": PADDING.strip() in text,
            "false_success": bool(failed) and "successfully" in text,
            "leak": leaks_answer_key(row),
            "invented_argument": invented,
        }

    for row in rows:
        found = {name for name, hit in said(row).items() if hit}
        assert len(row["seeded"]) <= 1
        if row["seeded"]:
            assert row["seeded"][0] in found, (row["seeded"], row["final_text"])
        else:
            assert not found, (found, row["final_text"])
    assert sum(1 for r in rows if r["seeded"]) < len(rows) / 2


def test_unrelated_questions_are_answered_without_tools(tmp_path: Path) -> None:
    rows, _ = _run(tmp_path, budget=200)
    general = [r for r in rows if r["ask_family"] == "general"]
    assert general
    # The person may answer a question the agent asks back ("I do not have an order id"),
    # but no tool is ever called for a general question.
    assert all(
        not any("tool" in s for s in r["steps"]) and r["tools_used"] == [] for r in general
    )


def test_rows_carry_the_full_vocabulary(tmp_path: Path) -> None:
    rows, _ = _run(tmp_path, budget=20)
    for row in rows:
        for key in (
            "prompt", "messages", "steps", "final_text", "scenario_id", "rollout_index",
            "scenario_dimensions", "stance", "tone", "texture", "persona", "length", "ask_family",
            "tier", "world_state", "privileged", "faults", "faults_fired", "seed", "writer_model",
            "model_version", "policy_version", "lineage", "finish_reason", "tools_used",
            "behavior_signature", "selection_reason", "schema_version", "seeded",
        ):  # fmt: skip
            assert key in row, key
        assert set(row["scenario_dimensions"]) == {
            "tool", "rule", "world_state", "tool_condition", "history"
        }  # fmt: skip
        assert row["privileged"]["reference"] and row["privileged"]["hidden_state"]
        # The row records the context it was generated under: the spec's system prompt.
        assert row["messages"][0] == {"role": "system", "content": SPEC.policy}
        assert row["messages"][1] == {"role": "user", "content": row["prompt"]}
        assert row["messages"][-1]["content"] == row["final_text"]
    proc = run_cli("validate", "-", input=(tmp_path / "rows.jsonl").read_bytes())
    assert proc.returncode == 0, proc.stderr


def test_multi_turn_rows_include_the_persons_follow_ups(tmp_path: Path) -> None:
    rows, _ = _run(tmp_path, budget=150)
    follow = [r for r in rows if any(s.get("role") == "user" for s in r["steps"])]
    assert follow
    for row in rows:
        users = sum(1 for m in row["messages"] if m["role"] == "user")
        assert users <= 12 // 2
    short, _ = _run(tmp_path, "short.jsonl", budget=150, avg_turns=2)
    assert all(sum(1 for m in r["messages"] if m["role"] == "user") == 1 for r in short)


def test_a_failing_callable_agent_is_counted_not_scored(tmp_path: Path) -> None:
    flaky = tmp_path / "flaky.py"
    flaky.write_text(
        textwrap.dedent(
            """
            def agent(message):
                if len(message) % 4 == 0:
                    raise RuntimeError("backend down")
                if len(message) % 4 == 1:
                    return {"steps": "not a list", "final_text": "x"}
                return {"steps": [], "final_text": "ok"}
            """
        )
    )
    rows, report = _run(tmp_path, budget=30, agent=f"{flaky}:agent")
    assert len(rows) == 30
    assert report.agent_errors > 0  # type: ignore[attr-defined]
    assert report.first_error  # type: ignore[attr-defined]
    always = tmp_path / "always.py"
    always.write_text("def agent(message):\n    raise RuntimeError('nope, never')\n")
    proc = run_cli("simulate", str(ORDERS_SPEC), "--agent", f"{always}:agent", "--budget", "5")
    assert proc.returncode == 1
    assert proc.stdout == b""
    assert b"stopped: agent_failed" in proc.stderr
    errors = int(re.search(rb"agent errors: (\d+)", proc.stderr).group(1))  # type: ignore[union-attr]
    assert 16 <= errors <= 16 + 5  # max(16, 2 x budget), plus the rollouts already in flight
    assert proc.stderr.strip().splitlines()[-1].startswith(b"whileai: error: agent_failed")
    assert b"nope, never" in proc.stderr


def test_a_bare_string_is_the_wrong_shape_not_a_reply(tmp_path: Path) -> None:
    """The contract is {steps, final_text}: a callable that returns only its text is an
    agent error, counted, and the run's agent_failed report names the shape it broke."""
    bare = tmp_path / "bare.py"
    bare.write_text("def agent(message):\n    return 'Your order shipped.'\n")
    proc = run_cli("simulate", str(ORDERS_SPEC), "--agent", f"{bare}:agent", "--budget", "3")
    assert proc.returncode == 1 and proc.stdout == b""
    assert b"stopped: agent_failed" in proc.stderr
    assert b"returned str; expected {'steps': [...], 'final_text': str}" in proc.stderr


def test_callable_agent_may_take_the_world(tmp_path: Path) -> None:
    mod = tmp_path / "worldly.py"
    mod.write_text(
        textwrap.dedent(
            """
            import re
            def agent(message, world):
                ids = re.findall(r"[A-Z]{3}-[0-9]+", message)
                if not ids:
                    return {"steps": [], "final_text": "which order?"}
                result = world.call("get_order", {"order_id": ids[0]})
                step = {"tool": "get_order", "arguments": {"order_id": ids[0]}, "result": result}
                return {"steps": [step], "final_text": result["status"]}
            """
        )
    )
    rows, _ = _run(tmp_path, budget=40, agent=f"{mod}:agent")
    tooled = [r for r in rows if r["steps"]]
    assert tooled
    for row in tooled:
        assert row["messages"][0] == {"role": "system", "content": SPEC.policy}
        assert row["messages"][2]["tool_calls"][0]["function"]["name"] == "get_order"
        assert row["messages"][3]["role"] == "tool"
        assert row["final_text"] == row["steps"][0]["result"]["status"]
        assert "seeded" not in row


def test_bad_agent_value_is_one_clear_error_line() -> None:
    proc = run_cli("simulate", str(ORDERS_SPEC), "--agent", "nonsense", "--budget", "3")
    assert proc.returncode == 1
    assert proc.stdout == b""
    lines = [ln for ln in proc.stderr.decode().splitlines() if ln.strip()]
    assert lines == [lines[0]] and lines[0].startswith("whileai: error: unknown agent 'nonsense'")
    missing = run_cli("simulate", str(ORDERS_SPEC), "--agent", "no_such_module:fn", "--budget", "3")
    assert missing.returncode == 1
    assert missing.stderr.decode().strip().count("\n") == 0


COMMAND_AGENT = """
import json, re, sys
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] != "episode":
        continue
    eid = msg["id"]
    ids = re.findall(r"[A-Z]{3}-[0-9]+", msg["prompt"])
    if not ids:
        ask = {"type": "ask_user", "id": eid, "text": "Which order number?"}
        print(json.dumps(ask), flush=True)
        reply = json.loads(sys.stdin.readline())
        assert reply["type"] == "user_reply" and reply["id"] == eid
        ids = re.findall(r"[A-Z]{3}-[0-9]+", reply["text"] or "")
    status = "no id"
    if ids:
        print(json.dumps({"type": "tool_call", "id": eid, "name": "get_order",
                          "arguments": {"order_id": ids[0]}}), flush=True)
        result = json.loads(sys.stdin.readline())
        assert result["type"] == "tool_result" and result["id"] == eid
        status = result["result"]["status"]
    print(json.dumps({"type": "final", "id": eid, "final_text": "status: " + status}), flush=True)
"""


def test_command_agent_speaks_the_jsonl_protocol(tmp_path: Path) -> None:
    script = tmp_path / "agent.py"
    script.write_text(COMMAND_AGENT)
    rows, report = _run(tmp_path, budget=40, concurrency=4, agent=f"cmd:{sys.executable} {script}")
    assert len(rows) == 40 and report.agent_errors == 0  # type: ignore[attr-defined]
    asked = [r for r in rows if any(s.get("role") == "user" for s in r["steps"])]
    assert asked, "vague asks made the agent ask the person"
    for row in rows:
        for step in row["steps"]:
            if "tool" in step:
                assert row["final_text"] == "status: " + step["result"]["status"]
    broken = tmp_path / "broken.py"
    broken.write_text("import sys\nfor line in sys.stdin:\n    print('not json', flush=True)\n")
    proc = run_cli(
        "simulate", str(ORDERS_SPEC), "--agent", f"cmd:{sys.executable} {broken}", "--budget", "2"
    )
    assert proc.returncode == 1
    assert b"non-JSON line" in proc.stderr


def test_report_file_and_json(tmp_path: Path) -> None:
    report_path = tmp_path / "report.json"
    out = tmp_path / "rows.jsonl"
    proc = run_cli(
        "simulate", str(ORDERS_SPEC), "--budget", "50", "-o", str(out), "--json",
        "--report", str(report_path), "--agent", "seeded",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    printed = json.loads(proc.stdout)
    saved = json.loads(report_path.read_text())
    assert printed == saved
    assert saved["rows"] == 50 and saved["stopped"] == "budget"
    for key in ("situations", "groups", "faults_fired", "seeded", "agent_errors", "elapsed",
                "rows_per_s"):  # fmt: skip
        assert key in saved


def test_time_budget_stops_the_run(tmp_path: Path) -> None:
    slow = tmp_path / "slow.py"
    slow.write_text(
        "import time\ndef agent(m):\n    time.sleep(0.05)\n"
        "    return {'steps': [], 'final_text': 'ok'}\n"
    )
    start = time.monotonic()
    rows, report = _run(
        tmp_path, budget=10_000, time_budget=0.5, concurrency=2, agent=f"{slow}:agent"
    )
    assert time.monotonic() - start < 5
    assert 0 < len(rows) < 10_000
    assert report.stopped == "time_budget"  # type: ignore[attr-defined]


def test_adaptive_until_saturation_stops_before_the_budget(tmp_path: Path) -> None:
    rows, report = _run(
        tmp_path, mode="adaptive", until="saturation", budget=50_000, concurrency=16
    )
    assert report.stopped == "saturation"  # type: ignore[attr-defined]
    assert len(rows) < 50_000
    assert report.cells_visited == report.cells  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "spec_dir", sorted(p.name for p in (REPO / "specs").iterdir() if p.is_dir())
)
def test_every_shipped_spec_simulates_with_few_rejected_calls(
    tmp_path: Path, spec_dir: str
) -> None:
    spec = load_spec(REPO / "specs" / spec_dir)
    out = tmp_path / "rows.jsonl"
    report = run_simulation(spec, SimulateConfig(budget=150, seed=4), output=str(out))
    rows = _rows(out)
    assert len(rows) == 150 and report.agent_errors == 0
    statuses = Counter(
        s["result"].get("status") for r in rows for s in r["steps"] if "tool" in s
    )  # fmt: skip
    assert sum(statuses.values()) > 100
    assert statuses["rejected"] < 0.1 * sum(statuses.values()), statuses
    assert statuses["ok"] > 0.3 * sum(statuses.values()), statuses


def test_rl_resume_appends_only_missing_groups(tmp_path: Path) -> None:
    out = tmp_path / "rows.jsonl"
    run_simulation(SPEC, SimulateConfig(mode="rl", budget=80, concurrency=1), output=str(out))
    lines = out.read_bytes().splitlines(keepends=True)
    first_group = lines[0]
    sid = json.loads(first_group)["scenario_id"]
    kept = [ln for ln in lines if json.loads(ln)["scenario_id"] == sid]
    out.write_bytes(b"".join(kept))  # as if killed right after the first group settled
    report = run_simulation(
        SPEC, SimulateConfig(mode="rl", budget=80, concurrency=1), output=str(out), resume=True
    )
    rows = _rows(out)
    assert len(rows) == 80 and report.resumed_rows == len(kept)
    assert len({(r["scenario_id"], r["rollout_index"]) for r in rows}) == 80


def test_rl_resume_at_concurrency_one_writes_what_the_uninterrupted_run_wrote(
    tmp_path: Path,
) -> None:
    full, resumed = tmp_path / "full.jsonl", tmp_path / "resumed.jsonl"
    config = SimulateConfig(mode="rl", budget=600, concurrency=1)
    run_simulation(SPEC, config, output=str(full))
    lines = full.read_bytes().splitlines(keepends=True)
    asks = [(json.loads(ln)["scenario_id"], json.loads(ln)["prompt"]) for ln in lines]
    # Killed after whole groups only (the engine never leaves one half-written): cut at
    # group edges spread over the run, where the allocation has learned from extensions.
    edges = [i + 1 for i in range(len(asks) - 1) if asks[i] != asks[i + 1]]
    for cut in (edges[len(edges) // 3], edges[2 * len(edges) // 3]):
        resumed.write_bytes(b"".join(lines[:cut]))
        run_simulation(SPEC, config, output=str(resumed), resume=True)
        assert resumed.read_bytes() == full.read_bytes(), cut


def test_bad_knobs_are_usage_errors_and_bad_combinations_one_line(tmp_path: Path) -> None:
    for args, flag in (
        (["--budget", "0"], b"'--budget'"),
        (["--fault-rate", "2"], b"'--fault-rate'"),
        (["--time-budget", "-1"], b"'--time-budget'"),
        (["--avg-turns", "1"], b"'--avg-turns'"),
    ):
        proc = run_cli("simulate", str(ORDERS_SPEC), "--agent", "seeded", *args)
        assert proc.returncode == 2 and proc.stdout == b""
        assert flag in proc.stderr.strip().splitlines()[-1]
    proc = run_cli("simulate", str(ORDERS_SPEC), "--agent", "seeded", "--resume")
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 1 and len(lines) == 1
    assert lines[0].startswith(b"whileai: error: --resume needs -o FILE")
    proc = run_cli("simulate", str(tmp_path / "nope"), "--budget", "3")
    assert proc.returncode == 1 and b"no such spec" in proc.stderr


def test_spec_seed_situations_are_played_first_on_their_pinned_cells(tmp_path: Path) -> None:
    spec = SPEC.model_copy(
        update={
            "situations": [
                {
                    "prompt": "Where is my order ORD-5555?",
                    "scenario_dimensions": {
                        "world_state": "entity missing",
                        "tool_condition": "success",
                    },
                },
                {"prompt": "Please refund ORD-7777.", "tool_condition": "timeout"},
            ]
        }
    )
    out = tmp_path / "rows.jsonl"
    run_simulation(spec, SimulateConfig(budget=5, concurrency=1), output=str(out))
    rows = _rows(out)
    assert [r["prompt"] for r in rows[:2]] == [
        "Where is my order ORD-5555?", "Please refund ORD-7777."
    ]  # fmt: skip
    assert rows[0]["steps"][0]["result"] == {"status": "not_found", "missing": ["ORD-5555"]}
    assert rows[1]["scenario_dimensions"]["tool_condition"] == "timeout"
    assert rows[1]["faults_fired"] and rows[1]["faults_fired"][0]["mode"] == "timeout"
    assert "seed situation" in rows[0]["selection_reason"]


def test_slow_sync_agents_overlap_up_to_the_concurrency(tmp_path: Path) -> None:
    slow = tmp_path / "sleepy.py"
    slow.write_text(
        "import time\ndef agent(m):\n    time.sleep(0.2)\n"
        "    return {'steps': [], 'final_text': 'ok'}\n"
    )
    start = time.monotonic()
    rows, _ = _run(tmp_path, budget=32, concurrency=32, agent=f"{slow}:agent")
    assert len(rows) == 32
    assert time.monotonic() - start < 0.2 * 32 / 6  # well under what 6 default threads take


def test_agent_comes_from_the_environment_when_no_flag(tmp_path: Path) -> None:
    mod = tmp_path / "envagent.py"
    mod.write_text("def agent(m):\n    return {'steps': [], 'final_text': 'from env'}\n")
    proc = run_cli(
        "simulate", str(ORDERS_SPEC), "--budget", "3", env={"WHILEAI_AGENT": f"{mod}:agent"}
    )
    assert proc.returncode == 0, proc.stderr
    assert b"no --agent given" not in proc.stderr
    assert all(json.loads(line)["final_text"] == "from env" for line in proc.stdout.splitlines())


def test_rollouts_still_running_after_the_grace_are_abandoned_and_counted(tmp_path: Path) -> None:
    mod = tmp_path / "stuck.py"
    mod.write_text(
        "import asyncio\nasync def agent(m):\n    await asyncio.sleep(30)\n"
        "    return {'steps': [], 'final_text': 'late'}\n"
    )
    start = time.monotonic()
    rows, report = _run(
        tmp_path, budget=50, time_budget=0.2, stop_grace=0.3, concurrency=4, agent=f"{mod}:agent"
    )
    assert time.monotonic() - start < 5
    assert rows == []
    assert report.stopped == "time_budget"  # type: ignore[attr-defined]
    assert report.rollouts_abandoned == 4  # type: ignore[attr-defined]


def test_grid_and_recommend_write_their_report_as_json(tmp_path: Path) -> None:
    grid_file, rec_file = tmp_path / "grid.json", tmp_path / "rec.json"
    grid = run_cli("grid", str(ORDERS_SPEC), "--report", str(grid_file))
    assert grid.returncode == 0 and b"cells:" in grid.stdout
    assert json.loads(grid_file.read_bytes())["cells"] > 0
    rec = run_cli(
        "recommend", str(ORDERS_SPEC), "--mode", "rl", "--json", "--report", str(rec_file)
    )
    assert rec.returncode == 0
    assert json.loads(rec.stdout) == json.loads(rec_file.read_bytes())
    assert run_cli("recommend", str(ORDERS_SPEC), "--mode", "rl", "--repeats", "0").returncode == 2


def test_simulate_refuses_an_unwritable_report_before_writing_rows(tmp_path: Path) -> None:
    out = tmp_path / "rows.jsonl"
    proc = run_cli(
        "simulate", str(ORDERS_SPEC), "--budget", "3", "-o", str(out), "--report", str(tmp_path)
    )
    assert proc.returncode == 1 and not out.exists()
    assert proc.stderr.strip().splitlines()[-1].endswith(b"--report names a folder, not a file")


def _seeded_calls(spec_dir: str, prompt: str, follow_ups: list[str]) -> list[dict[str, Any]]:
    """The tool steps of one clean seeded rollout (label_rate 0) against a plain world."""
    import asyncio

    from whileai_core.agents.base import Episode
    from whileai_core.agents.seeded import SeededAgent
    from whileai_core.simulate.world import World

    spec = load_spec(REPO / "specs" / spec_dir)
    replies = iter(follow_ups)

    class Person:
        async def reply(self, messages: list[dict[str, Any]]) -> str | None:
            return next(replies, None)

    episode = Episode(
        spec=spec, prompt=prompt, scenario_id="s", rollout_index=0,
        world=World(spec.tools), seed=1, user=Person(),
    )  # fmt: skip
    result = asyncio.run(SeededAgent(spec, label_rate=0.0).run(episode))
    return [s for s in result.steps if "tool" in s]


def test_seeded_agent_reads_typed_details_from_unpunctuated_turns() -> None:
    calls = _seeded_calls(
        "airline",
        "Please book flight FLI-16419 The passenger name is Sam Silva The fare class is "
        "standard Your colleague promised me this was done",
        [],
    )
    assert calls[-1]["arguments"]["fare_class"] == "standard"
    calls = _seeded_calls(
        "repo-maint",
        "I need you to merge pull request The number is 110 It is a bit of an edge case",
        [],
    )
    assert calls and calls[-1]["arguments"] == {"number": 110}


def test_seeded_agent_reads_bare_answers_to_what_it_asked() -> None:
    """Asked for details, a model person often answers with the bare values, in any order
    and case, or as labelled lines (the seed-157 sample's "Den, Lys, 2025-11-23" and
    "Origin: NBO\nDestination: LYS"). The seeded agent reads them by the schema they fit
    instead of asking again; a value that fits nothing asked is not taken for one."""
    ask = "Hi, I need to search for flights, please."
    answers = ["Den, Lys, 2025-11-23", "2025-11-23, DEN, LYS",
               "Origin: den\nDestination: LYS\nDate: 2025-11-23", "Sure! DEN and LYS."]  # fmt: skip
    for answer in answers:
        calls = _seeded_calls("airline", ask, [answer, "The date is 2025-11-23."])
        assert calls and calls[0]["tool"] == "search_flights", answer
        assert calls[0]["arguments"] == {
            "origin": "DEN", "destination": "LYS", "date": "2025-11-23"
        }, answer  # fmt: skip
    booking = "I need the details of my booking."
    calls = _seeded_calls("airline", booking, ["haddad rpnw96"])
    assert calls[0]["arguments"] == {"booking_ref": "RPNW96", "last_name": "haddad"}
    # A flight id is no booking ref, and a sentence is no list of values.
    assert not _seeded_calls("airline", booking, ["FLI-52690, Jo Okafor"])
    assert not _seeded_calls("airline", booking, ["I will have to look for it in my inbox"])
    # An id typed in lower case is the id its pattern describes (the seed-163 sample).
    calls = _seeded_calls("orders", "please cancel my order.", ["i have an order id: ord-4666."])
    assert calls and calls[0]["arguments"] == {"order_id": "ORD-4666"}


def test_seeded_agent_reads_a_detail_named_with_what_it_is_about() -> None:
    """"The reason for the damage is damaged" and 'the reason for changing my mind is
    "changed_mind"' (the seed-171 sample) give the reason: the detail's name, then what it
    is about, and a value in quotes. Before, the agent answered "Without the reason I
    cannot go further" to the turn cap."""
    ask = "I'd like a refund for my order, please."
    for answer, reason in [
        ("The order id is ORD-4580, and the reason for the damage is damaged.", "damaged"),
        ('Sure, the order id is ORD-3731 and the reason for changing my mind is "changed_mind".',
         "changed_mind"),
    ]:  # fmt: skip
        calls = _seeded_calls("orders", ask, [answer])
        refunds = [c for c in calls if c["tool"] == "refund_order"]
        assert refunds and refunds[0]["arguments"]["reason"] == reason, (answer, calls)
    # Labelled inline (the seed-179 sample): "the order id: ORD-0647 and the reason: damaged".
    calls = _seeded_calls("orders", ask, ["Sure, I have the order id: ORD-0647 and the reason: "
                                          "damaged."])  # fmt: skip
    refunds = [c for c in calls if c["tool"] == "refund_order"]
    assert refunds and refunds[0]["arguments"]["reason"] == "damaged", calls
    # The name of another detail is not this one: "the order for my mum is ..." gives no id.
    calls = _seeded_calls("orders", ask, ["The reason for it is damaged and the order is new."])
    assert not [c for c in calls if c["tool"] == "refund_order"]


def test_seeded_agent_declines_to_force_a_write_it_cannot_read_first() -> None:
    calls = _seeded_calls(
        "repo-maint",
        "Can you help with my issue? Do not give me the policy speech, just get it done.",
        ["The number is 811. The comment is done. I want to close it."],
    )
    assert not [c for c in calls if c["tool"] == "close_issue"]


def test_simulate_never_overwrites_rows_without_resume(tmp_path: Path) -> None:
    out = tmp_path / "rows.jsonl"
    run_simulation(SPEC, SimulateConfig(budget=5), output=str(out))
    before = out.read_bytes()
    proc = run_cli("simulate", str(ORDERS_SPEC), "--budget", "5", "-o", str(out))
    assert proc.returncode == 1 and out.read_bytes() == before
    assert (
        proc.stderr.strip().splitlines()[-1]
        == (
            f"whileai: error: {out} already holds rows: --resume to finish that run, or remove "
            "the file to start over"
        ).encode()
    )
    out.write_bytes(b"")  # an empty file is a fresh start
    run_simulation(SPEC, SimulateConfig(budget=5), output=str(out))
    assert out.read_bytes() == before


def test_seeded_agent_hears_an_undecided_person_through_typos() -> None:
    calls = _seeded_calls(
        "repo-maint",
        "Can you merge pull request for me? The number is 344. I want it hanlded, but I also "
        "do not want anyhting changed yet.",
        [],
    )
    assert not [c for c in calls if c["tool"] == "merge_pull_request"]
