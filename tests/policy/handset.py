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
