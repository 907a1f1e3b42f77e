"""The model client at fleet scale: `whileai simulate` against the loopback stub at
concurrency 64, 256 and 1,024, before and after, with SDK 0.131's call rate beside it.

Run by hand; never a timed test:

    python bench/model_client.py [--levels 64,256,1024] [--rollouts 4096] [--latency 0.1]
        [--before DIR] [--processes N] [--sdk PYTHON] [--repeat N] [--json]

One stub (`python -m whileai_core.testing`, the single-threaded fleet server, from this
tree) answers every call after `--latency` seconds. For each tree (`--before DIR`, a
checkout of the code before, then this one) and each level it runs the real command,
`whileai simulate specs/orders --agent <stub> --concurrency N`, as a child with that tree
first on PYTHONPATH, and prints:

- rollouts/s from the child's wall clock, and its share of the ideal
  concurrency / (model calls per rollout x latency), the calls read off the run's report;
- CPU per model call: the child's own user + system seconds (startup, the spec, the
  grid, every rollout, the rows written) over its model calls. This one does not move
  with the machine's load the way wall-clock shares do, so it is the figure to compare;
- retries and errors from the run's report, and the child's peak open descriptors.

`--processes N` adds a line a level for this tree's `--executor processes --shards N`
(each shard in its own process with ceil(concurrency / N) in flight) beside the one
process. Its workers are the child's own children, reaped by it, so the child's rusage
holds their CPU too (each worker's interpreter start included), and its calls are the
shards' summed. The stub runs on the same cores: with N workers busy, it is the stub and
the machine that cap the share of ideal, not one client process.

The load average is printed with every run: on a shared 2-core machine the wall-clock
shares drop with it. `--sdk PYTHON` (an interpreter with SDK 0.131 installed) also
measures the SDK's own chat-completion call (`whileai.simulations.generate.agents.complete`,
a thread-local keep-alive connection per thread) with as many threads as each level's
concurrency, next to this tree's `ModelClient` doing the same calls: calls/s, share of
concurrency / latency, CPU per call.
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
from typing import Any

from _measure import ROOT, loopback_stub, model_calls, simulate_command


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"{one:.1f}/{five:.1f}"


def _path(tree: Path) -> str:
    """PYTHONPATH for a child running `tree`'s code: the tree first, then whatever the
    caller's PYTHONPATH held besides this tree (a directory with a dependency the shared
    environment lacks, say)."""
    mine = {str(ROOT), str(tree)}
    rest = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and p not in mine]
    return os.pathsep.join([str(tree), *rest])


class _PeakFds(threading.Thread):
    """The peak number of open descriptors of one process, sampled every 0.1 s."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid, self.peak = pid, 0
        self._halt = threading.Event()

    def run(self) -> None:
        while not self._halt.wait(0.1):
            try:
                self.peak = max(self.peak, len(os.listdir(f"/proc/{self.pid}/fd")))
            except OSError:
                return

    def stop(self) -> int:
        self._halt.set()
        self.join()
        return self.peak


def run_simulate(
    tree: Path, base_url: str, level: int, args: argparse.Namespace, extra: list[str]
) -> dict:
    """One `whileai simulate` at `level` (plus `extra` flags) with `tree`'s code; its figures."""
    rollouts = max(args.rollouts, 4 * level)
    with tempfile.TemporaryDirectory() as tmp:
        out, report = Path(tmp) / "rows.jsonl", Path(tmp) / "report.json"
        cmd = [*simulate_command(args.spec, base_url, rollouts, level, out, report), *extra]
        env = {**os.environ, "WHILEAI_HOME": tmp, "PYTHONPATH": _path(tree)}
        load = _load()
        start = time.perf_counter()
        proc = subprocess.Popen(
            cmd, env=env, cwd=tree, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        fds = _PeakFds(proc.pid)
        fds.start()
        assert proc.stderr is not None
        stderr = proc.stderr.read()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        peak_fds = fds.stop()
        if proc.returncode != 0:
            sys.stderr.write(stderr.decode(errors="replace")[-2000:])
            raise SystemExit(f"simulate failed at concurrency {level} ({tree})")
        data = json.loads(report.read_text())
    rows, calls = data["rows"], model_calls(data)
    stats = list(data["models"].values())
    per_rollout = calls / max(rows, 1)
    ideal = level / (per_rollout * args.latency)
    cpu = usage.ru_utime + usage.ru_stime
    return {
        "concurrency": level, "rollouts": rows, "calls": calls,
        "calls_per_rollout": round(per_rollout, 3), "wall_s": round(wall, 2),
        "rollouts_per_s": round(rows / wall, 1), "ideal_per_s": round(ideal, 1),
        "share_of_ideal": round(rows / wall / ideal, 3), "cpu_s": round(cpu, 2),
        "cpu_ms_per_call": round(1000 * cpu / max(calls, 1), 3),
        "retries": sum(s["retries"] for s in stats),
        "errors": sum(sum(s["errors"].values()) for s in stats),
        "failed": sum(s["failed"] for s in stats), "peak_fds": peak_fds, "load": load,
    }  # fmt: skip


# -- raw call rate: SDK 0.131's complete() and this tree's ModelClient, same calls --------

_MESSAGES = [
    {"role": "system", "content": "You are the support agent for an online store."},
    {"role": "user", "content": "Hi, can you check order ORD-1234 for me? It has not come."},
]

_SDK_CHILD = """
import json, os, sys, threading, time
from whileai.simulations.generate.agents import complete
url, threads, calls, messages, tools = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), \\
    json.loads(sys.argv[4]), json.loads(sys.argv[5])
per = calls // threads
errors = []
def work():
    for _ in range(per):
        try:
            complete(url, "bench", messages, tools=tools)
        except Exception as exc:
            errors.append(repr(exc))
complete(url, "bench", messages, tools=tools)
cpu0, wall0 = time.process_time(), time.perf_counter()
pool = [threading.Thread(target=work) for _ in range(threads)]
for t in pool: t.start()
for t in pool: t.join()
print(json.dumps({"calls": per * threads, "cpu": time.process_time() - cpu0,
                  "wall": time.perf_counter() - wall0, "errors": len(errors)}))
"""

_OURS_CHILD = """
import asyncio, json, sys, time
from whileai_core.models import ModelClient, parse_model_spec
url, level, calls, messages, tools = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), \\
    json.loads(sys.argv[4]), json.loads(sys.argv[5])
async def main():
    client = ModelClient(parse_model_spec(url, model="bench"), concurrency=level)
    per = calls // level
    async def worker():
        for _ in range(per):
            await client.chat(messages, tools, temperature=0.7, max_tokens=1024)
    await asyncio.gather(*(client.chat(messages, tools) for _ in range(level)))  # warm-up
    cpu0, wall0 = time.process_time(), time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(level)))
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    await client.aclose()
    s = client.stats
    print(json.dumps({"calls": per * level, "cpu": cpu, "wall": wall,
                      "errors": sum(s.errors.values()) + s.failed}))
try:  # the loop a model-backed run gets (uvloop when installed); older trees: asyncio's
    from whileai_core.aio import run
except ImportError:
    run = asyncio.run
run(main())
"""


def _median(runs: Any) -> dict:
    """Of repeated runs, the one with the median CPU per call (the lower middle one for an
    even count); every run's figure under `cpu_ms_per_call_runs`."""
    every = sorted(runs, key=lambda r: r["cpu_ms_per_call"])
    pick = dict(every[(len(every) - 1) // 2])
    if len(every) > 1:
        pick["cpu_ms_per_call_runs"] = [r["cpu_ms_per_call"] for r in every]
    return pick


def _tools() -> list[dict[str, Any]]:
    spec = json.loads((ROOT / "specs/orders/spec.json").read_text())
    return spec["tools"]


def run_calls(python: str, child: str, tree: Path | None, base_url: str, level: int,
              args: argparse.Namespace) -> dict:  # fmt: skip
    calls = max(args.calls, 4 * level)
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = _path(tree)
    else:
        env.pop("PYTHONPATH", None)
    load = _load()
    done = subprocess.run(
        [python, "-c", child, base_url, str(level), str(calls), json.dumps(_MESSAGES),
         json.dumps(_tools())],
        env=env, capture_output=True, text=True, cwd=tempfile.gettempdir(),
    )  # fmt: skip
    if done.returncode != 0:
        sys.stderr.write(done.stderr[-2000:])
        raise SystemExit(f"call-rate child failed ({python})")
    got = json.loads(done.stdout.strip().splitlines()[-1])
    rate = got["calls"] / got["wall"]
    return {
        "concurrency": level, "calls": got["calls"], "calls_per_s": round(rate, 1),
        "share_of_ideal": round(rate * args.latency / level, 3),
        "cpu_ms_per_call": round(1000 * got["cpu"] / got["calls"], 3),
        "errors": got["errors"], "load": load,
    }  # fmt: skip


def _loop_after() -> str:
    """Which event loop this tree's model-backed runs get here (uvloop if importable)."""
    probe = "from whileai_core.aio import loop_name; print(loop_name())"
    env = {**os.environ, "PYTHONPATH": _path(ROOT)}
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True)
    return done.stdout.strip() or "unknown"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--levels", default="64,256,1024")
    parser.add_argument("--rollouts", type=int, default=4096)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--spec", default="specs/orders")
    parser.add_argument("--before", type=Path, help="a checkout of the code before")
    parser.add_argument("--sdk", help="a Python with SDK 0.131 installed (its call rate)")
    parser.add_argument("--processes", type=int, default=0,
                        help="also run this tree with --executor processes --shards N")
    parser.add_argument("--calls", type=int, default=4096, help="calls per call-rate run")
    parser.add_argument("--repeat", type=int, default=1,
                        help="runs of each line; the median by CPU per call is shown (the lower "
                        "middle one for an even count), every run's figure in --json")
    parser.add_argument("--json", action="store_true", help="Also print the figures as JSON.")
    args = parser.parse_args()
    levels = [int(x) for x in args.levels.split(",")]
    trees: list[tuple[str, Path, list[str]]] = [("after", ROOT, [])]
    if args.before:
        trees.insert(0, ("before", args.before.resolve(), []))
    if args.processes:
        shards = ["--executor", "processes", "--shards", str(args.processes)]
        trees.append((f"procs{args.processes}", ROOT, shards))
    results: dict[str, Any] = {"cores": os.cpu_count(), "latency": args.latency}
    with loopback_stub(args.latency) as (base_url, _):
        print(
            f"whileai simulate {args.spec} against the stub ({args.latency * 1000:.0f} ms a "
            f"call), {os.cpu_count()} cores, load average {_load()} (1/5 min); event loop "
            f"after: {_loop_after()}",
            flush=True,
        )
        print(f"{'tree':<8}{'conc':>6}{'rollouts/s':>12}{'ideal':>9}{'share':>8}"
              f"{'CPU ms/call':>13}{'retries':>9}{'errors':>8}{'fds':>7}{'load':>11}")  # fmt: skip
        for label, tree, extra in trees:
            for level in levels:
                r = _median(
                    run_simulate(tree, base_url, level, args, extra) for _ in range(args.repeat)
                )
                results.setdefault("simulate", {}).setdefault(label, []).append(r)
                print(
                    f"{label:<8}{level:>6}{r['rollouts_per_s']:>12.1f}{r['ideal_per_s']:>9.1f}"
                    f"{100 * r['share_of_ideal']:>7.1f}%{r['cpu_ms_per_call']:>13.3f}"
                    f"{r['retries']:>9}{r['errors']:>8}{r['peak_fds']:>7}{r['load']:>11}",
                    flush=True,
                )
        if args.sdk:
            print("\nraw chat-completion calls (the orders agent's first turn), "
                  "N in flight:")  # fmt: skip
            print(f"{'client':<22}{'conc':>6}{'calls/s':>10}{'share':>8}{'CPU ms/call':>13}"
                  f"{'errors':>8}{'load':>11}")  # fmt: skip
            clients = [("SDK 0.131 complete()", args.sdk, _SDK_CHILD, None),
                       ("ModelClient (after)", sys.executable, _OURS_CHILD, ROOT)]  # fmt: skip
            if args.before:
                clients.insert(1, ("ModelClient (before)", sys.executable, _OURS_CHILD,
                                   args.before.resolve()))  # fmt: skip
            for level in levels:
                for label, python, child, tree in clients:
                    r = _median(
                        run_calls(python, child, tree, base_url, level, args)
                        for _ in range(args.repeat)
                    )
                    results.setdefault("calls", {}).setdefault(label, []).append(r)
                    print(
                        f"{label:<22}{level:>6}{r['calls_per_s']:>10.1f}"
                        f"{100 * r['share_of_ideal']:>7.1f}%{r['cpu_ms_per_call']:>13.3f}"
                        f"{r['errors']:>8}{r['load']:>11}",
                        flush=True,
                    )
    if args.json:
        print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
