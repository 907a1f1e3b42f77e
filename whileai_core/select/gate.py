"""The publish gate: refuse RL data a grouped update cannot learn from, warn on the rest.

A group-relative update (GRPO, RLOO) learns only from asks whose rollouts disagree. An
RL-shaped set (some ask repeated) that was never graded, or in which no ask has both a
pass and a fail, produces zero advantage everywhere: it is refused, not published.
Unanimous or out-of-band asks that are still present are only warned about, because
`whileai optimize --mode rl` is the place that prunes them.

API (used by `whileai optimize` and by `whileai push`)::

    from whileai_core.select.gate import publish_gate, PublishGateError

    report = publish_gate(rows)            # raises PublishGateError on a refusal
    report = publish_gate(rows, strict=False)  # never raises; report.refused says why
    report.as_dict()                       # JSON-ready, for `--report` and the store

`rows` may be any iterable of row dicts; it is read once and per-ask counts are kept (and,
for the hack signal, an ask id, a reward and three numbers a row), so a large file can be
gated as a stream. The gate also reports near-duplicate asks (two tasks whose prompts are
near copies: they inflate the task count and can straddle a holdout split), the spread of
reply lengths, and whether the reward tracks a surface feature (reply length, tool calls,
turns) within ask, asked of the hack scan's cheap mode (`scan.quick`). A row may
carry `reply_chars` instead of its text; `gate_facts` takes what the gate reads of each
row (`GateFacts`) instead of rows, which is what optimize's compact records hand it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any, NamedTuple

from ..errors import WhileaiError
from ..metrics.band import DEFAULT_BAND, Band, band_side
from ..metrics.tally import TaskTally, reward_of, task_key
from ..row import ask_text, reply_text
from .hygiene import FEATURE_NAMES, row_features


@dataclass
class GateReport:
    """What the gate saw. `refused` is the reason the set cannot be published, or None."""

    rows: int = 0
    tasks: int = 0
    rl_shaped: bool = False
    graded_rows: int = 0
    ungraded_rows: int = 0
    graded_mixed: int = 0
    unanimous_pass: int = 0
    unanimous_fail: int = 0
    too_easy: int = 0
    too_hard: int = 0
    calibrated_rows: int = 0
    band: Band = DEFAULT_BAND
    near_duplicate_asks: int | None = None
    near_duplicate_examples: list[dict[str, Any]] = field(default_factory=list)
    length: dict[str, Any] | None = None
    hack_signal: dict[str, Any] | None = None
    refused: str | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.refused is None

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["band"] = list(self.band)
        data["ok"] = self.ok
        return data


LENGTH_SPREAD_WARN = 10.0


class PublishGateError(WhileaiError):
    """An RL-shaped set that would teach a grouped update nothing; `.report` has the counts."""

    def __init__(self, report: GateReport) -> None:
        self.report = report
        super().__init__(f"publish gate: {report.refused}")


class GateFacts(NamedTuple):
    """What the gate reads of one row: its ask, clean reward (None when unjudged), surface
    features, whether it carries a calibration stamp, reply length (None: not a reply
    row) and ask text (read only on the ask's first row). Optimize builds these from its
    compact records; `publish_gate` from row dicts."""

    task: str
    reward: float | None
    features: tuple[float, float, float]
    calibrated: bool
    chars: int | None
    ask: str


def publish_gate(
    rows: Iterable[dict[str, Any]],
    *,
    band: Band = DEFAULT_BAND,
    strict: bool = True,
) -> GateReport:
    """Gate `rows` for publishing as training data.

    A set is RL-shaped when at least one ask appears more than once. Such a set is refused
    when no row carries a clean reward (ungraded: a judge error or timeout is not a grade)
    or when no ask has both a passing and a failing graded rollout. Sets of one rollout per
    ask (SFT, eval) are never refused. With `strict=False` the refusal is only recorded.
    """
    return gate_facts((_facts(row) for row in rows), band=band, strict=strict)


def _facts(row: dict[str, Any]) -> GateFacts:
    chars = row.get("reply_chars")
    length: int | None
    if isinstance(chars, (int, float)) and not isinstance(chars, bool):
        length = int(chars)
    elif "final_text" in row or "messages" in row:
        length = len(reply_text(row))
    else:
        length = None
    return GateFacts(
        task_key(row),
        reward_of(row),
        row_features(row),
        isinstance(row.get("calibration"), dict),
        length,
        ask_text(row),
    )


def gate_facts(
    facts: Iterable[GateFacts], *, band: Band = DEFAULT_BAND, strict: bool = True
) -> GateReport:
    """`publish_gate` on what it reads of each row (see `GateFacts`), read once."""
    from ..audit.lengths import LengthReport
    from ..curate.duplicates import NearDuplicatePrompts
    from ..scan.quick import QuickScan

    tally = TaskTally()
    report = GateReport(band=band)
    near, lengths = NearDuplicatePrompts(), LengthReport(with_reward=False)
    signal = QuickScan(FEATURE_NAMES)
    rows = calibrated = 0
    for task, reward, values, stamped, chars, ask in facts:
        rows += 1
        count = tally.add(task, reward)
        signal.add(task, reward, values)
        calibrated += stamped
        if count.rows == 1:
            near.add(task, ask)
        if chars is not None:
            lengths.add_length(chars, reward)
    report.rows, report.calibrated_rows = rows, calibrated
    report.tasks = len(tally)
    report.rl_shaped = any(c.rows > 1 for _, c in tally)
    for _, count in tally:
        report.graded_rows += count.graded
        if count.graded == 0:
            continue
        if count.passes == count.graded:
            report.unanimous_pass += 1
        elif count.passes == 0:
            report.unanimous_fail += 1
        else:
            report.graded_mixed += 1
            side = band_side(count.passes / count.graded, band)
            if side != "in_band":
                setattr(report, side, getattr(report, side) + 1)
    report.ungraded_rows = report.rows - report.graded_rows
    if near.asks:
        found = near.as_dict()
        report.near_duplicate_asks = found["asks_involved"]
        report.near_duplicate_examples = found["examples"][:5]
    if len(lengths.lengths):
        report.length = lengths.as_dict()
    if signal.judged:
        report.hack_signal = signal.result()
    _judge(report)
    if strict and report.refused is not None:
        raise PublishGateError(report)
    return report


def _judge(report: GateReport) -> None:
    from ..scan.quick import tracking_warning

    if report.rows == 0:
        report.warnings.append("no rows")
        return
    if report.rl_shaped:
        if report.graded_rows == 0:
            report.refused = (
                f"RL-shaped rows ({report.rows} rows over {report.tasks} asks) are ungraded: "
                "run `whileai grade` first; a grouped update has no reward to learn from"
            )
            return
        if report.graded_mixed == 0:
            report.refused = (
                f"no mixed group: every one of {report.tasks} asks passes all its rollouts or "
                "fails all of them, so every group-relative advantage is zero; "
                "sample more rollouts per ask or use a harder/easier task set"
            )
            return
    if report.ungraded_rows:
        report.warnings.append(
            f"{report.ungraded_rows} of {report.rows} rows carry no clean reward "
            "(ungraded or judge error)"
        )
    unanimous = report.unanimous_pass + report.unanimous_fail
    if report.rl_shaped and unanimous:
        report.warnings.append(
            f"{unanimous} unanimous asks still present ({report.unanimous_pass} all pass, "
            f"{report.unanimous_fail} all fail): zero advantage; "
            "`whileai optimize --mode rl` drops them"
        )
    if report.near_duplicate_asks:
        report.warnings.append(
            f"{report.near_duplicate_asks} asks are near copies of another ask's prompt: two "
            "tasks that are one inflate the task count and can straddle a holdout split"
        )
    spread = (report.length or {}).get("spread_p90_p10")
    if spread is not None and spread >= LENGTH_SPREAD_WARN:
        report.warnings.append(f"reply length spreads {spread:.0f}x from p10 to p90")
    for name, entry in ((report.hack_signal or {}).get("features") or {}).items():
        if entry["above_floor"]:
            report.warnings.append(tracking_warning(name, entry))
    out_of_band = report.too_easy + report.too_hard
    if report.rl_shaped and out_of_band:
        lo, hi = report.band
        report.warnings.append(
            f"{out_of_band} asks outside the {lo:g}-{hi:g} pass-rate band still present "
            f"({report.too_easy} too easy, {report.too_hard} too hard)"
        )
