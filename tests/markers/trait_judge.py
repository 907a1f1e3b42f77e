"""A user's own trait judge for the model-spec tests: `fn(row, trait)` -> a verdict."""

from __future__ import annotations

from typing import Any


def judge(row: dict[str, Any], trait: dict[str, Any]) -> Any:
    reply = row.get("final_text") or ""
    if trait["id"] == "brevity":
        return 1.0 if len(reply) < 120 else 0.0
    if "explode" in reply:
        raise RuntimeError("judge broke on this row")
    return {"reward": 1.0 if "timed out" in reply or "found" in reply else 0.0}
