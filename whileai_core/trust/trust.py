"""Judge trust: is this judge's reward worth training on? Measured against human labels.

Rows carry `gold_reward` (0/1, from `whileai label`). With a judge, every labelled row is
judged afresh; without one, the rows' own rewards are read (the judge that graded them).
The report gives agreement with a Wilson interval, Cohen's kappa, the confusion counts,
`pass_when_gold_fail`, agreement on two halves of the tasks, the pass rate on short versus
long replies within each gold label, and the disagreements as a review queue. With a
judge it also re-judges a sample as it is (a judge that flips on the same row is noise)
and with neutral filler appended (a flip means the judge reads length), and `probes`
tries the reward hacks on it (`probes.py`).

No labels: NOT MEASURED, which is not the same as untrustworthy. Measured, the verdict is
TRUSTED only when the judge clears the bar (`bar.py`: enough labels of both classes, kappa
and pass_when_gold_fail within their thresholds, agreement above the majority-class
baseline), each threshold printed beside the value it was held to; otherwise NOT TRUSTED,
naming each part that failed. A judge that clears the bar but raised a flag (length bias,
flips, probe holes, fewer than 50 labels, a judge grading its own model's rows) is
MEASURED, WITH WARNINGS. `ok` means TRUSTED.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..judges.contract import Judge
from ..metrics.tally import reward_of
from ..models.spec import bare_model, self_judged_versions, self_judged_warning
from ..spec import Spec
from .bar import Check, TrustBar, checks
from .labels import gold_value
from .measure import block_lines, measured, pairs_of, report_fields
from .probes import THRESHOLD, parse_probes, plan, score
from .variants import FILLER, judge_all, verdict, with_reply

# A judge that changes its mind on this share of re-judged rows is flagged.
FLIP_LIMIT = 0.05


def gold_of(row: dict[str, Any]) -> int | None:
    return gold_value(row.get("gold_reward"))


@dataclass
class TrustReport:
    """Everything `judge_trust` found; `as_dict` is the --json report, `lines` the text."""

    judge: str
    rows: int
    block: dict[str, Any]
    skipped: dict[str, int]
    bar: TrustBar
    checks: list[Check] = field(default_factory=list)
    rejudge: dict[str, Any] = field(default_factory=dict)
    probes: dict[str, Any] | None = None
    warnings: list[str] = field(default_factory=list)
    self_judged: bool | None = None

    @property
    def failed(self) -> list[str]:
        """Why the judge is not trusted, one sentence per part of the bar it missed."""
        return [c.why for c in self.checks if not c.ok]

    @property
    def measured(self) -> bool:
        return bool(self.block.get("measured"))

    @property
    def ok(self) -> bool:
        return self.measured and not self.failed and not self.warnings

    @property
    def verdict(self) -> str:
        if not self.measured:
            return "NOT MEASURED"
        if self.failed:
            return "NOT TRUSTED"
        return "TRUSTED" if not self.warnings else "MEASURED, WITH WARNINGS"

    def as_dict(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "ok": self.ok,
            "measured": self.measured,
            "judge": self.judge,
            "rows": self.rows,
            "labelled": self.block["stats"]["n"],
            "skipped": self.skipped,
            **report_fields(self.block),
            "rejudge": self.rejudge,
            "probes": self.probes,
            "exploitable_by": (self.probes or {}).get("exploitable_by", []),
            "bar": self.bar.as_dict(),
            "checks": [c.as_dict() for c in self.checks],
            "failed": self.failed,
            "self_judged": self.self_judged,
            "warnings": self.warnings,
        }

    def lines(self) -> list[str]:
        missed = [c.name for c in self.checks if not c.ok]
        head = f"judge trust: {self.verdict}" + (f" on {', '.join(missed)}" if missed else "")
        out = [f"{head} ({self.judge}, {self.block['stats']['n']} labelled of {self.rows} rows)"]
        if self.checks:
            out.append(
                "bar: "
                + "; ".join(f"{c.short()} {'ok' if c.ok else 'FAILED'}" for c in self.checks)
            )
        if not self.measured:
            out.append(
                "no row carries a 0/1 gold_reward: label some with `whileai label` "
                "(30 to 100 rows, passes and failures), then run this again"
            )
            return out
        out += block_lines(self.block)
        for name, part in self.rejudge.items():
            out.append(
                f"{name}: {part['flips']} of {part['n']} verdicts flipped "
                f"({part['rate']:.1%}){'  <- ' + part['means'] if part['flagged'] else ''}"
            )
        if self.probes is not None:
            holes = self.probes.get("exploitable_by") or []
            out.append("probes: exploitable_by " + (", ".join(holes) if holes else "none"))
        out += [f"warning: {w}" for w in self.warnings]
        out += [f"FAILED: {f}" for f in self.failed]
        return out


def _rejudge_plan(
    rows: list[dict[str, Any]], sample: int, seed: int
) -> list[tuple[str, int, dict[str, Any]]]:
    """(kind, row index, row) for the consistency and filler re-judges of a sample."""
    chosen = random.Random(seed).sample(range(len(rows)), min(sample, len(rows)))
    out: list[tuple[str, int, dict[str, Any]]] = []
    for i in chosen:
        row = rows[i]
        out.append(("consistency", i, row))
        reply = row.get("final_text") if isinstance(row.get("final_text"), str) else ""
        out.append(("filler", i, with_reply(row, f"{reply}{FILLER}")))
    return out


def judge_trust(
    rows: Sequence[dict[str, Any]],
    judge: Judge | None = None,
    *,
    bar: TrustBar | None = None,
    sample: int = 20,
    seed: int = 0,
    probes: str | Sequence[str] | None = None,
    rubric: str | None = None,
    spec: Spec | None = None,
    concurrency: int = 8,
    timeout: float | None = 60.0,
) -> TrustReport:
    """Measure `judge` (or, without one, the rewards the rows carry) against gold labels,
    and hold it to `bar` (`TrustBar()`'s defaults when None)."""
    bar = bar or TrustBar()
    rows = list(rows)
    labelled = [r for r in rows if gold_of(r) is not None]
    chosen = parse_probes(probes) if judge is not None else []
    name = judge.name if judge is not None else _graded_by(labelled)
    rejudge: dict[str, Any] = {}
    probe_part: dict[str, Any] | None = None
    if judge is None:
        pairs, skipped = pairs_of(rows, gold_of, reward_of)
    else:
        # One pass of the judge over everything: an LLM judge's client opens and closes once.
        extra = _rejudge_plan(labelled, sample, seed)
        probe_plan = plan(labelled, chosen, rubric, spec) if chosen else []
        todo = [*labelled, *(r for _, _, r in extra), *(r for _, _, r in probe_plan)]
        judged = judge_all(judge, todo, concurrency=concurrency, timeout=timeout) if todo else []
        first, rest = judged[: len(labelled)], judged[len(labelled) :]
        pairs, skipped = pairs_of(first, gold_of, reward_of)
        skipped["no_gold"] = len(rows) - len(labelled)
        base = [verdict(g) for g in first]
        rejudge = _flips(base, extra, rest[: len(extra)])
        if chosen:
            probe_part = score(
                judge.name, base, probe_plan, rest[len(extra) :], chosen, THRESHOLD
            ).as_dict()
    block = measured(pairs)
    report = TrustReport(
        judge=name,
        rows=len(rows),
        block=block,
        skipped=skipped,
        bar=bar,
        rejudge=rejudge,
        probes=probe_part,
    )
    _self_judged(report, judge, labelled)
    _judge_the_judge(report)
    return report


def _self_judged(report: TrustReport, judge: Judge | None, rows: list[dict[str, Any]]) -> None:
    """As grade does: warn when the judge's model wrote the rows it is measured on (the
    judge given, else the one each row's judge_meta names)."""
    versions = [v for r in rows if isinstance(v := r.get("model_version"), str)]
    if judge is not None:
        model = judge.meta.get("model")
        if not isinstance(model, str):
            return
        same = self_judged_versions(model, versions)
        report.self_judged = bool(same)
        if same:
            report.warnings.append(self_judged_warning(model, same[0], "the labelled rows"))
        return
    seen = False
    for row in rows:
        meta = row.get("judge_meta")
        model = meta.get("model") if isinstance(meta, dict) else None
        if not isinstance(model, str):
            continue
        seen = True
        version = row.get("model_version")
        if isinstance(version, str) and bare_model(version) == bare_model(model):
            report.self_judged = True
            report.warnings.append(self_judged_warning(model, version, "the labelled rows"))
            return
    if seen:
        report.self_judged = False


def _graded_by(rows: list[dict[str, Any]]) -> str:
    names = sorted({str(r.get("judge_name")) for r in rows if r.get("judge_name")})
    return "rows' own rewards" + (f" ({', '.join(names)})" if names else "")


def _flips(
    base: list[bool | None],
    plan_: list[tuple[str, int, dict[str, Any]]],
    judged: list[dict[str, Any]],
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    means = {
        "consistency": "the judge is noisy on the same row",
        "filler": "the judge reads length",
    }
    for kind in ("consistency", "filler"):
        n = flips = 0
        for (k, i, _), graded in zip(plan_, judged, strict=True):
            now = verdict(graded)
            if k != kind or now is None or base[i] is None:
                continue
            n += 1
            flips += now != base[i]
        if n:
            rate = flips / n
            out[kind] = {
                "n": n,
                "flips": flips,
                "rate": rate,
                "flagged": rate > FLIP_LIMIT,
                "means": means[kind],
            }
    return out


def _judge_the_judge(report: TrustReport) -> None:
    """The bar (a miss is NOT TRUSTED, exit 1) and the warnings (ok=False), only once there
    is something measured."""
    if not report.measured:
        return
    report.checks = checks(report.block["stats"], report.bar)
    report.warnings += list(report.block.get("notes", []))
    for label, bias in (report.block.get("length_bias") or {}).items():
        if bias.get("flagged"):
            report.warnings.append(
                f"length bias within {label}: pass rate {bias['gap']:+.2f} "
                "on long replies over short"
            )
    for kind, part in report.rejudge.items():
        if part["flagged"]:
            report.warnings.append(f"{kind} re-judge flipped {part['rate']:.0%}: {part['means']}")
    holes = (report.probes or {}).get("exploitable_by") or []
    if holes:
        report.warnings.append("probes found holes: " + ", ".join(holes))
