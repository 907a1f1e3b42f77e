"""Human labels onto rows: `gold_reward` (0/1), and who said what.

A label line names its row by `scenario_id` + `rollout_index` (or `prompt` +
`rollout_index`, for rows from stacks without scenario ids) and carries `gold_reward` (0/1,
true/false, or "pass"/"fail"), optionally its own `annotator`, a `note` and a `kind`
(`human`, the default; `program` for a verifier's; `model` for a model's):

    {"scenario_id": "sc-1a2b", "rollout_index": 0, "gold_reward": 0, "note": "claimed a refund"}

A line with both `scenario_id` and `prompt` matches on both: rows of the original SDK
repeat one (scenario_id, rollout_index) across several phrasings of a task, and the prompt
is what tells them apart. A label attaches to one row only. One that could name several
(no prompt to choose between rows sharing its key, or no rollout_index on a task with
several rollouts) goes to the first and is reported as ambiguous; a second line naming the
same row for the same annotator replaces the first and is reported too; a label that
matches no row is reported. Every report names the label's file:line.

The row gains `gold_labels` ({annotator: {"gold_reward": .., "kind": .., "note": ..}},
every annotator kept), `gold_reward` (what they agree on; the majority when several
disagree, and None with `gold_conflict: true` on a tie), `gold_kind` and `label_source`.
`gold_kind` is the original SDK's own provenance field, the one its `judge_trust` reads
to count the labels as a measurement, by the SDK's rule: the kind when every label shares
it (`human`), the one untrusted kind when it sits beside trusted ones (a model's beside a
person's is `model`), `mixed` otherwise. `label_source` says
the same per annotator (`human:ana,human:bo`). `gold_labels` in the SDK's list shape
(`[{"label", "annotator", "kind"}]`) is read as earlier labels, not dropped.
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
# The kinds a label may be, the original SDK's set; "verifier" reads as "program".
KINDS = ("human", "program", "model")
TRUSTED_KINDS = ("human", "program")


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


def row_prompt(row: dict[str, Any]) -> str | None:
    prompt = row.get("prompt")
    return prompt.strip() if isinstance(prompt, str) and prompt.strip() else None


def gold_kind_of(kinds: Iterable[str]) -> str | None:
    """One word for the kinds of a row's labels, by the original SDK's rule: the kind when
    all share it; the one untrusted kind beside trusted ones; else `mixed`."""
    names = set(kinds)
    if len(names) <= 1:
        return next(iter(names), None)
    others = sorted(k for k in names if k not in TRUSTED_KINDS)
    return others[0] if len(others) == 1 else "mixed"


@dataclass
class Label:
    where: str
    key: tuple[str, str, int | None]
    gold: int
    annotator: str
    note: str | None = None
    # Given beside a scenario_id: the row must carry this prompt too.
    prompt: str | None = None
    kind: str = "human"


def _label(raw: dict[str, Any], where: str, annotator: str) -> Label:
    """One label from its line; ValueError saying what is wrong with it."""
    got = raw.get("gold_reward", raw.get("label"))
    gold = gold_value(got)
    if gold is None:
        raise ValueError(f"gold_reward must be 0 or 1, got {got!r:.40}")
    key = row_key(raw)
    if not key[1]:
        raise ValueError("a label needs scenario_id or prompt")
    own = raw.get("annotator")
    who = own.strip() if isinstance(own, str) and own.strip() else annotator
    if not who:
        raise ValueError("no annotator: give --annotator NAME, or an annotator field on the line")
    note = raw.get("note") if isinstance(raw.get("note"), str) else None
    kind = raw.get("kind", "human")
    kind = "program" if kind == "verifier" else kind
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)} (or verifier), got {kind!r:.40}")
    prompt = row_prompt(raw) if key[0] == "scenario" else None
    return Label(where, key, gold, who, note, prompt, kind)


def read_labels(path: str, annotator: str = "") -> list[Label]:
    """Every label of `path`; a line that cannot be a label is an error naming file:line.
    `annotator` names whoever a line does not; with none, every line must name its own."""
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
    duplicates: list[dict[str, str]] = field(default_factory=list)

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
            "duplicate_labels": self.duplicates,
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
        if len(self.ambiguous) > 5:
            out.append(f"... and {len(self.ambiguous) - 5} more ambiguous (see --json)")
        for twice in self.duplicates[:5]:
            out.append(f"duplicate: {twice['where']}: {twice['why']}")
        if len(self.duplicates) > 5:
            out.append(f"... and {len(self.duplicates) - 5} more duplicates (see --json)")
        if len(self.unmatched) > 10:
            out.append(f"... and {len(self.unmatched) - 10} more unmatched (see --json)")
        return out


class _Index:
    """Labels by task. A label attaches to one row, the first it matches (its key, and its
    prompt when it gives one); every further row it matches is counted, so the report can
    say it was ambiguous."""

    def __init__(self, labels: list[Label]) -> None:
        self.by_task: dict[tuple[str, str], list[Label]] = {}
        for label in labels:
            self.by_task.setdefault(label.key[:2], []).append(label)
        self.matches: dict[int, int] = {}

    def take(self, row: dict[str, Any]) -> list[Label]:
        key = row_key(row)
        candidates = self.by_task.get(key[:2])
        if not candidates:
            return []
        prompt = row_prompt(row)
        found = []
        for label in candidates:
            if label.key[2] is not None and label.key[2] != key[2]:
                continue
            if label.prompt is not None and label.prompt != prompt:
                continue
            seen = self.matches.get(id(label), 0) + 1
            self.matches[id(label)] = seen
            if seen == 1:
                found.append(label)
        return found


def _earlier_votes(row: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The labels a row already carries: ours ({annotator: entry}) or the original SDK's
    list of records ({"label", "annotator", "kind", "note"})."""
    before = row.get("gold_labels")
    if isinstance(before, dict):
        return {str(k): dict(v) for k, v in before.items() if isinstance(v, dict)}
    votes: dict[str, dict[str, Any]] = {}
    if isinstance(before, list):
        for record in before:
            if not isinstance(record, dict) or gold_value(record.get("label")) is None:
                continue
            entry: dict[str, Any] = {"gold_reward": gold_value(record.get("label"))}
            kind = record.get("kind")
            if isinstance(kind, str) and kind != "human":
                entry["kind"] = "program" if kind == "verifier" else kind
            if isinstance(record.get("note"), str):
                entry["note"] = record["note"]
            votes[str(record.get("annotator") or "unknown")] = entry
    return votes


def _apply(row: dict[str, Any], labels: list[Label], report: LabelReport) -> dict[str, Any]:
    out = dict(row)
    votes = _earlier_votes(row)
    here: dict[str, Label] = {}
    for label in labels:
        if label.annotator in votes:
            report.replaced += 1
            if label.annotator in here:
                report.duplicates.append(
                    {
                        "where": label.where,
                        "why": f"names the same row as {here[label.annotator].where} for "
                        f"annotator {label.annotator}: it replaced that label",
                    }
                )
        here[label.annotator] = label
        entry: dict[str, Any] = {"gold_reward": label.gold}
        if label.kind != "human":
            entry["kind"] = label.kind
        if label.note:
            entry["note"] = label.note
        votes[label.annotator] = entry
    golds = [v.get("gold_reward") for v in votes.values() if v.get("gold_reward") in (0, 1)]
    yes, no = golds.count(1), golds.count(0)
    out["gold_labels"] = votes
    kinds = {name: str(v.get("kind") or "human") for name, v in votes.items()}
    out["label_source"] = ",".join(f"{kind}:{name}" for name, kind in kinds.items())
    if yes == no:
        out["gold_reward"] = None
        out.pop("gold_kind", None)
        out["gold_conflict"] = True
        report.conflicts += 1
    else:
        out["gold_reward"] = int(yes > no)
        out["gold_kind"] = gold_kind_of(kinds.values())
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
        hits = index.matches.get(id(label), 0)
        kind, name, idx = label.key
        what = f"{kind} {name[:50]!r}" + (f" rollout_index {idx}" if idx is not None else "")
        if hits > 1:
            if idx is None:
                why = (
                    f"{hits} rollouts share that task and the label gives no rollout_index: "
                    "it went to the first one"
                )
            elif label.prompt is None:
                why = (
                    f"{hits} rows carry {what} (rows of one task in several phrasings): it "
                    "went to the first; give the row's prompt on the label line to say which"
                )
            else:
                why = f"{hits} rows carry {what} and the same prompt: it went to the first"
            report.ambiguous.append({"where": label.where, "why": why})
        elif hits == 0:
            shown = what + (f" and prompt {label.prompt[:40]!r}" if label.prompt else "")
            report.unmatched.append({"where": label.where, "why": f"no row with {shown}"})
