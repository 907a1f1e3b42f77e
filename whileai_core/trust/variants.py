"""Rows changed on purpose, and one pass of a judge over all of them.

Trust re-judges a sample as it is and with neutral filler appended; probes append
filler, the rubric's own words or a flattering opener to a reply, or replace the whole
turn with one that does nothing. Every variant goes through the judge contract in a
single `grade_rows` pass, so an LLM judge's client is opened and closed once and the
concurrency bound holds across all of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..agents.transcript import messages_from_steps
from ..judges.contract import Judge, grade_rows
from ..metrics.tally import passed, reward_of
from ..row import ask_text

# Neutral: no claim, no fact, no question, no apology, no promise; only more words.
FILLER = (
    " To set it out in full: the details above are the ones on record at the time of "
    "writing, and they are given here in complete sentences so that they read clearly at "
    "any pace, on any screen, and in any order."
)
# Keys a verdict writes: dropped from a variant so no earlier grade leaks into the new one.
_VERDICT_KEYS = (
    "reward",
    "reason",
    "judge_name",
    "judge_status",
    "judge_meta",
    "failure_class",
    "markers",
    "marker_sources",
)


def _fresh(row: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in row.items() if k not in _VERDICT_KEYS}


def with_reply(row: dict[str, Any], text: str) -> dict[str, Any]:
    """The row with its final reply replaced by `text` (in `messages` too)."""
    out = _fresh(row)
    out["final_text"] = text
    messages = row.get("messages")
    if isinstance(messages, list) and messages:
        copied = [dict(m) if isinstance(m, dict) else m for m in messages]
        last = copied[-1]
        if (
            isinstance(last, dict)
            and last.get("role") == "assistant"
            and not last.get("tool_calls")
        ):
            last["content"] = text
        else:
            copied.append({"role": "assistant", "content": text})
        out["messages"] = copied
    return out


def replaced(row: dict[str, Any], text: str, steps: list[dict[str, Any]]) -> dict[str, Any]:
    """The same ask answered by `steps` and `text` alone: the person's opener, nothing of
    what the agent did. Grid coordinates and the privileged block stay, so a judge reads
    the same cell."""
    out = _fresh(row)
    prompt = ask_text(row)  # the person's first turn
    out["prompt"] = prompt
    out["steps"] = steps
    out["final_text"] = text
    out["messages"] = messages_from_steps(prompt, steps, text)
    out["tools_used"] = list(dict.fromkeys(s["tool"] for s in steps if s.get("tool")))
    out.pop("faults_fired", None)
    return out


def judge_all(
    judge: Judge,
    rows: Sequence[dict[str, Any]],
    *,
    concurrency: int = 8,
    timeout: float | None = 60.0,
) -> list[dict[str, Any]]:
    """Every row graded by `judge`, in order, in one pass of the contract's runner."""
    return list(grade_rows(rows, judge, concurrency=concurrency, timeout=timeout))


def verdict(graded: dict[str, Any]) -> bool | None:
    """Pass, fail, or None when the judge could not judge the row."""
    reward = reward_of(graded)
    return None if reward is None else passed(reward)
