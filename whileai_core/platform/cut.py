"""Training data out of traces: group scored runs by prompt, keep what a trainer can use,
write a train set and a held-out set.

Runs of one prompt are grouped by scenario id (`zeroproof.scenario_id` on the span; the
prompt text when there is none). A run counts only with a verdict: a score of 1.0 or
above is a pass, anything lower a fail (so a 0..1 quality number sent as the verdict
never reads as a pass). `rl` keeps every run of the prompts passed some of the time but
not always (inside the band, 20%-80% by default, edges included), the rule RL selection
applies (`select.rl.group_verdict`); `sft` keeps the best run of each prompt that ever
passed. The kept prompts are split into train and holdout
by the same fixed hash a push uses, so a prompt is wholly on one side.

Two pass rules meet here, each where it belongs. A trace's verdict passes at 1.0
(`otlp.decode.PASS_AT`, the original SDK's `send_score` rule). A row's `reward` passes at 0.5
(`groups.passed`: the profile, the gate, optimize and the calibration stamp, where
partial credit splits at 0.5). So a kept run becomes a row whose `reward` is its
verdict's pass or fail, 1.0 or 0.0, and every row reader agrees with the cut; a verdict
that was not already 1.0 or 0.0 is kept under `verdict`.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..errors import ConfigError
from ..jsonl import dumps
from ..metrics.band import DEFAULT_BAND, Band, band_side, parse_band
from ..metrics.tally import task_key
from ..otlp.decode import PASS_AT
from ..select.rl import group_verdict
from ..store.base import Store, iter_all_traces

Kind = Literal["rl", "sft"]
__all__ = ["DEFAULT_BAND", "CutReport", "cut", "parse_band", "select"]


def verdict(row: dict[str, Any]) -> float | None:
    reward = row.get("reward")
    if isinstance(reward, bool) or not isinstance(reward, (int, float)):
        return None
    return float(reward)


def as_row(run: dict[str, Any]) -> dict[str, Any]:
    """A kept trace as a training row (reward 1.0 / 0.0 by the trace rule; see above)."""
    value = verdict(run)
    assert value is not None  # only scored runs are kept
    row = {k: v for k, v in run.items() if k != "traceId"}  # the row has `trace_id`
    row["reward"] = 1.0 if value >= PASS_AT else 0.0
    if row["reward"] != value:
        row["verdict"] = value
    return row


@dataclass
class CutReport:
    kind: str
    band: Band
    traces: int = 0
    ungraded: int = 0
    prompts: int = 0
    kept_prompts: int = 0
    kept_runs: int = 0
    too_easy: int = 0
    too_hard: int = 0
    unanimous: int = 0
    never_passed: int = 0
    groups: dict[str, dict[str, Any]] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "band": list(self.band),
            "traces": self.traces,
            "ungraded": self.ungraded,
            "prompts": self.prompts,
            "keptPrompts": self.kept_prompts,
            "keptRuns": self.kept_runs,
            "dropped": {
                "tooEasy": self.too_easy,
                "tooHard": self.too_hard,
                "unanimous": self.unanimous,
                "neverPassed": self.never_passed,
            },
            "groups": self.groups,
        }


def select(
    traces: Iterable[dict[str, Any]], kind: Kind, band: Band = DEFAULT_BAND
) -> tuple[list[dict[str, Any]], CutReport]:
    """The runs a cut keeps (as they were listed), and what it saw and dropped."""
    if kind not in ("rl", "sft"):
        raise ConfigError(f"--kind must be rl or sft, got {kind!r}")
    report = CutReport(kind=kind, band=band)
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in traces:
        report.traces += 1
        if verdict(row) is None:
            report.ungraded += 1
            continue
        groups.setdefault(task_key(row), []).append(row)
    report.prompts = len(groups)
    kept: list[dict[str, Any]] = []
    for key, runs in groups.items():
        runs.sort(key=lambda r: (str(r.get("started_at") or ""), str(r.get("trace_id") or "")))
        passes = sum(1 for r in runs if (verdict(r) or 0.0) >= PASS_AT)
        rate = passes / len(runs)
        entry: dict[str, Any] = {"runs": len(runs), "passes": passes, "passRate": round(rate, 4)}
        if kind == "rl":
            decided = group_verdict(passes, len(runs), band)
            if decided == "keep":
                kept.extend(runs)
                entry["kept"] = len(runs)
            else:
                # Counted by side first: under the default band an all-pass prompt is too
                # easy; only a band that reaches 0 or 1 leaves it merely unanimous.
                side = band_side(rate, band)
                reason = "unanimous" if side == "in_band" else side
                setattr(report, reason, getattr(report, reason) + 1)
                entry["kept"] = 0
        else:
            if passes == 0:
                report.never_passed += 1
                entry["kept"] = 0
            else:
                kept.append(max(runs, key=lambda r: verdict(r) or 0.0))
                entry["kept"] = 1
        if entry["kept"]:
            report.kept_prompts += 1
        report.groups[key] = entry
    report.kept_runs = len(kept)
    return kept, report


def cut(
    store: Store,
    *,
    agent: str,
    kind: Kind,
    band: Band = DEFAULT_BAND,
    holdout: float = 0.2,
    since: float | None = None,
    name: str | None = None,
    dry_run: bool = False,
) -> dict[str, Any]:
    """Select from the agent's scored traces and store a train and a holdout dataset."""
    from .push import push_rows

    rows, report = select(iter_all_traces(store, agent=agent, since=since), kind, band)
    result: dict[str, Any] = {"report": report.as_dict(), "train": None, "holdout": None}
    if dry_run:
        return result
    if not rows:
        raise ConfigError(
            f"nothing to cut for agent {agent}: {report.traces} traces, {report.ungraded} "
            f"ungraded, {report.prompts} scored prompts, none kept ({kind})"
        )
    stamp = time.strftime("%Y%m%d", time.gmtime())
    with tempfile.TemporaryDirectory(prefix="whileai-cut-") as tmp:
        path = Path(tmp) / "cut.jsonl"
        with path.open("wb") as fh:
            for row in rows:
                fh.write(dumps(as_row(row)))
        pushed = push_rows(
            store,
            [str(path)],
            name=name or f"{agent}-{kind}-cut-{stamp}",
            purpose="train",
            mode=kind,
            agent=agent,
            description=f"cut from {report.traces} traces ({kind})",
            holdout=holdout,
            gate=False,
        )
    result["train"], result["holdout"] = pushed["train"], pushed["holdout"]
    return result
