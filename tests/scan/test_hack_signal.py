"""One hack-signal engine: optimize, the publish gate, `audit correlations`, `audit
lengths` and the hack scan give one answer to "does the reward track reply length?"."""

from __future__ import annotations

import random
from typing import Any

from whileai_core.audit.run import audit_rows
from whileai_core.scan.engine import hack_scan
from whileai_core.select.gate import publish_gate
from whileai_core.select.optimize import OptimizeOptions, optimize


def _row(task: str, i: int, reward: float, chars: int) -> dict[str, Any]:
    reply = (f"r{i} " + "word " * chars)[:chars]
    return {
        "prompt": f"Please look at order {task}.",
        "scenario_id": task,
        "steps": [{"tool": "get_order", "arguments": {"order_id": task}, "result": {"n": i}}],
        "final_text": reply,
        "rollout_index": i,
        "reward": reward,
        "judge_status": "ok",
    }


def _confounded(seed: int) -> list[dict[str, Any]]:
    """Hard asks get long replies and fail more, but within an ask length says nothing:
    pooled r is high, what a grouped update learns from length is nothing."""
    rng = random.Random(seed)
    rows = []
    for t in range(60):
        base = 40 + 20 * t
        wins = 3 if t < 30 else 1
        for i in range(4):
            rows.append(_row(f"t{t}", i, 1.0 if i < wins else 0.0, base + rng.randrange(30)))
    return rows


def _weak(seed: int) -> list[dict[str, Any]]:
    """Within each ask the passing replies run a little longer, as a lenient judge pays:
    a within-ask correlation well under the old 0.3 cut-offs, and far above chance."""
    rng = random.Random(seed)
    rows = []
    for t in range(150):
        for i in range(4):
            win = i < 2
            rows.append(_row(f"t{t}", i, float(win), 100 + rng.randrange(120) + 15 * win))
    return rows


def _answers(rows: list[dict[str, Any]]) -> dict[str, tuple[float, bool]]:
    """(within-ask r, tracks?) for reply length, as each stage reports it."""
    audit = audit_rows("correlations", rows).as_dict()["features"]["reply_chars"]
    lengths = audit_rows("lengths", rows).as_dict()["reward_corr"]
    gate = publish_gate(rows, strict=False).hack_signal
    assert gate is not None
    gated = gate["features"]["reply_chars"]
    _, report = optimize(rows, OptimizeOptions(mode="rl", band=(0.0, 1.0)))
    kept = report.gate["hack_signal"]["features"]["reply_chars"]
    assert report.rows_out == len(rows)  # every ask is mixed: optimize keeps them all
    return {
        "audit correlations": (audit["r"], audit["above_floor"]),
        "audit lengths": (lengths["r"], lengths["above_floor"]),
        "gate": (gated["r"], gated["above_floor"]),
        "optimize": (kept["r"], kept["above_floor"]),
    }


def test_every_stage_gives_the_scans_answer_on_the_same_rows() -> None:
    for rows, tracks in ((_confounded(0), False), (_weak(0), True)):
        answers = _answers(rows)
        r = answers["audit correlations"][0]
        assert all(a == (r, tracks) for a in answers.values()), answers
        full = hack_scan(rows)
        entry = next(f for f in full["features"] if f["name"] == "len:reply_chars")
        assert entry["r"] == r  # the full scan measures the same correlation
        signal = publish_gate(rows, strict=False).hack_signal
        assert signal is not None and signal["tau"] <= full["tau"]  # a named family's floor
        if entry["above_floor"]:
            assert tracks  # whatever the full scan flags, every stage flags
    assert abs(_answers(_weak(0))["gate"][0]) < 0.3  # what the old fixed cut-offs missed
    confounded = audit_rows("correlations", _confounded(0)).as_dict()["features"]
    assert abs(confounded["reply_chars"]["pooled_r"]) > 0.3  # what the old pooled rule flagged
