"""Which rows an eval scored, in one place: the stamp `evaluate` writes and every
selector and export reads (import-light, so an export pays nothing for it)."""

from __future__ import annotations

from typing import Any

EVAL_SOURCE = "eval"


def is_eval_sourced(row: dict[str, Any]) -> bool:
    """True for a row an eval scored (`lineage.source == "eval"`)."""
    lineage = row.get("lineage")
    return isinstance(lineage, dict) and lineage.get("source") == EVAL_SOURCE


def eval_sourced_warning(count: int, what: str) -> str:
    """The one wording every selector and export uses for rows an eval scored."""
    return (
        f"{count} {what} were scored by an eval (lineage.source == 'eval'): a held-out "
        "scorer used as a training reward is no longer held out"
    )
