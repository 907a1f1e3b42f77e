"""`whileai rank`: a `quality` score per row, beside `reward` and never in its place.

`reward` says whether the task was done; `quality` says how the agent conducted itself
while doing it, so two passing rows (or two failing ones) can be told apart when an SFT
set keeps the best of each ask. It is the mean of the row's behaviour markers as
`whileai mark` computes them (each 0 to 1, 1 = good):

    style      no_boilerplate, no_hedging, no_apology, no_sycophancy, answered
    trace      the seven trajectory markers (no repeated call, no ignored error, ...)
    grounding  argument_grounding: tool arguments that come from the conversation

A row where none of them applies gets `quality` None, never a made-up number, and a
row the markers cannot read is passed on unscored and counted. `quality` is rounded to
4 places; `whileai mark` on the same rows shows its parts. Nothing else on the row
changes (the markers themselves are not stamped: run `mark` for that).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ..jsonl import OnError, ReadStats, RowWriter, read_rows
from .mark import MarkOptions, mark_row

Row = dict[str, Any]


@dataclass
class RankReport:
    rows: int = 0
    scored: int = 0
    unscored: int = 0
    failed: int = 0
    total: float = 0.0
    skipped_lines: int = 0

    def as_dict(self) -> dict[str, Any]:
        mean = round(self.total / self.scored, 4) if self.scored else None
        return {"rows": self.rows, "scored": self.scored, "unscored": self.unscored,
                "failed": self.failed, "skipped_lines": self.skipped_lines,
                "mean_quality": mean}  # fmt: skip

    def lines(self) -> list[str]:
        mean = self.as_dict()["mean_quality"]
        out = [f"ranked {self.rows} rows: {self.scored} scored, mean quality "
               f"{'n/a' if mean is None else f'{mean:.3f}'}"]  # fmt: skip
        if self.unscored:
            out.append(f"{self.unscored} rows had no marker that applies: quality None")
        if self.failed:
            out.append(f"{self.failed} rows could not be read by the markers: left unscored")
        return out


def quality_of(row: Row, options: MarkOptions | None = None) -> float | None:
    """The mean of the behaviour markers `mark` computes for `row`; None when none apply."""
    marked = mark_row({**row, "markers": {}, "marker_sources": {}}, options or MarkOptions())
    values = [
        float(v) for v in (marked.get("markers") or {}).values()
        if isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v <= 1
    ]  # fmt: skip
    return round(sum(values) / len(values), 4) if values else None


def rank_rows(rows: Iterable[Row], report: RankReport | None = None) -> Iterator[Row]:
    """Each row with `quality`; order kept."""
    rep = report if report is not None else RankReport()
    options = MarkOptions()
    for row in rows:
        rep.rows += 1
        try:
            quality = quality_of(row, options)
        except Exception:
            rep.failed += 1
            yield {**row, "quality": None}
            continue
        if quality is None:
            rep.unscored += 1
        else:
            rep.scored += 1
            rep.total += quality
        yield {**row, "quality": quality}


def rank_files(
    inputs: Sequence[str],
    *,
    output: str | None = None,
    sort: bool = False,
    on_error: OnError = "fail",
) -> RankReport:
    """Rank rows from `inputs` into `output`; `sort` writes the best first (ties keep input
    order), which holds every row in memory."""
    stats = ReadStats()
    report = RankReport()
    ranked = rank_rows(read_rows(inputs, on_error=on_error, stats=stats), report)
    with RowWriter(output) as writer:
        if sort:
            held = list(ranked)
            held.sort(key=lambda r: 1.0 if r["quality"] is None else -r["quality"])
            writer.write_many(held)
        else:
            writer.write_many(ranked)
    report.skipped_lines = stats.skipped
    return report
