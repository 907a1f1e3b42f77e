"""The hand-written behaviour set (tests/data/behaviours.yaml) as rows.

Items are turned into rows the two ways rows arrive: even-numbered items carry `steps` and
`final_text` (the SDK's shape), odd-numbered ones also the OpenAI `messages` transcript, so
every detector is measured on both.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from whileai_core.agents.transcript import messages_from_steps

DATA = Path(__file__).resolve().parent.parent / "data" / "behaviours.yaml"


def behaviour_rows() -> list[dict[str, Any]]:
    items = yaml.safe_load(DATA.read_text(encoding="utf-8"))
    rows = []
    for i, item in enumerate(items):
        steps: list[dict[str, Any]] = []
        for user, agent in item.get("turns") or []:
            if steps or user != item["prompt"]:
                steps.append({"role": "user", "text": user})
            steps.append({"text": agent})
        for tool, arguments, result in item.get("calls") or []:
            steps.append({"tool": tool, "arguments": arguments, "result": result})
        row: dict[str, Any] = {
            "prompt": item["prompt"],
            "scenario_id": item["id"],
            "steps": steps,
            "final_text": item["reply"],
            "label": item["label"],
        }
        if item.get("privileged"):
            row["privileged"] = item["privileged"]
        if i % 2 or item.get("system"):
            messages = messages_from_steps(item["prompt"], steps, item["reply"])
            if item.get("system"):
                messages.insert(0, {"role": "system", "content": item["system"]})
            row["messages"] = messages
        rows.append(row)
    return rows


TICS = (
    "apology",
    "hedging",
    "sycophancy",
    "boilerplate",
    "false_success",
    "leak",
    "invented_argument",
)


def detected(row: dict[str, Any]) -> dict[str, str | None]:
    """tic -> the evidence the detectors found for it (None: not found), through the same
    core functions `whileai mark` and `whileai audit` use."""
    from whileai_core.markers.flags import trace_flags
    from whileai_core.markers.grounding import invented
    from whileai_core.markers.leaks import leaks
    from whileai_core.markers.style import Phrases, style_hits
    from whileai_core.markers.view import view

    v = view(row)
    hits = style_hits(v, _PHRASES.setdefault("default", Phrases()))
    flags = {f["flag"]: f["fragment"] for f in trace_flags(v)}
    found_leaks = leaks(v)
    found_invented = invented(v)
    return {
        "apology": hits["no_apology"],
        "hedging": hits["no_hedging"],
        "sycophancy": hits["no_sycophancy"],
        "boilerplate": hits["no_boilerplate"],
        "false_success": flags.get("lie.ignored_failure"),
        "leak": found_leaks[0][1] if found_leaks else None,
        "invented_argument": str(found_invented[0]) if found_invented else None,
    }


_PHRASES: dict[str, Any] = {}


def measure(rows: list[dict[str, Any]], labels: Any) -> dict[str, dict[str, Any]]:
    """Per tic: caught/planted and false alarms/clean rows. `labels(row)` is the list of
    tics planted on the row ([] for a clean one)."""
    out = {
        t: {"caught": 0, "planted": 0, "alarms": 0, "misses": [], "alarm_rows": []} for t in TICS
    }
    clean = 0
    for row in rows:
        planted = labels(row)
        found = detected(row)
        clean += not planted
        for tic in TICS:
            if tic in planted:
                out[tic]["planted"] += 1
                if found[tic]:
                    out[tic]["caught"] += 1
                else:
                    out[tic]["misses"].append(row.get("scenario_id"))
            elif not planted and found[tic]:
                out[tic]["alarms"] += 1
                out[tic]["alarm_rows"].append((row.get("scenario_id"), found[tic]))
    for entry in out.values():
        entry["clean"] = clean
    return out
