"""One answer-key leak check: on the original SDK's own seeded rows, the rows the conduct
judge fails for a leak (`conduct:no_leak` = 0) are exactly the rows export refuses
(`quotes_privileged`), push leaves out, the audit names and selection drops, and push's
stored set agrees with `report`: every passing row is stored, and only leak rows are not.

The rows come from the SDK in its own venv (`seeded_agent`, which plants `leak` on some
rollouts: the reply quotes the reference and the hidden state), plus the SDK fixture every
compatibility test reads; each stage runs as a user runs it, through the real CLI.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import orjson

from whileai_core.metrics.tally import passed, reward_of
from whileai_core.select.records import Recorder

from .helpers import SDK_ROWS, run_cli, sdk_seeded_rows

Key = tuple[str, str]


def _rows(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def _key(prompt: Any, reply: Any) -> Key:
    """A row by what was asked and what the agent finally said (the SDK repeats scenario
    ids and rollout indexes across asks, so they name no row)."""
    return (str(prompt), str(reply))


def _ok(*args: str) -> bytes:
    done = run_cli(*args)
    assert done.returncode == 0, done.stderr.decode()
    assert b"Traceback" not in done.stderr
    return done.stdout


def test_the_judges_leak_failures_are_the_rows_export_and_push_refuse(tmp_path: Path) -> None:
    seeded = sdk_seeded_rows(tmp_path / "seeded.jsonl", budget=120, seed=11)
    source = tmp_path / "rows.jsonl"
    source.write_bytes(seeded.read_bytes() + SDK_ROWS.read_bytes())
    rows = _rows(source)
    planted = sum("leak" in (r.get("seeded") or []) and "privileged" in r for r in rows)
    assert planted >= 5, "the SDK planted too few leaks for the comparison to mean anything"

    graded_path = tmp_path / "graded.jsonl"
    _ok("grade", str(source), "--judge", "conduct", "-o", str(graded_path))
    graded = _rows(graded_path)
    every = Counter(_key(r.get("prompt"), r.get("final_text")) for r in graded)
    judged = Counter(
        _key(r.get("prompt"), r.get("final_text"))
        for r in graded
        if (r.get("markers") or {}).get("conduct:no_leak") == 0.0
    )
    assert sum(judged.values()) >= planted  # every planted leak is caught

    # export: the rows written are every row but the judge's leak failures.
    sft, meta = tmp_path / "sft.jsonl", tmp_path / "meta.jsonl"
    done = run_cli("export", str(graded_path), "--include-failures", "-o", str(sft),
                   "--meta", str(meta))  # fmt: skip
    assert done.returncode == 0, done.stderr.decode()
    assert f"refused rows: {sum(judged.values())} quotes_privileged" in done.stderr.decode()
    exported = Counter(
        _key(m["prompt_text"], s["messages"][-1]["content"])
        for s, m in zip(_rows(sft), _rows(meta), strict=True)
    )
    assert every - exported == judged

    # push: what is stored is every row but the judge's leak failures, block removed.
    pushed = orjson.loads(_ok("push", str(graded_path), "--name", "seeded", "--no-gate", "--json"))
    assert pushed["left_out_leaks"] == sum(judged.values())
    assert pushed["left_out_privileged"] == 0
    back = tmp_path / "back.jsonl"
    _ok("pull", pushed["train"]["datasetId"], "-o", str(back))
    stored = _rows(back)
    assert every - Counter(_key(r.get("prompt"), r.get("final_text")) for r in stored) == judged
    assert not any("privileged" in r for r in stored)

    # push agrees with report: the same passing rows, and only leak failures missing.
    report = orjson.loads(_ok("report", str(graded_path), "--json"))
    assert report["rows"] == len(graded) == len(stored) + pushed["left_out_leaks"]
    profile = orjson.loads(_ok("profile", pushed["train"]["datasetId"], "--json"))
    passes = sum(1 for r in graded if (reward := reward_of(r)) is not None and passed(reward))
    assert round(profile["passRate"] * profile["graded"]) == passes

    # the audit names the same rows, and selection drops them.
    audit = orjson.loads(_ok("audit", "leaks", str(graded_path), "--json"))
    assert audit["leaked"] == sum(judged.values())
    recorder = Recorder()
    dropped = Counter(
        _key(r.get("prompt"), r.get("final_text"))
        for r in graded
        if recorder.record(r).junk == "quotes_privileged"
    )
    assert dropped == judged
