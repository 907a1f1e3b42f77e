"""An advisory second opinion: `grade --llm-judge MODEL` puts an LLM's verdict beside the
judge's, never in its place.

Each graded row goes through the advisor (any judge, in practice an LLM judge with the
rubric) under the one contract, and keeps everything the main judge wrote; the advisor's
verdict lands in its own fields:

    llm_reward        the advisor's reward in [0, 1], or None when it gave none
    llm_reason        its one-line reason
    llm_judge         its name (model @ prompt sha for an LLM judge)
    llm_judge_status  ok, or how it failed (error, timeout, invalid_result, ...)

`reward`, `judge_name` and the rest stay the main judge's: selection, export and every
report read `reward`, so an advisory verdict changes nothing downstream unless a reader
asks for `llm_reward` (e.g. `whileai agreement` between the two).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator
from typing import Any

from .contract import Judge, grade_rows

FIELDS = ("llm_reward", "llm_reason", "llm_judge", "llm_judge_status")


def advise(
    rows: Iterable[dict[str, Any]],
    advisor: Judge,
    *,
    concurrency: int = 8,
    timeout: float | None = 60.0,
) -> Iterator[dict[str, Any]]:
    """`rows` in order, each with the advisor's verdict in the `llm_*` fields."""
    held: deque[dict[str, Any]] = deque()

    def feed() -> Iterator[dict[str, Any]]:
        for row in rows:
            held.append(row)
            yield row

    # grade_rows keeps input order and takes each row once: the advised copy of row i is
    # the i-th out, so its main verdict is the i-th held.
    for advised in grade_rows(feed(), advisor, concurrency=concurrency, timeout=timeout):
        out = dict(held.popleft())
        out["llm_reward"] = advised.get("reward")
        out["llm_reason"] = advised.get("reason")
        out["llm_judge"] = advisor.meta.get("version") or advisor.name
        out["llm_judge_status"] = advised.get("judge_status")
        yield out
