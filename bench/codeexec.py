"""Benchmark: `whileai grade --judge code-exec` on rows whose replies are small programs,
each run against its hidden tests in the sandbox.

Run by hand: `.venv/bin/python bench/codeexec.py [--rows 400] [--concurrency 8]
[--forms plain,sandboxed,cases,flood]`. 70% of the programs are right. Three forms of
tests: `plain` asserts (`assert add(2, 3) == 5`: judged in the grader as calls, one
sandbox a row), `sandboxed` asserts (a loop over asserts: they run in a second, tests-only
sandbox) and `cases` (`[{"call": ..., "expected": ...}]`). The figure is end-to-end rows/s
of one `whileai grade` process reading a file and writing graded rows, every interpreter
start included, and that process's peak RSS.

`flood` (16 rows, cases) is the memory attack on the grader: half the candidates write a
16 MB line to their reply pipe, half a reply just under the 1 MiB cap made of nested empty
lists (the costliest line to decode). Every row must come out 0 with status ok; the figure
that matters is the peak RSS. Before the cap (2e38122^): 1077 MB, 67.6 s; with it: 115 MB,
9.5 s (2 shared cores, load ~20). Eight 16 MB floods alone: 1419 MB before, 52 MB after;
eight worst-case replies under the cap decoded at once: 166 MB.

Reference, 2 shared cores, -c 8, 400 rows (the machine's other load moves these by ±15%):
the in-process audit-hook sandbox it replaced (fd52dae, assert forms only) 54-75 rows/s;
bubblewrap: plain 69-85, sandboxed 36-40 (two sandboxes a row), cases 68-78 rows/s.
Target: plain asserts and cases at least as fast as the audit hook was.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
from collections import Counter
from pathlib import Path

import orjson
from _measure import measure

ROOT = Path(__file__).resolve().parent.parent
WHILEAI = [sys.executable, "-m", "whileai_cli"]
FLOOD_ROWS = 16
# What a flooding candidate writes to its reply pipe (argv[4] is the runner's reply fd).
_FLOODS = (
    "import os, sys, time\ndef add(a, b):\n    n = (16 << 20) // 9 - 10\n"
    '    os.write(int(sys.argv[4]), b\'["ok",["list",[\' + b\'["none"],\' * n'
    " + b'[\"none\"]]]]\\n')\n    time.sleep(30)\n",
    "import os, sys, time\ndef add(a, b):\n    n = (1 << 20) // 13 - 10\n"
    '    os.write(int(sys.argv[4]), b\'["ok",["list",[\' + b\'["list",[]],\' * n'
    " + b'[\"none\"]]]]\\n')\n    time.sleep(30)\n",
)

_RIGHT = "def add(a, b):\n    return a + b\n"
_WRONG = "def add(a, b):\n    return a - b\n"
TESTS: dict[str, object] = {
    "plain": "assert add(2, 3) == 5\nassert add(-1, 1) == 0\n",
    "sandboxed": "for a, b, total in [(2, 3, 5), (-1, 1, 0)]:\n    assert add(a, b) == total\n",
    "cases": [{"call": "add(2, 3)", "expected": 5}, {"call": "add(-1, 1)", "expected": 0}],
    "flood": [{"call": "add(2, 3)", "expected": 5}],
}


def make_rows(path: Path, n: int, tests: object, seed: int = 0, flood: bool = False) -> None:
    rng = random.Random(seed)
    with path.open("wb") as fh:
        for i in range(n):
            body = _RIGHT if rng.random() < 0.7 else _WRONG
            body = _FLOODS[i % 2] if flood else body
            row = {
                "prompt": f"Write add(a, b) (task {i // 8})",
                "scenario_id": f"sc-{i // 8:05d}",
                "rollout_index": i % 8,
                "final_text": f"Here it is:\n```python\n{body}```",
                "privileged": {"tests": tests},
            }
            fh.write(orjson.dumps(row) + b"\n")


def grade(tmp: Path, form: str, rows: int, concurrency: int) -> None:
    source, graded = tmp / f"{form}.jsonl", tmp / f"{form}.graded.jsonl"
    rows = FLOOD_ROWS if form == "flood" else rows
    make_rows(source, rows, TESTS[form], flood=form == "flood")
    cmd = [*WHILEAI, "grade", str(source), "-j", "code-exec", "-c", str(concurrency),
           "-o", str(graded)]  # fmt: skip
    os.chdir(ROOT)
    seconds, cpu, rss = measure(cmd)
    results = [orjson.loads(line) for line in graded.read_bytes().splitlines()]
    statuses = Counter(r["judge_status"] for r in results)
    passed = sum(1 for r in results if r["reward"] == 1.0)
    sandbox = results[0].get("judge_meta", {}).get("sandbox", "audit-hook") if results else ""
    print(
        f"{form:>9}  {sandbox:<10} {rows} rows in {seconds:5.2f} s = {rows / seconds:6.1f} rows/s"
        f"   passed {passed}/{len(results)}  statuses {dict(statuses)}"
        f"  CPU {cpu:.1f} s  peak RSS {rss:.0f} MB",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=400)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--forms", default="plain,sandboxed,cases")
    args = parser.parse_args()
    forms = [f.strip() for f in args.forms.split(",") if f.strip()]
    unknown = sorted(set(forms) - set(TESTS))
    if unknown:
        parser.error(f"unknown form(s) {', '.join(unknown)}; known: {', '.join(TESTS)}")
    print(f"code-exec, -c {args.concurrency}, {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory(prefix="whileai-bench-") as tmp:
        for form in forms:
            grade(Path(tmp), form, args.rows, args.concurrency)
    print(
        "reference: audit-hook sandbox at fd52dae 54-75 rows/s (assert forms); "
        "target: plain asserts and cases at least as fast"
    )


if __name__ == "__main__":
    main()
