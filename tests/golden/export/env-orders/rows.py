"""The row a finished rollout is graded as: one builder for the verifiers environment and
the GRPO reward, so both grade a conversation exactly as `whileai grade` would.

Copied verbatim into every package `whileai export --env` writes; standard library only.
"""

from __future__ import annotations

import importlib
import json
import os
from pathlib import Path
from typing import Any

CARRIED = "whileai_core."


def resolve(ref: str) -> Any:
    """Import `package.module:attr`; a name under `whileai_core.` is the copy of the
    toolkit this package carries (`_whileai_core`)."""
    module, _, attr = ref.partition(":")
    if module.startswith(CARRIED):
        module = f"{__package__}._whileai_core.{module[len(CARRIED) :]}"
    return getattr(importlib.import_module(module), attr)


def graded_row(
    messages: list[dict[str, Any]],
    prompt: str,
    info: dict[str, Any],
    faults_fired: list[dict[str, Any]],
    spec: dict[str, Any],
) -> dict[str, Any]:
    """A whileai row for the judge: the conversation (OpenAI wire messages) with its tool
    steps, the task's grid coordinates, the faults the world fired, and what the spec says
    reads and writes."""
    msgs = [{k: v for k, v in m.items() if v is not None} for m in messages]
    results = {m.get("tool_call_id"): m.get("content") for m in msgs if m["role"] == "tool"}
    steps: list[dict[str, Any]] = []
    final = ""
    for message in msgs:
        if message["role"] == "user" and steps:
            steps.append({"role": "user", "text": message.get("content") or ""})
        if message["role"] != "assistant":
            continue
        for call in message.get("tool_calls") or []:
            fn = call.get("function") or call
            raw = results.get(call.get("id"))
            try:
                result = json.loads(raw) if isinstance(raw, str) else raw
                arguments = fn.get("arguments") or "{}"
                arguments = json.loads(arguments) if isinstance(arguments, str) else arguments
            except json.JSONDecodeError:
                result, arguments = raw, fn.get("arguments")
            steps.append({"tool": fn.get("name"), "arguments": arguments, "result": result})
        if isinstance(message.get("content"), str) and message["content"]:
            final = message["content"]
    row: dict[str, Any] = {
        "prompt": prompt,
        "messages": msgs,
        "steps": steps,
        "final_text": final,
        "scenario_id": info.get("scenario_id") or info.get("task_id"),
    }
    row.update({k: v for k, v in info.items() if k not in ("calibration", "person", "task_id")})
    row["faults_fired"] = list(faults_fired)
    # What simulate's rows tell a judge run without --spec: which tools read and write.
    row["privileged"] = {"hidden_state": {
        "tool_kinds": spec.get("tool_kinds") or {},
        "record_readers": spec.get("record_readers") or {},
    }}  # fmt: skip
    return row


def keep_row(row: dict[str, Any], fields: dict[str, Any]) -> None:
    """With `WHILEAI_ENV_ROWS=<file>`, append the graded row there (what a test or an
    audit regrades with `whileai grade`)."""
    target = os.environ.get("WHILEAI_ENV_ROWS")
    if not target:
        return
    graded = {**row, **{k: v for k, v in fields.items() if k != "extra"}}
    with Path(target).open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(graded) + "\n")
