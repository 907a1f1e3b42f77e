"""Judges: one contract (`row -> verdict`) for verifiers, the conduct floor, the task
checklist, an LLM rubric judge, your own callable and an external command.

    from whileai_core.judges import exact_match, grade_rows
    graded = grade_rows(rows, exact_match(), concurrency=8, timeout=60)
"""

from __future__ import annotations

from .checklist import checklist, outcome_checks
from .codeexec import code_exec, run_sandboxed
from .command import command_judge
from .conduct import conduct, conduct_checks
from .contract import (
    InvalidVerdict,
    Judge,
    JudgeFailed,
    JudgeTimeout,
    grade_rows,
    judged_row,
    verdict_fields,
)
from .registry import DEFAULT_JUDGE, JUDGES, JudgeOptions, parse_judge
from .verifiers import (
    all_of,
    any_of,
    exact_match,
    includes,
    json_field,
    json_schema,
    json_valid,
    math_equal,
    multiple_choice,
    numeric,
    regex,
    weighted,
)

__all__ = [
    "DEFAULT_JUDGE",
    "JUDGES",
    "InvalidVerdict",
    "Judge",
    "JudgeFailed",
    "JudgeOptions",
    "JudgeTimeout",
    "all_of",
    "any_of",
    "checklist",
    "code_exec",
    "command_judge",
    "conduct",
    "conduct_checks",
    "exact_match",
    "grade_rows",
    "includes",
    "json_field",
    "json_schema",
    "json_valid",
    "judged_row",
    "math_equal",
    "multiple_choice",
    "numeric",
    "outcome_checks",
    "parse_judge",
    "regex",
    "run_sandboxed",
    "verdict_fields",
    "weighted",
]
