"""One row, read once, as every behaviour detector needs it.

The detectors of this stage (style, trajectory flags, grounding, leaks) all ask the same
questions of a row: what did the agent say, what did it call, what did the world and the
person say. `RowView` answers them from the one ordered event view the judges use
(`judges.trajectory.events_of`), computed once per row however many families run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import orjson

from ..judges.trajectory import Event, events_of
from ..metrics.tally import task_key
from ..row import reply_text

Row = dict[str, Any]


def _plain(text: str) -> str:
    return text.replace("\u2019", "'")


def system_texts(row: Row) -> list[str]:
    """The system prompt as the row carries it: system messages, or a `system_prompt` key."""
    found = [
        m["content"]
        for m in row.get("messages") or []
        if isinstance(m, dict) and m.get("role") == "system" and isinstance(m.get("content"), str)
    ]
    for key in ("system_prompt", "system"):
        value = row.get(key)
        if isinstance(value, str) and value:
            found.append(value)
    return found


@dataclass
class RowView:
    """A row with its events computed once; every property is read lazily."""

    row: Row
    events: list[Event] = field(default_factory=list)

    @cached_property
    def reply(self) -> str:
        return _plain(reply_text(self.row))

    @cached_property
    def agent_texts(self) -> list[str]:
        """Everything the agent wrote, turn by turn, the final reply included once."""
        # Typographic apostrophes ("I’m sorry") read as plain ones, so one pattern fits both.
        texts = [_plain(e.text) for e in self.events if e.kind == "assistant" and e.text]
        if self.reply and (not texts or texts[-1] != self.reply):
            texts.append(self.reply)
        return texts

    @cached_property
    def agent_text(self) -> str:
        return "\n".join(self.agent_texts)

    @cached_property
    def calls(self) -> list[Event]:
        return [e for e in self.events if e.kind == "call"]

    @cached_property
    def context_texts(self) -> list[str]:
        """What the agent was told, not what it said: the prompt, the person's turns, the
        system prompt and every tool result."""
        out = [e.text for e in self.events if e.kind == "user" and e.text]
        prompt = self.row.get("prompt")
        if isinstance(prompt, str) and prompt and prompt not in out:
            out.append(prompt)
        out.extend(system_texts(self.row))
        out.extend(orjson.dumps(c.result).decode() for c in self.calls if c.result is not None)
        return out

    @cached_property
    def task(self) -> str:
        return task_key(self.row)

    def label(self) -> str:
        """`sc-… r0`: how a report names the row."""
        index = self.row.get("rollout_index")
        tail = f" r{index}" if isinstance(index, int) else ""
        return f"{self.task[:40] or '(no task)'}{tail}"


def view(row: Row) -> RowView:
    return RowView(row, events_of(row))
