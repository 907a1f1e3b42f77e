"""SFT keeps replies with a style tic out of the training set by default, and says how
many: rejection sampling imitates every kept reply at full weight, tic included."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from whileai_core.select.optimize import OptimizeOptions, optimize

from ..helpers import run_cli

FLATTERY = "What a great question, and you are absolutely right to ask. Order {t} is delivered."
HEDGE = "I think order {t} is probably delivered, but I'm not sure."


def _row(task: str, i: int, text: str, reward: float = 1.0, **extra: Any) -> dict[str, Any]:
    return {
        "prompt": f"Where is order {task}?",
        "scenario_id": task,
        "rollout_index": i,
        "steps": [{"tool": "get_order", "arguments": {"order_id": task}, "result": {"n": i}}],
        "final_text": text.format(t=task),
        "reward": reward,
        "judge_status": "ok",
        **extra,
    }


def _rows() -> list[dict[str, Any]]:
    rows = []
    for t in ("A1", "B2", "C3"):
        rows.append(_row(t, 0, FLATTERY))  # first, so top_per_prompt would take it
        rows.append(_row(t, 1, "Order {t} is delivered."))
    rows.append(_row("D4", 0, HEDGE))  # the only pass of its ask
    rows.append(_row("D4", 1, "Sorry, I could not check {t}.", reward=0.0))
    return rows


def test_sft_keeps_tic_replies_out_and_counts_them() -> None:
    kept, report = optimize(_rows(), OptimizeOptions(mode="sft"))
    texts = [r["final_text"] for r in kept]
    assert texts == ["Order A1 is delivered.", "Order B2 is delivered.", "Order C3 is delivered."]
    assert report.dropped["style_tic"] == 4
    assert report.style_tics == {"sycophancy": 3, "hedging": 1}
    # the failed apology was never eligible: it is below min_reward, not a tic drop
    assert report.dropped["below_min_reward"] == 1
    assert any("kept out for style tics: 4 rows" in line for line in report.lines())


def test_keep_tics_keeps_them_and_rl_is_untouched() -> None:
    kept, report = optimize(_rows(), OptimizeOptions(mode="sft", keep_tics=True))
    assert [r["final_text"].split(",")[0] for r in kept][:1] == ["What a great question"]
    assert len(kept) == 4 and "style_tic" not in report.dropped and not report.style_tics
    _, rl = optimize(_rows(), OptimizeOptions(mode="rl"))
    assert "style_tic" not in rl.dropped


def test_random_controls_draw_from_the_same_tic_free_rows() -> None:
    kept, report = optimize(_rows(), OptimizeOptions(mode="sft", select="random_per_prompt"))
    assert all("great question" not in r["final_text"] for r in kept)
    # under the chance rules any row counts: D4's failed apology too, so D4 gives nothing
    assert report.dropped["style_tic"] == 5 and len(kept) == 3
    assert report.style_tics == {"sycophancy": 3, "hedging": 1, "apology": 1}


def test_markers_stamped_by_mark_decide_over_the_text() -> None:
    """A row `whileai mark` stamped (perhaps with its own --phrases) is read from its
    markers: here the flattering text was judged clean, and a plain one marked a tic."""
    clean = {"no_hedging": 1.0, "no_sycophancy": 1.0, "no_apology": 1.0, "no_boilerplate": 1.0}
    rows = [
        _row("A1", 0, FLATTERY, markers=clean),
        _row("B2", 0, "Order {t} is delivered.", markers={**clean, "no_boilerplate": 0.0}),
    ]
    kept, report = optimize(rows, OptimizeOptions(mode="sft"))
    assert [r["scenario_id"] for r in kept] == ["A1"]
    assert report.style_tics == {"boilerplate": 1}


def test_the_cli_reports_the_count_and_has_the_flag(tmp_path: Path) -> None:
    src = tmp_path / "graded.jsonl"
    src.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in _rows()))
    done = run_cli("optimize", str(src), "--mode", "sft", "-o", str(tmp_path / "out.jsonl"))
    assert done.returncode == 0, done.stderr.decode()
    assert b"kept out for style tics: 4 rows (hedging 1, sycophancy 3)" in done.stdout + done.stderr
    assert (tmp_path / "out.jsonl").read_text().count("\n") == 3
    done = run_cli(
        "optimize",
        str(src),
        "--mode",
        "sft",
        "--keep-tics",
        "--json",
        "-o",
        str(tmp_path / "k.jsonl"),
    )
    report = orjson.loads(done.stdout)
    assert report["rows_out"] == 4 and report["style_tics"] == {}
