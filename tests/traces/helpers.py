"""Trace files the traces tests share, written the way another stack would write them."""

from __future__ import annotations

import json
import random
from pathlib import Path

ASKS = (
    "where is my order {id}", "can you check {id} for me", "has {id} shipped yet?",
    "status of order {id} please", "my package {id} hasn't arrived, what's going on",
)  # fmt: skip


def production_traces(path: Path, *, failures: int = 40, fine: int = 30, seed: int = 1) -> Path:
    """Failures all on get_order timing out (graded 0); the rest pass on the other tools."""
    rng = random.Random(seed)
    rows = []
    for _ in range(failures):
        oid = f"ORD-{rng.randint(1000, 9999)}"
        rows.append({
            "prompt": rng.choice(ASKS).format(id=oid),
            "steps": [{"tool": "get_order", "arguments": {"order_id": oid},
                       "result": {"error": "upstream timeout after 30s"}}],
            "final_text": "Your order shipped yesterday.",
            "reward": 0,
        })  # fmt: skip
    for _ in range(fine):
        oid = f"ORD-{rng.randint(1000, 9999)}"
        tool = rng.choice(["refund_order", "cancel_order"])
        args = {"order_id": oid, "reason": "damaged"} if tool == "refund_order" else {
            "order_id": oid, "notify_customer": rng.random() < 0.5}  # fmt: skip
        rows.append({
            "prompt": f"please {tool.split('_')[0]} {oid}, it arrived broken",
            "tool_trace": [
                {"name": "get_order", "args": {"order_id": oid}, "output": {
                    "status": "ok", "data": {"order_id": oid, "status": "delivered",
                                             "amount": 42.5, "items": ["mug"]}}},
                {"name": tool, "args": args, "output": {"status": "ok", "data": {
                    "order_id": oid, "status": "refunded"}}},
            ],
            "output": "Done.",
            "reward": 1,
        })  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path
