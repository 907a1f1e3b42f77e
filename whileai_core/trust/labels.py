"""Human labels onto rows: `gold_reward` (0/1), and who said what.

A label line names its row by `scenario_id` + `rollout_index` (or `prompt` +
`rollout_index`, for rows from stacks without scenario ids) and carries `gold_reward` (0/1,
true/false, or "pass"/"fail"), optionally its own `annotator` and a `note`:

    {"scenario_id": "sc-1a2b", "rollout_index": 0, "gold_reward": 0, "note": "claimed a refund"}

The row gains `gold_labels` ({annotator: {"gold_reward": .., "note": ..}}, every annotator
kept), `gold_reward` (what they agree on; the majority when several disagree, and None
with `gold_conflict: true` on a tie) and `label_source`. A label that matches no row, or
one that names a task with several rollouts but no rollout_index, is reported with its
line, never dropped silently.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import BadRowError, ConfigError
from ..jsonl import iter_lines

_TRUE = {"1", "true", "pass", "passed", "yes", "good"}
_FALSE = {"0", "false", "fail", "failed", "no", "bad"}


def gold_value(raw: Any) -> int | None:
    """0 or 1 from what a labeller may have written; None when it is neither."""
    if isinstance(raw, bool):
        return int(raw)
    if isinstance(raw, (int, float)) and raw in (0, 1):
        return int(raw)
    if isinstance(raw, str) and raw.strip().lower() in _TRUE | _FALSE:
        return int(raw.strip().lower() in _TRUE)
    return None


def row_key(row: dict[str, Any]) -> tuple[str, str, int | None]:
    """How a label finds its row: ("scenario", id, index) or ("prompt", text, index)."""
    index = row.get("rollout_index")
    index = index if isinstance(index, int) and not isinstance(index, bool) else None
    sid = row.get("scenario_id")
    if isinstance(sid, str) and sid:
        return ("scenario", sid, index)
    prompt = row.get("prompt")
    return ("prompt", prompt if isinstance(prompt, str) else "", index)


@dataclass
class Label:
    where: str
    key: tuple[str, str, int | None]
    gold: int
    annotator: str
    note: str | None = None


def _label(raw: dict[str, Any], where: str, annotator: str) -> Label:
    """One label from its line; ValueError saying what is wrong with it."""
    got = raw.get("gold_reward", raw.get("label"))
    gold = gold_value(got)
    if gold is None:
        raise ValueError(f"gold_reward must be 0 or 1, got {got!r:.40}")
    key = row_key(raw)
    if not key[1]:
        raise ValueError("a label needs scenario_id or prompt")
    who = raw.get("annotator") if isinstance(raw.get("annotator"), str) else annotator
    note = raw.get("note") if isinstance(raw.get("note"), str) else None
    return Label(where, key, gold, who or annotator, note)


def read_labels(path: str, annotator: str) -> list[Label]:
    """Every label of `path`; a line that cannot be a label is an error naming file:line."""
    out: list[Label] = []
    for source, lineno, raw in iter_lines([path], check=False):
        try:
            out.append(_label(raw, f"{source}:{lineno}", annotator))
        except ValueError as exc:
            raise BadRowError(source, lineno, str(exc)) from None
    return out


@dataclass
class LabelReport:
    """What attaching did: counts, and every label that found no row, with why."""

    labels: int = 0
    rows: int = 0
    labelled_rows: int = 0
    matched: int = 0
    replaced: int = 0
    conflicts: int = 0
    passes: int = 0
    fails: int = 0
    unmatched: list[dict[str, str]] = field(default_factory=list)
    ambiguous: list[dict[str, str]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "labels": self.labels,
            "rows": self.rows,
            "labelled_rows": self.labelled_rows,
            "matched": self.matched,
            "replaced": self.replaced,
            "gold_pass": self.passes,
            "gold_fail": self.fails,
            "conflicts": self.conflicts,
            "unmatched": len(self.unmatched),
            "unmatched_labels": self.unmatched,
            "ambiguous_labels": self.ambiguous,
        }

    def lines(self) -> list[str]:
        out = [
            f"labels: {self.matched} of {self.labels} attached to {self.labelled_rows} of "
            f"{self.rows} rows (gold pass {self.passes}, fail {self.fails})"
        ]
        if self.replaced:
            out.append(f"{self.replaced} label(s) replaced an earlier label by the same annotator")
        if self.conflicts:
            out.append(f"{self.conflicts} row(s) with annotators split evenly: gold_reward None")
        for miss in self.unmatched[:10]:
            out.append(f"unmatched: {miss['where']}: {miss['why']}")
        for loose in self.ambiguous[:5]:
            out.append(f"ambiguous: {loose['where']}: {loose['why']}")
        if len(self.unmatched) > 10:
            out.append(f"... and {len(self.unmatched) - 10} more unmatched (see --json)")
        return out


class _Index:
    """Labels by key; a key without rollout_index matches a task's only rollout."""

    def __init__(self, labels: list[Label]) -> None:
        self.exact: dict[tuple[str, str, int | None], list[Label]] = {}
        self.loose: dict[tuple[str, str], list[Label]] = {}
        for label in labels:
            if label.key[2] is None:
                self.loose.setdefault(label.key[:2], []).append(label)
            else:
                self.exact.setdefault(label.key, []).append(label)
        self.used: set[int] = set()
        self.loose_hits: dict[tuple[str, str], int] = {}

    def take(self, row: dict[str, Any]) -> list[Label]:
        key = row_key(row)
        found = list(self.exact.get(key, []))
        loose = self.loose.get(key[:2], [])
        if loose:
            self.loose_hits[key[:2]] = self.loose_hits.get(key[:2], 0) + 1
            if self.loose_hits[key[:2]] == 1:
                found += loose
        for label in found:
            self.used.add(id(label))
        return found


def _apply(row: dict[str, Any], labels: list[Label], report: LabelReport) -> dict[str, Any]:
    out = dict(row)
    before = row.get("gold_labels")
    votes: dict[str, dict[str, Any]] = dict(before) if isinstance(before, dict) else {}
    for label in labels:
        if label.annotator in votes:
            report.replaced += 1
        entry: dict[str, Any] = {"gold_reward": label.gold}
        if label.note:
            entry["note"] = label.note
        votes[label.annotator] = entry
    golds = [v.get("gold_reward") for v in votes.values() if v.get("gold_reward") in (0, 1)]
    yes, no = golds.count(1), golds.count(0)
    out["gold_labels"] = votes
    out["label_source"] = ",".join(f"human:{name}" for name in votes)
    if yes == no:
        out["gold_reward"] = None
        out["gold_conflict"] = True
        report.conflicts += 1
    else:
        out["gold_reward"] = int(yes > no)
        out.pop("gold_conflict", None)
        report.passes += out["gold_reward"]
        report.fails += 1 - out["gold_reward"]
    return out


def attach_labels(
    rows: Iterable[dict[str, Any]],
    labels: str | Path | list[Label] | list[dict[str, Any]],
    *,
    annotator: str = "human",
) -> tuple[list[dict[str, Any]], LabelReport]:
    """(rows with `gold_reward` and who said what, report). `labels` is a JSONL path, label
    dicts as a labels file holds them, or `Label`s."""
    if isinstance(labels, (str, Path)):
        parsed = read_labels(str(labels), annotator)
    else:
        parsed = []
        for i, item in enumerate(labels):
            if isinstance(item, Label):
                parsed.append(item)
            elif isinstance(item, dict):
                try:
                    parsed.append(_label(item, f"labels[{i}]", annotator))
                except ValueError as exc:
                    raise ConfigError(f"labels[{i}]: {exc}") from None
            else:
                raise ConfigError(f"labels[{i}]: a label is a dict, got {type(item).__name__}")
    report = LabelReport()
    return list(label_stream(rows, parsed, report)), report


def label_stream(
    rows: Iterable[dict[str, Any]], labels: list[Label], report: LabelReport
) -> Iterator[dict[str, Any]]:
    """The rows with their labels attached, streaming; `report` fills in as they pass and
    holds the unmatched labels once the stream is spent."""
    if not labels:
        raise ConfigError("the labels file holds no labels")
    index = _Index(labels)
    report.labels = len(labels)
    for row in rows:
        report.rows += 1
        found = index.take(row)
        if found:
            report.labelled_rows += 1
            report.matched += len(found)
            yield _apply(row, found, report)
        else:
            yield row
    for label in labels:
        if label.key[2] is None and index.loose_hits.get(label.key[:2], 0) > 1:
            report.ambiguous.append(
                {
                    "where": label.where,
                    "why": "several rollouts share that task and the label "
                    "gives no rollout_index: it went to the first one",
                }
            )
        elif id(label) not in index.used:
            kind, name, idx = label.key
            what = f"{kind} {name[:50]!r}" + (f" rollout_index {idx}" if idx is not None else "")
            report.unmatched.append({"where": label.where, "why": f"no row with {what}"})
