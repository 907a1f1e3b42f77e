"""`whileai validate`: every line through the reader every stage uses, every problem kept.

There is no second, fuller check here: a line `validate` passes is one every stage takes,
and a line it names is one every stage refuses (skips and counts with `--on-error skip`)
with the same words, because both read through `jsonl.iter_located`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..errors import BadRowError
from ..jsonl import ReadStats, iter_located, parse_row


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
    """Check every line; a bad line is recorded as 'file:line: problem' in file order (or
    raised at the first one with `fail_fast`)."""
    stats = _KeepEveryError()
    for _ in iter_located(inputs, on_error="fail" if fail_fast else "skip", stats=stats):
        pass
    return ValidationReport(
        rows=stats.rows + stats.skipped, valid=stats.rows, problems=stats.errors
    )


def row_problem(raw: bytes) -> str | None:
    """The problem with one raw line, or None; for the store's finalize, which has counted
    the line's length and nesting under its own limits already."""
    return parse_row(raw)[1]
