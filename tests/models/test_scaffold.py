"""A chat template's scaffolding: the model client strips it from every reply and counts
it, and a reply that is scaffolding rather than an answer fails the conduct floor."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from whileai_core.judges.conduct import conduct_checks
from whileai_core.models import ModelClient, parse_model_spec
from whileai_core.models.scaffold import not_an_answer, strip_scaffolding
from whileai_core.testing import OpenAIStub, Request, answer

from ..helpers import ORDERS_SPEC, run_cli

LEAKED = [
    ("<|im_start|>assistant\nYour order shipped on Monday.<|im_end|>",
     "Your order shipped on Monday."),
    ("message:\nYour order shipped on Monday.", "Your order shipped on Monday."),
    ("To call a function, reply with only a JSON object. Your order shipped on Monday.",
     "Your order shipped on Monday."),
    ("Your order shipped on Monday.<|eot_id|>", "Your order shipped on Monday."),
    ("[INST] Your order shipped on Monday. [/INST]", "Your order shipped on Monday."),
    # The real 1.5B model's content beside its tool call (the fifth real-model set).
    ("To call this function, ", ""),
    ("to call the tool:", ""),
    ("To call the `refund_booking` function, reply with:\n", ""),
]  # fmt: skip


@pytest.mark.parametrize(("raw", "clean"), LEAKED)
def test_the_template_is_stripped_and_the_answer_kept(raw: str, clean: str) -> None:
    assert strip_scaffolding(raw) == (clean, True)
    if not clean:  # nothing but the template: a final reply like this is no answer
        assert not_an_answer(raw) == "chat-template scaffolding"


def test_an_answer_without_scaffolding_is_left_alone() -> None:
    for text in ("Your order ORD-1234 shipped.", '{"order_id": "ORD-1", "status": "shipped"}',
                 "Message received: the refund is on its way.",
                 "To call the airline, dial the number on your ticket."):  # fmt: skip
        assert strip_scaffolding(text) == (text, False)
        assert not_an_answer(text) is None


def test_the_client_strips_and_counts() -> None:
    with OpenAIStub(script=[answer(LEAKED[0][0]), answer("Plain answer.")]) as stub:
        client = ModelClient(parse_model_spec(stub.base_url, model="m"), retries=0)

        async def go() -> list[str]:
            try:
                return [(await client.chat([{"role": "user", "content": "hi"}])).text
                        for _ in range(2)]  # fmt: skip
            finally:
                await client.aclose()

        texts = asyncio.run(go())
    assert texts == ["Your order shipped on Monday.", "Plain answer."]
    assert client.stats.scaffolding_stripped == 1
    assert client.stats.as_dict()["scaffolding_stripped"] == 1


def _row(reply: str) -> dict[str, Any]:
    return {
        "prompt": "Where is ORD-1234?",
        "messages": [{"role": "user", "content": "Where is ORD-1234?"},
                     {"role": "assistant", "content": reply}],
        "steps": [], "final_text": reply,
    }  # fmt: skip


@pytest.mark.parametrize(
    "reply",
    [
        'Here is the JSON response to your message:\n{"response": "It shipped."}',
        '{"name": "get_order", "arguments": {"order_id": "ORD-1234"}}',
        "You have access to the following functions. To call a function, reply with JSON.",
    ],
)
def test_a_reply_that_is_scaffolding_fails_the_conduct_floor(reply: str) -> None:
    checks = {name: (ok, why) for name, ok, why in conduct_checks(_row(reply))}
    ok, why = checks["nothing_skipped"]
    assert not ok and why.startswith("the final reply is "), why
    fine = {name: ok for name, ok, _ in conduct_checks(_row("ORD-1234 shipped on Monday."))}
    assert fine["nothing_skipped"]


def test_a_model_agent_s_rows_never_keep_the_template(tmp_path: Path) -> None:
    def choose(request: Request) -> Any:
        body = request.body if isinstance(request.body, dict) else {}
        if body.get("tools"):
            return answer("<|im_start|>assistant\nmessage:\nI looked: it is on its way.<|im_end|>")
        if any(m.get("role") == "assistant" for m in body["messages"]):
            return answer("###STOP###")
        return answer(f"hi, where is my order? ({len(body['messages'][0]['content'])} chars)")

    out = tmp_path / "rows.jsonl"
    with OpenAIStub(default=choose) as stub:
        proc = run_cli(
            "simulate", str(ORDERS_SPEC), "--agent", stub.base_url, "--writer", stub.base_url,
            "--model", "m", "--budget", "4", "-o", str(out), "--report", str(out) + ".json",
        )  # fmt: skip
    assert proc.returncode == 0, proc.stderr.decode()
    for line in out.read_text().splitlines():
        row = json.loads(line)
        assert row["final_text"] == "I looked: it is on its way."
        assert all("<|" not in str(m.get("content")) for m in row["messages"])
    report = json.loads(Path(str(out) + ".json").read_text())
    assert report["models"]["agent m"]["scaffolding_stripped"] >= 4
    assert b"replies stripped of template scaffolding" in proc.stderr
