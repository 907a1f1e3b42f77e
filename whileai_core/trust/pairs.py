"""Pairwise judging: an LLM judge sees A against B, both ways round.

A pair is a line with the context (`prompt`) and two sides, as `a`/`b` or as either
file `whileai export --pairs` writes: TRL's `chosen`/`rejected`, or OpenAI's
`input.messages` with `preferred_output`/`non_preferred_output` (then A is the preferred
side and the report says how often the judge agrees with that label). A side is a
reply (a string), a row (its rollout is rendered as the rubric judge sees it, privileged
block removed) or a message list. The judge is asked twice, once with A in the first
slot and once with B there; a winner is kept only when both orders agree, and a pair
the order decided is a position flip (`position_flip_rate`): a judge that flips often
is reading the slot, not the reply.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError
from ..judges.llm import json_object, render_rollout
from ..models.options import ModelOptions
from ..row.privileged import strip_privileged

_INSTRUCTIONS = """You compare two replies an AI agent could give in the same conversation.
Judge which reply does the job better{rubric}: what it did and said, not how long it is or \
where it appears. If they are equally good, say tie.

Answer with one JSON object and nothing else:
{{"winner": "1" or "2" or "tie", "reason": "<one sentence naming the deciding evidence>"}}"""


def _side_text(side: Any) -> str:
    if isinstance(side, str):
        return side
    if isinstance(side, dict):
        return render_rollout(side)
    if isinstance(side, list):
        lines = []
        for message in strip_privileged(side):
            if not isinstance(message, dict):
                continue
            role = str(message.get("role") or "?").upper()
            content = message.get("content")
            calls = message.get("tool_calls")
            if content:
                lines.append(f"{role}: {content}")
            if calls:
                lines.append(f"{role} CALLS {calls}")
        return "\n".join(lines)
    raise ConfigError(f"a pair side must be a reply, a row or a message list, got {side!r:.40}")


def _sides(pair: Any) -> tuple[Any, Any, bool]:
    """(A, B, labelled): A/B, chosen/rejected (TRL's pairs, what `export --pairs --format
    trl` writes) or preferred_output/non_preferred_output (OpenAI's preference lines, what
    `--format openai` writes); labelled: A is the preferred one."""
    if not isinstance(pair, dict):
        raise ConfigError(f"a pair is a JSON object, got {pair!r:.40}")
    for a, b, labelled in (
        ("a", "b", False),
        ("chosen", "rejected", True),
        ("preferred_output", "non_preferred_output", True),
    ):
        if a in pair and b in pair:
            return pair[a], pair[b], labelled
    raise ConfigError(
        "a pair needs 'a' and 'b', 'chosen' and 'rejected', "
        "or 'preferred_output' and 'non_preferred_output'"
    )


def _context(pair: dict[str, Any]) -> str:
    """The conversation both sides continue: `prompt` (a string or messages), or an
    OpenAI preference line's `input.messages`."""
    prompt = pair.get("prompt")
    if prompt is None and isinstance(pair.get("input"), dict):
        prompt = pair["input"].get("messages")
    if isinstance(prompt, str):
        return prompt
    if isinstance(prompt, list):
        return _side_text(prompt)
    return ""


@dataclass
class PairsReport:
    judge: str
    pairs: int = 0
    judged: int = 0
    a_wins: int = 0
    b_wins: int = 0
    ties: int = 0
    flips: int = 0
    first_slot: int = 0
    decided: int = 0
    errors: int = 0
    labelled: int = 0
    agrees_with_label: int = 0
    first_error: str | None = None

    def as_dict(self) -> dict[str, Any]:
        def rate(n: int, d: int) -> float | None:
            return n / d if d else None

        return {
            "judge": self.judge,
            "pairs": self.pairs,
            "judged": self.judged,
            "a_wins": self.a_wins,
            "b_wins": self.b_wins,
            "ties": self.ties,
            "position_flips": self.flips,
            "position_flip_rate": rate(self.flips, self.judged),
            "first_slot_rate": rate(self.first_slot, self.decided),
            "errors": self.errors,
            "first_error": self.first_error,
            "labelled": self.labelled,
            "agreement_with_label": rate(self.agrees_with_label, self.labelled),
        }

    def lines(self) -> list[str]:
        d = self.as_dict()
        out = [
            f"pairs judged by {self.judge}: {self.judged} of {self.pairs} "
            f"(A {self.a_wins}, B {self.b_wins}, tie {self.ties})"
        ]
        if d["position_flip_rate"] is not None:
            out.append(
                f"position_flip_rate {d['position_flip_rate']:.3f} ({self.flips} pairs the "
                f"order decided); slot 1 won {d['first_slot_rate'] or 0:.0%} of the answers "
                "that picked a side"
            )
        if d["agreement_with_label"] is not None:
            out.append(
                f"agrees with the chosen/rejected label on {d['agreement_with_label']:.1%} "
                f"of {self.labelled} labelled pairs"
            )
        if self.errors:
            out.append(f"{self.errors} pair(s) not judged; first: {self.first_error}")
        return out


def _winner(text: str) -> str | None:
    value = json_object(text)
    if value is None:
        return None
    raw = str(value.get("winner", "")).strip().lower().strip("\"' ")
    return {"1": "1", "2": "2", "a": "1", "b": "2", "tie": "tie", "equal": "tie"}.get(raw)


def judge_pairs(
    pairs: Sequence[dict[str, Any]],
    judge: str,
    *,
    rubric: str | None = None,
    options: ModelOptions | None = None,
    temperature: float = 0.0,
    max_tokens: int = 256,
) -> tuple[list[dict[str, Any]], PairsReport]:
    """Each pair with `pair_verdict` added ({winner: a|b|tie, ab, ba, flipped, reason}), and
    the report. `judge` is a model reference (openai:, vllm:, a URL with options.model)."""
    from ..models.client import ModelCallError
    from ..models.factory import client_for
    from ..registry import is_model_ref

    if not is_model_ref(judge):
        raise ConfigError(
            f"pairs need an LLM judge (openai:MODEL, vllm:MODEL@URL, a URL), got {judge!r}"
        )
    options = options or ModelOptions()
    client = client_for(judge, options)
    against = f" against this rubric:\n{rubric.strip()}\n" if rubric and rubric.strip() else ""
    system = _INSTRUCTIONS.format(rubric=against)
    report = PairsReport(judge=client.spec.label, pairs=len(pairs))

    async def ask(context: str, first: str, second: str) -> str:
        user = (f"CONVERSATION:\n{context}\n\nREPLY 1:\n{first}\n\nREPLY 2:\n{second}").strip()
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        try:
            result = await client.chat(messages, temperature=temperature, max_tokens=max_tokens)
        except ModelCallError as exc:
            raise ValueError(f"judge model call failed ({exc.kind}): {exc}") from None
        content = result.message.get("content")
        winner = _winner(content) if isinstance(content, str) else None
        if winner is None:
            raise ValueError(f"judge model did not name a winner: {str(content)[:60]!r}")
        return winner

    async def one(pair: dict[str, Any]) -> dict[str, Any]:
        try:  # a line that is no pair is counted with the reason, never ends the run
            a, b, labelled = _sides(pair)
            context, ta, tb = _context(pair), _side_text(a), _side_text(b)
            ab, ba = await asyncio.gather(ask(context, ta, tb), ask(context, tb, ta))
        except (ValueError, ConfigError) as exc:
            report.errors += 1
            report.first_error = report.first_error or str(exc)
            kept = pair if isinstance(pair, dict) else {"pair": pair}
            return {**kept, "pair_verdict": {"status": "error", "reason": str(exc)}}
        first = {"1": "a", "2": "b", "tie": "tie"}[ab]
        second = {"1": "b", "2": "a", "tie": "tie"}[ba]
        flipped = first != second
        winner = first if not flipped else "tie"
        report.judged += 1
        report.flips += flipped
        for slot in (ab, ba):
            if slot != "tie":
                report.decided += 1
                report.first_slot += slot == "1"
        report.a_wins += winner == "a"
        report.b_wins += winner == "b"
        report.ties += winner == "tie"
        if labelled:
            report.labelled += 1
            report.agrees_with_label += winner == "a"
        verdict = {
            "status": "ok",
            "winner": winner,
            "ab": first,
            "ba": second,
            "flipped": flipped,
            "judge": client.spec.label,
        }
        return {**pair, "pair_verdict": verdict}

    async def run() -> list[dict[str, Any]]:
        try:
            return list(await asyncio.gather(*(one(p) for p in pairs)))
        finally:
            await client.aclose()

    return asyncio.run(run()), report
