"""Leaks: rows whose agent quoted its own privileged context (the answer key).

`leak_report` says how many rows it could check: a row with no privileged block, or one
with nothing long enough to recognise, has nothing to leak, and counting it as clean would
pass a run that was never checked. A run where no row has a block says exactly that.
The matching itself is `privileged.answer_key_leaks`, the one check the judge's `no_leak`,
export and push ask: quotes in part or whole, ignoring spacing and JSON quoting, and never
a phrase the agent was told elsewhere.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..row.privileged import answer_key_leaks, quotable
from .view import RowView


def leaks(v: RowView) -> list[tuple[str, str]]:
    """(field, fragment) the agent quoted, one per field, the longest quote first."""
    first: dict[str, str] = {}
    for leak in answer_key_leaks(v.row):
        first.setdefault(leak.field, leak.fragment)
    return sorted(first.items(), key=lambda item: -len(item[1]))


@dataclass
class LeakReport:
    rows: int = 0
    checked: int = 0
    offenders: list[dict[str, str]] = field(default_factory=list)
    leaked: int = 0
    by_field: dict[str, int] = field(default_factory=dict)
    keep: int = 20

    def add(self, v: RowView) -> None:
        self.rows += 1
        if not quotable(v.row):
            return
        self.checked += 1
        found = leaks(v)
        if not found:
            return
        self.leaked += 1
        for name, _ in found:
            self.by_field[name] = self.by_field.get(name, 0) + 1
        if len(self.offenders) < self.keep:
            name, fragment = found[0]
            self.offenders.append({"row": v.label(), "field": name, "fragment": fragment})

    def as_dict(self) -> dict[str, Any]:
        return {
            "rows": self.rows,
            "checked": self.checked,
            "leaked": self.leaked,
            "leak_rate": self.leaked / self.checked if self.checked else None,
            "by_field": self.by_field,
            "offenders": self.offenders,
            "ok": self.checked > 0 and self.leaked == 0,
        }

    def lines(self) -> list[str]:
        if not self.checked:
            return [
                f"checked 0 of {self.rows} rows: no row carries a privileged block, so nothing "
                "could leak and nothing was checked (this is not a pass)"
            ]
        share = f" ({self.leaked / self.checked:.0%})" if self.leaked else ""
        out = [
            f"checked {self.checked} of {self.rows} rows: {self.leaked} quoted privileged "
            f"context{share}"
        ]
        for o in self.offenders:
            out.append(f"  {o['row']}: {o['field']} = {o['fragment'][:80]!r}")
        if self.leaked > len(self.offenders):
            out.append(f"  ... and {self.leaked - len(self.offenders)} more")
        return out
