"""A conversation rendered by the reference model's own chat template, for `--route echo`.

The echo route scores text, so the text must be what the model was trained on: its chat
template, not a fixed ChatML rendering. `--template` names either a tokenizer folder (its
`tokenizer_config.json`, or `chat_template.jinja` beside it) or a Jinja template file.
With `transformers` installed a tokenizer folder renders through the tokenizer's own
`apply_chat_template` (offline: `local_files_only`); otherwise the template text is
rendered here the way transformers does (a sandboxed Jinja environment with `tojson` and
`raise_exception`), so a machine without transformers renders the same bytes.

Each assistant turn's span is found by rendering twice: the conversation before the turn
with the generation prompt (where the turn starts), and through the turn (where it ends,
trailing whitespace after the end token dropped: it is not a generated token). A template
whose render of a longer conversation does not extend the shorter one's cannot mark
spans and is refused.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..errors import ConfigError, Failure

Render = Callable[[Sequence[dict[str, Any]], list[dict[str, Any]] | None, bool], str]


def load_renderer(source: str) -> Render:
    """A renderer for `source`: a tokenizer folder or a template file."""
    path = Path(source)
    if path.is_dir():
        try:
            from transformers import AutoTokenizer
        except ImportError:
            return _jinja(_template_text(path), str(path))
        tokenizer = AutoTokenizer.from_pretrained(str(path), local_files_only=True)

        def render(
            messages: Sequence[dict[str, Any]], tools: list[dict[str, Any]] | None, gen: bool
        ) -> str:
            text = tokenizer.apply_chat_template(
                list(messages), tools=tools, tokenize=False, add_generation_prompt=gen
            )
            return str(text)

        return render
    if path.is_file():
        return _jinja(path.read_text(encoding="utf-8"), str(path))
    raise ConfigError(f"--template {source}: no such tokenizer folder or template file")


def _template_text(folder: Path) -> str:
    beside = folder / "chat_template.jinja"
    if beside.is_file():
        return beside.read_text(encoding="utf-8")
    try:
        config = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ConfigError(
            f"--template {folder}: no readable tokenizer_config.json ({exc})"
        ) from None
    template = config.get("chat_template") if isinstance(config, dict) else None
    if isinstance(template, list):  # named templates: the default one
        template = next((t.get("template") for t in template if t.get("name") == "default"), None)
    if not isinstance(template, str) or not template:
        raise ConfigError(f"--template {folder}: its tokenizer carries no chat template")
    return template


def _jinja(text: str, where: str) -> Render:
    try:
        from jinja2 import TemplateError
        from jinja2.sandbox import ImmutableSandboxedEnvironment
    except ImportError:
        raise ConfigError(
            f"--template {where}: rendering a chat template needs jinja2 (or transformers)"
        ) from None

    def raise_exception(message: str) -> None:
        raise TemplateError(message)

    def tojson(value: Any, indent: int | None = None, **_: Any) -> str:
        return json.dumps(value, ensure_ascii=False, indent=indent)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    try:
        template = env.from_string(text)
    except TemplateError as exc:
        raise ConfigError(f"--template {where}: not a Jinja template ({exc})") from None

    def render(
        messages: Sequence[dict[str, Any]], tools: list[dict[str, Any]] | None, gen: bool
    ) -> str:
        try:
            return template.render(messages=list(messages), tools=tools, add_generation_prompt=gen)
        except TemplateError as exc:
            raise Failure(f"the chat template refused the conversation: {exc}") from None

    return render


def render_turns(
    render: Render, messages: Sequence[dict[str, Any]], tools: list[dict[str, Any]] | None
) -> tuple[str, list[tuple[int, int]]]:
    """The conversation's text under the template, and each assistant turn's span in it."""
    messages = [_template_message(m) for m in messages]
    text = render(messages, tools, False)
    spans: list[tuple[int, int]] = []
    for i, message in enumerate(messages):
        if message.get("role") != "assistant":
            continue
        before = render(messages[:i], tools, True)
        through = render(messages[: i + 1], tools, False).rstrip()
        if not (through.startswith(before) and text.startswith(through)):
            raise Failure(
                "the chat template does not render a conversation as an extension of its "
                "start, so a turn's tokens cannot be located; use --route prompt-logprobs"
            )
        spans.append((len(before), len(through)))
    return text, spans


def _template_message(message: dict[str, Any]) -> dict[str, Any]:
    """Tool-call arguments as objects: HF templates render them with `tojson`."""
    calls = message.get("tool_calls")
    if not calls:
        return message
    out = []
    for call in calls:
        fn = dict(call.get("function") or {})
        raw = fn.get("arguments")
        if isinstance(raw, str):
            with contextlib.suppress(json.JSONDecodeError):
                fn["arguments"] = json.loads(raw) if raw.strip() else {}
        out.append({**call, "function": fn})
    return {**message, "tool_calls": out}
