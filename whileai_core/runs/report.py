"""How a run reads as text: the lines `whileai runs` and `whileai runs show` print."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

# Summary keys shown elsewhere in the text (or too large for a line).
_SHOWN = {"delta", "holdout", "alarms", "holdoutPassBefore", "holdoutPassAfter",
          "holdoutLossBefore", "holdoutLossAfter"}  # fmt: skip


def _num(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def shown_status(run: Mapping[str, Any]) -> str:
    """The status a reader should see: a running run whose trainer went quiet reads as
    `stale`, then `crashed` (the store's heartbeat reading), never `running` for ever."""
    liveness = run.get("liveness")
    if run.get("status") == "running" and liveness in ("stale", "crashed"):
        return str(liveness)
    return str(run.get("status"))


def progress(run: Mapping[str, Any]) -> str:
    total = run.get("totalSteps")
    return f"step {run.get('step', 0)}" + (f"/{total}" if total else "")


def holdout_text(holdout: Mapping[str, Any] | None) -> str:
    if not holdout:
        return "-"
    if holdout["metric"] == "pass":
        numbers = f"pass {holdout['before']:.1%} -> {holdout['after']:.1%}"
    else:
        numbers = f"loss {holdout['before']:.4g} -> {holdout['after']:.4g}"
    return f"{holdout['word']} ({numbers})"


def table(runs: Iterable[Mapping[str, Any]]) -> tuple[list[str], list[list[str]]]:
    """Columns and cells for the run listing."""
    columns = ["id", "name", "status", "progress", "points", "holdout", "dataset", "created"]
    cells = [
        [
            str(r["runId"]),
            str(r["name"]),
            shown_status(r),
            progress(r),
            str(r.get("points", 0)),
            holdout_text(r.get("holdout")),
            str(r.get("datasetId") or "-"),
            str(r.get("createdAt") or "-"),
        ]
        for r in runs
    ]
    return columns, cells


def curve(series: list[Mapping[str, Any]], metric: str) -> str | None:
    values = [(p["step"], p[metric]) for p in series if isinstance(p.get(metric), (int, float))]
    if not values:
        return None
    low = min(values, key=lambda v: v[1])
    return (
        f"{metric}: {_num(values[0][1])} at step {values[0][0]} -> {_num(values[-1][1])} at step"
        f" {values[-1][0]} (lowest {_num(low[1])} at step {low[0]}; {len(values)} points)"
    )


def delta_lines(report: Mapping[str, Any]) -> list[str]:
    lines = [f"delta: {report.get('headline_verdict') or report.get('verdict') or '-'}"]
    metrics = report.get("metrics")
    if isinstance(metrics, Mapping):
        for name, m in metrics.items():
            if not isinstance(m, Mapping):
                continue
            ci = m.get("ci95")
            interval = f" [{_num(ci[0])}, {_num(ci[1])}]" if isinstance(ci, list) and ci else ""
            lines.append(
                f"  {name}: {_num(m.get('mean_a'))} -> {_num(m.get('mean_b'))},"
                f" delta {_num(m.get('delta'))}{interval}, {m.get('verdict', '-')}"
            )
    return lines


def run_lines(run: Mapping[str, Any]) -> list[str]:
    """`whileai runs show`: what the run is, how far it got, the curves, the word."""
    lines = [f"{run['runId']} {run['name']}: {shown_status(run)}, {progress(run)}, "
             f"{run.get('points', 0)} points"]  # fmt: skip
    about = [
        f"{label} {run[key]}"
        for label, key in (("dataset", "datasetId"), ("base", "baseModel"), ("trainer", "trainer"))
        if run.get(key)
    ]
    if about:
        lines.append("  " + ", ".join(about))
    holdout = run.get("holdout")
    if holdout:
        lines.append(f"  holdout: {holdout_text(holdout)}; {holdout['basis']}")
    series = list(run.get("series") or [])
    metrics = sorted({k for p in series for k in p if k not in ("step", "ts")})
    preferred = [m for m in ("loss", "eval_loss", "reward", "kl") if m in metrics]
    for metric in preferred + [m for m in metrics if m not in preferred]:
        text = curve(series, metric)
        if text:
            lines.append("  " + text)
    summary = {k: v for k, v in (run.get("summary") or {}).items() if k not in _SHOWN}
    if summary:
        shown = ", ".join(f"{k}={_num(v)}" for k, v in summary.items() if not isinstance(v, dict))
        if shown:
            lines.append(f"  summary: {shown}")
    if run.get("adapter"):
        lines.append(f"  adapter: {run['adapter']}")
    if run.get("error"):
        label = "stopped" if run.get("status") == "stopped" else "error"
        lines.append(f"  {label}: {run['error']}")
    alarms = (run.get("summary") or {}).get("alarms")
    if isinstance(alarms, Mapping):
        lines.extend(f"  alarm {line}" for line in alarms.values())
    delta = (run.get("summary") or {}).get("delta")
    if isinstance(delta, Mapping):
        lines.extend("  " + line for line in delta_lines(delta))
    return lines
