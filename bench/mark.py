"""Benchmark: `whileai mark` (style, trace, grounding) streaming 100,000 rows.

Run by hand: `.venv/bin/python bench/mark.py [--groups 12500]`. Target: peak RSS under
200 MB whatever the row count (mark holds one row at a time). Rows are the simulate-shaped
rows of bench/optimize.py (12,500 asks x 8, a tool call with its result, a reply, a
privileged block). Also runs 25,000 rows to show the cost is linear and the memory flat.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _measure import measure
from optimize import make_rows

ROOT = Path(__file__).resolve().parent.parent
WHILEAI = [sys.executable, "-m", "whileai_cli"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--groups", type=int, default=12_500)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="whileai-bench-mark-") as tmp:
        for groups in (args.groups // 4, args.groups):
            src = Path(tmp) / f"rows-{groups}.jsonl"
            n = make_rows(src, groups, 8)
            out = Path(tmp) / "marked.jsonl"
            wall, cpu, rss = measure([*WHILEAI, "mark", str(src), "-o", str(out)])
            print(
                f"mark {n:,} rows ({src.stat().st_size / 1e6:.0f} MB): {wall:.1f} s wall, "
                f"{cpu:.1f} s CPU, {n / wall:,.0f} rows/s, peak RSS {rss:.0f} MB "
                f"(target < 200 MB)"
            )


if __name__ == "__main__":
    main()
