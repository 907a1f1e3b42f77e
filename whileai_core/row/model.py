"""The row: one flat JSON object per line, and the four typed views it projects onto.

A row is what every stage reads and writes. The typed views (`Task`, `Rollout`,
`Judgment`, markers, `Calibration`) are for code that wants types; stages pass the
flat dict along so that keys written by other tools (or by a newer version of this
one) survive every stage untouched. `to_row(from_row(r)) == r` holds for any row,
with the same key order, so a round trip is byte-identical through orjson.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from annotated_types import MaxLen
from pydantic import (
    BaseModel,
    ConfigDict,
    GetCoreSchemaHandler,
    PrivateAttr,
    SerializerFunctionWrapHandler,
    StrictFloat,
    StrictInt,
    ValidatorFunctionWrapHandler,
    model_serializer,
    model_validator,
)

SCHEMA_VERSION = "1"

JudgeStatus = Literal["ok", "missing_reward", "invalid_result", "error", "timeout", "undecided"]
JUDGE_STATUSES: tuple[str, ...] = (
    "ok",
    "missing_reward",
    "invalid_result",
    "error",
    "timeout",
    "undecided",
)

# A reward or a marker is at most this far from zero: far past any grader's scale (0..1,
# -1..1, 0..100), and small enough that sums and squares over any number of rows stay
# finite (1e308, a reward one judge wrote, made every statistic overflow).
MAX_SCORE = 1e9


@dataclass(frozen=True)
class ScoreBound:
    """Annotation metadata: the number lies within `limit` of zero (NaN and inf never do).
    `rules` reads it off the annotation, pydantic through the hook below."""

    limit: float = MAX_SCORE

    def problem(self, value: float) -> str | None:
        if -self.limit <= value <= self.limit:
            return None
        return (
            f"must be a finite number between {-self.limit:g} and {self.limit:g}, got {value!r:.40}"
        )

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> Any:
        from pydantic_core import core_schema

        def check(value: float) -> float:
            problem = self.problem(value)
            if problem is not None:
                raise ValueError(problem)
            return value

        return core_schema.no_info_after_validator_function(check, handler(source))


# A task's id is a name, not a payload: every row repeats it (and the calibration stamp
# repeats it again), so a megabyte id would make each of its rows too long for the store.
MAX_ID_CHARS = 1024
TaskId = Annotated[str, MaxLen(MAX_ID_CHARS)]

# Strict unions keep 1 as 1 and 1.0 as 1.0, so a round trip does not rewrite numbers; a
# boolean is not a score (`reward: true` is refused everywhere, not read as 1).
Score = Annotated[StrictInt | StrictFloat, ScoreBound()]


class _Open(BaseModel):
    """Models keep keys they do not name, in the order they came, so a stage never drops or
    reshuffles what it does not understand. Strict: a field takes its JSON type only ("5"
    is not a seed), the same rule `rules` applies to every row a stage reads."""

    model_config = ConfigDict(extra="allow", populate_by_name=True, strict=True)
    _key_order: tuple[str, ...] = PrivateAttr(default=())

    @model_validator(mode="wrap")
    @classmethod
    def _remember_order(cls, data: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        instance = handler(data)
        if isinstance(data, dict) and isinstance(instance, _Open):
            instance._key_order = tuple(data)
        return instance

    @model_serializer(mode="wrap")
    def _keep_order(self, handler: SerializerFunctionWrapHandler) -> Any:
        dumped = handler(self)
        if not self._key_order or not isinstance(dumped, dict):
            return dumped
        ordered = {k: dumped[k] for k in self._key_order if k in dumped}
        ordered.update((k, v) for k, v in dumped.items() if k not in ordered)
        return ordered


class FunctionCall(_Open):
    name: str | None = None
    arguments: dict[str, Any] | str | None = None


class ToolCall(_Open):
    """Either the OpenAI wire shape (`function.arguments` a JSON string) or the SDK's flat one."""

    id: str | None = None
    type: str | None = None
    function: FunctionCall | None = None
    name: str | None = None
    arguments: dict[str, Any] | str | None = None


class Message(_Open):
    role: str
    content: str | list[Any] | None = None
    tool_calls: list[ToolCall] | None = None
    tool_call_id: str | None = None
    name: str | None = None


class Step(_Open):
    """A user step (`role: user`, `text`), a tool step (`tool`, `arguments`, `result`), or text."""

    role: str | None = None
    tool: str | None = None
    arguments: dict[str, Any] | str | None = None
    result: Any = None
    text: str | None = None

    @property
    def kind(self) -> str:
        if self.tool is not None:
            return "tool"
        if self.role == "user":
            return "user"
        return "text"


class Privileged(_Open):
    """For judges only: every export path and every push removes it at any depth."""

    hidden_state: Any = None
    reference: Any = None
    principle: Any = None
    rubric: Any = None


class Calibration(_Open):
    """A task's measured difficulty, stamped before any trimming so a trainer sees the truth."""

    task_id: str | None = None
    k: int | None = None
    pass_rate: StrictInt | StrictFloat | None = None  # a union keeps 1 as 1 (see Score)
    ci95: list[StrictInt | StrictFloat] | None = None
    policy: str | None = None


class Marker(BaseModel):
    """A named behaviour measurement. 1.0 is the good outcome; a drop is the regression.

    `source` is who wrote it: the judge's name for a marker a verdict emitted, `mark` (or
    `mark:<family>`) for one a stage stamped; on the row it lives in `marker_sources`, so
    `markers` stays the plain name -> number map every reader expects.
    """

    name: str
    value: Score
    source: str | None = None


class Task(_Open):
    """The situation: what was asked, where it sits on the grid, and what only judges see."""

    prompt: str | None = None
    scenario_id: TaskId | None = None
    scenario_dimensions: dict[str, Any] | None = None
    privileged: Privileged | None = None
    world_state: str | None = None
    seed: int | None = None
    arm: str | None = None
    selection_reason: str | None = None


class Rollout(_Open):
    """One episode of the agent against the world."""

    messages: list[Message] | None = None
    steps: list[Step] | None = None
    final_text: str | None = None
    rollout_index: int | None = None
    faults: dict[str, Any] | list[Any] | None = None
    finish_reason: str | None = None
    usage: dict[str, Any] | None = None
    model_version: str | None = None
    policy_version: str | None = None
    writer_model: str | None = None
    lineage: dict[str, Any] | None = None
    tools_used: list[str] | None = None
    behavior_signature: str | None = None
    seeded: list[str] | None = None
    truncated: bool | None = None


class Judgment(_Open):
    """A scorer's verdict with its provenance. `reward` None means unjudged, never zero."""

    reward: Score | None = None
    reason: str | None = None
    judge_name: str | None = None
    judge_status: JudgeStatus | None = None
    judge_meta: dict[str, Any] | None = None
    failure_class: str | None = None


TASK_KEYS = frozenset(Task.model_fields)
ROLLOUT_KEYS = frozenset(Rollout.model_fields)
JUDGMENT_KEYS = frozenset(Judgment.model_fields)


@dataclass
class RowParts:
    """A row split into its typed views; `extra` holds every key none of them names."""

    task: Task
    rollout: Rollout
    judgment: Judgment
    markers: list[Marker] = field(default_factory=list)
    calibration: Calibration | None = None
    schema_version: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    key_order: tuple[str, ...] = ()
    markers_present: bool = False


def from_row(row: dict[str, Any]) -> RowParts:
    """Split a flat row into typed views. Raises pydantic's ValidationError on wrong types."""
    task_in: dict[str, Any] = {}
    rollout_in: dict[str, Any] = {}
    judgment_in: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for key, value in row.items():
        if key in TASK_KEYS:
            task_in[key] = value
        elif key in ROLLOUT_KEYS:
            rollout_in[key] = value
        elif key in JUDGMENT_KEYS:
            judgment_in[key] = value
        elif key not in ("markers", "calibration", "schema_version"):
            extra[key] = value
        elif key == "markers" and value is None:
            extra[key] = value  # a null `markers` rides along as it came
    markers_raw = row.get("markers")
    raw_sources = row.get("marker_sources")
    if raw_sources is not None and (
        not isinstance(raw_sources, dict)
        or not all(isinstance(v, str) for v in raw_sources.values())
    ):
        raise TypeError("marker_sources must be an object of marker name -> writer name")
    sources = _marker_sources(row)
    if sources is not None:
        extra.pop("marker_sources", None)
    markers: list[Marker] = []
    if markers_raw is not None:
        if not isinstance(markers_raw, dict):
            raise TypeError("markers must be an object of name -> number")
        for name, value in markers_raw.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise TypeError(f"markers.{name} must be a number, got {type(value).__name__}")
            source = (sources or {}).get(name)
            markers.append(Marker(name=name, value=value, source=source))
    calibration_raw = row.get("calibration")
    schema_version = row.get("schema_version")
    if schema_version is not None and not isinstance(schema_version, str):
        raise TypeError("schema_version must be a string")
    return RowParts(
        task=Task.model_validate(task_in),
        rollout=Rollout.model_validate(rollout_in),
        judgment=Judgment.model_validate(judgment_in),
        markers=markers,
        calibration=(
            Calibration.model_validate(calibration_raw) if calibration_raw is not None else None
        ),
        schema_version=schema_version,
        extra=extra,
        key_order=tuple(row),
        markers_present=markers_raw is not None,
    )


def _marker_sources(row: dict[str, Any]) -> dict[str, str] | None:
    """`marker_sources` when it describes `markers` exactly as `to_row` would write it back
    (in marker order, no stray names); else None, and the key rides along untouched like
    any key the models do not name."""
    sources = row.get("marker_sources")
    markers = row.get("markers")
    if not isinstance(sources, dict) or not isinstance(markers, dict):
        return None
    if list(sources) != [name for name in markers if name in sources]:
        return None
    return sources


def _dump(model: BaseModel) -> dict[str, Any]:
    return model.model_dump(exclude_unset=True, by_alias=True)


def to_row(parts: RowParts) -> dict[str, Any]:
    """Flatten typed views back into a row, in the key order the row came with."""
    flat: dict[str, Any] = {}
    flat.update(_dump(parts.task))
    flat.update(_dump(parts.rollout))
    flat.update(_dump(parts.judgment))
    if parts.markers or parts.markers_present:
        flat["markers"] = {m.name: m.value for m in parts.markers}
    sources = {m.name: m.source for m in parts.markers if m.source is not None}
    if sources or ("marker_sources" in parts.key_order and "marker_sources" not in parts.extra):
        flat["marker_sources"] = sources
    if parts.calibration is not None:
        flat["calibration"] = _dump(parts.calibration)
    elif "calibration" in parts.key_order:
        flat["calibration"] = None
    if parts.schema_version is not None or "schema_version" in parts.key_order:
        flat["schema_version"] = parts.schema_version
    flat.update(parts.extra)
    if not parts.key_order:
        return flat
    ordered = {k: flat[k] for k in parts.key_order if k in flat}
    ordered.update((k, v) for k, v in flat.items() if k not in ordered)
    return ordered


def call_function(call: dict[str, Any]) -> dict[str, Any]:
    """The dict holding a tool call's `name` and `arguments`, in either shape rows carry:
    the OpenAI wire shape nests them under `function`, the SDK's flat shape does not."""
    inner = call.get("function")
    return inner if isinstance(inner, dict) else call


def ask_text(row: dict[str, Any]) -> str:
    """The person's ask: `prompt`, else the first user message with text."""
    prompt = row.get("prompt")
    if isinstance(prompt, str) and prompt:
        return prompt
    for message in row.get("messages") or []:
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str):
                return content
    return ""


def message_text(message: dict[str, Any]) -> str:
    """A chat message's text: its string `content`, or the text parts of a content list
    (the OpenAI content-parts shape) joined by spaces; "" for anything else."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(
            part["text"]
            for part in content
            if isinstance(part, dict) and isinstance(part.get("text"), str)
        )
    return ""


def reply_text(row: dict[str, Any]) -> str:
    """The agent's final reply: the one definition every judge, marker, selector and export
    reads, so they all agree on which text "the answer" is.

    `final_text` when the row has it (an empty one too: the agent said nothing). Rows from
    other stacks may lack it; then the last agent turn with text: the last assistant
    message with text (string content or a content list's text parts), else, for a row
    that records its rollout only as `steps`, the last text a non-user step carries (a text
    step, or the words a tool step came with).
    """
    text = row.get("final_text")
    if isinstance(text, str):
        return text
    messages = row.get("messages")
    if isinstance(messages, list):
        for message in reversed(messages):
            if isinstance(message, dict) and message.get("role") == "assistant":
                said = message_text(message)
                if said:
                    return said
    steps = row.get("steps")
    if isinstance(steps, list):
        for step in reversed(steps):
            if isinstance(step, dict) and step.get("role") != "user":
                text = step.get("text")
                if isinstance(text, str) and text:
                    return text
    return ""


def validate_row(row: Any) -> None:
    """Raise ValueError naming the first rule `row` breaks (the rules every stage applies)."""
    from .rules import row_problem

    problem = row_problem(row)
    if problem is not None:
        raise ValueError(problem)


def row_json_schema() -> dict[str, Any]:
    """The row's JSON Schema, generated from the typed views so it cannot drift from them."""
    schema: dict[str, Any] = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "whileai row",
        "description": (
            "One JSON object per line. Keys not listed here are allowed and kept unchanged."
        ),
        "type": "object",
        "properties": {},
        "anyOf": [{"required": ["prompt"]}, {"required": ["messages"]}],
        "additionalProperties": True,
        "$defs": {},
    }
    for model in (Task, Rollout, Judgment):
        sub = model.model_json_schema(ref_template="#/$defs/{model}")
        schema["$defs"].update(sub.pop("$defs", {}))
        schema["properties"].update(sub["properties"])
    schema["properties"]["markers"] = {
        "type": "object",
        "additionalProperties": {"type": "number"},
        "description": "name -> value; 1.0 is the good outcome",
    }
    schema["properties"]["marker_sources"] = {
        "type": "object",
        "additionalProperties": {"type": "string"},
        "description": "marker name -> who wrote it: the judge's name, or mark / mark:FAMILY",
    }
    cal = Calibration.model_json_schema(ref_template="#/$defs/{model}")
    schema["$defs"]["Calibration"] = cal
    schema["properties"]["calibration"] = {
        "anyOf": [{"$ref": "#/$defs/Calibration"}, {"type": "null"}]
    }
    schema["properties"]["schema_version"] = {"type": "string", "const": SCHEMA_VERSION}
    return schema
