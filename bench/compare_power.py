"""Power check of `whileai compare`: does it find a real +0.15 and stay quiet on noise?

Run by hand: `.venv/bin/python bench/compare_power.py [--pairs 200] [--tasks 100] [--k 4]`.

Each synthetic pair is a fresh eval of `--tasks` tasks, each task with its own true pass
rate drawn from Uniform(0.10, 0.75); run A rolls every task `--k` times at its rate, run B
at rate + effect. Over `--pairs` pairs with a true +0.15, `compare` must say `improved`
at least 80% of the time (power); over as many null pairs (effect 0) it may say anything
but `no_difference_detected` at most 5% of the time (the test's size). Rows go through
`compare_runs` as rows, the same path the CLI streams.

The k=1 design (one rollout a task: binary per-task values, the noisiest an eval gets)
is printed too, for the record, and not held to the 80%: 100 binary paired tasks carry a
paired sd near 0.6, where +0.15 is about 2.5 standard errors, so no test reaches 80% there.
Exit 1 when the asserted design misses either target.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from typing import Any

from whileai_core.compare.compare import compare_runs

POWER_TARGET = 0.80
SIZE_TARGET = 0.05


def pair(rng: random.Random, tasks: int, k: int, effect: float) -> tuple[list[Any], list[Any]]:
    a: list[dict[str, Any]] = []
    b: list[dict[str, Any]] = []
    for t in range(tasks):
        p = rng.uniform(0.10, 0.75)
        for i in range(k):
            sid = f"task-{t}"
            a.append({"scenario_id": sid, "rollout_index": i, "reward": float(rng.random() < p)})
            b.append(
                {"scenario_id": sid, "rollout_index": i, "reward": float(rng.random() < p + effect)}
            )
    return a, b


def verdict_rate(pairs: int, tasks: int, k: int, effect: float, seed: int) -> tuple[float, float]:
    """(share improved, share not no_difference_detected), and seconds per compare."""
    rng = random.Random(seed)
    improved = loud = 0
    started = time.perf_counter()
    for i in range(pairs):
        a, b = pair(rng, tasks, k, effect)
        verdict = compare_runs(a, b, seed=i).comparison.verdict
        improved += verdict == "improved"
        loud += verdict != "no_difference_detected"
    elapsed = time.perf_counter() - started
    print(
        f"  effect {effect:+.2f}, k={k}: improved {improved}/{pairs} ({improved / pairs:.1%}), "
        f"anything but no_difference_detected {loud}/{pairs} ({loud / pairs:.1%}) "
        f"[{elapsed / pairs * 1000:.0f} ms a pair]",
        flush=True,
    )
    return improved / pairs, loud / pairs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--pairs", type=int, default=200)
    parser.add_argument("--tasks", type=int, default=100)
    parser.add_argument("--k", type=int, default=4)
    parser.add_argument("--seed", type=int, default=2024)
    args = parser.parse_args()
    print(f"compare power: {args.pairs} pairs of {args.tasks} tasks")
    power, _ = verdict_rate(args.pairs, args.tasks, args.k, 0.15, args.seed)
    _, size = verdict_rate(args.pairs, args.tasks, args.k, 0.0, args.seed + 1)
    ok = power >= POWER_TARGET and size <= SIZE_TARGET
    print(
        f"  k={args.k}: power {power:.1%} (target >= {POWER_TARGET:.0%}), "
        f"size {size:.1%} (target <= {SIZE_TARGET:.0%}) -> {'ok' if ok else 'MISSED'}"
    )
    if args.k != 1:
        print("  for the record, one rollout a task:")
        verdict_rate(args.pairs, args.tasks, 1, 0.15, args.seed + 2)
        verdict_rate(args.pairs, args.tasks, 1, 0.0, args.seed + 3)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
