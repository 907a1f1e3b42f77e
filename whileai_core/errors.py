"""One exception root, so the CLI can turn any library failure into one line and exit 1.

The library never prints or exits; it raises one of these with what the message needs.
"""

from __future__ import annotations


class WhileaiError(Exception):
    """Root of every error the toolkit raises on purpose (bad input, bad config, failed run)."""


class BadRowError(WhileaiError):
    """A line of a JSONL stream that is not a usable row; carries where it was."""

    def __init__(self, source: str, line: int, problem: str) -> None:
        self.source = source
        self.line = line
        self.problem = problem
        super().__init__(f"{source}:{line}: {problem}")


class SpecError(WhileaiError):
    """A spec (tools + policy) that cannot drive a run."""

    def __init__(self, source: str, problem: str) -> None:
        self.source = source
        self.problem = problem
        super().__init__(f"{source}: {problem}")


class ConfigError(WhileaiError):
    """A flag, environment variable or plug-in reference that does not resolve."""
