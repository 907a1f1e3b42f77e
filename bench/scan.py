"""Benchmark: `whileai scan` on 100,000 rows, and `optimize --endorsed` next to optimize.

Run by hand: `.venv/bin/python bench/scan.py [--groups 12500]`. Targets: the scan's peak
RSS under 400 MB on 100,000 rows with cost linear in rows (25k, 50k and 100k rows are
timed); rows of one ask adjacent as simulate writes them, and the same rows shuffled (the
scan says so and groups by an ask column, at no extra cost); `optimize --endorsed`'s peak
close to the larger of optimize alone and the scan alone, not their sum.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _measure import measure
from optimize import make_rows

WHILEAI = [sys.executable, "-m", "whileai_cli"]
SCAN = [*WHILEAI, "scan", "--endorsed", "tool:get_order"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--groups", type=int, default=12_500)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="whileai-bench-scan-") as tmp:
        full = Path(tmp) / "rows.jsonl"
        n = make_rows(full, args.groups, 8)
        lines = full.read_bytes().splitlines(keepends=True)
        per_row = []
        for share in (4, 2, 1):
            part = Path(tmp) / f"rows-{share}.jsonl"
            part.write_bytes(b"".join(lines[: n // share]))
            wall, cpu, rss = measure([*SCAN, str(part)])
            rows = n // share
            per_row.append(cpu / rows * 1e6)
            print(
                f"scan {rows:,} rows (adjacent): {wall:.1f} s wall, {cpu:.1f} s CPU "
                f"({cpu / rows * 1e6:.0f} us/row), peak RSS {rss:.0f} MB"
            )
        print(f"  CPU per row at 25k/50k/100k: {', '.join(f'{u:.0f}' for u in per_row)} us")
        shuffled = Path(tmp) / "shuffled.jsonl"
        random.Random(0).shuffle(lines)
        shuffled.write_bytes(b"".join(lines))
        wall, cpu, rss = measure([*SCAN, str(shuffled)])
        print(f"scan {n:,} rows (shuffled): {wall:.1f} s wall, peak RSS {rss:.0f} MB (< 400)")
        out = Path(tmp) / "kept.jsonl"
        base = [*WHILEAI, "optimize", str(full), "-o", str(out)]
        wall, _, rss_opt = measure(base)
        print(f"optimize {n:,} rows: {wall:.1f} s wall, peak RSS {rss_opt:.0f} MB")
        kept = sum(1 for _ in out.open("rb"))
        wall, _, rss_scan_kept = measure([*SCAN, str(out)])
        print(f"scan of the {kept:,} kept rows: {wall:.1f} s, peak RSS {rss_scan_kept:.0f} MB")
        wall, _, rss_both = measure([*base, "--endorsed", "tool:get_order"])
        print(
            f"optimize --endorsed: {wall:.1f} s wall, peak RSS {rss_both:.0f} MB "
            f"(larger of the two alone {max(rss_opt, rss_scan_kept):.0f} MB, "
            f"their sum {rss_opt + rss_scan_kept:.0f} MB)"
        )


if __name__ == "__main__":
    main()
