"""Dataset pages: every set grouped by purpose, and one set's profile and first rows."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from whileai_core.store.base import PURPOSES

from .html import chart, e, facts, link, number, percent, size, table

PREVIEW_ROWS = 5
_TEXT_CAP = 240


def _short(text: Any) -> str:
    value = "" if text is None else str(text)
    return e(value if len(value) <= _TEXT_CAP else value[:_TEXT_CAP] + "…")


def datasets_body(records: list[dict[str, Any]]) -> str:
    """Train, holdout and eval, each a table: mode, rows, size, agent and lineage."""
    by_id = {d["datasetId"]: d for d in records}
    children: dict[str, list[str]] = {}
    for d in records:
        if d.get("parentDatasetId"):
            children.setdefault(d["parentDatasetId"], []).append(d["datasetId"])
    sections = []
    for purpose in PURPOSES:
        group = [d for d in records if d["purpose"] == purpose]
        rows = []
        for d in group:
            parent = d.get("parentDatasetId")
            lineage = []
            if parent:
                name = by_id[parent]["name"] if parent in by_id else parent
                lineage.append("from " + link(f"/ui/datasets/{parent}", name))
            for child in children.get(d["datasetId"], []):
                lineage.append("→ " + link(f"/ui/datasets/{child}", by_id[child]["name"]))
            rows.append(
                [
                    link(f"/ui/datasets/{d['datasetId']}", d["name"], cls="dataset"),
                    e(d.get("mode") or "–"),
                    number(d["rows"]),
                    size(d["sizeBytes"]),
                    e(d.get("agent") or "–"),
                    ", ".join(lineage) or "–",
                    "<span class='badge'>public</span>" if d.get("public") else "",
                    e((d.get("createdAt") or "")[:16].replace("T", " ")),
                ]
            )
        headers = ("name", "mode", "rows", "size", "agent", "lineage", "", "created")
        sections.append(
            f"<section class='purpose' id='purpose-{purpose}'><h2>{purpose.title()}"
            f" <span class='count'>{len(group)}</span></h2>"
            + table(headers, rows, "datasets", empty=f"No {purpose} sets yet.")
            + "</section>"
        )
    total = sum(int(d["sizeBytes"]) for d in records)
    summary = f"<p class='lede'>{len(records)} datasets, {size(total)} stored.</p>"
    return summary + "".join(sections)


def _histogram(profile: Mapping[str, Any]) -> dict[str, Any]:
    hist = profile.get("passRateHistogram") or {"edges": [], "counts": []}
    edges, counts = hist["edges"], hist["counts"]
    labels = [f"{edges[i]:.0%}–{edges[i + 1]:.0%}" for i in range(len(counts))]
    return {
        "type": "bar",
        "labels": labels,
        "x": "task pass rate",
        "y": "tasks",
        "datasets": [{"label": "tasks", "data": counts}],
    }


def _tool_chart(tools: Mapping[str, int]) -> dict[str, Any]:
    names = list(tools)[:20]
    return {
        "type": "bar",
        "labels": names,
        "x": "tool",
        "y": "calls",
        "datasets": [{"label": "calls", "data": [tools[n] for n in names]}],
    }


def _preview_rows(rows: list[dict[str, Any]]) -> str:
    out = []
    for i, row in enumerate(rows):
        ask = row.get("prompt") or row.get("ask") or ""
        tools = [s.get("tool") for s in row.get("steps") or [] if isinstance(s, dict)]
        reward = row.get("reward")
        full = orjson.dumps(row, option=orjson.OPT_INDENT_2).decode()
        out.append(
            f"<article class='row'><h3>Row {i + 1}"
            f" <span class='task'>{e(row.get('scenario_id') or '')}</span>"
            f" <span class='reward'>reward {number(reward)}</span></h3>"
            f"<p><b>Ask</b> {_short(ask)}</p>"
            f"<p><b>Tools</b> {e(', '.join(t for t in tools if t) or 'none')}</p>"
            f"<p><b>Final</b> {_short(row.get('final_text'))}</p>"
            f"<details><summary>The whole row</summary><pre>{e(full)}</pre></details></article>"
        )
    return "".join(out) or "<p class='empty'>No rows.</p>"


def dataset_body(
    preview: Mapping[str, Any], parent: Mapping[str, Any] | None
) -> tuple[str, dict[str, Any]]:
    """The set's facts, its profile (pass rate, per-task pass-rate histogram, mixed tasks,
    tool use) and its first rows; returns the body and its charts."""
    d, profile = preview["dataset"], preview["profile"]
    lineage = link(f"/ui/datasets/{parent['datasetId']}", parent["name"]) if parent else "–"
    about = facts(
        [
            ("purpose", e(d["purpose"])),
            ("mode", e(d.get("mode") or "–")),
            ("agent", e(d.get("agent") or "–")),
            ("rows", number(d["rows"])),
            ("size", size(d["sizeBytes"])),
            ("parent", lineage),
            ("public", "yes" if d.get("public") else "no"),
            ("created", e(d.get("createdAt"))),
        ]
    )
    numbers = facts(
        [
            ("pass rate", f"<span id='pass-rate'>{percent(profile.get('passRate'))}</span>"),
            ("graded rows", number(profile.get("graded"))),
            ("tasks", number(profile.get("tasks"))),
            ("mixed tasks", f"<span id='mixed-tasks'>{number(profile.get('mixedTasks'))}</span>"),
            ("unanimous tasks", number(profile.get("unanimousTasks"))),
            ("rows with tools", number(profile.get("rowsWithTools"))),
        ],
        "facts numbers",
    )
    charts: dict[str, Any] = {"chart-histogram": _histogram(profile)}
    hist = charts["chart-histogram"]
    hist_table = table(
        ("pass rate", "tasks"),
        [
            [e(label), number(count)]
            for label, count in zip(hist["labels"], hist["datasets"][0]["data"], strict=True)
        ],
        "chart-table histogram",
    )
    tools = profile.get("toolUse") or {}
    tool_part = "<p class='empty'>No tool calls in these rows.</p>"
    if tools:
        charts["chart-tools"] = _tool_chart(tools)
        tool_part = chart("chart-tools", "Tool use", "calls per tool, over every row")
    per_task = table(
        ("task", "runs", "graded", "pass rate"),
        [
            [e(t["task"]), number(t["runs"]), number(t["graded"]), percent(t["passRate"])]
            for t in profile.get("perTask") or []
        ],
        "per-task",
    )
    body = (
        f"<section class='about'>{about}</section>"
        f"<section class='profile'><h2>Profile</h2>{numbers}"
        + chart(
            "chart-histogram",
            "Per-task pass rate",
            "how many tasks pass how often; mixed tasks (neither 0% nor 100%) are the ones a"
            " grouped update learns from",
        )
        + f"<details><summary>Histogram as numbers</summary>{hist_table}</details>"
        + tool_part
        + f"<details><summary>Per task</summary>{per_task}</details></section>"
        + f"<section class='preview'><h2>First rows</h2>{_preview_rows(list(preview['rows']))}"
        "</section>"
    )
    return body, charts
