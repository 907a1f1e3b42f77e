"""Run, trace and agent pages: the curves and the word a run is judged by, what traces
were scored, and what each agent is."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from whileai_core.runs.report import holdout_text, progress

from .html import chart, e, facts, link, number, percent, table

MAX_CHART_POINTS = 2000
LOSS_METRICS = ("loss", "eval_loss", "train_loss")
_WORD_CLASS = {"Better": "better", "Worse": "worse", "About the same": "same"}


def _series(points: list[Mapping[str, Any]], metric: str) -> list[list[float]]:
    """(step, value) pairs of one metric, thinned to MAX_CHART_POINTS (the last kept)."""
    pairs = [[p["step"], p[metric]] for p in points if isinstance(p.get(metric), (int, float))]
    if len(pairs) > MAX_CHART_POINTS:
        stride = -(-len(pairs) // MAX_CHART_POINTS)
        pairs = pairs[::stride] + ([pairs[-1]] if (len(pairs) - 1) % stride else [])
    return pairs


def _line(points: list[Mapping[str, Any]], metrics: list[str], y: str) -> dict[str, Any]:
    return {
        "type": "line",
        "x": "step",
        "y": y,
        "datasets": [{"label": m, "data": _series(points, m)} for m in metrics],
    }


def run_charts(series: list[Mapping[str, Any]]) -> list[tuple[str, str, dict[str, Any]]]:
    """(id, title, spec) for each curve the run logged: the loss (and eval loss), the
    reward, the KL, the learning rate."""
    names = {k for p in series for k in p if k not in ("step", "ts")}
    groups = [
        ("chart-loss", "Loss", [m for m in LOSS_METRICS if m in names], "loss"),
        (
            "chart-reward",
            "Reward",
            sorted(m for m in names if m.startswith(("reward", "score")) and "std" not in m),
            "reward",
        ),
        ("chart-kl", "KL", [m for m in ("kl",) if m in names], "KL"),
        ("chart-lr", "Learning rate", [m for m in ("lr",) if m in names], "lr"),
    ]
    return [(cid, title, _line(series, ms, y)) for cid, title, ms, y in groups if ms]


def runs_body(runs: list[dict[str, Any]]) -> str:
    rows = [
        [
            link(f"/ui/runs/{r['runId']}", r["name"], cls="run"),
            f"<span class='status status-{e(r['status'])}'>{e(r['status'])}</span>",
            e(progress(r)),
            number(r.get("points")),
            e(holdout_text(r.get("holdout"))),
            link(f"/ui/datasets/{r['datasetId']}", r["datasetId"]) if r.get("datasetId") else "–",
            e((r.get("createdAt") or "")[:16].replace("T", " ")),
        ]
        for r in runs
    ]
    headers = ("name", "status", "progress", "points", "holdout", "dataset", "created")
    return table(headers, rows, "runs", empty="No training runs yet: `training_run(...)` or "
                 "`POST /runs` makes one.")  # fmt: skip


def _word(holdout: Mapping[str, Any] | None) -> str:
    if not holdout:
        return (
            "<section class='verdict none'><p class='word' id='holdout-word'>No holdout yet</p>"
            "<p>Send the held-out pass rate before and after with <code>run.holdout(before,"
            " after)</code>.</p></section>"
        )
    cls = _WORD_CLASS.get(holdout["word"], "same")
    shown = percent if holdout["metric"] == "pass" else number
    return (
        f"<section class='verdict {cls}'><p class='word' id='holdout-word'>{e(holdout['word'])}"
        f"</p><p class='numbers'>held-out {e(holdout['metric'])}"
        f" {shown(holdout['before'])} → {shown(holdout['after'])}</p>"
        f"<p class='basis'>{e(holdout['basis'])}</p></section>"
    )


def _delta_row(name: str, m: Mapping[str, Any]) -> list[str]:
    ci = m.get("ci95")
    interval = f"[{number(ci[0])}, {number(ci[1])}]" if isinstance(ci, list) and ci else "–"
    return [
        e(name),
        number(m.get("mean_a")),
        number(m.get("mean_b")),
        number(m.get("delta")),
        interval,
        number(m.get("p_value")),
        e(m.get("verdict") or "–"),
    ]


def delta_section(report: Mapping[str, Any]) -> str:
    headers = ("metric", "before", "after", "delta", "95% interval", "p", "verdict")
    metrics = report.get("metrics") or {}
    rows = [_delta_row(n, m) for n, m in metrics.items() if isinstance(m, Mapping)]
    groups = report.get("groups") or {}
    group_table = ""
    if isinstance(groups, Mapping) and groups:
        group_rows = [_delta_row(n, m) for n, m in groups.items() if isinstance(m, Mapping)]
        by = report.get("by") or "group"
        group_table = f"<h3>By {e(by)}</h3>" + table(("group", *headers[1:]), group_rows, "delta")
    headline = report.get("headline_verdict") or "–"
    return (
        "<section class='delta' id='delta'><h2>Before and after</h2>"
        f"<p class='headline'>{e(headline)}</p>"
        + table(headers, rows, "delta", empty="The report holds no metrics.")
        + group_table
        + "</section>"
    )


def run_body(run: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    total = run.get("totalSteps")
    bar = (
        f"<progress max='{int(total)}' value='{min(int(run.get('step') or 0), int(total))}'>"
        f"</progress>"
        if total
        else ""
    )
    about = facts(
        [
            ("status", f"<span class='status status-{e(run['status'])}'>{e(run['status'])}</span>"),
            ("progress", e(progress(run)) + bar),
            ("points", number(run.get("points"))),
            (
                "dataset",
                link(f"/ui/datasets/{run['datasetId']}", run["datasetId"])
                if run.get("datasetId")
                else "–",
            ),
            ("base model", e(run.get("baseModel") or "–")),
            ("trainer", e(run.get("trainer") or "–")),
            ("adapter", e(run.get("adapter") or "–")),
            ("started", e(run.get("createdAt"))),
            ("finished", e(run.get("finishedAt") or "–")),
        ]
    )
    series = list(run.get("series") or [])
    curves = run_charts(series)
    charts = {cid: spec for cid, _, spec in curves}
    drawn = "".join(chart(cid, title) for cid, title, _ in curves) or (
        "<p class='empty'>No points logged yet.</p>"
    )
    summary = {
        k: v
        for k, v in (run.get("summary") or {}).items()
        if k not in ("delta", "holdout") and not isinstance(v, (dict, list))
    }
    summary_part = facts([(k, number(v)) for k, v in summary.items()]) if summary else ""
    error = f"<p class='err'>{e(run['error'])}</p>" if run.get("error") else ""
    delta = (run.get("summary") or {}).get("delta")
    body = (
        _word(run.get("holdout"))
        + f"<section class='about'>{about}{error}</section>"
        + f"<section class='curves'><h2>Curves</h2>{drawn}</section>"
        + (f"<section class='summary'><h2>Summary</h2>{summary_part}</section>" if summary else "")
        + (delta_section(delta) if isinstance(delta, Mapping) else "")
    )
    return body, charts


def traces_body(result: Mapping[str, Any]) -> str:
    rows = []
    for t in result.get("traces", []):
        scores = t.get("scores") or {}
        shown = ", ".join(f"{k} {number(v)}" for k, v in scores.items())
        if not shown and t.get("reward") is not None:
            shown = f"reward {number(t['reward'])}"
        rows.append(
            [
                f"<code>{e(str(t['traceId'])[:16])}</code>",
                e(t.get("agent") or "–"),
                e(t.get("scenario_id") or "–"),
                e(shown or "not scored"),
                e(", ".join(t.get("tools_used") or []) or "–"),
                e((t.get("started_at") or "")[:19].replace("T", " ")),
            ]
        )
    total = result.get("total", len(rows))
    lede = f"<p class='lede'>{number(total)} traces; the newest {len(rows)} below.</p>"
    headers = ("trace", "agent", "task", "scores", "tools", "started")
    return lede + table(headers, rows, "traces", empty="No traces yet: point an OTLP exporter"
                        " at /v1/traces.")  # fmt: skip


def agents_body(agents: list[dict[str, Any]]) -> str:
    out = []
    for a in agents:
        sets = ", ".join(f"{k} {v}" for k, v in sorted(a["datasets"].items())) or "no datasets"
        tools = a.get("tools") or []
        tool_rows = []
        for tool in tools:
            fn = tool.get("function", tool) if isinstance(tool, dict) else {}
            tool_rows.append([f"<code>{e(fn.get('name'))}</code>", e(fn.get("description"))])
        prompt = a.get("system_prompt")
        out.append(
            f"<article class='agent' id='agent-{e(a['slug'])}'><h2>{e(a['slug'])}</h2>"
            f"<p>{e(a.get('description') or '')}</p>"
            f"<p class='counts'>{number(a['traces'])} traces; {e(sets)};"
            f" {number(a.get('cards', 0))} public</p>"
            + (
                "<h3>Tools</h3>" + table(("tool", "what it does"), tool_rows, "tools")
                if tool_rows
                else "<p class='empty'>No tools recorded (push --spec S --agent A, or traces"
                " whose model calls carry their tool definitions).</p>"
            )
            + (f"<h3>System prompt</h3><pre class='prompt'>{e(prompt)}</pre>" if prompt else "")
            + "</article>"
        )
    return "".join(out) or "<p class='empty'>No agents yet.</p>"
