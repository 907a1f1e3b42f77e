"""Every built-in judge is bounded (issue 21, item 14): a long reply cannot hang `grade`.

`{"prompt": "big", "final_text": "A" * 1048576}` used to run for minutes under
`--timeout 5` (the e-mail pattern backtracked quadratically). Now the rule-based judges
read bounded text with patterns that cannot backtrack, a reply past what they read is
`undecided`, and `--timeout` holds for judges that run on the reading thread too: a row
over it is `timeout`. The time bounds here are generous safety bounds, not speed targets.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
import time
from pathlib import Path
from typing import Any

import orjson
import pytest

import whileai_core.judges
from whileai_core.judges import parse_judge
from whileai_core.judges.contract import Judge, check_deadline, grade_rows, judge_once
from whileai_core.judges.evidence import TEXT_CAP

from ..helpers import run_cli

MIB = 1024 * 1024


def _graded(out: bytes) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in out.splitlines() if line.strip()]


@pytest.mark.parametrize("judge", ["checklist", "conduct"])
def test_a_mebibyte_one_word_reply_is_graded_at_once_and_never_passes(
    judge: str, tmp_path: Path
) -> None:
    rows = tmp_path / "big.jsonl"
    big = {"prompt": "big", "final_text": "A" * MIB}
    fine = {"prompt": "What is the capital of France?", "final_text": "Paris is."}
    rows.write_bytes(orjson.dumps(big) + b"\n" + orjson.dumps(fine) + b"\n")
    started = time.monotonic()
    done = run_cli("grade", str(rows), "--judge", judge, "--timeout", "5", timeout=120)
    assert done.returncode == 0, done.stderr.decode()
    assert time.monotonic() - started < 100
    first, second = _graded(done.stdout)
    assert first["reward"] is None and first["judge_status"] in ("undecided", "timeout")
    assert f"{TEXT_CAP:,}" in first["reason"]
    assert second["judge_status"] == "ok"


def test_evaluate_on_a_200_kb_reply_and_a_200_kb_ask_finishes(tmp_path: Path) -> None:
    rows = tmp_path / "big.jsonl"
    lines = [
        {"prompt": "big", "final_text": "a@" * 100_000},
        {"prompt": "1" * 200_000, "final_text": "I looked it up."},
        {"prompt": "ORD-1234 " * 20_000, "final_text": "Done. " * 2_600},
    ]
    rows.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in lines))
    done = run_cli("evaluate", str(rows), "--judge", "conduct", "--timeout", "5", timeout=120)
    assert done.returncode == 0, done.stderr.decode()
    statuses = [r["judge_status"] for r in _graded(done.stdout)]
    assert statuses[0] == "undecided" and statuses[1:] == ["ok", "ok"]


def _patterns() -> dict[str, re.Pattern[str]]:
    found: dict[str, re.Pattern[str]] = {}
    for info in pkgutil.walk_packages(whileai_core.judges.__path__, "whileai_core.judges."):
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            values = value.values() if isinstance(value, dict) else value
            items = values if isinstance(value, (dict, tuple, list)) else [value]
            for i, item in enumerate(items):
                if isinstance(item, re.Pattern) and isinstance(item.pattern, str):
                    found[f"{info.name}.{name}[{i}]"] = item
    return found


# Runs that make a backtracking pattern re-read the rest of the text from every position.
_RUNS = ("a", "A", "1", " ", "\n", "a-", "a@", ".", "1,", "1.", "-", "ORD-1", "aA1-", "?",
         "$1", "[", "{", "(", "<a", "a_", "status ", "which ", "one ", "done ",
         "x.y@a.b.")  # fmt: skip


def test_no_judge_pattern_backtracks_on_long_runs() -> None:
    """Every compiled pattern of the judges, on 100,000 characters of each run: linear
    patterns take milliseconds, a quadratic one minutes."""
    patterns = _patterns()
    assert len(patterns) > 30
    slow = []
    for name, pattern in patterns.items():
        for run in _RUNS:
            text = run * (100_000 // len(run))
            started = time.monotonic()
            for _ in pattern.finditer(text):
                pass
            took = time.monotonic() - started
            if took > 8:
                slow.append(f"{name} on {run!r}: {took:.1f}s")
    assert not slow


def test_an_inline_judge_past_its_timeout_is_a_timeout_not_its_verdict() -> None:
    def slow_pass(row: dict[str, Any]) -> float:
        time.sleep(0.3)
        return 1.0

    def stops_itself(row: dict[str, Any]) -> float:
        time.sleep(0.3)
        check_deadline()
        return 1.0

    for fn in (slow_pass, stops_itself):
        judge = Judge(name=fn.__name__, fn=fn, inline=True)
        (row,) = grade_rows([{"final_text": "x"}], judge, timeout=0.1)
        assert row["judge_status"] == "timeout" and row["reward"] is None, fn.__name__
        (row,) = grade_rows([{"final_text": "x"}], judge, timeout=30)
        assert row["judge_status"] == "ok" and row["reward"] == 1.0


def test_a_backtracking_regex_judge_stops_at_the_timeout() -> None:
    judge = parse_judge("regex((a+)+$)")
    rows = [{"final_text": "a" * 200_000 + "!"}, {"final_text": "aaa"}]
    first, second = grade_rows(rows, judge, timeout=1)
    assert first["judge_status"] == "timeout" and first["reward"] is None
    assert second["reward"] == 1.0


def test_a_long_ask_and_results_are_read_up_to_a_bound_and_still_judged() -> None:
    steps = [
        {
            "tool": "get_order",
            "arguments": {"order_id": "ORD-1234"},
            "result": {"status": "ok", "data": {"order_id": "ORD-1234", "note": "x " * MIB}},
        }
    ]
    row = {"prompt": "Where is ORD-1234? " + "really " * 200_000, "steps": steps,
           "final_text": "ORD-1234 is on its way."}  # fmt: skip
    fields = judge_once(parse_judge("checklist"), row, timeout=60)
    assert fields["judge_status"] == "ok"
