"""Run, trace and agent pages: the curves and the word a run is judged by, what traces
were scored, and what each agent is."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from whileai_core.runs.report import holdout_text, progress, shown_status

from .html import chart, e, facts, link, number, percent, table

MAX_CHART_POINTS = 2000
MAX_OVERLAY = 8
# Seconds between reloads of a page that shows a run still running (its trainer alive).
REFRESH_SECONDS = 5
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


def chart_groups(names: set[str]) -> list[tuple[str, str, list[str], str]]:
    """(id, title, metrics, y label) of every chart the metric `names` fill: the loss (and
    eval loss), the reward, the KL, the learning rate, the gradient norm, preference
    margins, the hack monitor's gold-vs-proxy, held-out length and alarms."""
    groups: list[tuple[str, str, list[str], str]] = [
        ("chart-loss", "Loss", [m for m in LOSS_METRICS if m in names], "loss"),
        (
            "chart-reward",
            "Reward",
            sorted(m for m in names if m.startswith(("reward", "score")) and "std" not in m),
            "reward",
        ),
        ("chart-gold", "Gold vs training reward (held-out samples)",
         [m for m in ("gold_reward", "proxy_reward") if m in names], "reward"),
        ("chart-kl", "KL", [m for m in ("kl",) if m in names], "KL"),
        ("chart-grad", "Gradient norm", [m for m in ("grad_norm",) if m in names], "norm"),
        ("chart-pairs", "Pairs", [m for m in ("margin", "pair_accuracy") if m in names], ""),
        ("chart-length", "Held-out completion length",
         [m for m in ("holdout_length", "completion_length") if m in names], "length"),
        ("chart-alarms", "Alarms", sorted(m for m in names if m.startswith("alarm_")), "fired"),
        ("chart-lr", "Learning rate", [m for m in ("lr",) if m in names], "lr"),
    ]  # fmt: skip
    return [g for g in groups if g[2]]


def _names(series: list[Mapping[str, Any]]) -> set[str]:
    return {k for p in series for k in p if k not in ("step", "ts")}


def run_charts(series: list[Mapping[str, Any]]) -> list[tuple[str, str, dict[str, Any]]]:
    """(id, title, spec) for each curve the run logged (see `chart_groups`)."""
    return [
        (cid, title, _line(series, ms, y)) for cid, title, ms, y in chart_groups(_names(series))
    ]


def is_live(run: Mapping[str, Any]) -> bool:
    """Still worth reloading: running, and not given up for crashed."""
    return run.get("status") == "running" and run.get("liveness") != "crashed"


def _status(run: Mapping[str, Any]) -> str:
    shown = shown_status(run)
    return f"<span class='status status-{e(shown)}' id='status'>{e(shown)}</span>"


def overlay_body(runs: Sequence[Mapping[str, Any]]) -> tuple[str, dict[str, Any]]:
    """Two or more runs on shared charts: one chart per metric, one line per run."""
    names = set().union(*(_names(list(r.get("series") or [])) for r in runs)) if runs else set()
    charts: dict[str, Any] = {}
    drawn = []
    for cid, title, metrics, y in chart_groups(names):
        for metric in metrics:
            key = f"{cid}-{metric}".replace("_", "-")
            sets = [
                {"label": f"{r['name']} ({r['runId'][-6:]})",
                 "data": _series(list(r.get("series") or []), metric)}
                for r in runs
            ]  # fmt: skip
            sets = [d for d in sets if d["data"]]
            if not sets:
                continue
            charts[key] = {"type": "line", "x": "step", "y": y or metric, "datasets": sets}
            drawn.append(chart(key, f"{title}: {metric}" if len(metrics) > 1 else title))
    rows = [[link(f"/ui/runs/{r['runId']}", r["name"], cls="run"), _status(r), e(progress(r)),
             e(holdout_text(r.get("holdout"))), e(json_config(r))] for r in runs]  # fmt: skip
    head = table(("run", "status", "progress", "holdout", "config"), rows, "overlay")
    body = (
        f"<section class='about'>{head}</section>"
        + "<section class='curves'><h2>Curves</h2>"
        + ("".join(drawn) or "<p class='empty'>No points logged yet.</p>")
        + "</section>"
    )
    return body, charts


def json_config(run: Mapping[str, Any]) -> str:
    """The knobs a run was compared by, as one short line."""
    config = run.get("config") or {}
    keep = ("method", "learning_rate", "steps", "epochs", "beta", "generations", "lora_r", "seed")
    return ", ".join(f"{k}={config[k]}" for k in keep if config.get(k) is not None)


def runs_body(runs: list[dict[str, Any]]) -> str:
    rows = [
        [
            f"<input type='checkbox' name='id' value='{e(r['runId'])}' "
            f"aria-label='overlay {e(r['name'])}'>",
            link(f"/ui/runs/{r['runId']}", r["name"], cls="run"),
            f"<span class='status status-{e(shown_status(r))}'>{e(shown_status(r))}</span>",
            e(progress(r)),
            number(r.get("points")),
            e(holdout_text(r.get("holdout"))),
            link(f"/ui/datasets/{r['datasetId']}", r["datasetId"]) if r.get("datasetId") else "–",
            e((r.get("createdAt") or "")[:16].replace("T", " ")),
        ]
        for r in runs
    ]
    headers = ("", "name", "status", "progress", "points", "holdout", "dataset", "created")
    listed = table(headers, rows, "runs", empty="No training runs yet: `whileai train`, "
                   "`training_run(...)` or `POST /runs` makes one.")  # fmt: skip
    if not rows:
        return listed
    return (
        "<form method='get' action='/ui/runs/overlay' class='overlay'>" + listed
        + "<button type='submit' id='overlay'>Overlay the checked runs</button></form>"
    )  # fmt: skip


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
            ("status", _status(run)),
            ("last heard", e(run.get("updatedAt") or "–")),
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
    error = ""
    if run.get("error"):
        label = "Stopped: " if run.get("status") == "stopped" else ""
        error = f"<p class='err' id='run-error'>{e(label)}{e(run['error'])}</p>"
    delta = (run.get("summary") or {}).get("delta")
    alarms = (run.get("summary") or {}).get("alarms")
    alarm_part = ""
    if isinstance(alarms, Mapping) and alarms:
        items = "".join(f"<li class='alarm' data-alarm='{e(n)}'>{e(line)}</li>"
                        for n, line in alarms.items())  # fmt: skip
        alarm_part = (
            f"<section class='alarms' id='alarms'><h2>Alarms</h2><ul>{items}</ul></section>"
        )
    body = (
        _word(run.get("holdout"))
        + f"<section class='about'>{about}{error}</section>"
        + alarm_part
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
                f"<a class='trace' href='/ui/traces/{e(t['traceId'])}'>"
                f"<code>{e(str(t['traceId'])[:16])}</code></a>",
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


MAX_SHOWN_CHARS = 4000


def _clip(value: Any) -> str:
    text = value if isinstance(value, str) else orjson.dumps(value).decode()
    return text if len(text) <= MAX_SHOWN_CHARS else text[:MAX_SHOWN_CHARS] + " …"


def trace_body(trace: Mapping[str, Any]) -> str:
    """One trace: what it was (agent, task, when, scores), its turns in order with the
    tool calls each agent turn made, and the calls with their results."""
    scores = trace.get("scores") or {}
    about = facts([
        ("trace", f"<code>{e(trace.get('traceId'))}</code>"),
        ("agent", e(trace.get("agent") or "–")),
        ("task", e(trace.get("scenario_id") or "–")),
        ("started", e(str(trace.get("started_at") or "–")[:19].replace("T", " "))),
        ("scores", e(", ".join(f"{k} {number(v)}" for k, v in scores.items()) or "not scored")),
        ("reward", number(trace.get("reward")) if trace.get("reward") is not None else "–"),
    ])  # fmt: skip
    from whileai_core.export.conversation import messages_from_steps

    # A trace's row keeps its turns as messages when its spans carried them, else as
    # prompt, steps and final reply: the exporter's one rebuild reads those as turns.
    messages = trace.get("messages") or messages_from_steps(dict(trace))
    turns = []
    for i, m in enumerate(messages):
        if not isinstance(m, Mapping):
            continue
        calls = "".join(
            f"<li class='call'><code>{e((c.get('function') or c).get('name'))}</code>"
            f"<pre>{e(_clip((c.get('function') or c).get('arguments')))}</pre></li>"
            for c in m.get("tool_calls") or [] if isinstance(c, Mapping)
        )  # fmt: skip
        content = m.get("content")
        turns.append(
            f"<li class='turn role-{e(m.get('role'))}' id='turn-{i}'>"
            f"<span class='role'>{e(m.get('role'))}</span>"
            + (f"<pre>{e(_clip(content))}</pre>" if content not in (None, "") else "")
            + (f"<ul class='calls'>{calls}</ul>" if calls else "")
            + "</li>"
        )
    steps = [
        [f"<code>{e(s.get('tool'))}</code>", f"<pre>{e(_clip(s.get('arguments')))}</pre>",
         f"<pre>{e(_clip(s.get('result')))}</pre>", e(s.get("error") or "")]
        for s in trace.get("steps") or [] if isinstance(s, Mapping) and s.get("tool")
    ]  # fmt: skip
    final = trace.get("final_text")
    final_part = ""
    if final:
        final_part = (
            f"<section><h2>Final reply</h2><pre id='final'>{e(_clip(final))}</pre></section>"
        )
    steps_table = table(
        ("tool", "arguments", "result", "error"), steps, "steps", empty="No tool calls."
    )
    return (
        f"<section class='about'>{about}</section>"
        + "<section class='turns' id='turns'><h2>Turns</h2>"
        + (f"<ol>{''.join(turns)}</ol>" if turns else "<p class='empty'>No turns.</p>")
        + "</section><section class='steps' id='steps'><h2>Tool calls</h2>"
        + steps_table
        + "</section>"
        + final_part
    )


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
