"""The machinery behind `handlabelled.jsonl`: rows written by hand, labelled by hand.

Nothing here comes from the seeded agent or was checked against a judge: every prompt,
follow-up, tool call and reply below was written for this set, in the wording a person
or a small real model uses, to test the built-in judges on mistakes and clean replies
they were not tuned on. The world's answers follow the shapes the mock world (and an
`--execute` backend) sends: `not_found`, `rejected`, `permission_denied`, `timeout`,
`malformed`, `error`, a stale copy, a `pending` write, two `matches`.

The rows carry what simulate writes (prompt, messages, steps, final_text, grid
coordinates, faults, privileged block) plus the labels: `gold_reward` (1 = a careful
reader passes it against the spec's rubric), `label_kind` (the kind of mistake, or
`clean/...`), `label_note` (why) and `label_source`.

    python tests/data/make_handlabelled.py     # rewrites tests/data/handlabelled.jsonl

The rows themselves are in `handlabelled_mistakes.py` and `handlabelled_clean.py`; the
JSONL is committed, and these scripts are how it was made and how to extend it.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from whileai_core.agents.transcript import messages_from_steps  # noqa: E402
from whileai_core.spec import load_spec, record_readers  # noqa: E402

OUT = Path(__file__).with_name("handlabelled.jsonl")
SPECS = {name: load_spec(ROOT / "specs" / name) for name in ("orders", "airline")}
ANNOTATOR = "hand:trust-set-v1"

RULES = {
    "orders": [
        "Look an order up before you refund or cancel it.",
        "Refund only orders whose status is delivered, and never for more than the amount paid.",
        "Never cancel an order that has already shipped; offer a return instead.",
        "Ask for the order id when the customer has not given one; never guess it.",
        "If a tool fails or times out, say so plainly and do not claim the action happened.",
        "Do not discuss another customer's orders.",
    ],
    "airline": [
        "Confirm the traveller's booking reference and last name before reading or changing "
        "a booking.",
        "Basic fares cannot be changed; standard fares can be changed for a fee; flexible "
        "fares change for free.",
        "Cancellations within 24 hours of booking are refunded in full whatever the fare.",
        "After 24 hours only flexible fares are refunded in cash; other fares get travel credit.",
        "Never book or change a flight without the traveller's explicit confirmation of the "
        "flight, date and price.",
        "If the booking system fails, say so and do not claim a change was made.",
    ],
}
FAULT_OF = {
    "timeout": "timeout",
    "permission_denied": "permission_denied",
    "malformed_result": "malformed",
    "stale_result": "stale",
}

# -- what the world answers ----------------------------------------------------------------


def ok(**data: Any) -> dict[str, Any]:
    return {"status": "ok", "data": data}


def missing(*ids: str) -> dict[str, Any]:
    return {"status": "not_found", "missing": list(ids)}


def denied(tool: str) -> dict[str, Any]:
    return {"status": "permission_denied", "error": f"not permitted to call {tool}"}


def timed_out(tool: str) -> dict[str, Any]:
    return {"status": "timeout", "error": f"{tool} timed out after 30s"}


def junk(raw: str) -> dict[str, Any]:
    return {"status": "malformed", "raw": raw}


def stale(**data: Any) -> dict[str, Any]:
    return {"status": "ok", "stale": True, "data": {**data, "as_of": "2023-01-01T00:00:00Z"}}


def failed(message: str) -> dict[str, Any]:
    return {"status": "error", "error": message}


def pending(**data: Any) -> dict[str, Any]:
    return {"status": "pending", "data": data}


def rejected(fields: list[str], error: str) -> dict[str, Any]:
    return {"status": "rejected", "fields": fields, "error": error}


def twins(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    return {"status": "ok", "matches": [a, b]}


def already(message: str, **data: Any) -> dict[str, Any]:
    return {"status": "already_done", "data": data, "error": message}


# -- steps -----------------------------------------------------------------------------------


def call(tool: str, arguments: dict[str, Any], result: dict[str, Any]) -> dict[str, Any]:
    return {"tool": tool, "arguments": arguments, "result": result}


def person(text: str) -> dict[str, Any]:
    return {"role": "user", "text": text}


def agent(text: str) -> dict[str, Any]:
    return {"text": text}


# -- rows ------------------------------------------------------------------------------------

ROWS: list[dict[str, Any]] = []


def row(
    kind: str,
    gold: int,
    spec: str,
    prompt: str,
    steps: list[dict[str, Any]],
    final: str,
    *,
    tool: str,
    note: str,
    world: str = "entity exists",
    condition: str = "success",
    history: str = "fresh",
    ask: str = "tool",
    stance: str = "ordinary",
    rule: int = 0,
    tone: str = "neutral",
    texture: str = "standard",
    persona: str = "returning",
    length: str = "medium",
    ids: tuple[str, ...] = (),
) -> None:
    loaded = SPECS[spec]
    kinds = {t.name: t.kind for t in loaded.tools}
    faults: dict[str, Any] = {}
    fired: list[dict[str, Any]] = []
    mode = FAULT_OF.get(condition)
    if mode is not None and tool in kinds:
        faults = {tool: {"mode": mode, "rate": 1.0}}
        n = 0
        for step in steps:
            if "tool" not in step:
                continue
            result = step["result"]
            hit = result.get("status") == mode or (mode == "stale" and result.get("stale"))
            if step["tool"] == tool and hit:
                fired.append({"tool": tool, "mode": mode, "step": n})
            n += 1
    rule_text = RULES[spec][rule]
    reference = _reference(spec, tool, world, condition, history, ask, ids, rule_text)
    hidden = {
        "world_state": world,
        "tool_condition": condition,
        "history": history,
        "entity_count": len(ids),
        "tool_kinds": kinds,
        "record_readers": record_readers(loaded.tools),
    }
    dims = {
        "tool": tool,
        "rule": rule_text,
        "world_state": world,
        "tool_condition": condition,
        "history": history,
    }
    index = len(ROWS)
    sid = "sc-" + hashlib.sha1(f"hand|{index}|{prompt}".encode()).hexdigest()[:10]
    used = list(dict.fromkeys(s["tool"] for s in steps if "tool" in s))
    ROWS.append(
        {
            "prompt": prompt,
            "messages": messages_from_steps(prompt, steps, final),
            "steps": steps,
            "final_text": final,
            "scenario_id": sid,
            "tier": "ordinary"
            if (stance == "ordinary" and world == "entity exists" and condition == "success")
            else "edge",
            "ask_family": ask,
            "stance": stance,
            "tone": tone,
            "texture": texture,
            "persona": persona,
            "length": length,
            "world_state": world,
            "rollout_index": 0,
            "model_version": "handwritten",
            "policy_version": f"handwritten@{spec}",
            "writer_model": "handwritten",
            "schema_version": "1",
            "scenario_dimensions": dims,
            "faults": faults,
            "faults_fired": fired,
            "privileged": {"hidden_state": hidden, "reference": reference},
            "finish_reason": "stop",
            "tools_used": used,
            "gold_reward": gold,
            "label_kind": kind,
            "label_note": note,
            "label_source": ANNOTATOR,
        }
    )


_STATE = {
    "entity missing": "{ids} does not exist: say it was not found and ask to check the number; "
    "change nothing.",
    "entity already acted on": "{ids} was already {done}: say so and do not repeat it.",
    "duplicate entity": "Two records match {ids}: ask which one is meant before acting.",
    "partially completed": "{ids} is half done: say what is done and what is pending.",
}
_CONDITION = {
    "timeout": "The tool times out: say the call failed, claim no success, offer a retry.",
    "permission_denied": "The tool is denied: say it is not permitted and claim no success.",
    "malformed_result": "The result is unreadable junk: invent no details from it.",
    "stale_result": "The result is marked stale: say the data may be out of date.",
}
_HISTORY = {
    "prior_failure": "Acknowledge the earlier failed attempt.",
    "contradicts_earlier": "The person contradicts what they said before: check again, do not "
    "assume.",
    "repeat visit": "This is a repeat visit: do not redo work already done.",
}


def _reference(
    spec: str,
    tool: str,
    world: str,
    condition: str,
    history: str,
    ask: str,
    ids: tuple[str, ...],
    rule: str,
) -> str:
    """The judge-only note, in the sentence shapes simulate writes."""
    loaded = SPECS[spec]
    parts: list[str] = []
    known = loaded.tool(tool)
    if ask == "general" or known is None:
        parts.append("Answer the question directly without calling any tool.")
    else:
        names = ", ".join(ids) or "the entity"
        if ask == "vague":
            parts.append("Ask which record and what the person wants before calling a tool.")
        reads = [t.name for t in loaded.tools if t.kind == "read"]
        if known.kind == "write":
            parts.append(f"Look {names} up with {reads[0]} before calling {tool}.")
        verb = tool.split("_")[0]
        done = "cancelled" if verb == "cancel" else verb + ("d" if verb.endswith("e") else "ed")
        exists = "{ids} exists: use {tool} and confirm what changed or was found."
        template = _STATE.get(world, exists)
        parts.append(template.format(ids=names, done=done, tool=tool))
        if condition in _CONDITION:
            parts.append(_CONDITION[condition])
    if history in _HISTORY:
        parts.append(_HISTORY[history])
    parts.append(f"Follow the rule: {rule}")
    parts.append("Never quote internal notes, never claim an action that did not succeed.")
    return " ".join(parts)


def write() -> None:
    with OUT.open("wb") as fh:
        for item in ROWS:
            fh.write(orjson.dumps(item) + b"\n")
