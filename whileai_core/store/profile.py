"""What a dataset holds, measured from its rows: the numbers `GET /datasets/{id}/profile`
answers and `whileai datasets` shows.

Counted in one pass so a large dataset is profiled without holding it in memory; only
per-task tallies are kept. A row passes when its clean `reward` is 0.5 or more
(`metrics.tally.passed`, the split of every row reader); a trace's verdict, which passes only at
1.0, has already become a 1.0 or 0.0 reward by the time `cut` stores it as a row.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from ..metrics.tally import TaskTally


def _tools_of(row: dict[str, Any]) -> list[str]:
    names: list[str] = []
    for step in row.get("steps") or []:
        if isinstance(step, dict) and isinstance(step.get("tool"), str):
            names.append(step["tool"])
    if not names:
        used = row.get("tools_used")
        if isinstance(used, list):
            names = [t for t in used if isinstance(t, str)]
    return names


HISTOGRAM_BINS = 10


def pass_rate_histogram(rates: list[float], bins: int = HISTOGRAM_BINS) -> dict[str, Any]:
    """How many tasks pass how often: `bins` equal bins over 0 to 1 (the last one closed,
    so an always-passing task counts), over every graded task, not a sample."""
    counts = [0] * bins
    for rate in rates:
        counts[min(bins - 1, int(rate * bins))] += 1
    return {"edges": [round(i / bins, 4) for i in range(bins + 1)], "counts": counts}


def profile_rows(rows: Iterable[dict[str, Any]], *, per_task_limit: int = 50) -> dict[str, Any]:
    """Pass rate over graded rows, tasks, mixed tasks (some runs pass, some fail: the only
    tasks a grouped update learns from) and tool use."""
    tally = TaskTally()
    tools: Counter[str] = Counter()
    rows_with_tools = 0
    for row in rows:
        tally.add_row(row)
        used = _tools_of(row)
        rows_with_tools += bool(used)
        tools.update(used)
    counts = [c for _, c in tally]
    graded = sum(c.graded for c in counts)
    passes = sum(c.passes for c in counts)
    per_task = [
        {
            "task": key,
            "runs": c.rows,
            "graded": c.graded,
            "passRate": round(c.passes / c.graded, 4) if c.graded else None,
        }
        for key, c in list(tally)[:per_task_limit]
    ]
    return {
        "rows": sum(c.rows for c in counts),
        "passRateHistogram": pass_rate_histogram([c.passes / c.graded for c in counts if c.graded]),
        "graded": graded,
        "passRate": round(passes / graded, 4) if graded else None,
        "tasks": len(tally),
        "mixedTasks": sum(1 for c in counts if c.mixed),
        "unanimousTasks": sum(1 for c in counts if c.graded and c.passes in (0, c.graded)),
        "toolUse": dict(tools.most_common()),
        "rowsWithTools": rows_with_tools,
        "perTask": per_task,
    }


def profile_lines(report: dict[str, Any]) -> list[str]:
    """The profile as `whileai profile` prints it: one summary line, then tool use."""
    rate = report.get("passRate")
    shown = "-" if rate is None else f"{rate:.1%}"
    lines = [
        f"{report.get('datasetId', 'dataset')}: {report['rows']} rows, {report['graded']} graded,"
        f" pass rate {shown}; {report['tasks']} tasks, {report['mixedTasks']} mixed"
    ]
    lines.extend(f"  {tool}: {count}" for tool, count in report.get("toolUse", {}).items())
    return lines


def card_lines(catalog: dict[str, Any]) -> list[str]:
    """The catalog as `whileai catalog` prints it: each agent, then its cards."""
    cards = {c["datasetId"]: c for c in catalog.get("datasets", [])}
    lines: list[str] = []
    for agent in catalog.get("agents", []):
        lines.append(
            f"{agent['agent']}: {len(agent['datasets'])} sets, {agent['rows']} rows,"
            f" {agent['sizeBytes']} bytes"
        )
        for dataset_id in agent["datasets"]:
            card = cards[dataset_id]
            numbers = card.get("profile") or {}
            rate = numbers.get("passRate")
            lines.append(
                f"  {dataset_id} {card['name']}: {card['rows']} rows, {card['sizeBytes']} bytes,"
                f" pass rate {'-' if rate is None else f'{rate:.1%}'},"
                f" {numbers.get('tasks', 0)} tasks, {numbers.get('mixedTasks', 0)} mixed"
            )
    if not lines:
        lines.append("no public datasets")
    return lines


def usage_lines(account: dict[str, Any]) -> list[str]:
    """An account's quotas and what it used of them (`whileai status`); a quota that is
    off reads as no limit."""
    from ..row.limits import format_size

    usage, limits = account.get("usage"), account.get("limits") or {}
    if not isinstance(usage, dict):
        return []

    def part(value: int, quota: str, size: bool = False) -> str:
        cap = limits.get(quota)
        shown = format_size(value) if size else f"{value:,}"
        if cap is None:
            return shown
        return f"{shown} of {format_size(cap) if size else f'{cap:,}'}"

    today = usage.get("today") or {}
    lines = [
        f"stored: {part(usage.get('datasets', 0), 'max_datasets')} datasets,"
        f" {part(usage.get('storedBytes', 0), 'max_stored_bytes', True)}",
        f"today ({today.get('day', '-')}, UTC):"
        f" {part(today.get('rowsPushed', 0), 'max_daily_rows')} rows and"
        f" {part(today.get('bytesPushed', 0), 'max_daily_bytes', True)} pushed,"
        f" {part(today.get('traces', 0), 'max_daily_traces')} traces,"
        f" {part(today.get('tokens', 0), 'max_daily_tokens')} tokens",
    ]
    if limits.get("max_push_rows") is not None:
        lines.append(f"rows per push: at most {limits['max_push_rows']:,}")
    return lines
