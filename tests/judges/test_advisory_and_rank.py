"""`grade --llm-judge MODEL` puts an LLM's verdict in `llm_reward` beside `reward` (never
in its place), and `whileai rank` adds `quality` without touching `reward`. The LLM is
the loopback OpenAI-compatible stub; the CLI runs as a real subprocess."""

from __future__ import annotations

import json
from pathlib import Path

from whileai_core.testing import OpenAIStub, answer, http_error

from ..helpers import REPO, run_cli

ROWS = REPO / "tests" / "golden" / "grade" / "orders-rl.jsonl"


def _rows(n: int, tmp_path: Path) -> Path:
    path = tmp_path / "rows.jsonl"
    path.write_text("\n".join(ROWS.read_text(encoding="utf-8").splitlines()[:n]) + "\n")
    return path


def test_the_llm_verdict_sits_beside_the_reward(tmp_path: Path) -> None:
    rows = _rows(3, tmp_path)
    verdicts = [answer('{"reward": 0, "reason": "never looked it up"}'),
                answer('{"reward": 1, "reason": "fine"}'), http_error(500)]  # fmt: skip
    with OpenAIStub(verdicts, default=http_error(500)) as stub:
        done = run_cli("grade", str(rows), "--spec", str(REPO / "specs" / "orders"),
                       "--llm-judge", stub.base_url, "--model", "judge-m",
                       env={"WHILEAI_JUDGE_CONCURRENCY": "1"})  # fmt: skip
    assert done.returncode == 0, done.stderr.decode()
    plain = run_cli("grade", str(rows), "--spec", str(REPO / "specs" / "orders"))
    out = [json.loads(line) for line in done.stdout.splitlines()]
    alone = [json.loads(line) for line in plain.stdout.splitlines()]
    # The main judge's verdict is exactly what grade gives without an advisor.
    for key in ("reward", "judge_name", "judge_status", "reason"):
        assert [r[key] for r in out] == [r[key] for r in alone]
    assert [r["llm_reward"] for r in out][:2] == [0.0, 1.0]
    assert out[0]["llm_reason"] == "never looked it up"
    assert out[0]["llm_judge"].startswith("judge-m@") and out[0]["llm_judge_status"] == "ok"
    # A failed advisory call is counted as its status, never a 0.
    assert out[2]["llm_reward"] is None and out[2]["llm_judge_status"] == "error"


def test_llm_judge_must_name_a_model(tmp_path: Path) -> None:
    done = run_cli("grade", str(_rows(1, tmp_path)), "--llm-judge", "exact-match")
    assert done.returncode == 1 and b"--llm-judge 'exact-match': give a model" in done.stderr


def test_rank_adds_quality_and_leaves_reward(tmp_path: Path) -> None:
    rows = _rows(40, tmp_path)
    done = run_cli("rank", str(rows))
    assert done.returncode == 0, done.stderr.decode()
    out = [json.loads(line) for line in done.stdout.splitlines()]
    given = [json.loads(line) for line in rows.read_text().splitlines()]
    assert len(out) == 40
    for before, after in zip(given, out, strict=True):
        assert {k: v for k, v in after.items() if k != "quality"} == before
        assert after["quality"] is None or 0 <= after["quality"] <= 1
    assert len({r["quality"] for r in out}) > 1  # it tells rows apart
    assert b"ranked 40 rows" in done.stderr
    ordered = run_cli("rank", str(rows), "--sort")
    qualities = [json.loads(line)["quality"] for line in ordered.stdout.splitlines()]
    assert qualities == sorted(qualities, reverse=True)
