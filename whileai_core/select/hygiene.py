"""Signs that a reward, or a reported number, will mislead the trainer or the reader.

The surface features a reward should not track (reply length, tool calls, turns), read
off a row in one pass: selection records them, the publish gate hands them to the hack
scan's cheap mode (`scan.quick`), which says whether the reward tracks them within
ask (a judge problem, so it is flagged, never pruned). And pass^k / pass@k (computed by
`metrics.passat`), which need k graded rollouts of every ask, do not survive a prune that
shrinks groups or keeps only the asks in the difficulty band: the report says so instead
of printing a number computed over a biased remainder.
"""

from __future__ import annotations

from typing import Any

from ..row import reply_text


def tool_call_count(row: dict[str, Any]) -> int:
    steps = row.get("steps")
    if steps:
        return sum(1 for s in steps if isinstance(s, dict) and s.get("tool") is not None)
    return sum(
        len(m.get("tool_calls") or [])
        for m in row.get("messages") or []
        if isinstance(m, dict) and m.get("role") == "assistant"
    )


def turn_count(row: dict[str, Any]) -> int:
    """Agent turns: assistant messages, else tool and text steps plus the final reply."""
    messages = row.get("messages")
    if messages:
        return sum(1 for m in messages if isinstance(m, dict) and m.get("role") == "assistant")
    steps = row.get("steps") or []
    return sum(1 for s in steps if isinstance(s, dict) and s.get("role") != "user") + 1


FEATURE_NAMES = ("reply_chars", "tool_calls", "turns")


def row_features(row: dict[str, Any], reply: str | None = None) -> tuple[float, float, float]:
    """The surface features a reward should not track, in FEATURE_NAMES order.

    One pass over the messages (the reply is `row.reply_text`, the one final reply):
    selection computes this for every row it reads, and passes the `reply` it already
    found, so it is not looked up again.
    """
    if reply is None:
        reply = reply_text(row)
    messages = row.get("messages")
    steps = row.get("steps")
    if not messages:
        return (float(len(reply)), float(tool_call_count(row)), float(turn_count(row)))
    turns = calls = 0
    for m in messages:
        if isinstance(m, dict) and m.get("role") == "assistant":
            turns += 1
            calls += len(m.get("tool_calls") or ())
    if steps:
        calls = sum(1 for s in steps if isinstance(s, dict) and s.get("tool") is not None)
    return (float(len(reply)), float(calls), float(turns))


def survival_warnings(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """Say when k-way numbers the input had are gone, or biased, after selection."""
    if before.get("pass_pow_k") is None:
        return []
    k = before["k"]
    had = f"{before['pass_pow_k']:.4g}/{before['pass_at_k']:.4g}"
    if after.get("pass_pow_k") is None:
        return [
            f"pass^{k}/pass@{k} were {had} on the input and are n/a on the selection (groups "
            f"shrank below {k}); quote the input figures or the calibration stamp, not a "
            "number over the selection"
        ]
    if after.get("k_groups") != before.get("k_groups"):
        return [
            f"pass^{k}/pass@{k} on the selection cover {after['k_groups']} of "
            f"{before['k_groups']} asks (the prune kept only some) and are biased; the input "
            f"had {had}"
        ]
    return []
