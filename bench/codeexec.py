"""Benchmark: `whileai grade --judge code-exec` on rows whose replies are small programs,
each run against its hidden tests in the sandbox.

Run by hand: `.venv/bin/python bench/codeexec.py [--rows 400] [--concurrency 8]`.
Half the rows carry assert-string tests, half a list of call/expected cases; 70% of the
programs are right. The figure is end-to-end rows/s of one `whileai grade` process reading
a file and writing graded rows, so it includes the interpreter start of every run.
Reference on the 2-core machine: the in-process audit-hook sandbox it replaced
(fd52dae) graded 57 rows/s at concurrency 8; target for the bubblewrap sandbox: >= 40
rows/s at the same settings (namespaces, a cgroup and a second interpreter for the
verdict cost a few ms a row each).
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
WHILEAI = [sys.executable, "-m", "whileai_cli"]

_RIGHT = "def add(a, b):\n    return a + b\n"
_WRONG = "def add(a, b):\n    return a - b\n"


def make_rows(path: Path, n: int, *, cases: bool, seed: int = 0) -> None:
    rng = random.Random(seed)
    with path.open("wb") as fh:
        for i in range(n):
            body = _RIGHT if rng.random() < 0.7 else _WRONG
            tests: object = "assert add(2, 3) == 5\nassert add(-1, 1) == 0\n"
            if cases and i % 2:
                tests = [
                    {"call": "add(2, 3)", "expected": 5},
                    {"call": "add(-1, 1)", "expected": 0},
                ]
            row = {
                "prompt": f"Write add(a, b) (task {i // 8})",
                "scenario_id": f"sc-{i // 8:05d}",
                "rollout_index": i % 8,
                "final_text": f"Here it is:\n```python\n{body}```",
                "privileged": {"tests": tests},
            }
            fh.write(orjson.dumps(row) + b"\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=400)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument(
        "--asserts-only",
        action="store_true",
        help="Only assert-string tests (the form the old sandbox understood).",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="whileai-bench-") as tmp:
        rows, graded = Path(tmp) / "rows.jsonl", Path(tmp) / "graded.jsonl"
        make_rows(rows, args.rows, cases=not args.asserts_only)
        cmd = [*WHILEAI, "grade", str(rows), "-j", "code-exec", "-c", str(args.concurrency)]
        start = time.perf_counter()
        with graded.open("wb") as out:
            proc = subprocess.run(cmd, stdout=out, stderr=subprocess.PIPE, cwd=ROOT)
        seconds = time.perf_counter() - start
        if proc.returncode:
            raise SystemExit(f"grade failed:\n{proc.stderr.decode()}")
        results = [orjson.loads(line) for line in graded.read_bytes().splitlines()]
        statuses = Counter(r["judge_status"] for r in results)
        passed = sum(1 for r in results if r["reward"] == 1.0)
        sandbox = results[0].get("judge_meta", {}).get("sandbox", "audit-hook") if results else ""
        print(
            f"code-exec ({sandbox}, -c {args.concurrency}, {os.cpu_count()} cores): "
            f"{args.rows} rows in {seconds:.2f} s = {args.rows / seconds:,.1f} rows/s"
        )
        print(f"  passed {passed}/{len(results)}  statuses {dict(statuses)}")
        print("reference: audit-hook sandbox at fd52dae 57 rows/s; target >= 40 rows/s")


if __name__ == "__main__":
    main()
