"""Benchmark `simulate` offline (seeded agent, template writer): rows/s and peak RSS.

Each configuration runs in a fresh child process, which reports its own peak RSS
(`resource.getrusage(RUSAGE_SELF).ru_maxrss`) and the time spent inside the run.
Reference: the original SDK took 12.8 s for 1,000 rl rows (about 78 rows/s);
the target here is >= 1,000 rows/s, time linear in budget, RSS flat in budget.

    python bench/simulate.py            # explore 1k, explore 10k, rl k=8 10k
    python bench/simulate.py --quick    # smaller budgets
"""

from __future__ import annotations

import sys
from pathlib import Path

# bench/ holds scripts named like stdlib modules (platform.py); never import from it.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import json  # noqa: E402
import resource  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
SPEC = REPO / "tests" / "fixtures" / "orders-spec.json"


def child(mode: str, budget: int, repeats: int | None, out: str) -> None:
    sys.path.insert(0, str(REPO))
    from whileai_core.simulate.run import run_simulation
    from whileai_core.simulate.scheduler import SimulateConfig
    from whileai_core.spec import load_spec

    spec = load_spec(SPEC)
    start = time.perf_counter()
    report = run_simulation(
        spec, SimulateConfig(mode=mode, budget=budget, repeats=repeats), output=out
    )
    elapsed = time.perf_counter() - start
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"rows": report.rows, "elapsed": elapsed, "peak_kb": peak_kb}))


def run(mode: str, budget: int, repeats: int | None) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        out = str(Path(tmp) / "rows.jsonl")
        wall = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, __file__, "--child", mode, str(budget), str(repeats or 0), out],
            capture_output=True,
            text=True,
            check=True,
        )
        wall = time.perf_counter() - wall
        data = json.loads(proc.stdout)
        size = Path(out).stat().st_size
    return {
        "rows": data["rows"],
        "elapsed": data["elapsed"],
        "rows_per_s": data["rows"] / data["elapsed"],
        "wall": wall,
        "peak_rss_mb": data["peak_kb"] / 1024,
        "bytes_per_row": size / max(1, data["rows"]),
    }


def main() -> None:
    quick = "--quick" in sys.argv
    configs = [
        ("explore", 1_000, None),
        ("explore", 10_000 if not quick else 3_000, None),
        ("rl", 1_000, 8),
        ("rl", 10_000 if not quick else 3_000, 8),
    ]
    print(f"{'mode':8} {'budget':>7} {'rows':>7} {'seconds':>8} {'rows/s':>8} {'peak RSS':>9}")
    for mode, budget, repeats in configs:
        r = run(mode, budget, repeats)
        rss = f"{r['peak_rss_mb']:.0f} MB"
        label = f"{mode} k={repeats}" if repeats else mode
        print(
            f"{label:8} {budget:>7} {r['rows']:>7} {r['elapsed']:>8.2f} "
            f"{r['rows_per_s']:>8.0f} {rss:>9}",
            flush=True,
        )
    print("reference: original SDK rl 1,000 rows in 12.8 s (78 rows/s); target >= 1,000 rows/s")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        _, _, mode, budget, repeats, out = sys.argv
        child(mode, int(budget), int(repeats) or None, out)
    else:
        main()
