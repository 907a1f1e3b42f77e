"""Full validation of row streams against the row model (what `whileai validate` runs)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import orjson

from .errors import BadRowError
from .jsonl import ReadStats, iter_lines
from .row import validate_row


@dataclass
class ValidationReport:
    rows: int = 0
    valid: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def bad(self) -> int:
        return self.rows - self.valid

    def as_dict(self) -> dict[str, Any]:
        return {
            "rows": self.rows,
            "valid": self.valid,
            "bad": self.bad,
            "ok": self.bad == 0,
            "problems": self.problems,
        }


class _KeepEveryError(ReadStats):
    """The reader keeps 20 errors for a summary; validate's job is to list them all."""

    def note(self, error: BadRowError, keep: int = 20) -> None:
        super().note(error, keep=len(self.errors) + 1)


def validate_stream(inputs: Iterable[str], *, fail_fast: bool = False) -> ValidationReport:
    """Check every line; a bad line is recorded as 'file:line: problem' (or raised).
    Problems come in file order: lines that are not JSON (which the reader skips) are
    merged in ahead of the row that followed them."""
    report = ValidationReport()
    stats = _KeepEveryError()
    lines = iter_lines(inputs, on_error="fail" if fail_fast else "skip", stats=stats, check=False)
    taken = 0
    for source, lineno, row in lines:
        report.problems.extend(stats.errors[taken:])
        taken = len(stats.errors)
        report.rows += 1
        try:
            validate_row(row)
        except ValueError as exc:
            error = BadRowError(source, lineno, str(exc))
            if fail_fast:
                raise error from None
            report.problems.append(str(error))
            continue
        report.valid += 1
    report.problems.extend(stats.errors[taken:])
    report.rows += stats.skipped
    return report


def row_problem(raw: bytes) -> str | None:
    """The problem with one raw line, or None; for callers that validate outside a file."""
    try:
        row = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        return f"not valid JSON ({exc.msg})"
    try:
        validate_row(row)
    except ValueError as exc:
        return str(exc)
    return None
