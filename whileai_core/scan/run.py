"""The scan over files, and `scan --diff`: what an update moved toward.

`scan_files` reads its inputs twice (vocabulary, then columns); stdin is spooled to a
file first, so a pipe works and memory holds columns, never rows. `scan_diff` builds one
vocabulary over both sides, scans each, and compares every feature's prevalence after
against before (a standardized shift). What the update moved toward is the feature the
*before* reward paid for (above its floor) that shifted furthest in the paid direction;
when either side is degenerate the name is withheld, since a degenerate scan cannot say
what the reward paid for.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from ..jsonl import OnError, ReadStats, read_rows, spooled
from .collect import Row, RowSource, ScanData, choose_vocabulary, collect
from .engine import ScanOptions, analyse, format_scan, specificity


def file_source(paths: Sequence[str], on_error: OnError, stats: ReadStats) -> RowSource:
    """A re-readable source over files: each call reads them from the top. Bad lines are
    counted on the first pass only."""
    passes = [0]

    def rows() -> Iterator[Row]:
        passes[0] += 1
        first = passes[0] == 1
        yield from read_rows(
            paths, on_error=on_error if first else "skip", stats=stats if first else ReadStats()
        )

    return rows


def scan_files(
    inputs: Sequence[str], opts: ScanOptions | None = None, *, on_error: OnError = "fail"
) -> dict[str, Any]:
    """`whileai scan FILE...`."""
    opts = opts or ScanOptions()
    stats = ReadStats()
    with spooled(inputs) as (paths, _labels):
        source = file_source(paths, on_error, stats)
        vocab = choose_vocabulary([source], opts.auto_size)
        scan = analyse(collect(source, vocab, opts.features), opts)
    scan["skipped_lines"] = stats.skipped
    return scan


def _prevalence(data: ScanData) -> dict[str, tuple[float, float]]:
    """feature -> (mean, variance) over every row of one side."""
    n = max(1, data.rows)
    out: dict[str, tuple[float, float]] = {}
    if len(data.hand_col):
        cols = np.frombuffer(data.hand_col, dtype=np.int32)
        vals = np.frombuffer(data.hand_val, dtype=np.float64)
        sums = np.bincount(cols, weights=vals, minlength=len(data.hand_names))
        squares = np.bincount(cols, weights=vals * vals, minlength=len(data.hand_names))
        for i, name in enumerate(data.hand_names):
            mean = sums[i] / n
            out[name] = (float(mean), float(max(0.0, squares[i] / n - mean * mean)))
    if len(data.auto_col):
        counts = np.bincount(
            np.frombuffer(data.auto_col, dtype=np.int32), minlength=len(data.vocabulary.items)
        )
        for i, item in enumerate(data.vocabulary.items):
            p = counts[i] / n
            out[f"contains:{item}"] = (float(p), float(p * (1 - p)))
    return out


def _shifts(before: ScanData, after: ScanData) -> list[dict[str, Any]]:
    """Every feature's standardized change in prevalence, largest first."""
    b, a = _prevalence(before), _prevalence(after)
    shifts: list[dict[str, Any]] = []
    for name in sorted(set(b) | set(a)):
        mb, vb = b.get(name, (0.0, 0.0))
        ma, va = a.get(name, (0.0, 0.0))
        sd = math.sqrt((va + vb) / 2)
        if sd < 1e-9:
            continue
        shifts.append(
            {
                "name": name,
                "before": round(mb, 4),
                "after": round(ma, 4),
                "d": round((ma - mb) / sd, 4),
            }
        )
    shifts.sort(key=lambda s: (-abs(s["d"]), s["name"]))
    return shifts


def scan_diff(
    before: RowSource | Iterable[Row],
    after: RowSource | Iterable[Row],
    opts: ScanOptions | None = None,
) -> dict[str, Any]:
    """Before and after an update (row lists, or callables returning a fresh iterable)."""
    opts = opts or ScanOptions()
    before = before if callable(before) else rows_source(before)
    after = after if callable(after) else rows_source(after)
    vocab = choose_vocabulary([before, after], opts.auto_size)
    data_b = collect(before, vocab, opts.features)
    data_a = collect(after, vocab, opts.features)
    scan_b, scan_a = analyse(data_b, opts), analyse(data_a, opts)
    shifts = _shifts(data_b, data_a)
    report: dict[str, Any] = {
        "before": _summary(scan_b),
        "after": _summary(scan_a),
        "shifts": shifts[:15],
        "moved_toward": None,
        "withheld": None,
        "scans": {"before": scan_b, "after": scan_a},
    }
    degenerate = [
        side for side, s in (("before", scan_b), ("after", scan_a)) if s["regime"] == "degenerate"
    ]
    if degenerate:
        cause = scan_b["cause"] or scan_a["cause"]
        report["withheld"] = (
            f"the {' and '.join(degenerate)} scan is degenerate ({cause}): it cannot say what "
            "the reward paid for, so no direction is named"
        )
        return report
    by_name = {s["name"]: s for s in shifts}
    paid = [f for f in scan_b["features"] if f["above_floor"]]
    moves = []
    for f in paid:
        shift = by_name.get(f["name"])
        if shift is not None:
            toward = shift["d"] * (1 if f["r"] > 0 else -1)
            moves.append((toward, f, shift))
    moves.sort(key=lambda m: (-round(m[0], 9), -specificity(m[1]["name"]), m[1]["name"]))
    if moves and moves[0][0] > 0:
        toward, feature, shift = moves[0]
        report["moved_toward"] = {
            "name": feature["name"],
            "paid_r": feature["r"],
            "before": shift["before"],
            "after": shift["after"],
            "d": shift["d"],
            "endorsed": feature["endorsed"],
        }
    elif not paid:
        report["withheld"] = "the before scan found nothing above its floor to move toward"
    else:
        report["withheld"] = "nothing the before reward paid for moved in the paid direction"
    return report


def _summary(scan: dict[str, Any]) -> dict[str, Any]:
    keys = ("regime", "top_feature", "top_r", "tau", "rows", "judged", "cause", "integrity")
    return {k: scan.get(k) for k in keys}


def diff_files(
    before: str, after: str, opts: ScanOptions | None = None, *, on_error: OnError = "fail"
) -> dict[str, Any]:
    stats = ReadStats()
    with spooled([before, after]) as (paths, _labels):
        report = scan_diff(
            file_source([paths[0]], on_error, stats), file_source([paths[1]], on_error, stats), opts
        )
    report["skipped_lines"] = stats.skipped
    return report


def format_diff(report: dict[str, Any]) -> list[str]:
    b, a = report["before"], report["after"]
    out = [
        f"scan --diff: before {b['regime']} (top {b['top_feature']}), "
        f"after {a['regime']} (top {a['top_feature']})"
    ]
    moved = report["moved_toward"]
    if moved:
        tag = (
            " (endorsed)"
            if moved["endorsed"]
            else " (not endorsed)"
            if moved["endorsed"] is False
            else ""
        )
        out.append(
            f"  the update moved toward {moved['name']}{tag}: prevalence {moved['before']:.3f} -> "
            f"{moved['after']:.3f} (d={moved['d']:+.2f}); the before reward paid for it "
            f"(r={moved['paid_r']:+.2f})"
        )
    else:
        out.append(f"  no direction named: {report['withheld']}")
    for s in report["shifts"][:8]:
        out.append(f"    {s['d']:+.2f}  {s['name']}  {s['before']:.3f} -> {s['after']:.3f}")
    return out


def rows_source(rows: Iterable[Row]) -> RowSource:
    held = rows if isinstance(rows, list) else list(rows)
    return lambda: held


__all__ = ["diff_files", "format_diff", "format_scan", "rows_source", "scan_diff", "scan_files"]
