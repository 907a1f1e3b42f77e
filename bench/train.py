"""Benchmark: `whileai train` steps per second on the tiny test model, on this CPU.

Run by hand: `.venv/bin/python bench/train.py [--steps 20] [--hidden 32 64]`. It needs the
`train` extra: run from .venv it re-runs itself in side/train's venv (`make side` builds
it), and says it skipped where there is none. Each method trains `--steps` LoRA steps on
the orders rows (GRPO: 4 completions of up to 32 tokens per prompt) with no holdout, and
the rate is read off the run's own points (their timestamps from the first logged step
to the last), so model loading and data shaping are not counted. No target: the figure
is what a laptop-class CPU does with a model this small, to size CI and to notice a
regression (a trainer that suddenly re-tokenizes every step).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SIDE = ROOT / "side" / "train" / "venv" / "bin" / "python"
ROWS = ROOT / "tests" / "golden" / "grade" / "orders-rl.jsonl"
SPEC = ROOT / "specs" / "orders"
METHODS = {
    "sft": [],
    "dpo": [],
    "rm": [],
    "grpo": ["--spec", str(SPEC), "--generations", "4", "--batch-size", "4",
             "--max-completion-length", "32"],
}  # fmt: skip


def _rate(record: dict) -> tuple[float, int]:
    """(steps per second, steps) between the first and last points that carry a loss."""
    points = [p for p in record["series"] if "loss" in p and p.get("ts")]
    if len(points) < 2:
        return 0.0, len(points)
    steps = points[-1]["step"] - points[0]["step"]
    seconds = points[-1]["ts"] - points[0]["ts"]
    return (steps / seconds if seconds > 0 else 0.0), steps


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--hidden", type=int, nargs="+", default=[32, 64])
    args = parser.parse_args()
    if importlib.util.find_spec("torch") is None:
        if SIDE.exists():
            again = [str(SIDE), __file__, *sys.argv[1:]]
            env = {**os.environ, "PYTHONPATH": str(ROOT)}
            return subprocess.run(again, cwd=ROOT, env=env).returncode
        print("train: skipped (no train extra here; `make side` builds side/train)")
        return 0
    import torch

    print(f"train: torch {torch.__version__}, {torch.get_num_threads()} threads, CPU")
    with tempfile.TemporaryDirectory(prefix="whileai-bench-train-") as tmp:
        env = {**os.environ, "WHILEAI_HOME": tmp, "HF_HUB_OFFLINE": "1",
               "TOKENIZERS_PARALLELISM": "false", "PYTHONPATH": str(ROOT)}  # fmt: skip
        for hidden in args.hidden:
            model = Path(tmp) / f"tiny-{hidden}"
            subprocess.run([sys.executable, "-m", "whileai_core.testing.tinymodel", str(model),
                            str(ROWS), str(SPEC / "spec.json"), "--hidden", str(hidden)],
                           check=True, capture_output=True, env=env)  # fmt: skip
            for method, extra in METHODS.items():
                done = subprocess.run(
                    [sys.executable, "-m", "whileai_cli", "train", str(ROWS), "--method", method,
                     "--base-model", str(model), "--steps", str(args.steps), "--holdout", "none",
                     "--max-length", "2048", "--json", *extra],
                    capture_output=True, env=env,
                )  # fmt: skip
                if done.returncode != 0:
                    print(f"  {method} hidden {hidden}: failed: {done.stderr.decode()[-300:]}")
                    continue
                rate, steps = _rate(json.loads(done.stdout))
                print(f"  {method:<4} hidden {hidden}: {rate:.2f} steps/s over {steps} steps")
    return 0


if __name__ == "__main__":
    sys.exit(main())
