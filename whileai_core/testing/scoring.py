"""The stub as a reference model: it scores text it is given, the way a served model does.

Two routes, each as an OpenAI-compatible server answers them:

- `/completions` with `echo` and `logprobs` (the legacy shape: `tokens`,
  `token_logprobs` with None first, `text_offset`), and vLLM's `prompt_logprobs` on the
  same route (per position None or `{token_id: {logprob, rank, decoded_token}}`);
- `/chat/completions` with vLLM's `prompt_logprobs`: the messages rendered by the stub's
  own chat template (deliberately not ChatML, so a client cannot lean on one template),
  `add_generation_prompt` honoured, `usage.prompt_tokens` the rendered length.

The tokenizer is a rule a test can apply by hand: a special token `<|...|>` is one token,
a run of whitespace is one token, a run of anything else up to whitespace or `<` is one
token, a lone `<` is one. A token's logprob is `token_logprob(token)`, by default
-(0.1 + 0.05 * its length without whitespace).
"""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Callable
from typing import Any

TokenLogprob = Callable[[str], float]
_TOKEN = re.compile(r"<\|[^|<>]*\|>|\s+|[^\s<]+|<")
GENERATED = " ok"
GENERATED_LOGPROB = -0.5


def default_token_logprob(token: str) -> float:
    return -(0.1 + 0.05 * len(token.strip()))


def tokenize(text: str) -> list[tuple[str, int]]:
    """(token, character offset) for every token of `text`; they cover it exactly."""
    return [(m.group(), m.start()) for m in _TOKEN.finditer(text)]


def token_id(token: str) -> int:
    return zlib.crc32(token.encode()) % 150_000


def render_chat(messages: list[dict[str, Any]], *, add_generation_prompt: bool) -> str:
    """The stub model's chat template: `<|role|>` newline, content, tool calls as JSON,
    `<|end|>` newline; `<|assistant|>` newline to open a reply."""
    out = []
    for message in messages:
        role = str(message.get("role") or "user")
        content = message.get("content") or ""
        if not isinstance(content, str):
            content = json.dumps(content)
        calls = message.get("tool_calls") or []
        for call in calls:
            fn = call.get("function", call) if isinstance(call, dict) else {}
            content += f"[call {fn.get('name')} {fn.get('arguments')}]"
        out.append(f"<|{role}|>\n{content}<|end|>\n")
    if add_generation_prompt:
        out.append("<|assistant|>\n")
    return "".join(out)


def _prompt_logprobs(tokens: list[tuple[str, int]], rule: TokenLogprob) -> list[Any]:
    entries: list[Any] = [None]
    for token, _ in tokens[1:]:
        entries.append(
            {str(token_id(token)): {"logprob": rule(token), "rank": 1, "decoded_token": token}}
        )
    return entries


def completion_body(body: dict[str, Any], model: str, rule: TokenLogprob) -> dict[str, Any]:
    """A `/completions` response for `body`: echo, legacy logprobs, prompt_logprobs."""
    prompt = body.get("prompt") or ""
    if isinstance(prompt, list):
        prompt = prompt[0] if prompt else ""
    prompt = str(prompt)
    tokens = tokenize(prompt)
    generate = int(body.get("max_tokens") or 0) > 0
    echo = bool(body.get("echo"))
    choice: dict[str, Any] = {
        "index": 0,
        "text": (prompt if echo else "") + (GENERATED if generate else ""),
        "finish_reason": "length",
    }
    if body.get("logprobs") is not None:
        shown = list(tokens) if echo else []
        values: list[float | None] = [rule(t) for t, _ in shown]
        if shown:
            values[0] = None  # nothing conditions the first token
        if generate:
            shown.append((GENERATED, len(prompt)))
            values.append(GENERATED_LOGPROB)
        choice["logprobs"] = {
            "tokens": [t for t, _ in shown],
            "token_logprobs": values,
            "text_offset": [o for _, o in shown],
            "top_logprobs": [None] * len(shown),
        }
    if body.get("prompt_logprobs") is not None:
        choice["prompt_logprobs"] = _prompt_logprobs(tokens, rule)
        choice["prompt_token_ids"] = [token_id(t) for t, _ in tokens]
    return {
        "id": "cmpl-stub",
        "object": "text_completion",
        "model": body.get("model") or model,
        "choices": [choice],
        "usage": {
            "prompt_tokens": len(tokens),
            "completion_tokens": 1 if generate else 0,
            "total_tokens": len(tokens) + (1 if generate else 0),
        },
    }


def chat_prompt_fields(body: dict[str, Any], rule: TokenLogprob) -> dict[str, Any]:
    """What a chat completion adds for vLLM's `prompt_logprobs`, and the prompt's length."""
    messages = body.get("messages") or []
    add = body.get("add_generation_prompt", True)
    tokens = tokenize(render_chat(messages, add_generation_prompt=bool(add)))
    fields: dict[str, Any] = {"prompt_tokens": len(tokens)}
    if body.get("prompt_logprobs") is not None:
        fields["prompt_logprobs"] = _prompt_logprobs(tokens, rule)
        if body.get("return_token_ids"):
            fields["prompt_token_ids"] = [token_id(t) for t, _ in tokens]
    return fields
