"""Test helpers that ship with the library, so users' own test suites can use them too.

`OpenAIStub` is a small OpenAI-compatible chat-completions server on a loopback port:
tests and benches point a model spec at `stub.base_url` and never reach the internet.
`start_fleet` serves one canned answer to thousands of concurrent calls from the running
event loop (what `python -m whileai_core.testing` runs for the benchmarks).
`serve_process` runs `whileai serve` as a real process on a free loopback port.
"""

from __future__ import annotations

from .openai_stub import (
    ADVERSARIAL_MODES,
    AGENT_DONE,
    FleetStub,
    OpenAIStub,
    Reply,
    Request,
    adversarial_person,
    answer,
    disconnect,
    hashed_embedding,
    http_error,
    raw_tool_call,
    start_fleet,
    tool_call,
    tool_calls,
    tool_then_answer,
)
from .server import free_port, serve_process

__all__ = [
    "ADVERSARIAL_MODES",
    "AGENT_DONE",
    "FleetStub",
    "OpenAIStub",
    "Reply",
    "Request",
    "adversarial_person",
    "answer",
    "disconnect",
    "free_port",
    "hashed_embedding",
    "http_error",
    "raw_tool_call",
    "serve_process",
    "start_fleet",
    "tool_call",
    "tool_calls",
    "tool_then_answer",
]
