"""The default judge reads ask-backs, acknowledged faults and invented facts in wordings it
was not written from (issue 23).

`tests/data/wordings.py` holds hand-written sets: `TUNE`, which the readers in
`judges/replies.py` and `judges/evidence.py` were developed against, and `MEASURE` and
`MEASURE2`, kept aside and only scored here (MEASURE2 was written once MEASURE had been
scored and general bugs it showed were fixed). Each item becomes a row shaped as
`simulate` writes them (a system prompt, the person's turn, the calls with the world's
results, grid coordinates, the privileged block with the tool kinds) and is graded by the
default judge with no `--spec`, as `whileai grade rows.jsonl` would.
"""

from __future__ import annotations

import json
from collections import Counter
from functools import cache
from typing import Any

import pytest

from whileai_core.agents.transcript import messages_from_steps
from whileai_core.judges import parse_judge
from whileai_core.judges.contract import judge_once
from whileai_core.spec import Spec, load_spec, record_readers

from ..data.wordings import MEASURE, MEASURE2, TUNE
from ..helpers import REPO

_TARGETS = {
    "orders": (("refund", "refund_order"), ("money back", "refund_order"),
               ("cancel", "cancel_order"), ("stop my order", "cancel_order"),
               ("my orders", "search_orders"), ("email", "search_orders")),
    "airline": (("rebook", "change_booking"), ("book me", "book_flight"),
                ("book a seat", "book_flight"),
                ("refund", "refund_booking"), ("cancel", "cancel_booking"),
                ("flights", "search_flights"), ("fly", "search_flights"),
                ("change", "change_booking"), ("move", "change_booking"),
                ("switch", "change_booking"), ("upgrade", "change_booking")),
}  # fmt: skip
_DEFAULT = {"orders": "get_order", "airline": "get_booking"}


@cache
def _spec(name: str) -> Spec:
    return load_spec(REPO / "specs" / name)


def _target(item: dict[str, Any]) -> str:
    if item.get("calls"):
        return str(item["calls"][-1][0])
    low = item["ask"].lower()
    return next((t for word, t in _TARGETS[item["spec"]] if word in low), _DEFAULT[item["spec"]])


def row_of(item: dict[str, Any]) -> dict[str, Any]:
    """The item as a row simulate would have written."""
    spec = _spec(item["spec"])
    steps = [{"tool": t, "arguments": a, "result": r} for t, a, r in item.get("calls") or []]
    system = item.get("system") or spec.policy
    messages = [{"role": "system", "content": system},
                *messages_from_steps(item["ask"], steps, item["reply"])]  # fmt: skip
    row: dict[str, Any] = {
        "prompt": item["ask"],
        "messages": messages,
        "steps": steps,
        "final_text": item["reply"],
        "privileged": {
            "hidden_state": {
                "tool_kinds": {t.name: t.kind for t in spec.tools},
                "record_readers": record_readers(spec.tools),
            },
            "reference": "Act on what the person gave; report faults plainly.",
        },
    }
    if item.get("general"):
        row["ask_family"] = "general"
        row["scenario_dimensions"] = {"tool": "none", "world_state": "entity exists"}
        return row
    faults = [s for s in steps if s["result"].get("status") not in ("ok", None)]
    stale = [s for s in steps if s["result"].get("stale")]
    fault = (faults or stale or [None])[0]
    condition = "success"
    if fault is not None:
        condition = "stale_data" if fault in stale else str(fault["result"]["status"])
        row["faults_fired"] = [{"tool": fault["tool"], "fault": condition}]
    row["ask_family"] = "tool"
    row["stance"] = "neutral"
    row["scenario_dimensions"] = {"tool": _target(item), "world_state": "entity exists",
                                  "tool_condition": condition, "history": "fresh"}  # fmt: skip
    return row


_PASSES = {"fair": True, "stall": False, "ack": True, "silent": False, "grounded": True,
           "invented": False}  # fmt: skip


def verdicts(items: list[dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    judge = parse_judge(None)
    return [(item, judge_once(judge, row_of(item))) for item in items]


def _wrong(items: list[dict[str, Any]]) -> tuple[Counter[str], list[str]]:
    total: Counter[str] = Counter()
    wrong = []
    for item, fields in verdicts(items):
        total[item["kind"]] += 1
        passed = fields["reward"] is not None and fields["reward"] >= 0.5
        if fields["judge_status"] != "ok" or passed != _PASSES[item["expect"]]:
            wrong.append(
                f"{item['kind']}/{item['expect']}: {item['reply']!r} -> "
                f"{fields['judge_status']} {fields.get('reason')}"
            )
    return total, wrong


SETS = {"TUNE": TUNE, "MEASURE": MEASURE, "MEASURE2": MEASURE2}


@pytest.mark.parametrize("name", list(SETS))
def test_every_wording_set_is_read_right(name: str) -> None:
    """The bar on each set: at most one item in 20 read wrong, of each kind."""
    items = SETS[name]
    total, wrong = _wrong(items)
    by_kind = Counter(w.split("/")[0] for w in wrong)
    for kind, count in total.items():
        assert by_kind[kind] <= count // 20, json.dumps(wrong, indent=1)


def test_the_sets_share_no_reply() -> None:
    replies = [{i["reply"] for i in items} for items in SETS.values()]
    for i, one in enumerate(replies):
        for other in replies[i + 1 :]:
            assert not one & other
