"""What every sample is trained under: the system prompt first, the spec's tools alongside.

A row records the system prompt it ran under as `messages[0]` (simulate writes it). A row
without one (the original SDK's) takes the `--spec`'s, but only when its lineage stamp
(`lineage.system_prompt_sha`) agrees or is absent: attaching a prompt the row never ran
under would train a context the agent does not run in, so such a row is refused and
counted. With neither, the sample goes out with no system turn, counted, and the export
warns once: a chat template then inserts its own default system prompt, and SFT trains
under a context the agent never sees.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .conversation import Message, Refused, Row

if TYPE_CHECKING:
    from ..spec import Spec


@dataclass(frozen=True)
class Context:
    """The spec's side of every sample: its system prompt (and its stamp) and tools."""

    system_prompt: str | None = None
    system_sha: str | None = None
    tools: list[dict[str, Any]] | None = None

    @classmethod
    def of_spec(cls, spec: Spec | None) -> Context:
        if spec is None:
            return cls()
        return cls(
            system_prompt=spec.policy or None,
            system_sha=spec.policy_sha if spec.policy else None,
            tools=spec.openai_tools(),
        )

    def tools_for(self, row: Row) -> list[dict[str, Any]] | None:
        """The tool schemas a sample is trained with: the spec's, else the row's own
        `tools` (what a trace's model calls were offered), else None."""
        if self.tools is not None:
            return self.tools
        own = row.get("tools")
        if isinstance(own, list) and own and all(_is_tool_schema(t) for t in own):
            return own
        return None


def _is_tool_schema(tool: Any) -> bool:
    """An OpenAI function tool: `{"type": "function", "function": {"name": ...}}`."""
    fn = tool.get("function") if isinstance(tool, dict) else None
    return isinstance(fn, dict) and isinstance(fn.get("name"), str) and bool(fn["name"])


@dataclass
class ContextCounts:
    """Where each sample's system prompt came from."""

    from_row: int = 0
    from_spec: int = 0
    missing: int = 0
    differs_from_spec: int = 0
    without_tools: int = 0
    notes: set[str] = field(default_factory=set)

    def as_dict(self) -> dict[str, int]:
        return {
            "from_row": self.from_row,
            "from_spec": self.from_spec,
            "missing": self.missing,
            "differs_from_spec": self.differs_from_spec,
        }

    def warnings(self, ctx: Context) -> list[str]:
        """One line per problem, however many rows had it."""
        out = []
        if self.missing:
            out.append(
                f"{self.missing} rows carry no system prompt and no --spec gave one: their "
                "samples have no system turn, so a chat template inserts its own default; "
                "pass --spec"
            )
        if self.differs_from_spec:
            out.append(
                f"{self.differs_from_spec} rows ran under a system prompt other than --spec's; "
                "they keep their own (the context they were generated in)"
            )
        if ctx.tools is None and self.without_tools:
            out.append(
                "no --spec: samples carry no `tools`, so a chat template renders no tool "
                "schemas; pass --spec"
            )
        return out


def in_context(
    row: Row, messages: list[Message], ctx: Context, counts: ContextCounts
) -> list[Message]:
    """`messages` with the system prompt first: the row's own, else the spec's."""
    if messages and messages[0].get("role") == "system":
        counts.from_row += 1
        own = messages[0].get("content")
        if ctx.system_prompt is not None and own != ctx.system_prompt:
            counts.differs_from_spec += 1
        return messages
    if ctx.system_prompt is None:
        counts.missing += 1
        return messages
    lineage = row.get("lineage")
    stamp = lineage.get("system_prompt_sha") if isinstance(lineage, dict) else None
    if isinstance(stamp, str) and stamp and stamp != ctx.system_sha:
        raise Refused("system_prompt_mismatch")
    counts.from_spec += 1
    return [{"role": "system", "content": ctx.system_prompt}, *messages]


def source_of(row_messages: list[Message], ctx: Context) -> str | None:
    """Where a sample's system prompt came from: 'row', 'spec' or None."""
    if row_messages and row_messages[0].get("role") == "system":
        return "row"
    return "spec" if ctx.system_prompt is not None else None
