"""An LLM judge with a rubric, on any OpenAI-compatible endpoint.

`--judge openai:MODEL`, `vllm:MODEL@URL` or a bare `http(s)://.../v1` URL (with `--model`).
The rubric is `--rubric FILE`, else the spec's `rubric.md`. The judge sees the rollout
with the privileged block removed at every depth; `--use-privileged` adds it back as a
grader-only reference. It answers one JSON object, `{"reward": 0..1, "reason": "..."}`;
anything else is an invalid result, not a 0.

Every call goes through the run's one `ModelClient`, from the same factory agents and
writers use (`models.factory.client_for`), so `--cache`, the concurrency bound, retries on
429/5xx, backoff, failure counts and the stop on a refused key are shared with them. A
401/403/404 or a spent allowance stops grading (it would fail every row alike); a call
that fails after its retries marks the row error.

Provenance: `judge_meta` carries the model, the sha of the prompt (instructions plus
rubric, without the row), the temperature, and `version` = `<model>@<prompt sha>`, so an
edited rubric is a new judge and the rows say so.
"""

from __future__ import annotations

import hashlib
from typing import Any

import orjson

from ..errors import ConfigError
from ..models.client import ModelCallError
from ..models.options import ModelOptions
from ..row.privileged import strip_privileged
from ..spec import Spec
from .contract import InvalidVerdict, Judge
from .trajectory import events_of

PROMPT_VERSION = "1"
_INSTRUCTIONS = """You grade one rollout of an AI agent against a rubric.
Read the rubric, then the conversation: the user's turns, the agent's tool calls with \
what the tools returned, and the agent's final reply. Judge what the agent did, not what \
it claimed: a reply that says an action succeeded when the tool result shows it failed \
is a failure.

Answer with one JSON object and nothing else:
{"reward": <1 if the rollout meets the rubric, 0 if not; a fraction for partial credit>, \
"reason": "<one sentence naming the deciding evidence>"}

Rubric:
"""
_MAX_RESULT_CHARS = 2000


_BINARY = "<1 if the rollout meets the rubric, 0 if not; a fraction for partial credit>"


def instructions(scale: tuple[float, float] | None = None) -> str:
    """The system prompt's fixed part; a rating scale asks for a rating on it instead."""
    if scale is None:
        return _INSTRUCTIONS
    lo, hi = scale
    rating = f"<a rating from {lo:g} (does not meet the rubric) to {hi:g} (meets it fully)>"
    return _INSTRUCTIONS.replace(_BINARY, rating)


def prompt_sha(rubric: str, scale: tuple[float, float] | None = None) -> str:
    text = f"v{PROMPT_VERSION}\n{instructions(scale)}{rubric.strip()}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def render_rollout(row: dict[str, Any], *, use_privileged: bool = False) -> str:
    """The rollout as the judge reads it; privileged only when asked for."""
    visible = strip_privileged(row)
    lines: list[str] = []
    for event in events_of(visible):
        if event.kind == "user":
            lines.append(f"USER: {event.text}")
        elif event.kind == "assistant":
            lines.append(f"AGENT: {event.text}")
        else:
            args = orjson.dumps(event.arguments).decode()
            result = "(no result)" if event.result is None else orjson.dumps(event.result).decode()
            if len(result) > _MAX_RESULT_CHARS:
                result = result[:_MAX_RESULT_CHARS] + "…"
            lines.append(f"AGENT CALLS {event.tool}({args}) -> {result}")
    final = visible.get("final_text")
    if isinstance(final, str):
        lines.append(f"\nFINAL REPLY: {final}")
    if use_privileged and isinstance(row.get("privileged"), dict):
        block = orjson.dumps(row["privileged"], option=orjson.OPT_INDENT_2).decode()
        lines.append(f"\nGRADER-ONLY REFERENCE (the agent never saw this):\n{block}")
    return "\n".join(lines)


def json_object(text: str) -> dict[str, Any] | None:
    """The JSON object a model answered: the whole reply, or the first {...} inside it."""
    stripped = text.strip()
    candidates = [stripped]
    # From the first `{` to the last `}` (what a greedy `\{.*\}` matched), found by two
    # scans instead of a pattern that re-reads the rest from every `{`.
    start, end = stripped.find("{"), stripped.rfind("}")
    if 0 <= start < end:
        candidates.append(stripped[start : end + 1])
    for candidate in candidates:
        try:
            value = orjson.loads(candidate)
        except orjson.JSONDecodeError:
            continue
        return value if isinstance(value, dict) else None
    return None


def parse_verdict(text: str, scale: tuple[float, float] | None = None) -> dict[str, Any]:
    """The judge model's reply as a verdict; InvalidVerdict when it is not one. With a
    rating scale the number is passed through for the contract to map."""
    value = json_object(text) or {}
    # `score` is how the original SDK's prompts, and many judge prompts, name the number.
    key = "reward" if "reward" in value else "score" if "score" in value else None
    if key is not None:
        reward = value[key]
        lo, hi = scale if scale is not None else (0.0, 1.0)
        if (
            isinstance(reward, bool)
            or not isinstance(reward, (int, float))
            or not (lo <= reward <= hi)
        ):
            raise InvalidVerdict(f"judge model's reward is not in [{lo:g}, {hi:g}]: {reward!r:.40}")
        verdict: dict[str, Any] = {"reward": reward}
        if isinstance(value.get("reason"), str):
            verdict["reason"] = value["reason"]
        return verdict
    raise InvalidVerdict(f"judge model did not answer a verdict object: {text.strip()[:80]!r}")


def llm_judge(
    ref: str,
    *,
    rubric: str | None = None,
    spec: Spec | None = None,
    use_privileged: bool = False,
    temperature: float = 0.0,
    max_tokens: int = 512,
    options: ModelOptions | None = None,
    scale: tuple[float, float] | None = None,
) -> Judge:
    """A judge that asks a model whether each row meets the rubric."""
    from ..models.factory import client_for

    text = rubric if rubric is not None else (spec.rubric if spec is not None else None)
    if not text or not text.strip():
        raise ConfigError("an LLM judge needs a rubric: --rubric FILE, or --spec with rubric.md")
    options = options or ModelOptions()
    client = client_for(ref, options)
    model_spec = client.spec
    system = instructions(scale) + text.strip()
    sha = prompt_sha(text, scale)

    async def judge(row: dict[str, Any]) -> dict[str, Any]:
        messages = [
            {"role": "system", "content": system},
            {"role": "user", "content": render_rollout(row, use_privileged=use_privileged)},
        ]
        try:
            result = await client.chat(messages, temperature=temperature, max_tokens=max_tokens)
        except ModelCallError as exc:
            raise RuntimeError(f"judge model call failed ({exc.kind}): {exc}") from None
        content = result.message.get("content")
        if not isinstance(content, str) or not content.strip():
            finish = result.finish_reason
            raise InvalidVerdict(f"judge model replied with no text (finish {finish})")
        verdict = parse_verdict(content, scale)
        verdict["usage"] = result.usage
        return verdict

    def notes() -> list[str]:
        s = client.stats
        out = [
            f"judge model {model_spec.label}: {s.ok} ok, {s.failed} failed, "
            f"{s.retries} retries, {s.input_tokens}+{s.output_tokens} tokens"
        ]
        if s.errors:
            out.append("judge model errors: " + ", ".join(f"{k} {v}" for k, v in s.errors.items()))
        return out

    meta = {
        "model": model_spec.label,
        "prompt_sha": sha,
        "temperature": temperature,
        "version": f"{model_spec.label}@{sha}",
        "use_privileged": use_privileged,
    }
    if scale is not None:
        meta["scale"] = list(scale)
    return Judge(
        name=f"llm:{model_spec.label}",
        fn=judge,
        meta=meta,
        aclose=client.aclose,
        notes=notes,
        scale=scale,
    )
