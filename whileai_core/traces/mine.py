"""What a set of traces shows, and which grid values it says to spend more on.

Every step's result is read for what the world did: a timeout, a denial, junk or a stale
copy is a fault (named by the grid's `tool_condition` it stands for); "not found",
"already done", two matches or a half-done record is a world state. Rows this toolkit
wrote also say which cell they were on (`scenario_dimensions`) and what faults fired
(`faults_fired`); those are read as they are.

A **flaw row** is a trace with an observed fault or a failing label (reward under the
0.5 line). Its **flaw signature** is the grid coordinates it pins down: the tool that
failed (the faulted tool, else the one it touched, `multi_tool` for several), the fault,
the world state, and for rows with a cell, the history and rule. `emphasis` counts, per
axis, the values the flaw signatures put forward: what `simulate --traces` aims at.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..metrics.tally import passed
from ..simulate.grid import MULTI_TOOL, UNRELATED, UNSPECIFIED, build_axes
from ..spec import Spec

AIMED_AXES = ("tool", "rule", "world_state", "tool_condition", "history")
_MODE_TO_CONDITION = {
    "timeout": "timeout",
    "permission_denied": "permission_denied",
    "malformed": "malformed_result",
    "stale": "stale_result",
}
_TIMEOUT = ("timed out", "timeout", "deadline exceeded", "unavailable", "temporarily",
            "gateway", "connection reset", "internal server error")  # fmt: skip
_DENIED = ("permission", "denied", "forbidden", "unauthori", "not permitted", "not allowed")
_MALFORMED = ("malformed", "unparseable", "invalid json", "parse error", "garbled", "<<err")


def classify(result: Any) -> tuple[str | None, str | None]:
    """(tool_condition of a fault, world_state) a tool result shows; None where it shows
    nothing."""
    if isinstance(result, str):
        low = result.lower()
        if any(w in low for w in _MALFORMED):
            return "malformed_result", None
        if any(w in low for w in ("not found", "no such", "does not exist")):
            return None, "entity missing"
        if any(w in low for w in _TIMEOUT):
            return "timeout", None
        if any(w in low for w in _DENIED):
            return "permission_denied", None
        return None, None
    if not isinstance(result, dict):
        return None, None
    status = str(result.get("status") or result.get("error_type") or "").lower()
    error = " ".join(
        str(result.get(k) or "") for k in ("error", "message", "detail", "reason")
    ).lower()
    code = result.get("code") or result.get("status_code")
    code = code if isinstance(code, int) else None
    condition: str | None = None
    if status in ("timeout", "timed_out", "deadline_exceeded", "unavailable") or (
        code is not None and code >= 500
    ) or any(w in error for w in _TIMEOUT):
        condition = "timeout"
    elif status in ("permission_denied", "forbidden", "unauthorized", "denied") or code in (
        401, 403,
    ) or any(w in error for w in _DENIED):  # fmt: skip
        condition = "permission_denied"
    elif status in ("malformed", "invalid", "parse_error") or any(w in error for w in _MALFORMED):
        condition = "malformed_result"
    elif result.get("stale") is True or status == "stale":
        condition = "stale_result"
    world: str | None = None
    data: dict[str, Any] = result["data"] if isinstance(result.get("data"), dict) else {}
    matches = result.get("matches")
    if status == "not_found" or code == 404 or "not found" in error:
        world = "entity missing"
    elif status == "already_done" or "already" in error:
        world = "entity already acted on"
    elif isinstance(matches, list) and len(matches) > 1:
        world = "duplicate entity"
    elif data.get("progress") == "partial" or data.get("pending_steps"):
        world = "partially completed"
    return condition, world


@dataclass(frozen=True)
class Observed:
    """What one trace shows."""

    tools: tuple[str, ...]
    faults: tuple[tuple[str, str], ...]  # (tool, tool_condition)
    world_states: tuple[str, ...]
    reward: float | None
    cell: dict[str, str]

    @property
    def failing(self) -> bool:
        return self.reward is not None and not passed(self.reward)

    @property
    def flaw(self) -> bool:
        return self.failing or bool(self.faults)


def observe(trace: dict[str, Any]) -> Observed:
    tools: list[str] = []
    faults: list[tuple[str, str]] = []
    worlds: list[str] = []
    for step in trace.get("steps") or []:
        if not isinstance(step, dict) or not step.get("tool"):
            continue
        tool = str(step["tool"])
        if tool not in tools:
            tools.append(tool)
        condition, world = classify(step.get("result"))
        if condition:
            faults.append((tool, condition))
        if world and world not in worlds:
            worlds.append(world)
    for fired in trace.get("faults_fired") or []:
        if isinstance(fired, dict) and fired.get("mode") in _MODE_TO_CONDITION:
            pair = (str(fired.get("tool")), _MODE_TO_CONDITION[str(fired["mode"])])
            if pair not in faults:
                faults.append(pair)
    dims = trace.get("scenario_dimensions")
    cell = {k: str(v) for k, v in dims.items() if isinstance(v, str)} if isinstance(
        dims, dict) else {}  # fmt: skip
    reward = trace.get("reward")
    score = float(reward) if isinstance(reward, (int, float)) else None
    return Observed(tuple(tools), tuple(faults), tuple(worlds), score, cell)


def flaw_signature(seen: Observed, axes: dict[str, list[str]]) -> tuple[tuple[str, str], ...]:
    """The grid coordinates a flaw row pins down, as sorted (axis, value) pairs; only
    values the grid has."""
    sig: dict[str, str] = {}
    faulted = list(dict.fromkeys(t for t, _ in seen.faults))
    tool = None
    if len(faulted) == 1:
        tool = faulted[0]
    elif seen.cell.get("tool"):
        tool = seen.cell["tool"]
    elif faulted or len(seen.tools) > 1:
        tool = MULTI_TOOL
    elif seen.tools:
        tool = seen.tools[0]
    if tool in axes["tool"]:
        sig["tool"] = tool
    if seen.faults:
        sig["tool_condition"] = Counter(c for _, c in seen.faults).most_common(1)[0][0]
    elif "tool_condition" in seen.cell:
        sig["tool_condition"] = seen.cell["tool_condition"]
    world = seen.world_states[0] if seen.world_states else seen.cell.get("world_state")
    if world:
        sig["world_state"] = world
    for axis in ("history", "rule"):
        if axis in seen.cell:
            sig[axis] = seen.cell[axis]
    if sig.get("tool") == UNRELATED:  # an unrelated ask meets a plain world
        sig = {"tool": UNRELATED, **{k: v for k, v in sig.items() if k in ("history", "rule")}}
    return tuple(sorted((k, v) for k, v in sig.items() if v in axes.get(k, ())))


@dataclass
class Mined:
    """The counts behind a trace report; `flaw_rows` are the traces worth simulating more of."""

    traces: int = 0
    graded: int = 0
    failing: int = 0
    tools: Counter[str] = field(default_factory=Counter)
    faults: Counter[str] = field(default_factory=Counter)
    world_states: Counter[str] = field(default_factory=Counter)
    unknown_tools: Counter[str] = field(default_factory=Counter)
    signatures: Counter[tuple[tuple[str, str], ...]] = field(default_factory=Counter)
    flaw_rows: list[dict[str, Any]] = field(default_factory=list)
    flaw_signatures: list[tuple[tuple[str, str], ...]] = field(default_factory=list)

    def emphasis(self) -> dict[str, dict[str, int]]:
        """Per axis, how many flaw rows put each value forward."""
        out: dict[str, Counter[str]] = {}
        for sig, n in self.signatures.items():
            for axis, value in sig:
                out.setdefault(axis, Counter())[value] += n
        return {a: dict(out[a].most_common()) for a in AIMED_AXES if a in out}


def mine_traces(traces: Iterable[dict[str, Any]], spec: Spec | None = None) -> Mined:
    """What the traces show, against `spec`'s grid when given (else their own tools).
    Traces in any shape `load_traces` reads; rows it would drop are skipped."""
    from .load import normal_trace

    traces = [t for t in (normal_trace(raw)[0] for raw in traces) if t is not None]
    names = [t.name for t in spec.tools] if spec is not None else None
    mined = Mined()
    seen_list = [observe(t) for t in traces]
    if names is None:
        names = sorted({tool for s in seen_list for tool in s.tools})
    axes = axes_for(spec, names)
    for trace, seen in zip(traces, seen_list, strict=True):
        mined.traces += 1
        mined.graded += seen.reward is not None
        mined.failing += seen.failing
        mined.tools.update(seen.tools)
        mined.unknown_tools.update(t for t in seen.tools if t not in names)
        mined.faults.update(f"{tool}:{condition}" for tool, condition in seen.faults)
        mined.world_states.update(seen.world_states)
        if seen.flaw:
            sig = flaw_signature(seen, axes)
            mined.flaw_rows.append(trace)
            mined.flaw_signatures.append(sig)
            if sig:
                mined.signatures[sig] += 1
    return mined


def axes_for(spec: Spec | None, names: list[str]) -> dict[str, list[str]]:
    """The grid's axes for `spec`, or for tools known only by name (traces, no spec)."""
    if spec is not None:
        return build_axes(spec)
    tools = [*names, UNRELATED] + ([MULTI_TOOL] if len(names) > 1 else [])
    return {"tool": tools, "rule": [UNSPECIFIED], **{
        k: v for k, v in build_axes(_EMPTY).items() if k not in ("tool", "rule")}}  # fmt: skip


_EMPTY = Spec(name="-", tools=[])


@dataclass
class TraceReport:
    """What `whileai traces report` prints: read it before spending a budget."""

    source: str
    read: int
    kept: int
    dropped: dict[str, int]
    graded: int
    ungraded: int
    failing: int
    flaw_rows: int
    tools: dict[str, int]
    faults: dict[str, int]
    world_states: dict[str, int]
    unknown_tools: list[str]
    untouched_tools: list[str]
    emphasis: dict[str, dict[str, int]]
    signatures: list[dict[str, Any]]

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    def lines(self) -> list[str]:
        def counts(d: dict[str, int]) -> str:
            return ", ".join(f"{k} {v}" for k, v in d.items()) or "none"

        dropped = sum(self.dropped.values())
        out = [
            f"traces: {self.kept} of {self.read} read from {self.source}"
            + (f" ({dropped} dropped: {counts(self.dropped)})" if dropped else ""),
            f"graded {self.graded}, ungraded {self.ungraded}; failing {self.failing}; "
            f"flaw rows (a fault or a failing label) {self.flaw_rows}",
            f"tools observed: {counts(self.tools)}",
            f"faults observed: {counts(self.faults)}",
            f"world states observed: {counts(self.world_states)}",
        ]
        if self.unknown_tools:
            out.append(f"tools the spec does not have: {', '.join(self.unknown_tools)}")
        if self.untouched_tools:
            out.append(
                f"tools no trace touched (--no-broaden drops them): "
                f"{', '.join(self.untouched_tools)}"
            )
        if not self.emphasis:
            out.append("emphasis: none (no flaw row): the grid stays as a cold run draws it")
        for axis, values in self.emphasis.items():
            out.append(f"emphasis {axis}: {counts(values)}")
        return out


def trace_report(
    traces: Sequence[dict[str, Any]],
    spec: Spec | None = None,
    *,
    source: str = "traces",
    read: int | None = None,
    dropped: dict[str, int] | None = None,
) -> TraceReport:
    """Traces in, rows dropped, tools and faults observed, graded/ungraded, and the exact
    axis values these traces move forward in the grid (`emphasis`)."""
    mined = mine_traces(traces, spec)
    names = [t.name for t in spec.tools] if spec is not None else sorted(mined.tools)
    return TraceReport(
        source=source,
        read=read if read is not None else len(traces),
        kept=len(traces),
        dropped=dict(dropped or {}),
        graded=mined.graded,
        ungraded=mined.traces - mined.graded,
        failing=mined.failing,
        flaw_rows=len(mined.flaw_rows),
        tools=dict(mined.tools.most_common()),
        faults=dict(mined.faults.most_common()),
        world_states=dict(mined.world_states.most_common()),
        unknown_tools=sorted(mined.unknown_tools),
        untouched_tools=[n for n in names if n not in mined.tools],
        emphasis=mined.emphasis(),
        signatures=[{"rows": n, **dict(sig)} for sig, n in mined.signatures.most_common(20)],
    )


def report_traces(
    source: str, spec_ref: str | None = None, *, since: str | None = None
) -> TraceReport:
    """`whileai traces report`: load `source`, mine it against the spec when given."""
    from ..spec import load_spec
    from .load import load_traces

    spec = load_spec(spec_ref) if spec_ref else None
    loaded = load_traces(source, since=since)
    return trace_report(
        loaded.traces, spec, source=source, read=loaded.read, dropped=dict(loaded.dropped)
    )
