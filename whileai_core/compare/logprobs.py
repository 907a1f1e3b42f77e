"""What the policy's own logprobs say: coverage, KL to a reference, and staleness.

Rows from `simulate --logprobs` carry, on each agent turn's first step, the summed
log-probability of the tokens the policy generated (`logprob`) and how many there were
(`n_tokens`), with the totals on the row. Three reports read them:

- `logprob_report`: how much was captured, how confident the policy was (mean logprob
  per token), and whether reward tracks that confidence. On a fair judge it should not:
  a judge that pays for fluent, confident text is rewarding the policy's style.
- `mean_kl`: with `ref_logprob` beside `logprob` (`whileai logprobs ref`), the sampled
  KL(policy || reference) per generated token: the sum over turns of (logprob -
  ref_logprob), over the sum of the policy's `n_tokens`. Overall and per task, pooled
  over the task's rollouts. Turns are read per step when the steps carry both numbers,
  else from the row's totals. `calibrated_rows` writes each task's value into
  `calibration.mean_kl`. Beside it, `mean_kl_row_totals` is the original SDK's
  `mean_kl`: the rows' totals only, Σ(logprob − ref_logprob) / Σ n_tokens. The two agree
  when every turn the reference scored is a turn the policy counted tokens for. They part
  when it is not (a tool-call turn whose server reported no tokens: `whileai logprobs ref`
  still scores it, so the row's `ref_logprob` holds it and its `logprob` does not): the
  row totals then charge the reference's logprob of tokens the policy never reported
  against none of the policy's, and read high (0.93 against 0.19 in
  `tests/compare/test_logprobs.py`). `mean_kl` pairs turn by turn and leaves such turns
  out (counted in `unpaired_turns`); the report warns whenever the two differ.
(`staleness.py` reads the same turns to say which rows are off-policy.)
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..jsonl import OnError, ReadStats, RowWriter, iter_located, spooled
from ..metrics.stats import pearson, pearson_ci
from ..metrics.tally import reward_of, task_key
from ..select.calibration import stamp_from
from ..select.records import policy_of

CONFIDENCE_REWARD_R = 0.3  # a correlation this strong (and clear of zero) is flagged


def _num(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def turns_of(row: dict[str, Any], ref: str | None = None) -> list[tuple[float, int, float | None]]:
    """(logprob, n_tokens, ref) per agent turn: from the steps that carry a logprob, else
    the row's totals as one turn; nothing when the policy's logprob was not captured."""
    out = []
    for step in row.get("steps") or []:
        if isinstance(step, dict) and _num(step.get("logprob")) is not None:
            n = _count(step.get("n_tokens"))
            if n:
                out.append((float(step["logprob"]), n, _num(step.get(ref)) if ref else None))
    if out:
        return out
    total, n = _num(row.get("logprob")), _count(row.get("n_tokens"))
    if total is None or not n:
        return []
    return [(total, n, _num(row.get(ref)) if ref else None)]


# -- coverage and confidence -----------------------------------------------------------


@dataclass
class LogprobReport:
    rows: int = 0
    with_logprobs: int = 0
    turns: int = 0
    n_tokens: int = 0
    total: float = 0.0
    truncated: int = 0
    row_means: list[float] = field(default_factory=list)
    graded: list[tuple[float, float]] = field(default_factory=list)  # (confidence, reward)

    def add(self, row: dict[str, Any]) -> None:
        self.rows += 1
        turns = turns_of(row)
        if not turns:
            return
        self.with_logprobs += 1
        self.turns += len(turns)
        lp, n = sum(t[0] for t in turns), sum(t[1] for t in turns)
        self.total += lp
        self.n_tokens += n
        self.row_means.append(lp / n)
        if row.get("truncated") is True or row.get("finish_reason") == "length":
            self.truncated += 1
        reward = reward_of(row)
        if reward is not None:
            self.graded.append((lp / n, reward))

    def as_dict(self) -> dict[str, Any]:
        r = pearson([g[0] for g in self.graded], [g[1] for g in self.graded])
        ci = pearson_ci(r, len(self.graded)) if r is not None else None
        means = sorted(self.row_means)
        return {
            "rows": self.rows,
            "with_logprobs": self.with_logprobs,
            "coverage": self.with_logprobs / self.rows if self.rows else None,
            "turns": self.turns,
            "n_tokens": self.n_tokens,
            "mean_token_logprob": self.total / self.n_tokens if self.n_tokens else None,
            "row_mean_p10": _quantile(means, 0.1),
            "row_mean_p50": _quantile(means, 0.5),
            "row_mean_p90": _quantile(means, 0.9),
            "graded_with_logprobs": len(self.graded),
            "corr_reward_confidence": r,
            "corr_ci95": list(ci) if ci else None,
            "reward_tracks_confidence": bool(
                r is not None and ci and r >= CONFIDENCE_REWARD_R and ci[0] > 0
            ),
            "truncated": self.truncated,
            "warnings": self.warnings(r, ci),
        }

    def warnings(self, r: float | None, ci: tuple[float, float] | None) -> list[str]:
        out = []
        if self.rows and not self.with_logprobs:
            out.append(
                "no row carries logprob/n_tokens: run simulate --logprobs with a model agent "
                "(a scripted or callable agent must stamp its own)"
            )
        elif self.with_logprobs < self.rows:
            out.append(f"{self.rows - self.with_logprobs} of {self.rows} rows carry no logprob")
        if r is not None and ci and r >= CONFIDENCE_REWARD_R and ci[0] > 0:
            out.append(
                f"reward tracks the policy's confidence (r {r:+.2f}, 95% {ci[0]:+.2f}.."
                f"{ci[1]:+.2f}): a fair judge should not pay for fluency; check it before "
                "training on these rewards"
            )
        if self.truncated:
            out.append(f"{self.truncated} rollout(s) hit the token cap: their logprob is partial")
        return out

    def lines(self) -> list[str]:
        d = self.as_dict()
        share = "n/a" if d["coverage"] is None else f"{d['coverage']:.0%}"
        out = [
            f"logprobs: {d['with_logprobs']}/{d['rows']} rows ({share}) carry logprobs, "
            f"{d['turns']} turns, {d['n_tokens']} tokens"
        ]
        if d["mean_token_logprob"] is not None:
            out.append(
                f"mean logprob a token {d['mean_token_logprob']:.4f} (row means p10 "
                f"{d['row_mean_p10']:.4f}, p50 {d['row_mean_p50']:.4f}, p90 "
                f"{d['row_mean_p90']:.4f})"
            )
        r = d["corr_reward_confidence"]
        if r is not None:
            ci = d["corr_ci95"]
            word = "tracks" if d["reward_tracks_confidence"] else "does not clearly track"
            out.append(
                f"reward {word} confidence: r {r:+.3f} [{ci[0]:+.3f}, {ci[1]:+.3f}] "
                f"over {d['graded_with_logprobs']} graded rows"
            )
        return out


def _quantile(ordered: list[float], q: float) -> float | None:
    if not ordered:
        return None
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def logprob_report(rows: Iterable[dict[str, Any]]) -> LogprobReport:
    report = LogprobReport()
    for row in rows:
        report.add(row)
    return report


# -- KL to a reference -----------------------------------------------------------------


@dataclass
class KLReport:
    ref: str = "ref_logprob"
    rows: int = 0
    used: int = 0
    turns: int = 0
    n_tokens: int = 0
    diff: float = 0.0
    no_policy: int = 0
    no_reference: int = 0
    tasks: dict[str, list[float]] = field(default_factory=dict)  # task -> [diff, tokens]
    skipped_lines: int = 0
    # The original SDK's reading: row totals only.
    totals_rows: int = 0
    totals_diff: float = 0.0
    totals_tokens: int = 0
    unpaired_turns: int = 0

    def _add_totals(self, row: dict[str, Any]) -> None:
        lp, n, ref = _num(row.get("logprob")), _count(row.get("n_tokens")), _num(row.get(self.ref))
        if lp is not None and n and ref is not None:
            self.totals_rows += 1
            self.totals_diff += lp - ref
            self.totals_tokens += n
        for step in row.get("steps") or []:
            if not isinstance(step, dict) or _num(step.get(self.ref)) is None:
                continue
            if _num(step.get("logprob")) is None or not _count(step.get("n_tokens")):
                self.unpaired_turns += 1

    def add(self, row: dict[str, Any]) -> None:
        self.rows += 1
        self._add_totals(row)
        turns = turns_of(row, self.ref)
        if not turns:
            self.no_policy += 1
            return
        if any(t[2] is None for t in turns):
            # a step-level reference missing: the row totals still pair when both are there
            total_ref = _num(row.get(self.ref))
            lp, n = _num(row.get("logprob")), _count(row.get("n_tokens"))
            if total_ref is None or lp is None or not n:
                self.no_reference += 1
                return
            turns = [(lp, n, total_ref)]
        self.used += 1
        self.turns += len(turns)
        diff = sum(t[0] - (t[2] or 0.0) for t in turns)
        n = sum(t[1] for t in turns)
        self.diff += diff
        self.n_tokens += n
        cell = self.tasks.setdefault(task_key(row), [0.0, 0.0])
        cell[0] += diff
        cell[1] += n

    @property
    def mean_kl(self) -> float | None:
        return self.diff / self.n_tokens if self.n_tokens else None

    @property
    def mean_kl_row_totals(self) -> float | None:
        return self.totals_diff / self.totals_tokens if self.totals_tokens else None

    def per_task(self) -> dict[str, float]:
        return {t: d / n for t, (d, n) in self.tasks.items() if n}

    def as_dict(self) -> dict[str, Any]:
        return {
            "ref": self.ref,
            "mean_kl": self.mean_kl,
            "mean_kl_row_totals": self.mean_kl_row_totals,
            "rows_with_totals": self.totals_rows,
            "unpaired_turns": self.unpaired_turns,
            "per_task": self.per_task(),
            "rows": self.rows,
            "rows_used": self.used,
            "turns": self.turns,
            "n_tokens": self.n_tokens,
            "no_policy_logprob": self.no_policy,
            "no_reference": self.no_reference,
            "skipped_lines": self.skipped_lines,
            "warnings": self.warnings(),
        }

    def warnings(self) -> list[str]:
        out = []
        if self.no_policy:
            out.append(f"{self.no_policy} row(s) carry no policy logprob (simulate --logprobs)")
        if self.no_reference:
            out.append(
                f"{self.no_reference} row(s) carry no {self.ref}: score them with "
                "`whileai logprobs ref`"
            )
        kl = self.mean_kl
        if kl is not None and kl < 0:
            out.append(
                f"mean_kl {kl:.4f} is negative: the reference likes these tokens more than "
                "the policy that sampled them, which a sampled estimate does on few tokens, "
                "or when the two scored different text (check token_count_gap)"
            )
        totals = self.mean_kl_row_totals
        if kl is not None and totals is not None and not math.isclose(kl, totals, abs_tol=1e-9):
            why = (
                f"{self.unpaired_turns} turn(s) carry a reference logprob but no policy "
                "tokens, which the totals charge against none of the policy's"
                if self.unpaired_turns
                else "the rows' totals are not the sums of their steps"
            )
            out.append(
                f"over the rows' totals (the original SDK's mean_kl) it is {totals:.6f}, "
                f"not {kl:.6f}: {why}; mean_kl pairs each turn's two logprobs"
            )
        return out

    def lines(self) -> list[str]:
        kl = self.mean_kl
        head = "n/a" if kl is None else f"{kl:.6f}"
        out = [
            f"mean_kl {head} a generated token over {self.used} rows, {self.turns} turns, "
            f"{self.n_tokens} tokens ({len(self.tasks)} tasks)"
        ]
        per = sorted(self.per_task().items(), key=lambda kv: -kv[1])
        for task, value in per[:5]:
            out.append(f"  {task}: {value:.6f}")
        if len(per) > 5:
            out.append(f"  ... {len(per) - 5} more tasks (--json for all)")
        return out


def mean_kl(rows: Iterable[dict[str, Any]], ref: str = "ref_logprob") -> KLReport:
    report = KLReport(ref=ref)
    for row in rows:
        report.add(row)
    return report


Stamps = dict[str, tuple[list[float | None], list[str | None]]]


def task_stamps(rows: Iterable[dict[str, Any]], into: Stamps | None = None) -> Stamps:
    """Per task, the rewards and policies a calibration stamp is made from."""
    stamps: Stamps = {} if into is None else into
    for row in rows:
        rewards, policies = stamps.setdefault(task_key(row), ([], []))
        rewards.append(reward_of(row))
        policies.append(policy_of(row))
    return stamps


def calibrated_rows(
    rows: Iterable[dict[str, Any]], per_task: dict[str, float], stamps: Stamps
) -> Iterator[dict[str, Any]]:
    """Each row with its task's mean_kl in `calibration.mean_kl`. A row without a
    calibration stamp gets the task's full stamp first (its pass rate over these rows),
    so a later `optimize` does not carry a stamp that holds only the KL."""
    for row in rows:
        task = task_key(row)
        if task not in per_task:
            yield row
            continue
        old = row.get("calibration")
        stamp = dict(old) if isinstance(old, dict) else stamp_from(task, *stamps[task])
        stamp["mean_kl"] = per_task[task]
        yield {**row, "calibration": stamp}


def calibrate_kl(
    rows: Iterable[dict[str, Any]], ref: str = "ref_logprob"
) -> tuple[list[dict[str, Any]], KLReport]:
    """The rows with `calibration.mean_kl`, and the KL report they were stamped from."""
    held = list(rows)
    report = mean_kl(held, ref)
    return list(calibrated_rows(held, report.per_task(), task_stamps(held))), report


def kl_files(
    inputs: Sequence[str],
    *,
    ref: str = "ref_logprob",
    output: str | None = None,
    on_error: OnError = "fail",
) -> KLReport:
    """`mean_kl` over JSONL files; with `output`, also the calibrated rows (the input is
    read twice, stdin spooled, so memory stays per task)."""
    with spooled(inputs) as (paths, labels):
        stats = ReadStats()
        report = KLReport(ref=ref)
        stamps: Stamps = {}
        for line in iter_located(paths, on_error=on_error, stats=stats, labels=labels):
            report.add(line.row)
            if output is not None:
                task_stamps([line.row], stamps)
        report.skipped_lines = stats.skipped
        if output is not None:
            again = (x.row for x in iter_located(paths, on_error="skip", labels=labels))
            with RowWriter(output) as writer:
                writer.write_many(calibrated_rows(again, report.per_task(), stamps))
    return report
