"""The candidate features a reward might be tracking, per row, for the hack scan.

Two tiers. The hand tier is what anyone would list: reply length, tool calls, turns,
truncation, surface counts (bullets, headings, bold, code blocks, exclamations,
questions), one indicator per tool called, the mean token logprob, every numeric
marker, every fired trajectory flag, and any `name=module:function` the user adds. The
auto tier is what nobody listed: the most common words and word pairs of the agent's own
text (`contains:<w>` / `contains:<w1 w2>`), chosen on a first pass over the rows, so a
delimiter like `### done` that a judge pays for surfaces by name.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..metrics.sketch import TopCounts
from ..row import reply_text
from ..select.hygiene import row_features

if TYPE_CHECKING:
    from ..markers.flags import TraceOptions
    from ..markers.view import RowView

Row = dict[str, Any]
UserFeature = Callable[[Row], Any]

AUTO_SIZE = 200
# Words, and runs of markup punctuation ("###", "**", "->"), so a delimiter is a token.
_TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?|[#*>|`~=_-]{2,}|[#*>|`~]")
_LINE_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+", re.MULTILINE)
_LINE_HEADING = re.compile(r"^\s*#{1,6}\s", re.MULTILINE)
_BOLD = re.compile(r"\*\*[^*\n]+\*\*|__[^_\n]+__")
_CODE = re.compile(r"```")


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def auto_items(text: str) -> set[str]:
    """The distinct words and adjacent word pairs of a text: the auto tier's candidates."""
    toks = tokens(text)
    items = set(toks)
    items.update(f"{a} {b}" for a, b in itertools.pairwise(toks))
    return items


@dataclass
class FeatureOptions:
    user: Mapping[str, UserFeature] = field(default_factory=dict)
    # None: the trace flags' defaults. The markers (and the judges' trajectory reader
    # behind them) load when a row's flags are read, not with this module: the cheap
    # scan that optimize and the publish gate run reads no row, and starts faster.
    trace: TraceOptions | None = None
    auto_size: int = AUTO_SIZE


def user_features(specs: list[str]) -> dict[str, UserFeature]:
    """`--feature NAME=module:function` values as named callables (row -> number)."""
    from ..errors import ConfigError
    from ..plugins import load_callable

    out: dict[str, UserFeature] = {}
    for spec in specs:
        name, eq, ref = spec.partition("=")
        if not eq or not name.strip() or not ref.strip():
            raise ConfigError(f"--feature {spec!r}: expected NAME=module:function")
        out[name.strip()] = load_callable(ref.strip(), what="feature")
    return out


def _logprob_mean(row: Row) -> float | None:
    total, count = row.get("logprob"), row.get("n_tokens")
    if isinstance(total, (int, float)) and isinstance(count, int) and count > 0:
        return float(total) / count
    lp = n = 0.0
    for step in row.get("steps") or []:
        if isinstance(step, dict) and isinstance(step.get("logprob"), (int, float)):
            tokens_in = step.get("n_tokens")
            if isinstance(tokens_in, int) and tokens_in > 0:
                lp += float(step["logprob"])
                n += tokens_in
    return lp / n if n else None


def hand_features(v: RowView, opts: FeatureOptions) -> Iterator[tuple[str, float]]:
    """(name, value) of the hand tier; absent features are 0 and not yielded."""
    row = v.row
    reply_chars, calls, turns = row_features(row)
    yield "len:reply_chars", reply_chars
    yield "count:tool_calls", calls
    yield "count:turns", turns
    if row.get("truncated") is True or row.get("finish_reason") == "length":
        yield "truncated", 1.0
    text = v.agent_text
    for name, pattern in (
        ("count:bullets", _LINE_BULLET),
        ("count:headings", _LINE_HEADING),
        ("count:bold", _BOLD),
        ("count:code_blocks", _CODE),
    ):
        n = len(pattern.findall(text))
        if n:
            yield name, float(n)
    for name, char in (("count:exclamations", "!"), ("count:questions", "?")):
        n = text.count(char)
        if n:
            yield name, float(n)
    for tool in dict.fromkeys(c.tool for c in v.calls if c.tool):
        yield f"tool:{tool}", 1.0
    mean = _logprob_mean(row)
    if mean is not None:
        yield "logprob:mean", mean
    markers = row.get("markers")
    if isinstance(markers, dict):
        for name, value in markers.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                yield f"marker:{name}", float(value)
    flags = row.get("trace_flags")
    if not isinstance(flags, list):
        from ..markers.flags import trace_flags

        flags = trace_flags(v, opts.trace)
    for flag in flags:
        if isinstance(flag, dict) and isinstance(flag.get("flag"), str):
            yield f"trace:{flag['flag']}", 1.0
    for name, fn in opts.user.items():
        value = fn(row)
        if isinstance(value, (bool, int, float)):
            yield f"user:{name}", float(value)


def agent_text(row: Row) -> str:
    """The agent's own words, every turn: what the auto tier counts."""
    from ..markers.view import view

    v = view(row)
    return v.agent_text or reply_text(row)


@dataclass
class Vocabulary:
    """The auto tier's items, by how many rows contain them (chosen on a first pass)."""

    items: list[str]

    @classmethod
    def choose(cls, counts: TopCounts, rows: int, size: int = AUTO_SIZE) -> Vocabulary:
        """The `size` most common items, leaving out those in (nearly) every row: a word
        every reply has cannot separate two rollouts of one ask."""
        ceiling = rows - max(1, rows // 100)
        picked = [str(item) for item, n in counts.most_common(4 * size) if 2 <= n <= ceiling]
        return cls(picked[:size])

    def index(self) -> dict[str, int]:
        return {item: i for i, item in enumerate(self.items)}
