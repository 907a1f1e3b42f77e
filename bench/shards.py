"""One process vs `--executor ray --shards 4`: the same simulate against the loopback stub.

Run by hand (`python bench/shards.py [--rollouts 20000] [--latency 0.1] [--concurrency 64]
[--shards 4]`); never a timed test. Both runs play the same spec, budget and per-process
concurrency against one stub (`python -m whileai_core.testing`) answering each call after
`--latency` seconds. Reported for each: rollouts/s from the command's wall clock (Ray's
start included), and the client's CPU per model call: the CPU seconds of the `whileai`
process and every process under it (Ray's GCS, raylet and workers), sampled from
/proc every 0.1 s (the machine may be shared, so its total is not used).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from _measure import loopback_stub, model_calls, simulate_command

TICKS = os.sysconf("SC_CLK_TCK")


def _stat(pid: int) -> tuple[int, float]:
    """(parent pid, CPU seconds user + system) of a live process."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[1]), (int(fields[11]) + int(fields[12])) / TICKS


def process_cpu(pid: int) -> float:
    return _stat(pid)[1]


class TreeCPU(threading.Thread):
    """The CPU seconds of a process and all its descendants, sampled until `stop()`."""

    def __init__(self, root: int) -> None:
        super().__init__(daemon=True)
        self.root = root
        self.seen: dict[int, float] = {}
        self._halt = threading.Event()

    def sample(self) -> None:
        parents: dict[int, int] = {}
        cpu: dict[int, float] = {}
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    parents[int(entry)], cpu[int(entry)] = _stat(int(entry))
                except (OSError, ValueError, IndexError):
                    continue
        tree = {self.root}
        grew = True
        while grew:
            more = {pid for pid, parent in parents.items() if parent in tree} - tree
            grew = bool(more)
            tree |= more
        for pid in tree & cpu.keys():
            self.seen[pid] = max(self.seen.get(pid, 0.0), cpu[pid])

    def run(self) -> None:
        while not self._halt.wait(0.1):
            self.sample()

    def stop(self) -> float:
        self._halt.set()
        self.join()
        return sum(self.seen.values())


def run(label: str, extra: list[str], args: argparse.Namespace, base_url: str, stub: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out, report = Path(tmp) / "rows.jsonl", Path(tmp) / "report.json"
        cmd = [
            *simulate_command(args.spec, base_url, args.rollouts, args.concurrency, out, report),
            *extra,
        ]
        env = {**os.environ, "WHILEAI_HOME": tmp, "RAY_AUTH_MODE": "disabled"}
        stub_cpu = process_cpu(stub)
        before = os.times()
        start = time.perf_counter()
        proc = subprocess.Popen(
            cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )
        sampler = TreeCPU(proc.pid)
        sampler.start()
        _, stderr = proc.communicate()
        sampled = sampler.stop()
        wall = time.perf_counter() - start
        after = os.times()
        stub_cpu = process_cpu(stub) - stub_cpu
        if proc.returncode != 0:
            print(stderr, file=sys.stderr)
            raise SystemExit(1)
        # The reaped child's own total is exact; the sampled tree adds what ran under it.
        reaped = (after.children_user + after.children_system) - (
            before.children_user + before.children_system
        )
        data = json.loads(report.read_text())
        rows = sum(1 for _ in out.open())
    calls = model_calls(data)
    client = max(reaped, sampled)
    result = {
        "label": label, "rows": rows, "calls": calls, "wall_s": round(wall, 2),
        "rollouts_per_s": round(rows / wall, 1), "client_cpu_s": round(client, 2),
        "client_cpu_ms_per_call": round(1000 * client / max(calls, 1), 3),
        "stub_cpu_s": round(stub_cpu, 2),
    }  # fmt: skip
    print(
        f"{label}: {rows} rollouts, {calls} calls ({calls / max(rows, 1):.2f} a rollout) in "
        f"{wall:.1f} s = {rows / wall:.1f} rollouts/s; client CPU {client:.1f} s = "
        f"{1000 * client / max(calls, 1):.2f} ms a call (stub {stub_cpu:.1f} s)",
        flush=True,
    )
    return result


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rollouts", type=int, default=20000)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--spec", default="specs/orders")
    parser.add_argument("--json", action="store_true", help="Also print the figures as JSON.")
    args = parser.parse_args()
    with loopback_stub(args.latency) as (base_url, stub):
        print(
            f"{args.rollouts} rollouts of {args.spec}, {args.latency * 1000:.0f} ms a call, "
            f"--concurrency {args.concurrency} per process, {os.cpu_count()} cores",
            flush=True,
        )
        results = [
            run("one process", [], args, base_url, stub.pid),
            run(
                f"--executor ray --shards {args.shards}",
                ["--executor", "ray", "--shards", str(args.shards)],
                args,
                base_url,
                stub.pid,
            ),
        ]
    if args.json:
        print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
