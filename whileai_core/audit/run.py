"""`whileai audit KIND ROWS`: one read of the rows, one report.

Every report here is an accumulator fed one row at a time, so an audit over any number
of rows holds what the report keeps (per-ask sums, a few examples), never the rows:

    style            style markers' rates, and which tics the reward pays for
    refusals         over-refusal on benign rows, with a Wilson interval
    flags            trajectory flags: rates, examples, what the reward pays for
    grounding        argument grounding, invented values by tool and key
    leaks            rows that quote their privileged block, and how many could be checked
    stages           rows and tasks per stage; tasks in eval and in training
    correlations     reward vs reply length, tool calls, turns, within ask and pooled
    duplicates       repeated trajectories inside an ask
    near-duplicates  different asks whose prompts are near copies
    lengths          reply length spread, passing vs failing, correlation with reward
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..curate.duplicates import DuplicateGroups, NearDuplicatePrompts
from ..curate.stages import StageReport
from ..jsonl import OnError, ReadStats, read_rows
from ..markers.flags import TraceOptions
from ..markers.grounding import GroundingOptions, GroundingReport, invented
from ..markers.leaks import LeakReport
from ..markers.style import Phrases
from ..markers.view import RowView, view
from ..metrics.tally import task_key
from ..row import ask_text
from ..text.levels import NEAR_DUPLICATE_JACCARD
from .lengths import LengthReport, RewardCorrelations
from .reports import RefusalReport, StyleReport, TraceFlagReport

Row = dict[str, Any]


class Auditor(Protocol):
    def add(self, row: Row) -> None: ...

    def as_dict(self) -> dict[str, Any]: ...

    def lines(self) -> list[str]: ...


@dataclass
class AuditOptions:
    phrases: Phrases = field(default_factory=Phrases)
    trace: TraceOptions = field(default_factory=TraceOptions)
    grounding: GroundingOptions = field(default_factory=GroundingOptions)
    threshold: float = NEAR_DUPLICATE_JACCARD


class _Viewed:
    """A report that reads a row view, fed rows."""

    def __init__(self, report: Any, feed: Callable[[Any, RowView], None] | None = None) -> None:
        self.report = report
        self._feed = feed

    def add(self, row: Row) -> None:
        v = view(row)
        if self._feed is not None:
            self._feed(self.report, v)
        else:
            self.report.add(v)

    def as_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = self.report.as_dict()
        return data

    def lines(self) -> list[str]:
        out: list[str] = self.report.lines()
        return out


class _NearDuplicates:
    def __init__(self, threshold: float) -> None:
        self.report = NearDuplicatePrompts(threshold=threshold)

    def add(self, row: Row) -> None:
        self.report.add(task_key(row), ask_text(row))

    def as_dict(self) -> dict[str, Any]:
        return self.report.as_dict()

    def lines(self) -> list[str]:
        return self.report.lines()


def _grounding(opts: AuditOptions) -> Auditor:
    return _Viewed(GroundingReport(), lambda rep, v: rep.add(v, invented(v, opts.grounding)))


AUDITS: dict[str, Callable[[AuditOptions], Auditor]] = {
    "style": lambda o: _Viewed(StyleReport(o.phrases)),
    "refusals": lambda o: _Viewed(RefusalReport(o.phrases)),
    "flags": lambda o: _Viewed(TraceFlagReport(o.trace)),
    "grounding": _grounding,
    "leaks": lambda o: _Viewed(LeakReport()),
    "stages": lambda o: StageReport(),
    "correlations": lambda o: RewardCorrelations(),
    "duplicates": lambda o: DuplicateGroups(),
    "near-duplicates": lambda o: _NearDuplicates(o.threshold),
    "lengths": lambda o: LengthReport(),
}


def audit_rows(
    kind: str,
    rows: Sequence[Row] | Any,
    options: AuditOptions | None = None,
    errors: list[str] | None = None,
) -> Auditor:
    """Feed every row to the report. A row the report cannot read is left out and noted
    in `errors` (when given), never allowed to stop the audit."""
    auditor = AUDITS[kind](options or AuditOptions())
    for row in rows:
        try:
            auditor.add(row)
        except Exception as exc:
            if errors is None:
                raise
            errors.append(f"{type(exc).__name__}: {exc}")
    return auditor


def audit_files(
    kind: str,
    inputs: Sequence[str],
    options: AuditOptions | None = None,
    *,
    on_error: OnError = "fail",
) -> tuple[dict[str, Any], list[str]]:
    """(report dict, lines for a person) over JSONL files or stdin."""
    stats = ReadStats()
    errors: list[str] = []
    auditor = audit_rows(kind, read_rows(inputs, on_error=on_error, stats=stats), options, errors)
    data = auditor.as_dict()
    data["kind"] = kind
    data["skipped_lines"] = stats.skipped
    data["unread_rows"] = len(errors)
    lines = auditor.lines()
    warn = getattr(auditor, "warnings", None)
    if callable(warn):
        data.setdefault("warnings", warn())
    elif hasattr(auditor, "report"):
        inner = getattr(auditor.report, "warnings", None)
        if callable(inner):
            data.setdefault("warnings", inner())
    if errors:
        data.setdefault("warnings", []).append(
            f"{len(errors)} rows could not be read by this report; first: {errors[0]}"
        )
    return data, lines
