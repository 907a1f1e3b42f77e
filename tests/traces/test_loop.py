"""The loop in five commands: simulate -> grade -> the failed traces -> simulate --traces
-> leakage 0.

`whileai evaluate --failed-traces` is being built on another branch; until it lands the
third step here is `grade` plus the failed-trace extraction it will use
(`whileai_core.traces.load.as_trace` on every row graded under the 0.5 line).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from whileai_core.metrics.tally import passed
from whileai_core.traces.load import as_trace

from ..helpers import run_cli


def _ok(*args: str) -> bytes:
    proc = run_cli(*args)
    assert proc.returncode == 0, proc.stderr.decode()
    return proc.stdout


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_the_loop_closes_in_five_commands(tmp_path: Path) -> None:
    run, graded, failed, aimed = (tmp_path / n for n in ("run", "graded", "failed", "aimed"))
    _ok("simulate", "specs/orders", "--mode", "rl", "--repeats", "4", "--budget", "400",
        "-o", str(run))  # fmt: skip
    _ok("grade", str(run), "-o", str(graded))
    failures = [as_trace(r) for r in _rows(graded) if not passed(float(r["reward"]))]
    assert 20 < len(failures) < 400
    failed.write_text("".join(json.dumps(t) + "\n" for t in failures))
    report = json.loads(_ok("simulate", "specs/orders", "--traces", str(failed), "--budget",
                            "400", "-o", str(aimed), "--json"))  # fmt: skip
    leak = json.loads(_ok("leakage", str(aimed), "--sources", str(failed), "--json"))
    assert leak["n_leaky"] == 0 and leak["n_generated"] == 400
    assert leak["n_sources"] == len(failures)
    # The aimed run leans toward the cells the failures sat on.
    emphasis = report["traces"]["emphasis"]
    top_tool = next(iter(emphasis["tool"]))
    before = Counter(r["scenario_dimensions"]["tool"] for r in _rows(run))
    after = Counter(r["scenario_dimensions"]["tool"] for r in _rows(aimed))
    assert after[top_tool] / 400 > before[top_tool] / 400
    # The same seed revisits the cells the failures came from, so near copies of source
    # prompts were drawn and redrawn; none reached the output.
    assert report["source_copies_redrawn"] > 0
    assert not {t["prompt"] for t in failures} & {r["prompt"] for r in _rows(aimed)}
