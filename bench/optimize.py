"""Benchmark: `whileai optimize --mode rl` on 100,000 graded rows (12,500 groups of 8).

Run by hand: `.venv/bin/python bench/optimize.py [--groups 12500] [--runs 3] [--keep]
[--sdk PYTHON]`. The issue's reference figure: the original SDK's optimize took 1.3 s on
5,000 rows (~3,800 rows/s); the target is 10x its rows/s, i.e. >= 38,000 rows/s. That
figure was taken elsewhere, so `--sdk PYTHON` (an interpreter with the reference SDK,
0.131, installed) also times the SDK's own `whileai.simulations.optimize(path,
mode="rl", output=...)` here, on the same rows, as a child process (loading the rows
included, as our CLI's run includes reading them), and prints our rows/s over its
measured rows/s. The SDK keeps about `target=1000` rows by default where ours keeps
every in-band group: the reading, checking and grouping are the same work; only the
kept count (so the rows written) differs.

Prints wall time and peak RSS of the CLI run (a real subprocess: read, select, write;
best of --runs, with the run's own CPU time too, read with wait4, because wall time on a
shared machine is noisy) and of the in-process core call; with `--sdk`, the same for
the SDK's runs (best of the same --runs). The CLI is this checkout's (`python -m
whileai_cli` from the repo root), so a worktree measures its own code.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import sys
import tempfile
import time
from pathlib import Path

import orjson
from _measure import ROOT, measure

FAULTS = ("success", "timeout", "permission_denied", "malformed_result", "stale_result")
STATUS = {
    "success": {"status": "ok", "data": {"order_id": "ORD-1", "status": "delivered"}},
    "timeout": {"status": "timeout", "error": "upstream timed out"},
    "permission_denied": {"status": "permission_denied", "error": "not allowed"},
    "malformed_result": {"status": "malformed", "raw": "<<garbled>>"},
    "stale_result": {"status": "ok", "stale": True, "data": {"order_id": "ORD-1"}},
}


def make_rows(path: Path, groups: int, per_group: int, seed: int = 0) -> int:
    rng = random.Random(seed)
    n = 0
    with path.open("wb") as fh:
        for g in range(groups):
            condition = FAULTS[g % len(FAULTS)]
            difficulty = rng.random()
            prompt = f"Please refund order ORD-{g:05d}; it arrived damaged. Case {g}."
            for i in range(per_group):
                reward = 1.0 if rng.random() > difficulty else 0.0
                variant = rng.randrange(6)
                outcome = "refunded it" if reward else "stopped"
                reply = f"I looked up ORD-{g:05d} and {outcome}. v{variant}"
                row = {
                    "prompt": prompt,
                    "messages": [
                        {"role": "user", "content": prompt},
                        {
                            "role": "assistant",
                            "content": "",
                            "tool_calls": [
                                {"name": "get_order", "arguments": {"order_id": f"ORD-{g:05d}"}}
                            ],
                        },
                        {
                            "role": "tool",
                            "name": "get_order",
                            "content": orjson.dumps(STATUS[condition]).decode(),
                        },
                        {"role": "assistant", "content": reply},
                    ],
                    "steps": [
                        {
                            "tool": "get_order",
                            "arguments": {"order_id": f"ORD-{g:05d}"},
                            "result": STATUS[condition],
                        }
                    ],
                    "final_text": reply,
                    "scenario_id": f"sc-{g:06d}",
                    "scenario_dimensions": {"tool": "get_order", "tool_condition": condition},
                    "rollout_index": i,
                    "policy_version": "bench@1",
                    "privileged": {"reference": f"refund ORD-{g:05d} only if delivered"},
                    "reward": reward,
                    "judge_status": "ok",
                    "judge_name": "bench",
                    "schema_version": "1",
                    "bench_unknown_key": {"kept": True},
                }
                fh.write(orjson.dumps(row) + b"\n")
                n += 1
    return n


# The SDK's own call, run from a file in the bench's temporary folder so that folder, not
# the repository root (which holds our packages), is first on the child's path.
_SDK_RUN = (
    "import sys\n"
    "import whileai.simulations as s\n"
    "s.optimize(sys.argv[1], mode='rl', output=sys.argv[2])\n"
)


def measure_sdk(python: str, src: Path, n: int, tmp: Path, runs: int) -> dict[str, float]:
    """The reference SDK's `optimize` on `src` under `python`, best of `runs` (wall and
    CPU apiece, as for the CLI), loading the rows included."""
    script = tmp / "sdk_optimize.py"
    script.write_text(_SDK_RUN)
    cmd = [python, str(script), str(src), str(tmp / "sdk_selected.jsonl")]
    results = [measure(cmd) for _ in range(runs)]
    wall, cpu = min(r[0] for r in results), min(r[1] for r in results)
    return {"wall_s": wall, "cpu_s": cpu, "rows_per_s": n / wall, "rows_per_cpu_s": n / cpu,
            "peak_rss_mb": max(r[2] for r in results)}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--groups", type=int, default=12_500)
    parser.add_argument("--per-group", type=int, default=8)
    parser.add_argument("--runs", type=int, default=3, help="runs of each command; best reported")
    parser.add_argument("--keep", action="store_true", help="keep the generated files")
    parser.add_argument(
        "--sdk", metavar="PYTHON", help="an interpreter with SDK 0.131: time its optimize too"
    )
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="whileai-bench-optimize-"))
    src, dst = tmp / "graded.jsonl", tmp / "selected.jsonl"
    n = make_rows(src, args.groups, args.per_group)
    print(f"generated {n:,} rows ({src.stat().st_size / 1e6:.1f} MB) in {tmp}")

    os.chdir(ROOT)  # `-m whileai_cli` then runs this checkout
    cmd = [sys.executable, "-m", "whileai_cli", "optimize", "--mode", "rl", str(src),
           "-o", str(dst), "--report", str(tmp / "report.json")]  # fmt: skip
    runs = [measure(cmd) for _ in range(args.runs)]
    cli_s, cli_cpu = min(r[0] for r in runs), min(r[1] for r in runs)
    cli_rss_mb = max(r[2] for r in runs)
    report = orjson.loads((tmp / "report.json").read_bytes())

    sys.path.insert(0, str(ROOT))
    from whileai_core.jsonl import read_rows
    from whileai_core.select.optimize import optimize

    rows = list(read_rows([str(src)]))
    start = time.perf_counter()
    optimize(rows)
    core_s = time.perf_counter() - start
    core_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    sdk_rate = 5_000 / 1.3
    print(f"CLI  optimize --mode rl (best of {args.runs}): {cli_s:.2f} s wall, {n / cli_s:,.0f} "
          f"rows/s; {cli_cpu:.2f} s CPU, {n / cli_cpu:,.0f} rows/s; peak RSS {cli_rss_mb:.0f} MB; "
          f"kept {report['rows_out']:,} rows in {report['groups_kept']:,} groups")  # fmt: skip
    print(f"core optimize() alone:   {core_s:.2f} s, {n / core_s:,.0f} rows/s "
          f"(process peak RSS {core_rss_mb:.0f} MB incl. the loaded rows)")  # fmt: skip
    print(f"reference SDK (the issue's figure): 1.3 s / 5,000 rows = {sdk_rate:,.0f} rows/s; "
          f"target >= {10 * sdk_rate:,.0f} rows/s; CLI is {n / cli_s / sdk_rate:.1f}x")  # fmt: skip
    if args.sdk:
        sdk = measure_sdk(args.sdk, src, n, tmp, args.runs)
        sdk["ratio_wall"] = sdk["wall_s"] / cli_s  # same rows: rows/s over rows/s
        sdk["ratio_cpu"] = sdk["cpu_s"] / cli_cpu
        print(f"SDK  optimize(path, mode='rl') measured here (best of {args.runs}; keeps about "
              f"its default target=1000 rows): {sdk['wall_s']:.2f} s wall, "
              f"{sdk['rows_per_s']:,.0f} rows/s; {sdk['cpu_s']:.2f} s CPU, "
              f"{sdk['rows_per_cpu_s']:,.0f} rows/s; "
              f"peak RSS {sdk['peak_rss_mb']:.0f} MB")  # fmt: skip
        print(f"CLI vs SDK measured: {sdk['ratio_wall']:.1f}x its rows/s by wall, "
              f"{sdk['ratio_cpu']:.1f}x by CPU (target >= 10x)")  # fmt: skip
    if not args.keep:
        for path in tmp.iterdir():
            path.unlink()
        tmp.rmdir()


if __name__ == "__main__":
    main()
