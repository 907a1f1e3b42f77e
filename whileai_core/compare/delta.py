"""`whileai delta --before B --after A`: did the change land, and did it break anything?

Every metric both sides carry (pass@1 and each shared marker) is compared paired by task
(`metrics.paired`). Markers follow one polarity: 1.0 is the good outcome, so a
significant drop is the regression. What the report decides:

- the headline is `--target` (pass@1 by default): improved, regressed,
  no_difference_detected, or within_eval_noise when a re-run floor is given and the
  delta sits inside it;
- a significant drop of a `--must-not-regress` metric fails the report (exit 1), and so
  does a significant drop of the target itself: the change set out to move it up;
- a guard that is not measured on both sides fails too: a check that cannot run has not
  passed;
- any other significant drop is a warning;
- `--run-std` (the eval's re-run standard deviation, `whileai variance`) makes any delta
  with |delta| < 2 x run_std `within_noise`: not a gain and not a regression, since
  re-running the same eval moves it that much on its own;
- `--proxy marker:NAME` names the training reward: the proxy up while the target did not
  follow fails the report (over-optimization);
- `--by KEY|marker:NAME` compares the target within each group; `groups_down` lists the
  groups whose target dropped significantly (the warning says when the headline rose
  over them);
- fewer than half the tasks on both sides fails as not comparable: the delta would be
  between two task sets, not two policies;
- when the target shows no detectable difference, the report says how small a delta
  these tasks can detect (alpha 0.05, power 0.8) and how many a holdout needs for
  `--mde` (default: the delta seen, else 0.05).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import WhileaiError
from ..jsonl import OnError
from ..metrics import power as pw
from ..metrics.paired import MOSTLY_UNPAIRED, N_BOOT, Comparison, compare_values
from ..metrics.taskvalues import PASS_AT_1, group_reader, metric_key
from .sides import Side, check_stdin, collect, read_side, require_metric

NOISE_MULTIPLIER = 2.0
DEFAULT_MDE = 0.05
GROUP_SEED_OFFSET = 1000

RunStd = float | Mapping[str, float | None] | None


@dataclass
class DeltaOptions:
    target: str = PASS_AT_1
    must_not_regress: Sequence[str] = ()
    by: str | None = None
    run_std: RunStd = None
    proxy: str | None = None
    mde: float | None = None
    alpha: float = pw.ALPHA
    power: float = pw.POWER
    seed: int = 0
    n_boot: int = N_BOOT


@dataclass
class DeltaReport:
    before: str
    after: str
    target: str
    target_verdict: str
    metrics: dict[str, dict[str, Any]]
    guarded: list[str]
    improved: list[str]
    regressions: list[str]
    slipped: list[str]
    within_noise: list[str]
    failures: list[str]
    proxy: str | None = None
    proxy_verdict: str | None = None
    over_optimized: bool = False
    by: str | None = None
    groups: dict[str, dict[str, Any]] | None = None
    groups_down: list[str] = field(default_factory=list)
    run_std: dict[str, float | None] = field(default_factory=dict)
    sizing: dict[str, Any] | None = None
    pass_at: dict[str, dict[str, Any]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failures

    def as_dict(self) -> dict[str, Any]:
        head = self.metrics[self.target]
        pairing = self.metrics.get(PASS_AT_1, head)
        return {
            "ok": self.ok,
            "failures": self.failures,
            "before": self.before,
            "after": self.after,
            "target": self.target,
            "target_verdict": self.target_verdict,
            "target_delta": head["delta"],
            "target_ci95": head["ci95"],
            "n_paired_tasks": pairing["n_paired"],
            "n_unpaired_tasks": pairing["n_only_a"] + pairing["n_only_b"],
            "paired_share": pairing["paired_share"],
            "must_not_regress": self.guarded,
            "improved": self.improved,
            "regressions": self.regressions,
            "slipped": self.slipped,
            "within_noise": self.within_noise,
            "run_std": self.run_std or None,
            "noise_rule": f"|delta| < {NOISE_MULTIPLIER:g} x run_std" if self.run_std else None,
            "proxy": self.proxy,
            "proxy_verdict": self.proxy_verdict,
            "over_optimized": self.over_optimized,
            "by": self.by,
            "groups": self.groups,
            "groups_down": self.groups_down,
            "sizing": self.sizing,
            "pass_at": self.pass_at,
            "metrics": self.metrics,
            "warnings": self.warnings,
        }

    def lines(self) -> list[str]:
        """The headline, then one line per metric, then groups and sizing."""
        head = self.metrics[self.target]
        span = f" [{head['ci95'][0]:+.3f}, {head['ci95'][1]:+.3f}]" if head["ci95"] else ""
        delta = f" {head['delta']:+.3f}{span}" if head["delta"] is not None else ""
        status = "ok" if self.ok else "FAIL: " + "; ".join(self.failures)
        out = [f"delta: target {self.target} {self.target_verdict}{delta} -> {status}"]
        if self.pass_at:
            out.append(_pass_at_line(self.pass_at))
        width = max(len(m) for m in self.metrics)
        for name, m in self.metrics.items():
            out.append("  " + _metric_line(name, m, width))
        if self.groups is not None:
            out.append(f"by {self.by}: {len(self.groups)} group(s) on both sides")
            gw = max((len(g) for g in self.groups), default=0)
            for name, g in self.groups.items():
                out.append("  " + _metric_line(name, g, gw))
        if self.sizing is not None and self.target_verdict in (
            "no_difference_detected",
            "within_eval_noise",
        ):
            out.append(sizing_line(self.sizing))
        return out


def _metric_line(name: str, m: Mapping[str, Any], width: int) -> str:
    if m["delta"] is None:
        return f"{name:<{width}}  {m['verdict']}"
    ci = f" [{m['ci95'][0]:+.3f}, {m['ci95'][1]:+.3f}]" if m["ci95"] else ""
    word = "within_noise" if m.get("within_noise") else m["verdict"]
    tags = [t for t in (m.get("role"), m.get("flag")) if t]
    tail = f"  {' '.join(tags)}" if tags else ""
    return (
        f"{name:<{width}}  {m['mean_a']:.3f} -> {m['mean_b']:.3f}  {m['delta']:+.3f}{ci}  "
        f"{word}  (n={m['n_paired']}){tail}"
    )


def _pass_at_line(sides: Mapping[str, Mapping[str, Any]]) -> str:
    """`pass@1 before 0.420 [0.35, 0.49] | pass^4 0.180 -> after ...`, per side."""
    parts = []
    for name, p in sides.items():
        text = f"{name} {p['pass_at_1']:.3f}"
        if p["pass_at_1_ci95"]:
            text += f" [{p['pass_at_1_ci95'][0]:.3f}, {p['pass_at_1_ci95'][1]:.3f}]"
        if p["k"]:
            text += f", pass^{p['k']} {p['pass_pow_k']:.3f}, pass@{p['k']} {p['pass_at_k']:.3f}"
        parts.append(text)
    return "  pass@1 " + " -> ".join(parts) + f" ({sides['before']['tasks']} tasks before)"


def sizing_line(s: Mapping[str, Any]) -> str:
    where = (
        f"task sd {s['sd']:.3f} measured on the {s['n_paired']} paired tasks"
        if s["sd_source"] == "rows"
        else f"task sd from a binomial model at pass rate {s['base']:.2f}, k={s['k']}"
    )
    return (
        f"sizing: {s['n_paired']} paired tasks detect a delta of about "
        f"{s['detectable_effect']:.3f} (alpha {s['alpha']:g}, power {s['power']:g}; {where}); "
        f"to detect {s['effect']:.3f} a holdout needs about {s['tasks_needed']} paired tasks"
    )


def delta_report(
    before: Iterable[dict[str, Any]],
    after: Iterable[dict[str, Any]],
    options: DeltaOptions | None = None,
) -> DeltaReport:
    """The before/after report over two row sets (see the module for what it decides)."""
    opts = options or DeltaOptions()
    group_of = group_reader(opts.by) if opts.by else None
    target = metric_key(opts.target)
    a = collect(before, label="before", group_of=group_of, group_metric=target)
    b = collect(after, label="after", group_of=group_of, group_metric=target)
    return _report(a, b, opts)


def delta_files(
    before: Sequence[str],
    after: Sequence[str],
    options: DeltaOptions | None = None,
    *,
    on_error: OnError = "fail",
) -> DeltaReport:
    """`delta_report` over JSONL files, each side streamed once."""
    opts = options or DeltaOptions()
    check_stdin([before, after])
    group_of = group_reader(opts.by) if opts.by else None
    target = metric_key(opts.target)
    a = read_side(before, on_error=on_error, group_of=group_of, group_metric=target)
    b = read_side(after, on_error=on_error, group_of=group_of, group_metric=target)
    return _report(a, b, opts)


def _floors(run_std: RunStd, metrics: Sequence[str]) -> dict[str, float | None]:
    if run_std is None:
        return {}
    if isinstance(run_std, Mapping):
        given = {metric_key(k): v for k, v in run_std.items()}
        return {m: given.get(m) for m in metrics}
    return {m: float(run_std) for m in metrics}


def _report(a: Side, b: Side, opts: DeltaOptions) -> DeltaReport:
    target = metric_key(opts.target)
    guarded = list(dict.fromkeys(metric_key(m) for m in opts.must_not_regress))
    proxy = metric_key(opts.proxy) if opts.proxy else None
    require_metric(a, target)
    require_metric(b, target)
    warnings = [*a.warnings(), *b.warnings()]
    shared = [m for m in a.values.metrics() if m in b.values]
    for m in sorted(set(a.values.metrics()) ^ set(b.values.metrics())):
        side = "before" if m in a.values else "after"
        warnings.append(f"{m} is measured on the {side} side only: not compared")
    results: dict[str, Comparison] = {}
    for i, m in enumerate(shared):
        results[m] = compare_values(
            a.values.means(m),
            b.values.means(m),
            metric=m,
            seed=opts.seed + i,
            n_boot=opts.n_boot,
        )
    floors = _floors(opts.run_std, shared)
    rows: dict[str, dict[str, Any]] = {}
    within: list[str] = []
    for m, c in results.items():
        row = c.as_dict()
        floor = floors.get(m)
        band = NOISE_MULTIPLIER * floor if floor is not None else None
        row["run_std"] = floor
        row["noise_band"] = band
        row["within_noise"] = band is not None and c.delta is not None and abs(c.delta) < band
        row["role"] = (
            "target"
            if m == target
            else "must-not-regress"
            if m in guarded
            else ("proxy" if m == proxy else None)
        )
        if row["within_noise"]:
            within.append(m)
        rows[m] = row
    if opts.run_std is not None:
        missing = [m for m in shared if floors.get(m) is None]
        if missing:
            warnings.append(
                f"no re-run floor for {', '.join(missing)}: judged on the task interval alone"
            )

    def loud(m: str, verdict: str) -> bool:
        return results[m].verdict == verdict and not rows[m]["within_noise"]

    failures: list[str] = []
    regressions = [m for m in guarded if m in results and loud(m, "regressed")]
    slipped = [m for m in shared if m not in guarded and m != target and loud(m, "regressed")]
    improved = [m for m in shared if loud(m, "improved")]
    for m in regressions:
        rows[m]["flag"] = "FAIL"
        c = results[m]
        failures.append(f"{m} regressed {c.delta:+.3f}, named in --must-not-regress")
    for m in guarded:
        if m not in results:
            failures.append(f"{m} (--must-not-regress) is not measured on both sides")
        elif _degenerate(a, b, m):
            warnings.append(
                f"{m} (--must-not-regress) has one value on every row of both sides: a "
                "guard that cannot move catches nothing; check that it is stamped"
            )
    head = results[target]
    target_verdict = head.verdict
    if rows[target]["within_noise"] and head.verdict in ("improved", "regressed"):
        target_verdict = "within_eval_noise"
        warnings.append(
            f"{target}: {head.delta:+.3f} is inside the eval's own re-run band "
            f"(2 x run_std = {rows[target]['noise_band']:.3f}): re-running it moves it that much"
        )
    if target_verdict == "regressed" and target not in regressions:
        rows[target]["flag"] = "FAIL"
        failures.append(f"target {target} regressed {head.delta:+.3f}")
    for m in slipped:
        c = results[m]
        rows[m]["flag"] = "DOWN"
        assert c.ci95 is not None and c.delta is not None
        warnings.append(
            f"{m} dropped {c.delta:+.3f} [{c.ci95[0]:+.3f}, {c.ci95[1]:+.3f}]; add it to "
            "--must-not-regress if that must fail the run"
        )
    if opts.run_std is None and target_verdict in ("improved", "regressed"):
        warnings.append(
            "one eval run a side and no --run-std: re-run the eval three times on one model, "
            "`whileai variance` them, and pass its report as --run-std to rule out eval noise"
        )
    pairing = results.get(PASS_AT_1, head)
    if pairing.note:
        warnings.append(f"{pairing.metric}: {pairing.note}")
    if (
        pairing.paired_share is not None
        and pairing.paired_share < MOSTLY_UNPAIRED
        and (pairing.n_only_a or pairing.n_only_b)
    ):
        failures.append(
            f"not comparable: {pairing.n_paired} of "
            f"{pairing.n_paired + pairing.n_only_a + pairing.n_only_b} tasks are on both sides; "
            "re-run the after side on the before side's tasks (simulate --tasks)"
        )
    proxy_verdict, over = _proxy(proxy, target, results, rows, warnings)
    if over:
        failures.append(f"over-optimized: {proxy} rose while {target} did not follow")
    report = DeltaReport(
        before=a.label,
        after=b.label,
        target=target,
        target_verdict=target_verdict,
        metrics=rows,
        guarded=guarded,
        improved=improved,
        regressions=regressions,
        slipped=slipped,
        within_noise=within,
        failures=failures,
        proxy=proxy,
        proxy_verdict=proxy_verdict,
        over_optimized=over,
        run_std={m: floors.get(m) for m in shared} if opts.run_std is not None else {},
        warnings=warnings,
    )
    if opts.by:
        _groups(report, a, b, opts, head)
    report.sizing = _sizing(head, a, opts)
    if PASS_AT_1 in a.values and PASS_AT_1 in b.values:
        report.pass_at = {
            "before": a.pass_numbers(opts.seed),
            "after": b.pass_numbers(opts.seed),
        }
    return report


def _degenerate(a: Side, b: Side, metric: str) -> bool:
    values = {round(v, 9) for s in (a, b) for v in s.values.means(metric).values()}
    return len(values) == 1


def _proxy(
    proxy: str | None,
    target: str,
    results: Mapping[str, Comparison],
    rows: Mapping[str, Mapping[str, Any]],
    warnings: list[str],
) -> tuple[str | None, bool]:
    if proxy is None:
        return None, False
    if proxy == target:
        warnings.append(f"--proxy {proxy} is the target itself: name the training reward")
        return "proxy_is_target", False
    if proxy not in results:
        warnings.append(f"--proxy {proxy} is not measured on both sides")
        return "proxy_not_measured", False
    p, t = results[proxy], results[target]
    up = p.verdict == "improved" and not rows[proxy]["within_noise"]
    followed = t.verdict == "improved" and not rows[target]["within_noise"]
    if up and not followed:
        assert p.delta is not None and t.delta is not None
        warnings.append(
            f"OVER-OPTIMIZED: {proxy} {p.delta:+.3f} while {target} {t.delta:+.3f} "
            f"({t.verdict}): the policy learned what the training reward pays for and the "
            "target does not credit"
        )
    return ("moved" if up else p.verdict), up and not followed


def _groups(report: DeltaReport, a: Side, b: Side, opts: DeltaOptions, head: Comparison) -> None:
    target = report.target
    groups: dict[str, dict[str, Any]] = {}
    names = sorted(g for g in a.groups if g in b.groups)
    for i, name in enumerate(names):
        ga, gb = a.groups[name], b.groups[name]
        if target not in ga or target not in gb:
            continue
        c = compare_values(
            ga.means(target),
            gb.means(target),
            metric=target,
            seed=opts.seed + GROUP_SEED_OFFSET + i,
            n_boot=opts.n_boot,
        )
        row = c.as_dict()
        row["rows_a"], row["rows_b"] = ga.rows, gb.rows
        if c.verdict == "regressed":
            row["flag"] = "DOWN"
            report.groups_down.append(name)
            assert c.delta is not None and c.ci95 is not None
            rose = " while the headline rose" if head.verdict == "improved" else ""
            report.warnings.append(
                f"{target} dropped for {opts.by}={name}{rose}: {c.delta:+.3f} "
                f"[{c.ci95[0]:+.3f}, {c.ci95[1]:+.3f}] over {c.n_paired} paired tasks"
            )
        groups[name] = row
    if not groups:
        report.warnings.append(f"--by {opts.by}: no group has {target} on both sides")
    report.by = opts.by
    report.groups = groups


def _sizing(head: Comparison, before: Side, opts: DeltaOptions) -> dict[str, Any] | None:
    n = head.n_paired
    if n < pw.MIN_TASKS:
        return None
    base = head.mean_a if head.mean_a is not None else 0.5
    k = before.k
    measured = head.diff_sd is not None and head.diff_sd > 0 and n >= pw.MIN_MEASURED
    seen = abs(head.delta) if head.delta is not None else 0.0
    if opts.mde is not None:
        effect, source = opts.mde, "given"
    elif 0 < seen < 1:
        effect, source = seen, "seen"
    else:
        effect, source = DEFAULT_MDE, "default"
    kw = {"alpha": opts.alpha, "power": opts.power}
    if measured:
        assert head.diff_sd is not None
        sd: float | None = head.diff_sd
        detectable = pw.detectable_effect(n, head.diff_sd, **kw)
        needed = pw.tasks_needed(effect, head.diff_sd, **kw)
    else:
        sd = None
        detectable = pw.model_detectable_effect(n, base, k, **kw)
        needed = pw.model_tasks_needed(effect, base, k, **kw)
    return {
        "alpha": opts.alpha,
        "power": opts.power,
        "n_paired": n,
        "sd": sd,
        "sd_source": "rows" if measured else "model",
        "base": base,
        "k": k,
        "detectable_effect": detectable,
        "effect": effect,
        "effect_source": source,
        "tasks_needed": needed,
    }


def check_options(opts: DeltaOptions) -> None:
    """Values that cannot work, before any row is read."""
    if opts.mde is not None and not 0 < opts.mde < 1:
        raise WhileaiError(f"--mde {opts.mde:g}: a pass-rate delta strictly between 0 and 1")
    if isinstance(opts.run_std, (int, float)) and opts.run_std < 0:
        raise WhileaiError(f"--run-std {opts.run_std:g}: a standard deviation is not negative")
