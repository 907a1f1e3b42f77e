"""What selection keeps about one row: a compact record, not the row.

Selection must see every row of an ask before it decides, so it holds the input; as
dicts a 100,000-row file costs several hundred MB. A record is the task, the reward, what
(if anything) disqualifies the row, a digest of its trajectory and the few features the
report needs, plus where the row lives (a dict, or a span in a file or buffer), so the row
itself is read again only when it is written out.
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

import orjson

from ..compare.lineage import is_eval_sourced
from ..metrics.tally import reward_of, task_key
from ..row import reply_text
from ..row.privileged import leaks_answer_key
from ..simulate.faults import CONDITION_TO_FAULT
from .hygiene import row_features

Row = dict[str, Any]
Span = tuple[int, ...]
T = TypeVar("T", bound=Hashable)

# Keys selection writes onto a kept row (besides `calibration`).
ADDED_KEYS = frozenset(
    {
        "n0",
        "n1",
        "reward_mean",
        "reward_std",
        "in_band",
        "band_side",
        "overlong",
        "reward_before_penalty",
    }
)


@dataclass(slots=True)
class Record:
    """One row as selection sees it; the row itself is `obj`, or at `span` in the payloads.
    (`Recorder.record` passes the fields by position: their order is part of it.)"""

    obj: Row | None
    span: Span
    task: str
    reward: float | None
    junk: str | None
    truncated: bool
    kinds: tuple[str, ...]
    policy: str | None
    features: tuple[float, float, float]
    carried: bool
    eval_sourced: bool
    clash: bool = False  # the row already has a key selection adds: rebuild, never splice
    traj: bytes = b""
    change: str = ""  # "overlong" | "penalized" once the truncation policy applied
    tics: tuple[str, ...] = ()  # style tic families, read only when SFT keeps them out

    @property
    def effective(self) -> float:
        """The reward the trainer sees: 0 for a penalized truncation, else the judged one."""
        assert self.reward is not None
        return 0.0 if self.change == "penalized" else self.reward


_SHARED_MAX = 4096


class Recorder:
    """Builds records, sharing what the rows of one ask repeat (their task and policy
    strings, interned; `privileged` keeps each block's compiled answer key) so memory
    grows with asks, not rows. With `tics`, each usable row's style tics are read too
    (SFT keeps them out of training)."""

    def __init__(self, *, tics: bool = False) -> None:
        self._phrases: Any = None
        self._shared: dict[Any, Any] = {}
        if tics:
            from ..markers.style import Phrases

            self._phrases = Phrases()

    def record(self, row: Row, span: Span = (), *, keep: bool = True) -> Record:
        reward = reward_of(row)
        # The reply is read by the junk checks, the features and the trajectory digest:
        # find it once.
        reply = reply_text(row)
        junk = self._junk_reason(row, reward, reply)
        carried = isinstance(row.get("calibration"), dict)
        policy = policy_of(row)
        # Positional, in `Record`'s field order: keywords cost a third of the record's
        # construction, once for every row read.
        rec = Record(
            row if keep else None,  # obj
            span,
            sys.intern(task_key(row)),  # task
            reward,
            junk,
            row.get("truncated") is True or row.get("finish_reason") == "length",  # truncated
            self._share(fault_kinds(row)),  # kinds
            sys.intern(policy) if policy is not None else None,  # policy
            self._share(row_features(row, reply)),  # features
            carried,
            is_eval_sourced(row),  # eval_sourced
            not ADDED_KEYS.isdisjoint(row) or ("calibration" in row and not carried),  # clash
        )
        if junk is None:
            rec.traj = trajectory_key(row, reply)
            if self._phrases is not None:
                from ..markers.style import row_tics

                rec.tics = row_tics(row, self._phrases)
        return rec

    def _share(self, value: T) -> T:
        """One copy of a small tuple many rows repeat (their fault kinds, their surface
        features): a record then costs a pointer, not a tuple of boxed floats. At most
        `_SHARED_MAX` values are kept, so rows that all differ cost no more than before."""
        found = self._shared.get(value)
        if found is not None:
            return found
        if len(self._shared) < _SHARED_MAX:
            self._shared[value] = value
        return value

    def _junk_reason(self, row: Row, reward: float | None, reply: str) -> str | None:
        status = row.get("judge_status")
        if status not in (None, "ok"):
            return "judge_status"
        if reward is None:
            return "ungraded"
        if leaks_answer_key(row):  # the judge's no_leak, export's and push's refusal
            return "quotes_privileged"
        if not reply.strip():
            return "empty_final_text"
        return None


def policy_of(row: Row) -> str | None:
    for key in ("policy_version", "model_version"):
        value = row.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def trajectory_key(row: Row, reply: str | None = None) -> bytes:
    """What the agent did: its steps and reply (or its assistant turns when it has no steps).

    `reply` is the row's `reply_text` when the caller already has it (selection's per-row
    path does), so it is not looked up again.
    """
    steps = row.get("steps")
    if steps:
        acted: Any = steps
    else:
        acted = [
            m
            for m in row.get("messages") or []
            if isinstance(m, dict) and m.get("role") == "assistant"
        ]
    if reply is None:
        reply = reply_text(row)
    payload = orjson.dumps([acted, reply], option=orjson.OPT_SORT_KEYS)
    return hashlib.blake2b(payload, digest_size=16).digest()


def fault_kinds(row: Row) -> tuple[str, ...]:
    """The faults that fired in this rollout, else its planned tool condition."""
    fired = row.get("faults_fired")
    if isinstance(fired, list) and fired:
        modes = tuple(str(f["mode"]) for f in fired if isinstance(f, dict) and f.get("mode"))
        if modes:
            return modes
    dims = row.get("scenario_dimensions")
    condition = dims.get("tool_condition") if isinstance(dims, dict) else None
    if condition in (None, "success"):
        return ("none",)
    # Name a planned condition by the fault it schedules, so fired and planned kinds agree.
    return (CONDITION_TO_FAULT.get(str(condition)) or str(condition),)


def kind_of(kinds: list[tuple[str, ...]]) -> str:
    """A group's fault kind: the one its rollouts hit most."""
    found = most_common(kind for row_kinds in kinds for kind in row_kinds)
    return found if found is not None else "none"


def most_common(values: Iterable[T]) -> T | None:
    """The value seen most often, the first seen among equals (what
    `Counter(values).most_common(1)` answers, without its heap, once per group)."""
    counts: dict[T, int] = {}
    for value in values:
        counts[value] = counts.get(value, 0) + 1
    if not counts:
        return None
    return max(counts.items(), key=_count)[0]


def _count(item: tuple[Any, int]) -> int:
    return item[1]
