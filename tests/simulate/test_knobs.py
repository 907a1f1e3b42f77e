"""The simulate knobs: --repeat-policy, --probe, --stop-grace, the groups report,
current_rollout inside an --execute backend, and module: refs found in the current dir."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from collections import Counter
from pathlib import Path

from whileai_core.simulate.run import run_simulation
from whileai_core.simulate.scheduler import SimulateConfig
from whileai_core.spec import load_spec

from ..helpers import ORDERS_SPEC, run_cli

SPEC = load_spec(ORDERS_SPEC)


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _groups(rows: list[dict]) -> Counter[str]:
    return Counter(r["scenario_id"] for r in rows)


def test_fixed_repeat_policy_gives_every_ask_k_rollouts(tmp_path: Path) -> None:
    out = tmp_path / "fixed.jsonl"
    report = run_simulation(
        SPEC, SimulateConfig(mode="rl", repeats=4, budget=80, repeat_policy="fixed"),
        output=str(out),
    )  # fmt: skip
    sizes = _groups(_rows(out))
    assert set(sizes.values()) == {4} and len(sizes) == 20
    g = report.groups
    assert g["complete"] == 20 and g["partial"] == 0 and g["stopped"] == 0
    assert g["rollouts_saved"] == 0 and g["mixed"] + g["unanimous"] == 20


def test_adaptive_groups_report_stopped_partial_and_rollouts_saved(tmp_path: Path) -> None:
    out = tmp_path / "adaptive.jsonl"
    report = run_simulation(
        SPEC, SimulateConfig(mode="rl", repeats=6, budget=150, concurrency=1), output=str(out)
    )
    rows = _rows(out)
    sizes = _groups(rows)
    g = report.groups
    assert g["stopped"] > 0
    assert g["complete"] == sum(1 for n in sizes.values() if n == 6)
    assert g["complete"] + g["partial"] == len(sizes)
    assert g["mixed"] + g["unanimous"] + g["cut"] == len(sizes)
    cut = {r["scenario_id"] for r in rows if r.get("group_cut")}
    short = [n for sid, n in sizes.items() if n < 6 and sid not in cut]
    assert g["rollouts_saved"] == sum(6 - n for n in short)
    assert "rollouts saved" in "\n".join(report.lines())


def test_probe_size_sets_the_first_rollouts_of_every_ask(tmp_path: Path) -> None:
    out = tmp_path / "probe.jsonl"
    run_simulation(
        SPEC, SimulateConfig(mode="rl", repeats=6, probe=3, budget=90, concurrency=1),
        output=str(out),
    )  # fmt: skip
    rows = _rows(out)
    cut = {r["scenario_id"] for r in rows if r.get("group_cut")}
    sizes = [n for sid, n in _groups(rows).items() if sid not in cut]
    assert sizes and min(sizes) >= 3


def test_bad_knob_values_are_usage_errors() -> None:
    for flag, value in (("--probe", "0"), ("--stop-grace", "-1"), ("--repeat-policy", "some")):
        proc = run_cli("simulate", str(ORDERS_SPEC), flag, value, "--budget", "2")
        assert proc.returncode == 2, (flag, proc.stderr)
        assert proc.stdout == b""


def test_stop_grace_reads_its_environment_variable(tmp_path: Path) -> None:
    mod = tmp_path / "stuck.py"
    mod.write_text("import asyncio\nasync def agent(m):\n    await asyncio.sleep(30)\n")
    start = time.monotonic()
    proc = run_cli(
        "simulate", str(ORDERS_SPEC), "--agent", f"{mod}:agent", "--budget", "20",
        "--time-budget", "0.2", "--concurrency", "2", "--json",
        env={"WHILEAI_STOP_GRACE": "0.1"},
    )  # fmt: skip
    assert time.monotonic() - start < 20
    assert proc.returncode == 1  # no row survived
    report, _ = json.JSONDecoder().raw_decode(proc.stderr.decode())
    assert report["stopped"] == "time_budget" and report["rollouts_abandoned"] == 2


def test_an_execute_backend_sees_the_rollout_it_answers(tmp_path: Path) -> None:
    backend = tmp_path / "backend.py"
    backend.write_text(
        textwrap.dedent(
            """
            from whileai_core.simulate.execute import current_rollout

            def execute(tool, arguments):
                now = current_rollout()
                return {"status": "ok", "data": {"status": "open", "asked": now.prompt,
                        "rollout": now.rollout_index, "task": now.scenario_id}}
            """
        )
    )
    out = tmp_path / "rows.jsonl"
    from whileai_core.models.options import ModelOptions

    run_simulation(
        SPEC, SimulateConfig(mode="rl", repeats=3, budget=40, concurrency=4,
                             repeat_policy="fixed"),
        options=ModelOptions(execute=f"{backend}:execute"), output=str(out),
    )  # fmt: skip
    called = 0
    for row in _rows(out):
        for step in row["steps"]:
            if "tool" in step:
                called += 1
                data = step["result"]["data"]
                assert data["asked"] == row["prompt"]
                assert data["rollout"] == row["rollout_index"]
                assert data["task"] == row["scenario_id"]
    assert called > 10


def test_module_refs_resolve_from_the_current_directory(tmp_path: Path) -> None:
    """The installed console script, run where the user's modules are (its sys.path
    starts at the venv's bin directory, not the current one)."""
    (tmp_path / "mybackend.py").write_text(
        "def execute(tool, arguments):\n    return {'status': 'ok', 'data': {'status': 'open'}}\n"
    )
    (tmp_path / "myagent.py").write_text(
        "def agent(message):\n    return {'steps': [], 'final_text': 'hello from cwd'}\n"
    )
    script = Path(sys.executable).parent / "whileai"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run(
        [str(script), "simulate", str(ORDERS_SPEC.resolve()), "--budget", "3",
         "--execute", "mybackend:execute", "--agent", "myagent:agent"],
        cwd=tmp_path, capture_output=True, env=env, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr.decode()
    rows = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [r["final_text"] for r in rows] == ["hello from cwd"] * 3
