"""Cold-start time of the `whileai` command against a bare interpreter.

Run by hand (`make bench` or `python bench/startup.py`); never a timed test. Prints the
median over several runs of `python -c pass`, `whileai --help` and `whileai validate` on
a one-row file, and the heaviest modules `--help` imports.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RUNS = 15


def _median_ms(cmd: list[str], runs: int = RUNS) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def _heaviest_imports(cmd: list[str], top: int = 8) -> list[tuple[int, str]]:
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", *cmd], capture_output=True, text=True, check=True
    )
    rows = []
    for line in proc.stderr.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[1].strip().isdigit():
            rows.append((int(parts[1]), parts[2].rstrip()))
    return sorted(rows, reverse=True)[:top]


def main() -> None:
    cli = [sys.executable, "-m", "whileai_cli"]
    with tempfile.TemporaryDirectory() as tmp:
        one_row = Path(tmp) / "one.jsonl"
        one_row.write_text('{"prompt": "hi"}\n')
        base = _median_ms([sys.executable, "-c", "pass"])
        help_ms = _median_ms([*cli, "--help"])
        validate_ms = _median_ms([*cli, "validate", str(one_row)])
    print(f"python -c pass         median {base:7.1f} ms over {RUNS} runs")
    print(f"whileai --help         median {help_ms:7.1f} ms  (+{help_ms - base:.1f} ms)")
    print(f"whileai validate 1 row median {validate_ms:7.1f} ms  (+{validate_ms - base:.1f} ms)")
    print("heaviest imports of --help (cumulative us):")
    for micros, name in _heaviest_imports(["-m", "whileai_cli", "--help"]):
        print(f"  {micros:>8}  {name.strip()}")


if __name__ == "__main__":
    main()
