"""The row: its model, its rules, and everything that keeps a row safe to pass on.

    model       the flat row and its typed views (`Task`, `Rollout`, `Judgment`, markers),
                the final reply (`reply_text`) and the ask (`ask_text`)
    rules       the row's rules, compiled once from the views: the one validation of a row
    limits      how big and how deep a row may be, spelled as the store spells its limits
    privileged  the teacher-only block: the answer-key leak check and its stripping
    buffer      rows held where they cost least, for stages that see every row first
    validate    `whileai validate`: every line through the reader every stage uses

`from whileai_core.row import reply_text` names the model's objects (re-exported below):
the row is the thing every stage reads, so its model is the package's front door.
"""

from __future__ import annotations

from .model import (
    JUDGE_STATUSES,
    JUDGMENT_KEYS,
    MAX_ID_CHARS,
    MAX_SCORE,
    ROLLOUT_KEYS,
    SCHEMA_VERSION,
    TASK_KEYS,
    Calibration,
    FunctionCall,
    JudgeStatus,
    Judgment,
    Marker,
    Message,
    Privileged,
    Rollout,
    RowParts,
    Score,
    ScoreBound,
    Step,
    Task,
    TaskId,
    ToolCall,
    ask_text,
    call_function,
    from_row,
    message_text,
    reply_text,
    row_json_schema,
    to_row,
    validate_row,
)

__all__ = [
    "JUDGE_STATUSES",
    "JUDGMENT_KEYS",
    "MAX_ID_CHARS",
    "MAX_SCORE",
    "ROLLOUT_KEYS",
    "SCHEMA_VERSION",
    "TASK_KEYS",
    "Calibration",
    "FunctionCall",
    "JudgeStatus",
    "Judgment",
    "Marker",
    "Message",
    "Privileged",
    "Rollout",
    "RowParts",
    "Score",
    "ScoreBound",
    "Step",
    "Task",
    "TaskId",
    "ToolCall",
    "ask_text",
    "call_function",
    "from_row",
    "message_text",
    "reply_text",
    "row_json_schema",
    "to_row",
    "validate_row",
]
