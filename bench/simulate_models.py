"""A whole `whileai simulate` process against the loopback stub at a fixed latency per call.

Run by hand (`python bench/simulate_models.py [--latency 0.1] [--concurrency 64]
[--rollouts 2048]`); never a timed test. Unlike `bench/models.py`, which times the agent
loop alone, this times what a user waits for: the CLI starting, loading the spec, writing
openers, every model call (the agent's and, with a model person, the person's follow-ups),
and the rows written to a file. The ideal rate is concurrency / (model calls per rollout x
latency), with the calls per rollout read off the run's own report; the target is >= 90%
of it, from the process's wall clock.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _measure import loopback_stub, model_calls, simulate_command


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--rollouts", type=int, default=2048)
    parser.add_argument("--spec", default="specs/orders")
    args = parser.parse_args()
    with loopback_stub(args.latency) as (base_url, _), tempfile.TemporaryDirectory() as tmp:
        out, report = Path(tmp) / "rows.jsonl", Path(tmp) / "report.json"
        cmd = simulate_command(args.spec, base_url, args.rollouts, args.concurrency, out, report)
        env = {**os.environ, "WHILEAI_HOME": tmp}
        before = os.times()
        start = time.perf_counter()
        done = subprocess.run(cmd, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - start
        after = os.times()
        if done.returncode != 0:
            print(done.stderr)
            return 1
        data = json.loads(report.read_text())
    rows = data["rows"]
    calls = model_calls(data)
    per_rollout = calls / rows
    ideal = args.concurrency / (per_rollout * args.latency)
    rate = rows / wall
    cpu = (after.children_user + after.children_system) - (
        before.children_user + before.children_system
    )
    print(
        f"whileai simulate {args.spec}: {rows} rollouts, {calls} model calls "
        f"({per_rollout:.2f} a rollout), concurrency {args.concurrency}, latency "
        f"{args.latency * 1000:.0f} ms"
    )
    print(
        f"process wall {wall:.2f} s ({data['elapsed']:.2f} s by the run's own clock): "
        f"{rate:.1f} rollouts/s; ideal {ideal:.1f}; ratio {100 * rate / ideal:.1f}% "
        f"(target >= 90%)"
    )
    print(f"CLI CPU {cpu:.2f} s, {1000 * cpu / max(calls, 1):.2f} ms per model call")
    return 0 if rate >= 0.9 * ideal else 1


if __name__ == "__main__":
    sys.exit(main())
