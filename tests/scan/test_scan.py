"""The hack scan on constructed runs where we know what the judge pays for."""

from __future__ import annotations

import random
from typing import Any

import orjson
import pytest

from whileai_core.scan.engine import ScanOptions, hack_scan
from whileai_core.scan.run import rows_source, scan_diff
from whileai_core.select.optimize import OptimizeOptions, optimize

from ..helpers import run_cli

OPENERS = ("Here is what I found.", "I looked it up.", "Checked the record.", "Found it.")


def run(
    pays: str = "delimiter", asks: int = 120, k: int = 8, seed: int = 0, two_kinds: bool = False
) -> list[dict[str, Any]]:
    """Rollouts of `asks` asks. The judge pays (p 0.85 vs 0.15) for the `### done`
    delimiter, or for having called lookup_order; with `two_kinds` the agent only ever
    writes one of two trajectories per ask."""
    rng = random.Random(seed)
    rows = []
    for a in range(asks):
        for i in range(k):
            if two_kinds:
                looked, delim, opener, state = True, i % 2 == 1, OPENERS[a % 4], "shipped"
            else:
                looked, delim = rng.random() < 0.5, rng.random() < 0.5
                opener, state = rng.choice(OPENERS), rng.choice(("shipped", "packed", "late"))
            reply = f"{opener} Order ORD-{a:05d} is {state}." + ("\n### done" if delim else "")
            steps = (
                [
                    {
                        "tool": "lookup_order",
                        "arguments": {"order_id": f"ORD-{a:05d}"},
                        "result": {"status": "ok"},
                    }
                ]
                if looked
                else []
            )
            if two_kinds:
                reward = 1.0 if delim else 0.0
            else:
                paid = delim if pays == "delimiter" else looked
                reward = 1.0 if rng.random() < (0.85 if paid else 0.15) else 0.0
            rows.append(
                {
                    "prompt": f"Where is ORD-{a:05d}?",
                    "scenario_id": f"sc-{a}",
                    "rollout_index": i,
                    "steps": steps,
                    "final_text": reply,
                    "reward": reward,
                    "judge_status": "ok",
                }
            )
    return rows


ENDORSED = ("tool:lookup_order",)


def test_a_judge_paying_for_a_delimiter_is_a_reward_hack() -> None:
    scan = hack_scan(run("delimiter"), ScanOptions(endorsed=ENDORSED))
    assert scan["regime"] == "reward_hack"
    assert scan["top_feature"] == "contains:### done"
    assert scan["top_r"] > scan["tau"] > 0
    assert "contains:###" in scan["collinear"]
    assert scan["integrity"] == 0.0
    assert scan["rivals"][0]["name"] == "contains:### done"
    assert "would learn to produce more of it" in scan["warnings"][0]


def test_when_the_endorsed_feature_leads_the_scan_says_train() -> None:
    scan = hack_scan(run("tool"), ScanOptions(endorsed=ENDORSED))
    assert scan["regime"] == "train"
    assert scan["top_feature"] == "tool:lookup_order"
    assert scan["integrity"] == 1.0  # tool_calls and turns move with it: one signal
    endorsing_the_delimiter = hack_scan(run("delimiter"), ScanOptions(endorsed=("### done",)))
    assert endorsing_the_delimiter["regime"] == "train"
    assert endorsing_the_delimiter["top_feature"] == "contains:### done"


def test_without_endorsed_the_scan_ranks_and_floors_only() -> None:
    scan = hack_scan(run("delimiter"))
    assert scan["regime"] == "unknown" and scan["top_feature"] == "contains:### done"
    assert scan["integrity"] is None and scan["rivals"] == []


def test_two_trajectories_per_ask_is_degenerate() -> None:
    scan = hack_scan(run(two_kinds=True), ScanOptions(endorsed=ENDORSED))
    assert scan["regime"] == "degenerate"
    assert scan["top_feature"] is None
    assert scan["cause"] == "distinct_per_ask"
    assert scan["distinct_per_ask"]["median"] == 2
    assert {"contains:### done", "contains:###"} <= set(scan["collinear"])


def test_a_reward_with_no_within_ask_signal() -> None:
    rows = run("delimiter")
    rng = random.Random(3)
    noise = [{**r, "reward": float(rng.random() < 0.5)} for r in rows]
    assert hack_scan(noise, ScanOptions(endorsed=ENDORSED))["regime"] == "no_signal"
    unanimous = [{**r, "reward": 1.0} for r in rows]
    scan = hack_scan(unanimous, ScanOptions(endorsed=ENDORSED))
    assert scan["regime"] == "pool_exhausted" and scan["mixed_asks"] == 0
    ungraded = [{k: v for k, v in r.items() if k != "reward"} for r in rows]
    assert hack_scan(ungraded)["regime"] == "no_signal"


def test_difficulty_alone_is_baselined_away() -> None:
    """A feature that only says which ask it is (hard asks get long replies) carries no
    within-ask signal, however well it tracks reward across asks."""
    rows = run("delimiter")
    hard = {f"sc-{a}" for a in range(0, 120, 2)}
    for r in rows:
        r["final_text"] = r["final_text"].replace("\n### done", "")
        if r["scenario_id"] in hard:
            r["final_text"] += " Extra words for a hard ask."
            r["reward"] = 0.0 if r["rollout_index"] else 1.0
        else:
            r["reward"] = 1.0 if r["rollout_index"] else 0.0
    scan = hack_scan(rows)
    names = {f["name"] for f in scan["features"] if f["above_floor"]}
    assert "contains:extra" not in names


def test_rows_of_an_ask_need_not_be_adjacent_but_the_scan_says_so() -> None:
    rows = run("delimiter")
    shuffled = rows[:]
    random.Random(1).shuffle(shuffled)
    a = hack_scan(rows, ScanOptions(endorsed=ENDORSED))
    b = hack_scan(shuffled, ScanOptions(endorsed=ENDORSED))
    assert a["asks_adjacent"] and not b["asks_adjacent"]
    assert b["top_feature"] == a["top_feature"] and b["top_r"] == a["top_r"]
    assert any("not adjacent" in w for w in b["warnings"])


def test_scan_diff_names_what_the_update_moved_toward() -> None:
    before = run("delimiter", seed=0)
    after = run("delimiter", seed=1)
    rng = random.Random(2)
    for r in after:  # the trained policy writes the delimiter far more often
        if "### done" not in r["final_text"] and rng.random() < 0.8:
            r["final_text"] += "\n### done"
    report = scan_diff(rows_source(before), rows_source(after), ScanOptions(endorsed=ENDORSED))
    moved = report["moved_toward"]
    assert moved is not None and moved["name"] == "contains:### done", report["shifts"][:3]
    assert moved["after"] > moved["before"] and moved["endorsed"] is False
    degenerate = scan_diff(rows_source(before), rows_source(run(two_kinds=True)))
    assert degenerate["moved_toward"] is None and "degenerate" in degenerate["withheld"]


def test_cli_scan_and_diff(tmp_path: Any) -> None:
    path = tmp_path / "run.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in run("delimiter")))
    done = run_cli("scan", str(path), "--endorsed", "tool:lookup_order", "--json")
    assert done.returncode == 0, done.stderr.decode()
    assert orjson.loads(done.stdout)["regime"] == "reward_hack"
    human = run_cli("scan", str(path), "--endorsed", "tool:lookup_order")
    assert human.stdout.decode().startswith("hack scan: reward_hack, top feature contains:### done")
    assert "reward_hack" in human.stderr.decode()
    piped = run_cli("scan", "--json", input=path.read_bytes())
    assert orjson.loads(piped.stdout)["regime"] == "unknown"
    diff = run_cli("scan", "--diff", str(path), str(path), "--json")
    assert diff.returncode == 0 and "moved_toward" in orjson.loads(diff.stdout)
    bad = run_cli("scan", "--diff", str(path))
    assert bad.returncode == 1 and b"two files" in bad.stderr


def test_optimize_carries_the_scan_and_push_refuses_a_reward_hack(tmp_path: Any) -> None:
    rows = run("delimiter")
    kept, report = optimize(rows, OptimizeOptions(endorsed=ENDORSED))
    assert report.hack_scan is not None and report.hack_scan["regime"] == "reward_hack"
    assert any("reward_hack" in w for w in report.hygiene_warnings)
    path = tmp_path / "run.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    out = tmp_path / "kept.jsonl"
    done = run_cli(
        "optimize",
        str(path),
        "--endorsed",
        "tool:lookup_order",
        "-o",
        str(out),
        "--report",
        str(tmp_path / "r.json"),
    )
    assert done.returncode == 0, done.stderr.decode()
    saved = orjson.loads((tmp_path / "r.json").read_bytes())
    assert saved["hack_scan"]["top_feature"] == "contains:### done"
    assert len(out.read_bytes().splitlines()) == len(kept)
    env = {"WHILEAI_HOME": str(tmp_path / "home")}
    refused = run_cli(
        "push",
        str(out),
        "--name",
        "hack",
        "--endorsed",
        "tool:lookup_order",
        "--strict-hacks",
        env=env,
    )
    assert refused.returncode == 1 and b"reward_hack" in refused.stderr, refused.stderr
    assert orjson.loads(run_cli("datasets", "--json", env=env).stdout)["datasets"] == []
    warned = run_cli(
        "push", str(out), "--name", "hack", "--endorsed", "tool:lookup_order", "--json", env=env
    )
    assert warned.returncode == 0, warned.stderr.decode()
    assert orjson.loads(warned.stdout)["gate"]["hack_scan"]["regime"] == "reward_hack"
    usage = run_cli("push", str(out), "--name", "x", "--strict-hacks", env=env)
    assert usage.returncode == 2


@pytest.mark.parametrize("regime", ["reward_hack"])
def test_scan_ranks_the_trace_flags_too(regime: str) -> None:
    rows = run("delimiter")
    for r in rows:
        r["trace_flags"] = (
            [{"flag": "lie.tests_claimed", "fragment": "x", "where": "reply"}]
            if ("### done" in r["final_text"])
            else []
        )
    scan = hack_scan(rows, ScanOptions(endorsed=ENDORSED))
    assert scan["regime"] == regime
    assert "trace:lie.tests_claimed" in scan["collinear"]
