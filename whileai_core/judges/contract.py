"""The judge contract, and the streaming runner every judge goes through.

A judge is any callable `row -> verdict`. A verdict is a bare number, or a dict with
`reward` (a number; `score` is read the same when `reward` is absent, as the original SDK
and most judge prompts spell it) and optional `reason`, `markers`, `failure_class`; any
other key is kept in `judge_meta`. Anything else does not score the row 0: it sets
`judge_status` (missing_reward / invalid_result / error / timeout) and `reward` to None, so
a broken judge shows up as unjudged rows instead of a policy that looks bad.

A reward is a number in [0, 1]. A judge that rates on another scale declares it
(`Judge.scale`, `grade --scale 1,5`): the rating is kept in `judge_meta.rating` and the
reward is (rating - lo) / (hi - lo). A verdict outside [0, 1] from a judge that declared
no scale (a 4 from a 1-5 rater) is `invalid_result`, never a pass.

`grade_rows` keeps input order and never holds more than `concurrency` rows in flight, so
memory stays flat however long the stream. Cheap deterministic judges (`Judge.inline`)
run on the reading thread: a thread hop per row would cost more than the check itself.

The per-row timeout holds for those too. A Python thread cannot be stopped, and a regular
expression holds the interpreter lock until it returns, so no watchdog can cut a built-in
judge short from outside: instead the built-ins read bounded text with patterns that
cannot backtrack, call `check_deadline()` between their steps (it raises JudgeTimeout
once the row's time is spent), and a verdict that still comes back after the deadline is
thrown away for `timeout`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import inspect
import math
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson

from ..errors import (
    ConfigError,
    Failure,
    InvalidVerdict,
    JudgeFailed,
    JudgeTimeout,
    Undecided,
    WhileaiError,
)
from ..row import MAX_SCORE, ScoreBound
from ..row.rules import field_problem

# Verdict keys that land on the row itself; everything else a judge returns is metadata.
_ROW_KEYS = ("reward", "reason", "markers", "failure_class")


@dataclass
class Judge:
    """A named judge: the callable plus the provenance every graded row carries.

    `inline` marks a cheap, deterministic, non-blocking judge that runs on the reading
    thread; the row's timeout still holds (`check_deadline`, and a late verdict is thrown
    away). `own_timeout` marks a judge that stops itself at the deadline and raises
    JudgeTimeout, so the runner does not abandon it.
    """

    name: str
    fn: Callable[[dict[str, Any]], Any]
    meta: dict[str, Any] = field(default_factory=dict)
    inline: bool = False
    own_timeout: bool = False
    # The (lo, hi) a rating judge answers on; None means rewards are already in [0, 1].
    scale: tuple[float, float] | None = None
    close: Callable[[], None] | None = None
    aclose: Callable[[], Awaitable[None]] | None = None
    # What the judge has to say once the run is over (restarts, retries), for the summary.
    notes: Callable[[], list[str]] | None = None
    # How another process builds this judge again (`judges.registry.JudgeRecipe`: the
    # --judge string and its options), for an executor whose workers grade: a judge holds
    # clients and co-processes that do not travel, its recipe does. None: made in Python.
    recipe: Any = None

    def __call__(self, row: dict[str, Any]) -> Any:
        return self.fn(row)


def as_judge(fn: Callable[[dict[str, Any]], Any], name: str | None = None) -> Judge:
    """A bare callable as a named judge, so its rows carry provenance like any other."""
    if isinstance(fn, Judge):
        return fn
    label = name or getattr(fn, "__qualname__", None) or type(fn).__name__
    return Judge(name=label, fn=fn, meta={"version": label})


async def close_judge(judge: Judge) -> None:
    """Release what a judge holds (a co-process, a model client) from async code."""
    if judge.aclose is not None:
        with contextlib.suppress(Exception):
            await judge.aclose()
    if judge.close is not None:
        with contextlib.suppress(Exception):
            judge.close()


_BOUND = ScoreBound()


def _number(value: Any) -> float | None:
    """A verdict's reward as a number the row rules take (finite, within MAX_SCORE), so
    grade never writes a row the next stage refuses; a bare True/False counts as 1/0."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)) and _BOUND.problem(value) is None:
        return value
    return None


def parse_scale(text: str) -> tuple[float, float]:
    """`1,5` (or `1-5`, `1..5`) as a rating scale; ConfigError unless lo < hi."""
    import re

    parts = [p for p in re.split(r"\s*(?:,|\.\.|(?<=\d)-)\s*", text.strip()) if p]
    try:
        lo, hi = (float(p) for p in parts)
    except ValueError:
        raise ConfigError(f"scale {text!r}: expected LO,HI such as 1,5") from None
    if not (math.isfinite(lo) and math.isfinite(hi)) or lo >= hi:
        raise ConfigError(f"scale {text!r}: LO must be below HI")
    return lo, hi


def _on_scale(
    value: float, scale: tuple[float, float] | None
) -> tuple[float | None, dict[str, Any], str]:
    """(reward, metadata, problem): the reward a verdict's number stands for."""
    if scale is None:
        if 0.0 <= value <= 1.0:
            return value, {}, ""
        return (
            None,
            {},
            (
                f"judge's reward {value:g} is outside [0, 1] and the judge declared no scale "
                "(a rating judge declares one, e.g. grade --scale 1,5)"
            ),
        )
    lo, hi = scale
    if not lo <= value <= hi:
        return None, {}, f"judge's rating {value:g} is outside its scale {lo:g}..{hi:g}"
    return (value - lo) / (hi - lo), {"rating": value, "scale": [lo, hi]}, ""


def verdict_fields(verdict: Any, scale: tuple[float, float] | None = None) -> dict[str, Any]:
    """The row fields a verdict sets (reward, judge_status, and what else it carries)."""
    number = _number(verdict)
    if number is not None:
        reward, meta, problem = _on_scale(number, scale)
        if problem:
            return failure_fields("invalid_result", problem)
        return {"reward": reward, "judge_status": "ok", **({"extra": meta} if meta else {})}
    if isinstance(verdict, (int, float)):
        return failure_fields("invalid_result", _out_of_range(verdict))
    if not isinstance(verdict, dict):
        kind = "nothing" if verdict is None else f"a {type(verdict).__name__}"
        return failure_fields(
            "invalid_result", f"judge returned {kind}, expected a number or a dict with 'reward'"
        )
    if carried := _verdict_problem(verdict):
        return failure_fields("invalid_result", carried)
    key = "reward" if "reward" in verdict else "score" if "score" in verdict else None
    if key is None:
        return {
            "reward": None,
            "judge_status": "missing_reward",
            "reason": "judge returned a dict without 'reward' (or 'score')",
            "extra": {k: v for k, v in verdict.items() if k not in _ROW_KEYS},
        }
    raw = _number(verdict[key])
    scaled: dict[str, Any] = {}
    if raw is None:
        fields = failure_fields("invalid_result", _out_of_range(verdict[key]))
    else:
        reward, scaled, problem = _on_scale(raw, scale)
        if problem:
            fields = failure_fields("invalid_result", problem)
        else:
            fields = {"reward": reward, "judge_status": "ok"}
            if verdict.get("reason") is not None:
                fields["reason"] = str(verdict["reason"])
    markers = verdict.get("markers")
    if isinstance(markers, dict):
        fields["markers"] = markers
    if verdict.get("failure_class") is not None:
        fields["failure_class"] = verdict["failure_class"]
    extra = {k: v for k, v in verdict.items() if k not in _ROW_KEYS and k != key}
    extra.update(scaled)
    if extra:
        fields["extra"] = extra
    return fields


def _out_of_range(reward: Any) -> str:
    bounds = f"between {-MAX_SCORE:g} and {MAX_SCORE:g}"
    return f"judge's reward is not a number {bounds}: {reward!r:.80}"


def _verdict_problem(verdict: dict[str, Any]) -> str | None:
    """What in a verdict the row could not carry: markers or a failure class that break
    the row rules, or a value JSON cannot hold (a set, an object, nesting past 255)."""
    for key in ("markers", "failure_class"):
        if verdict.get(key) is not None and (problem := field_problem(key, verdict[key])):
            return f"judge's verdict: {problem}"
    try:
        orjson.dumps(verdict, option=orjson.OPT_SERIALIZE_NUMPY)
    except TypeError as exc:
        return f"judge's verdict cannot be written as JSON: {exc}"
    return None


def failure_fields(status: str, reason: str) -> dict[str, Any]:
    return {"reward": None, "judge_status": status, "reason": reason}


def error_fields(exc: BaseException) -> dict[str, Any]:
    """Map what a judge raised to the status it earns."""
    if isinstance(exc, (JudgeTimeout, TimeoutError, asyncio.TimeoutError)):
        return failure_fields("timeout", str(exc) or "judge timed out")
    if isinstance(exc, Undecided):
        return failure_fields("undecided", str(exc))
    if isinstance(exc, InvalidVerdict):
        return failure_fields("invalid_result", str(exc))
    if isinstance(exc, JudgeFailed):
        return failure_fields(exc.status, str(exc))
    text = str(exc)
    return failure_fields("error", f"{type(exc).__name__}: {text}" if text else type(exc).__name__)


def judged_row(row: dict[str, Any], judge: Judge, fields: dict[str, Any]) -> dict[str, Any]:
    """A graded copy of `row`: every input key kept, the input itself untouched."""
    out = dict(row)
    out["reward"] = fields["reward"]
    if "reason" in fields:
        out["reason"] = fields["reason"]
    elif "reason" in out:
        out["reason"] = None  # a stale reason from an earlier judge would explain the wrong grade
    out["judge_name"] = judge.name
    out["judge_status"] = fields["judge_status"]
    extra = fields.get("extra")
    if extra or judge.meta:
        meta = dict(judge.meta)
        if extra:
            meta.update(extra)
        out["judge_meta"] = meta
    else:
        out["judge_meta"] = {}
    _replace_judge_markers(out, row, judge.name, fields.get("markers") or {})
    if "failure_class" in fields:
        out["failure_class"] = fields["failure_class"]
    elif "failure_class" in out:
        out["failure_class"] = None
    return out


def is_stage_source(source: Any) -> bool:
    """A marker stamped by a stage over rows (`whileai mark`), not by a judge's verdict."""
    return isinstance(source, str) and (source == "mark" or source.startswith("mark:"))


def _replace_judge_markers(
    out: dict[str, Any], row: dict[str, Any], judge_name: str, new: dict[str, Any]
) -> None:
    """Markers know who wrote them (`marker_sources`: name -> the judge's name, or `mark`).

    A new verdict replaces every marker an earlier verdict emitted and keeps the ones a
    stage stamped. A row graded before sources were recorded has its old markers treated
    as its old judge's (there was no other writer); a row never graded keeps whatever
    markers it arrived with, since someone else put them there.
    """
    old = row.get("markers") if isinstance(row.get("markers"), dict) else None
    sources = row.get("marker_sources")
    if isinstance(sources, dict):
        kept = {k: v for k, v in (old or {}).items() if is_stage_source(sources.get(k))}
        kept_sources = {k: sources[k] for k in kept if k in sources}
    elif row.get("judge_name") is not None:
        kept, kept_sources = {}, {}
    else:
        kept, kept_sources = dict(old or {}), {}
    if not new and old is None:
        return
    kept.update(new)
    kept_sources.update({name: judge_name for name in new})
    out["markers"] = kept
    if kept_sources:
        out["marker_sources"] = kept_sources
    else:
        out.pop("marker_sources", None)


# When the row being judged on this thread (or task) must be done by, on the monotonic
# clock; None: no limit. Set by the runner, read by `check_deadline`.
_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "whileai_judge_deadline", default=None
)


def check_deadline() -> None:
    """Raise JudgeTimeout once the row's --timeout is spent. Built-in judges call it between
    steps: the only way to stop a judge that runs on the reading thread in time."""
    end = _DEADLINE.get()
    if end is not None and time.monotonic() > end:
        raise JudgeTimeout("judge ran past its --timeout")


def time_left() -> float | None:
    """Seconds left of the row's --timeout (None: no limit), for a judge that can hand a
    limit to what it calls (a pattern match with a timeout)."""
    end = _DEADLINE.get()
    return None if end is None else max(0.0, end - time.monotonic())


@contextlib.contextmanager
def deadline(timeout: float | None) -> Iterator[None]:
    """Give the judging done inside a deadline `timeout` seconds from now (None or <= 0:
    keep whatever deadline is already set, so a composite's parts share their parent's)."""
    if timeout is None or timeout <= 0:
        yield
        return
    token = _DEADLINE.set(time.monotonic() + timeout)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def _overran(timeout: float | None, started: float) -> dict[str, Any] | None:
    """Timeout fields when a verdict came back after its deadline: it no longer counts."""
    took = time.monotonic() - started
    if timeout is None or timeout <= 0 or took <= timeout:
        return None
    return failure_fields("timeout", f"judge took {took:.1f}s, over its {timeout:g}s timeout")


def judge_once(judge: Judge, row: dict[str, Any], timeout: float | None = None) -> dict[str, Any]:
    """Run a sync judge on one row and return its verdict fields; never raises. With a
    `timeout`, a verdict that takes longer is `timeout`, whatever it said."""
    started = time.monotonic()
    try:
        with deadline(timeout):
            verdict = judge.fn(row)
    except Failure as exc:  # this row's verdict is lost; the run goes on
        return error_fields(exc)
    except WhileaiError:
        raise
    except Exception as exc:
        return error_fields(exc)
    if inspect.isawaitable(verdict):
        if inspect.iscoroutine(verdict):
            verdict.close()
        return failure_fields("error", "async judge called from a sync context")
    return _overran(timeout, started) or verdict_fields(verdict, judge.scale)


async def judge_once_async(judge: Judge, row: dict[str, Any]) -> dict[str, Any]:
    """Run any judge (sync in a worker thread, or async) on one row; never raises."""
    try:
        if inspect.iscoroutinefunction(judge.fn):
            verdict = await judge.fn(row)
        elif judge.inline:
            verdict = judge.fn(row)
        else:
            verdict = await asyncio.to_thread(judge.fn, row)
        if inspect.isawaitable(verdict):
            verdict = await verdict
    except Failure as exc:  # this row's verdict is lost; the run goes on
        return error_fields(exc)
    except WhileaiError:
        raise
    except Exception as exc:
        return error_fields(exc)
    return verdict_fields(verdict, judge.scale)


class _Loop:
    """One event loop on a daemon thread: async judges share it (and its HTTP client).

    Sync judges run in its thread pool. A thread cannot be killed, so a sync judge that
    hangs past its timeout keeps its worker; the pool has a few spare workers for that,
    and a judge that hangs on every row shows up as every row timing out.
    """

    def __init__(self, workers: int) -> None:
        self.loop = asyncio.new_event_loop()
        self.pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=workers, thread_name_prefix="whileai-judge"
        )
        self.loop.set_default_executor(self.pool)
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def submit(self, coro: Any) -> concurrent.futures.Future[Any]:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=5)
        # A judge thread stuck past its timeout cannot be killed; do not wait for it.
        self.pool.shutdown(wait=False, cancel_futures=True)
        with contextlib.suppress(RuntimeError):
            self.loop.close()


def grade_rows(
    rows: Iterable[dict[str, Any]],
    judge: Judge,
    *,
    concurrency: int = 8,
    timeout: float | None = 60.0,
) -> Iterator[dict[str, Any]]:
    """Graded copies of `rows`, in input order, with at most `concurrency` in flight."""
    if judge.inline:
        try:
            for row in rows:
                yield judged_row(row, judge, judge_once(judge, row, timeout))
        finally:
            _close(judge, None)
        return
    concurrency = max(1, concurrency)
    runner = _Loop(workers=concurrency + 4)

    async def one(row: dict[str, Any]) -> dict[str, Any]:
        if timeout is None or timeout <= 0:
            return await judge_once_async(judge, row)
        # A judge that stops itself gets a grace period to say so before we give up on it.
        limit = timeout + 5.0 if judge.own_timeout else timeout
        try:
            with deadline(timeout):
                return await asyncio.wait_for(judge_once_async(judge, row), limit)
        except asyncio.TimeoutError:
            return failure_fields("timeout", f"judge took longer than {timeout:g}s")

    pending: deque[tuple[dict[str, Any], concurrent.futures.Future[Any]]] = deque()
    try:
        for row in rows:
            pending.append((row, runner.submit(one(row))))
            if len(pending) >= concurrency:
                head, fut = pending.popleft()
                yield judged_row(head, judge, fut.result())
        while pending:
            head, fut = pending.popleft()
            yield judged_row(head, judge, fut.result())
    finally:
        for _, fut in pending:
            fut.cancel()
        _close(judge, runner)
        runner.stop()


def _close(judge: Judge, runner: _Loop | None) -> None:
    if judge.aclose is not None and runner is not None:
        with contextlib.suppress(Exception):
            runner.submit(judge.aclose()).result(timeout=10)
    if judge.close is not None:
        with contextlib.suppress(Exception):
            judge.close()
