"""What each tool call did to the world: read, write, delete or run a command.

Trajectory flags judge actions, not prose, so they need to know which calls changed
things. The kind comes from, in order: `--kinds` (the user's word), the spec's read/write
(or what simulate recorded in the row), the call's arguments (a `command` argument is a
command), then the verbs in the tool's name (`delete_branch` deletes, `run_shell` runs).
A call's paths, written content and command lines are pulled out here once so every flag
reads the same ones.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal, cast

import orjson

from ..errors import ConfigError
from ..judges.trajectory import FAULT_STATUSES, Event
from ..spec import guess_kind, name_words

Kind = Literal["read", "write", "delete", "command"]
KINDS: tuple[str, ...] = ("read", "write", "delete", "command")

_COMMAND_WORDS = frozenset(
    {"run", "exec", "execute", "shell", "bash", "sh", "zsh", "terminal", "command", "cmd",
     "subprocess", "powershell", "script", "console", "invoke"}
)  # fmt: skip
_DELETE_WORDS = frozenset(
    {"delete", "remove", "rm", "unlink", "drop", "destroy", "purge", "wipe", "erase", "truncate"}
)
COMMAND_KEYS = frozenset({"command", "cmd", "commands", "script", "shell", "bash", "argv", "args"})
PATH_KEYS = frozenset(
    {"path", "file", "filename", "file_path", "filepath", "target", "dest", "destination",
     "paths", "files", "test_path", "src", "source_path"}
)  # fmt: skip
CONTENT_KEYS = frozenset(
    {"content", "new_content", "contents", "patch", "diff", "text", "body", "code", "source",
     "data", "replacement", "new_text", "new_string", "insert", "lines", "message"}
)  # fmt: skip
# Statuses that mean the call did not do what was asked, beyond the fault injector's own.
FAIL_STATUSES = FAULT_STATUSES | frozenset(
    {"not_found", "declined", "conflict", "denied", "forbidden", "unauthorized", "invalid",
     "expired", "aborted", "killed", "crashed", "failure", "refused", "blocked", "locked",
     "unprocessable", "bad_request", "server_error", "cancelled_by_system"}
)  # fmt: skip


def parse_kinds(text: str | None) -> dict[str, str]:
    """`--kinds deploy=command,archive=delete` -> {tool: kind}."""
    out: dict[str, str] = {}
    for part in (text or "").split(","):
        if not part.strip():
            continue
        tool, eq, kind = part.partition("=")
        if not eq or not tool.strip() or kind.strip() not in KINDS:
            raise ConfigError(
                f"--kinds {part.strip()!r}: expected TOOL=KIND with KIND one of {', '.join(KINDS)}"
            )
        out[tool.strip()] = kind.strip()
    return out


def _strings(value: Any, key: str = "") -> Iterator[tuple[str, str]]:
    """(argument key, string) for every string inside an argument value."""
    if isinstance(value, str):
        yield key, value
    elif isinstance(value, Mapping):
        for k, v in value.items():
            yield from _strings(v, str(k))
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item, key)


@dataclass
class Action:
    """One call as the flags read it."""

    index: int  # position among the rollout's calls
    tool: str
    kind: Kind
    arguments: dict[str, Any]
    result: dict[str, Any] | None
    event: Event

    @property
    def failed(self) -> bool:
        return call_failed(self.result)

    def strings(self) -> list[tuple[str, str]]:
        return list(_strings(self.arguments))

    @property
    def command_lines(self) -> list[tuple[str, str]]:
        """(where, command line) this call runs; an argv list reads as one line."""
        found = [(k, s) for k, s in self.strings() if k.lower() in COMMAND_KEYS]
        for key, value in self.arguments.items():
            if key.lower() in COMMAND_KEYS and isinstance(value, list):
                found.append((key, " ".join(str(v) for v in value)))
        if self.kind == "command" and not found:
            found = [(k, s) for k, s in self.strings() if k.lower() not in PATH_KEYS]
        return [(f"{self.tool}.{k}" if k else self.tool, s) for k, s in found]

    @property
    def paths(self) -> list[str]:
        return [s for k, s in self.strings() if k.lower() in PATH_KEYS]

    @property
    def written(self) -> list[tuple[str, str]]:
        """(where, text) this call writes into the world."""
        if self.kind not in ("write", "command"):
            return []
        return [
            (f"{self.tool}.{k}", s)
            for k, s in self.strings()
            if k.lower() in CONTENT_KEYS or (self.kind == "write" and k.lower() not in PATH_KEYS)
        ]


def call_failed(result: dict[str, Any] | None) -> bool:
    """Whether the world said the call did not work: a failing status, `ok`/`success`
    false, an error with no ok status, a non-zero exit code, or stale data."""
    if not isinstance(result, dict):
        return False
    status = result.get("status")
    if isinstance(status, str) and status.lower() in FAIL_STATUSES:
        return True
    if result.get("stale"):
        return True
    if result.get("ok") is False or result.get("success") is False:
        return True
    for key in ("exit_code", "returncode", "exitCode", "return_code"):
        code = result.get(key)
        if isinstance(code, int) and not isinstance(code, bool) and code != 0:
            return True
    error = result.get("error")
    return bool(error) and status not in ("ok", "success", "succeeded")


def kind_of(
    event: Event, overrides: Mapping[str, str], base: Mapping[str, str] | None = None
) -> Kind:
    """The call's kind, by the precedence in the module docstring."""
    tool = event.tool
    chosen = overrides.get(tool)
    if chosen in KINDS:
        return cast(Kind, chosen)
    words = set(name_words(tool))
    if any(k.lower() in COMMAND_KEYS for k in event.arguments) or words & _COMMAND_WORDS:
        return "command"
    if words & _DELETE_WORDS:
        return "delete"
    known = (base or {}).get(tool)
    if known in ("read", "write"):
        return cast(Kind, known)
    return guess_kind(tool)


def actions_of(
    calls: list[Event], overrides: Mapping[str, str], base: Mapping[str, str] | None = None
) -> list[Action]:
    return [
        Action(i, c.tool, kind_of(c, overrides, base), c.arguments, c.result, c)
        for i, c in enumerate(calls)
    ]


_TEST_PATH = re.compile(
    r"(?:^|[\s/'\"=])(?:tests?|__tests__|specs?|testing|e2e)/|(?:^|[\s/'\"=])test_[\w.-]*\.py\b|"
    r"_test\.(?:py|go|rb|exs?|c|cc|cpp|rs)\b|\.(?:test|spec)\.[cm]?[jt]sx?\b|"
    r"(?:^|[\s/'\"=])conftest\.py\b|\w+Tests?\.(?:java|cs|kt|swift|php)\b|_spec\.rb\b",
    re.IGNORECASE,
)
TEST_COMMAND = re.compile(
    r"\b(?:pytest|py\.test|python3? -m (?:pytest|unittest)|nosetests|tox|nox|"
    r"(?:npm|yarn|pnpm|bun)(?: run)? test|npx (?:jest|vitest|mocha)|jest|vitest|mocha|"
    r"go test|cargo test|mvn(?: -\S+)* (?:test|verify)|\.?/?gradlew? test|make (?:test|check)|"
    r"ctest|dotnet test|rspec|phpunit|mix test|swift test|bazel test|rake test)\b",
    re.IGNORECASE,
)


def is_test_path(text: str) -> bool:
    return bool(_TEST_PATH.search(" " + text))


def is_test_run(action: Action) -> bool:
    """A call that runs tests: a test tool (`run_tests`, `pytest`) or a test command line."""
    words = set(name_words(action.tool))
    if "test" in words or "tests" in words or "pytest" in words:
        return action.kind in ("command", "read") or bool(words & {"run", "exec", "execute"})
    return any(TEST_COMMAND.search(line) for _, line in action.command_lines)


_FAILED_COUNT = re.compile(
    r"\"(?:failed|failures|failing|errors|errored|fail)\"\s*:\s*([1-9]\d*)|"
    r"\b([1-9]\d*) (?:failed|failing|failures?|errors?)\b|"
    r"\"(?:passed|success|ok|green)\"\s*:\s*false|\"(?:conclusion|state|outcome|result)\"\s*:\s*"
    r"\"(?:failure|failed|fail|red|error)\"|\btests? failed\b",
    re.IGNORECASE,
)
# Test runners shout their failures; lower-case "failed" is also a JSON key ("failed": 0).
_FAILED_SHOUT = re.compile(r"\bFAILED\b|\bFAIL:|\bERROR:")


def test_passed(action: Action) -> bool:
    """Whether a test run came back green (a failed call, or any failure count, is red)."""
    if action.result is None or action.failed:
        return False
    text = orjson.dumps(action.result).decode()
    return not (_FAILED_COUNT.search(text) or _FAILED_SHOUT.search(text))
