"""Selection: which graded rows a trainer should see, and a report of what was dropped and why.

RL mode (`rl.py`) keeps whole groups; SFT mode (`sft.py`) is rejection sampling. Before
either, rows that cannot be trusted are dropped (judge not ok, no reward, empty reply, a
reply that quotes its own privileged block), then repeats of the same trajectory inside
an ask (they add nothing to an advantage) and truncated rollouts, by `truncated` policy.

Every kept row gets a `calibration` stamp measured on the rows as they came in, before any
of the trimming above (`calibration.py`). Input rows are never mutated: a kept row is a
shallow copy with the new keys added, unknown keys intact.

Selection works on a compact record per row (`records.py`); the row itself is only carried
along. `optimize_files` reads its inputs twice instead of holding them: the first pass
makes the records, the second reads each kept row back from its byte span, so memory grows
with the records, not the rows (stdin is spooled to a temporary file first).
"""

from __future__ import annotations

import gc
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import orjson

from ..compare.lineage import eval_sourced_warning
from ..errors import WhileaiError
from ..jsonl import OnError, ReadStats, RowWriter, iter_located, spooled
from ..metrics.passat import pass_numbers
from ..metrics.tally import passed
from ..row.buffer import FileRows, RowBuffer, Span
from .calibration import stamp_from
from .gate import GateFacts, gate_facts
from .hygiene import survival_warnings
from .options import OptimizeOptions, OptimizeReport
from .records import Record, Recorder, Row
from .rl import Kept, select_rl
from .sft import select_sft

__all__ = ["OptimizeOptions", "OptimizeReport", "Selection", "optimize", "optimize_files", "select"]


class _Payloads(Protocol):
    def raw(self, span: Span) -> bytes: ...

    def load(self, span: Span) -> dict[str, Any]: ...


@dataclass
class Selection:
    """A finished selection: the full report now, the kept rows as they are written."""

    report: OptimizeReport
    _kept: Kept
    _payloads: _Payloads | None = None

    def rows(self) -> Iterator[Row]:
        """The kept rows in output order, each a new dict (stamp and group stats added)."""
        for rec, stamp, extra in self._kept:
            yield self._row(rec, stamp, extra)

    def _row(self, rec: Record, stamp: dict[str, Any], extra: dict[str, Any]) -> Row:
        """One kept row as a new dict; `encoded` falls back to it where it cannot splice."""
        if rec.obj is not None:
            row = rec.obj
        else:
            assert self._payloads is not None
            row = self._payloads.load(rec.span)
        new = {**row, **extra}
        if rec.change == "overlong":
            new["overlong"] = True
        elif rec.change == "penalized":
            new["reward_before_penalty"] = row["reward"]
            new["reward"] = 0.0
        if not rec.carried:
            new["calibration"] = stamp
        return new

    def encoded(self) -> Iterator[Any]:
        """The same rows, ready for `orjson.dumps`: pre-serialized JSON where possible.

        A row held as JSON whose keys do not collide with the ones selection adds is written
        by splicing the new keys onto its JSON, with no parse; anything else is a dict.
        """
        fragment = getattr(orjson, "Fragment", None)
        payloads = self._payloads
        if payloads is None or fragment is None:
            yield from self.rows()
            return
        # The rows of a group come together and add the same keys (its stats and stamp):
        # their JSON is made once per group and kind of row, not once per row.
        last: tuple[object, object, bool, bool] | None = None
        suffix = b""
        for rec, stamp, extra in self._kept:
            if rec.clash or rec.change == "penalized":
                yield self._row(rec, stamp, extra)
                continue
            overlong = rec.change == "overlong"
            if (
                last is None
                or extra is not last[0]
                or stamp is not last[1]
                or overlong is not last[2]
                or rec.carried is not last[3]
            ):
                added = dict(extra)
                if overlong:
                    added["overlong"] = True
                if not rec.carried:
                    added["calibration"] = stamp
                suffix = orjson.dumps(added) if added else b""
                last = (extra, stamp, overlong, rec.carried)
            body = payloads.raw(rec.span)
            if not suffix:
                yield fragment(body)
            elif body == b"{}":
                yield fragment(suffix)
            else:
                yield fragment(body[:-1] + b"," + suffix[1:])

    def __len__(self) -> int:
        return len(self._kept)


def optimize(
    rows: Iterable[Row], options: OptimizeOptions | None = None
) -> tuple[list[Row], OptimizeReport]:
    """Select training rows from graded rows. Returns (kept rows, report); input untouched."""
    selection = select(rows, options)
    kept = list(selection.rows())
    opts = options or OptimizeOptions()
    if opts.endorsed:
        attach_scan(selection.report, lambda: kept, opts)
    return kept, selection.report


def select(
    rows: Iterable[Row], options: OptimizeOptions | None = None, *, compact: bool = False
) -> Selection:
    """The selection with its report; `compact=True` keeps each row as JSON bytes meanwhile."""
    recorder = Recorder(tics=_reads_tics(options))
    if not compact:
        return _select((recorder.record(row) for row in rows), options, None)
    buffer = RowBuffer()
    records = (recorder.record(row, buffer.add(row), keep=False) for row in rows)
    return _select(records, options, buffer)


def optimize_files(
    inputs: Sequence[str],
    options: OptimizeOptions | None = None,
    *,
    output: str | None = None,
    on_error: OnError = "fail",
) -> OptimizeReport:
    """`whileai optimize`: select from JSONL files (or '-') and write the kept rows."""
    stats = ReadStats()
    opts = options or OptimizeOptions()
    with spooled(inputs) as (paths, labels):
        files = FileRows(paths)
        try:
            # Rows are acyclic; pausing the cycle collector while records pile up saves it
            # rescanning a growing heap on every allocation burst. It is turned back on
            # only once `_select_files` has returned and its records are freed: with them
            # alive, the first collection after would walk every one of them (10% of a
            # 100k-row run).
            gc.disable()
            try:
                report, spans = _select_files(
                    paths, labels, files, options, output, on_error, stats
                )
            finally:
                gc.enable()
            if opts.endorsed:
                # The scan gets its own pass over the kept rows, read back from the input by
                # span, after the selection's records are let go: the scan's memory replaces
                # optimize's instead of adding to it.
                gc.collect()
                attach_scan(report, lambda: _read_spans(files, spans), opts)
        finally:
            files.close()
    report.skipped_lines = stats.skipped
    return report


def _select_files(
    paths: Sequence[str],
    labels: Sequence[str],
    files: FileRows,
    options: OptimizeOptions | None,
    output: str | None,
    on_error: OnError,
    stats: ReadStats,
) -> tuple[OptimizeReport, array[int]]:
    """Read, select and write; the report, and the kept rows' spans when the hack scan
    will read them again. Spans go into one flat array: a list of the records' own span
    tuples would pin the heap they were allocated in."""
    recorder = Recorder(tics=_reads_tics(options))
    located = iter_located(paths, on_error=on_error, stats=stats, labels=labels)
    records = (
        recorder.record(line.row, (line.index, line.start, line.end), keep=False)
        for line in located
    )
    selection = _select(records, options, files)
    with RowWriter(output) as writer:
        writer.write_many(selection.encoded())
    spans = array("q")
    if (options or OptimizeOptions()).endorsed:
        for rec, _, _ in selection._kept:
            spans.extend(rec.span)
    return selection.report, spans


def _reads_tics(options: OptimizeOptions | None) -> bool:
    """Style tics are read only where they are kept out: SFT, unless told to keep them."""
    return options is not None and options.mode == "sft" and not options.keep_tics


def _read_spans(files: FileRows, spans: array[int]) -> Iterator[Row]:
    for i in range(0, len(spans), 3):
        yield files.load((spans[i], spans[i + 1], spans[i + 2]))


def attach_scan(
    report: OptimizeReport, rows: Callable[[], Iterable[Row]], opts: OptimizeOptions
) -> None:
    """Run the hack scan over the kept rows and carry it (and its warnings) in the report.

    A reward that tracks a shortcut is a judge problem, so it is flagged, never pruned."""
    from ..scan.engine import ScanOptions, hack_scan

    scan = hack_scan(rows, ScanOptions(endorsed=opts.endorsed, seed=opts.seed))
    report.hack_scan = scan
    report.hygiene_warnings.extend(scan["warnings"])
    if scan["regime"] != "reward_hack" and scan["regime"] not in ("train", "unknown"):
        report.hygiene_warnings.append(
            f"hack scan: {scan['regime']} ({scan.get('cause') or 'see report.hack_scan'})"
        )


def _select(
    records: Iterable[Record], options: OptimizeOptions | None, payloads: _Payloads | None
) -> Selection:
    opts = options or OptimizeOptions()
    opts.check()
    groups: dict[str, list[Record]] = {}
    for rec in records:
        groups.setdefault(rec.task, []).append(rec)
    report = OptimizeReport(
        mode=opts.mode,
        band=opts.band,
        enforce_band=opts.enforce_band,
        truncated_policy=opts.truncated,
        groups_in=len(groups),
        select=opts.select if opts.mode == "sft" else None,
    )
    report.rows_in = sum(len(g) for g in groups.values())
    _refuse_ungraded(groups.values())
    report.pass_at_before = pass_numbers(_counts(groups.values()))
    cleaned: list[tuple[str, list[Record], dict[str, Any]]] = []
    for task_id, group in groups.items():
        stamp = stamp_from(task_id, [r.reward for r in group], [r.policy for r in group])
        cleaned.append((task_id, _clean_group(group, opts, report), stamp))
    if opts.mode == "rl":
        if groups and all(len(g) < 2 for g in groups.values()):
            report.warnings.append(
                "every ask has a single rollout, so no group can be mixed: RL selection needs "
                "repeats of each ask (whileai simulate --mode rl, or --repeats 8)"
            )
        kept = select_rl(cleaned, opts, report)
    else:
        kept = select_sft(cleaned, opts, report)
    _finish_report(kept, opts, report)
    return Selection(report, kept, payloads)


def _refuse_ungraded(groups: Iterable[list[Record]]) -> None:
    """Selecting from rows no judge scored drops every one; say so instead of writing nothing."""
    total = errors = 0
    for group in groups:
        for rec in group:
            if rec.reward is not None:
                return
            total += 1
            errors += rec.junk == "judge_status"
    if total:
        raise WhileaiError(
            f"none of the {total} rows carries a clean reward ({total - errors} ungraded, "
            f"{errors} with a judge error): run `whileai grade` first"
        )


def _counts(groups: Iterable[list[Record]]) -> list[tuple[int, int]]:
    counts = []
    for group in groups:
        graded = [r.reward for r in group if r.reward is not None]
        if graded:
            counts.append((len(graded), sum(1 for r in graded if passed(r))))
    return counts


def _clean_group(
    group: list[Record], opts: OptimizeOptions, report: OptimizeReport
) -> list[Record]:
    """Row-level drops inside one ask, in a fixed order so each row counts once."""
    kept: list[Record] = []
    seen: set[bytes] = set()
    for rec in group:
        if rec.junk is not None:
            report.drop(rec.junk)
            continue
        if rec.truncated:
            report.truncated_seen += 1
            if opts.truncated == "drop":
                report.drop("truncated")
                continue
            rec.change = "overlong" if opts.truncated == "keep" else "penalized"
        if rec.traj in seen:
            report.drop("duplicate")
            continue
        seen.add(rec.traj)
        kept.append(rec)
    return kept


def _finish_report(kept: Kept, opts: OptimizeOptions, report: OptimizeReport) -> None:
    recs = [rec for rec, _, _ in kept]
    report.rows_out = len(recs)
    report.calibration_carried = sum(1 for r in recs if r.carried)
    report.eval_sourced = sum(1 for r in recs if r.eval_sourced)
    if report.eval_sourced:
        report.warnings.append(eval_sourced_warning(report.eval_sourced, "kept rows"))
    by_task: dict[str, list[Record]] = {}
    for rec in recs:
        by_task.setdefault(rec.task, []).append(rec)
    if opts.mode == "rl":
        after = [(len(g), sum(1 for r in g if passed(r.effective))) for g in by_task.values()]
        report.pass_at_after = pass_numbers(after, k=report.pass_at_before.get("k"))
        report.hygiene_warnings.extend(
            survival_warnings(report.pass_at_before, report.pass_at_after)
        )
    # The gate reads what the records already hold: no row is read again for it.
    facts = (GateFacts(r.task, r.effective, r.features, True, int(r.features[0]), "") for r in recs)
    report.gate = gate_facts(facts, band=opts.band, strict=False).as_dict()
    signal = report.gate.get("hack_signal") or {}
    report.correlations = {n: f["r"] for n, f in (signal.get("features") or {}).items()}
