"""The simulation engine: an asyncio scheduler that spends a row budget on the right rollouts.

Work comes in asks (one situation phrased one way, identified by `scenario_id`); each ask
gets up to k rollouts. explore = 1 phrasing x 1 rollout per situation, sft = several
phrasings x 1, rl = 1 phrasing probed with two rollouts and filled to k only where they
split, adaptive = 2 phrasings x up to 4 rollouts with the same probe. A unanimous probe
earns one more rollout only while the measured chance it splits beats what a fresh ask
offers per rollout. Rows of a group are written when the group is settled, so a killed
run never leaves a group half-written; `--resume` skips every ask already in the file.

Reproducibility: every random choice is seeded from (run seed, scenario_id, rollout index).
With `reproducible` the scheduler runs in rounds of ROUND_WIDTH rollouts (decide a round,
run it, read results in launch order) whatever the concurrency, which only bounds how many
of a round run at once: so output is byte-identical at any concurrency.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..agents.base import Agent, AgentError, Episode, RolloutResult, ToolWorld, Writer
from ..errors import Failure, PersonDropped, WhileaiError
from ..metrics.tally import passed
from ..spec import Spec
from ..text.similarity import SimilarityIndex
from .allocation import Allocation, distinct
from .config import MODE_SHAPE, MODES, Report, SimulateConfig
from .execute import CurrentRollout, enter_rollout
from .grid import Grid, build_grid, seed_int
from .novelty import NearDuplicateFilter
from .openers import Openers, SourceCopy
from .rowmake import RowContext, behavior_signature, build_row
from .saturation import Saturation
from .tasks import GridTasks, TaskSource
from .world import World

if TYPE_CHECKING:
    # The judges package is imported only by runs that grade as they go.
    from ..judges.contract import Judge

#: Rollouts per round under `reproducible`. Fixed, not --concurrency: the rows a round
#: decides on must not depend on how many of its rollouts happen to run side by side.
ROUND_WIDTH = 64

__all__ = ["MODES", "MODE_SHAPE", "Engine", "Report", "SimulateConfig", "behavior_signature"]


@dataclass
class _Ask:
    index: int
    situation: dict[str, Any]
    k: int
    probe: int
    opener: asyncio.Future[tuple[str, str]] | None = None
    launched: int = 0
    finished: int = 0
    target: int = 0
    state: str = "probing"  # probing | filling | stopped | final
    rows: list[dict[str, Any]] = field(default_factory=list)
    verdicts: list[Any] = field(default_factory=list)
    reasons: dict[int, str] = field(default_factory=dict)
    probe_scored: bool = False
    place: int = -1  # where it stands in the scheduler's open list (append order)


def _launchable(ask: _Ask) -> bool:
    return ask.state in ("probing", "filling") and ask.launched < ask.target


@dataclass
class _Unit:
    ask: _Ask
    rollout_index: int
    seq: int


@dataclass
class _Outcome:
    unit: _Unit
    row: dict[str, Any] | None
    verdict: Any = None
    error: str | None = None
    dropped: bool = False  # its opener near-copied a source trace: not a failure
    person: str | None = None  # the simulated person broke role past every redraw (why)


class Engine:
    """One run. `sink` receives each finished row (in group order); `progress(rows, budget)`."""

    def __init__(
        self,
        spec: Spec,
        agent: Agent,
        writer: Writer,
        config: SimulateConfig,
        *,
        sink: Callable[[dict[str, Any]], None],
        done: dict[str, list[dict[str, Any]]] | None = None,
        execute_world: ToolWorld | None = None,
        grader: Judge | None = None,
        progress: Callable[[int, int], None] | None = None,
        grid: Grid | None = None,
        tasks: TaskSource | None = None,
        sources: SimilarityIndex | None = None,
        replay_openers: bool = False,
    ) -> None:
        config.check()
        self.spec = spec
        self.agent = agent
        self.writer = writer
        self.config = config
        self.sink = sink
        self.done = done or {}
        self.execute_world = execute_world
        self.grader = grader
        self.progress = progress
        self.grid = grid or build_grid(spec)
        self.tasks: TaskSource = tasks or GridTasks(spec, self.grid, fault_rate=config.fault_rate)
        self.tasks_left = True
        self.n, self.k = config.shape
        self.probe = min(config.probe, self.k)
        self.max_asks = config.situations * self.n if config.situations else None
        self.filter = NearDuplicateFilter(seed=config.seed)
        self.report = Report(mode=config.mode, budget=config.budget, cells=self.tasks.cells)
        self.report.agent = agent.name
        self.report.writer = writer.name
        self.openers = Openers(writer, self.filter, self.report, config.seed, sources)
        # A shard replays the openers of the asks other shards own (offline writers only), so
        # its near-duplicate filter holds what the whole run's does; their tallies go nowhere.
        self._replay = (
            Openers(writer, self.filter, Report(mode=config.mode, budget=0), config.seed, sources)
            if replay_openers
            else None
        )
        self.open: list[_Ask] = []
        # The open asks that may have a rollout to launch, by their place in `open`: the
        # next unit is the first of them that has, as a scan of `open` would find, without
        # walking every ask waiting on its rollouts (hundreds at high concurrency).
        # Entries are (place, push count, ask): a second entry for one place is harmless.
        self._ready: list[tuple[int, int, _Ask]] = []
        self._places = self._pushes = 0
        self._chain: asyncio.Future[Any] | None = None
        self.stopped: list[_Ask] = []
        self.asks_opened = 0
        self.rows_done = 0
        self.inflight = 0
        self.lost = 0
        self.seq = 0
        self.stopping: str | None = None
        self._situations: set[str] = set()
        self.saturation = Saturation(self.tasks.cells)
        self.allocation = Allocation(self.probe)
        self._statuses = (spec.raw.get("world") or {}).get("statuses") if spec.raw else None
        self._lineage = {
            "system_prompt_sha": spec.policy_sha,
            "system_prompt_head": spec.policy[:120],
            "system_prompt_chars": len(spec.policy),
        }
        self._ctx = RowContext(
            agent_name=agent.name,
            writer_name=writer.name,
            policy_sha=spec.policy_sha,
            lineage=self._lineage,
            seed=config.seed,
            cells=self.tasks.cells,
            embedder=self.filter.embedder.name,
            external_world=execute_world is not None,
        )

    # -- planning --------------------------------------------------------------------------

    def _budget_left(self) -> int:
        return self.config.budget - self.rows_done - self.inflight

    def _next_unit(self) -> _Unit | None:
        if self.stopping or self._budget_left() <= 0:
            return None
        ready = self._ready
        while ready:
            place, _, ask = ready[0]
            if place == ask.place and _launchable(ask):
                return self._unit(ask)
            heapq.heappop(ready)
        while self.tasks_left and (self.max_asks is None or self.asks_opened < self.max_asks):
            fresh = self._open_ask()
            if fresh is not None:
                return self._unit(fresh)
            if self.stopping or self._budget_left() <= 0:
                return None
        # Nothing fresh left: resume unanimous groups and finish them.
        while self.stopped:
            ask = self.stopped.pop(0)
            if ask.launched < ask.k:
                self._tally_group(ask, cut=False, sign=-1)
                ask.state, ask.target = "filling", ask.k
                ask.reasons[ask.launched] = "rl resume: nothing fresh left to open"
                self._enter(ask)
                return self._unit(ask)
        return None

    def _unit(self, ask: _Ask) -> _Unit:
        unit = _Unit(ask=ask, rollout_index=ask.launched, seq=self.seq)
        ask.launched += 1
        self.seq += 1
        self.inflight += 1
        return unit

    def _open_ask(self) -> _Ask | None:
        """Open the next ask; an ask already in the output (resume) is replayed, not rerun."""
        index = self.asks_opened
        situation = self.tasks.situation(index, self.n)
        self._replay_passed_over()
        if situation is None:
            self.tasks_left = False
            return None
        self.asks_opened += 1
        k = self.k
        ask = _Ask(index=index, situation=situation, k=k, probe=min(self.probe, k))
        if self.config.repeat_policy == "fixed" and k > 1:
            ask.state, ask.target = "filling", k
            ask.reasons[0] = f"fixed: {k} rollouts for every ask"
        else:
            ask.target = ask.probe if k > 1 else 1
        stored = self.done.get(situation["scenario_id"])
        if stored:
            prompt = stored[0].get("prompt")
            if isinstance(prompt, str):
                self._chain = asyncio.ensure_future(self.openers.remember(prompt, self._chain))
            take = stored[: max(0, self.config.budget - self.rows_done)]
            self.rows_done += len(take)
            self.report.resumed_rows += len(take)
            ask.rows = []
            ask.verdicts = [r.get("behavior_signature") for r in take]
            ask.launched = ask.finished = len(take)
            ask.state = "final"
            if k > 1 and len(take) >= ask.probe:  # the allocation learns from it too
                self.allocation.replay(ask.verdicts)
            for row in take:
                self._account(row, emitted=False)
            self._tally_group(ask, cut=bool(take and take[0].get("group_cut")))
            return None
        ask.opener = asyncio.ensure_future(self.openers.write(ask.situation, self._chain))
        self._chain = ask.opener
        self._enter(ask)
        return ask

    def _enter(self, ask: _Ask) -> None:
        """Put `ask` at the end of `open`, and on the ready heap at that place (an entry
        for an earlier place is stale and is dropped when it comes up)."""
        self.open.append(ask)
        ask.place, self._places = self._places, self._places + 1
        self._push(ask)

    def _push(self, ask: _Ask) -> None:
        """`ask` may have rollouts to launch (it entered `open`, or its target was raised)."""
        heapq.heappush(self._ready, (ask.place, self._pushes, ask))
        self._pushes += 1

    def _replay_passed_over(self) -> None:
        """Chain the openers of asks a shard's source passed over (other shards' asks)."""
        passed_over = getattr(self.tasks, "passed_over", None)
        if passed_over is None:
            return
        for situation in passed_over():
            if self._replay is not None:
                self._chain = asyncio.ensure_future(self._passed_opener(situation, self._chain))

    async def _passed_opener(
        self, situation: dict[str, Any], before: asyncio.Future[Any] | None
    ) -> None:
        assert self._replay is not None
        # The shard that owns it drops a source copy; here only the filter state matters.
        with contextlib.suppress(SourceCopy):
            await self._replay.write(situation, before)

    # -- results ---------------------------------------------------------------------------

    def _settle(self, out: _Outcome) -> None:
        ask = out.unit.ask
        self.inflight -= 1
        ask.finished += 1
        if out.row is not None:
            self.rows_done += 1
            ask.rows.append(out.row)
            ask.verdicts.append(out.verdict)
            self._account(out.row, emitted=True)
        elif out.dropped:
            self.report.source_copies_dropped += 1
            if self.report.source_copies_dropped >= max(16, 2 * self.config.budget):
                self.stopping = self.stopping or "source_copies"
        elif out.person is not None:
            self.report.person_dropped += 1
            if self.report.person_dropped >= max(16, 2 * self.config.budget):
                self.stopping = self.stopping or "person_dropped"
        else:
            self.lost += 1
            self.report.agent_errors += 1
            if self.report.first_error is None:
                self.report.first_error = out.error
            if self.lost >= max(16, 2 * self.config.budget):
                self.stopping = self.stopping or "agent_failed"
        if self.progress is not None:
            self.progress(self.rows_done, self.config.budget)
        if ask.finished < ask.launched or ask.launched < ask.target:
            return
        self._decide(ask)

    def _decide(self, ask: _Ask) -> None:
        probing = ask.state == "probing"
        first_look = probing and not ask.probe_scored
        ask.probe_scored = ask.probe_scored or probing
        decision = self.allocation.decide(
            ask.verdicts, launched=ask.launched, k=ask.k, probing=probing, first_look=first_look
        )
        if decision.action in ("fill", "extend"):
            if decision.action == "fill":
                ask.state = "filling"
            ask.target = decision.target
            ask.reasons[ask.launched] = decision.reason
            self._push(ask)
            return
        if decision.action == "stop":
            ask.state = "stopped"
            self._flush(ask, final=False)
            return
        self._flush(ask, final=True)

    def _flush(self, ask: _Ask, *, final: bool, cut: bool = False) -> None:
        rows = sorted(ask.rows, key=lambda r: r["rollout_index"])
        for row in rows:
            if cut:
                row["group_cut"] = True
            self.sink(row)
        ask.rows = []
        if final or cut:
            ask.state = "final"
            if ask in self.open:
                self.open.remove(ask)
            self._tally_group(ask, cut=cut)
        elif ask.state == "stopped":
            self.open.remove(ask)
            self.stopped.append(ask)
            self._tally_group(ask, cut=False)

    def _tally_group(self, ask: _Ask, *, cut: bool, sign: int = 1) -> None:
        if ask.k == 1 or not ask.verdicts:
            return
        self.report.count_group(
            k=ask.k, n=len(ask.verdicts), mixed=distinct(ask.verdicts) > 1, cut=cut,
            stopped=ask.state == "stopped", sign=sign,
        )  # fmt: skip

    def _account(self, row: dict[str, Any], *, emitted: bool) -> None:
        self._situations.add(str(row.get("situation_id") or row.get("scenario_id")))
        self.report.count_row(row)
        if self.config.until != "saturation":
            return
        self.saturation.see(row)
        if emitted and self.saturation.reached():
            self.stopping = self.stopping or "saturation"

    # -- one rollout -----------------------------------------------------------------------

    async def _bounded(self, unit: _Unit, running: asyncio.Semaphore) -> _Outcome:
        async with running:
            return await self._rollout(unit)

    async def _rollout(self, unit: _Unit) -> _Outcome:
        ask = unit.ask
        assert ask.opener is not None
        try:
            prompt, novelty = await ask.opener
        except SourceCopy:
            return _Outcome(unit, None, dropped=True)
        except PersonDropped as exc:  # no opener stayed in role: the ask is lost, counted
            return _Outcome(unit, None, person=exc.reason)
        situation = ask.situation
        seed = seed_int(self.config.seed, situation["scenario_id"], unit.rollout_index)
        playing = CurrentRollout(prompt, unit.rollout_index, situation["scenario_id"])
        enter_rollout(playing)
        world: ToolWorld
        if self.execute_world is not None:
            bind = getattr(self.execute_world, "for_rollout", None)
            world = bind(playing) if bind is not None else self.execute_world
        else:
            world = World.for_situation(
                self.spec.tools, situation, seed=seed, statuses=self._statuses
            )
        privileged = {
            "hidden_state": situation["hidden_state"],
            "reference": situation["reference"],
        }
        episode = Episode(
            spec=self.spec,
            prompt=prompt,
            scenario_id=situation["scenario_id"],
            rollout_index=unit.rollout_index,
            world=world,
            seed=seed,
            cell={**situation["world"], **situation["human"]},
            privileged=privileged,
            user=self.writer.user(situation, seed),
            max_turns=self.config.avg_turns,
        )
        try:
            result = await self.agent.run(episode)
            if not isinstance(result, RolloutResult):
                raise AgentError(
                    f"agent {self.agent.name} returned {type(result).__name__}, not a RolloutResult"
                )
        except PersonDropped as exc:
            return _Outcome(unit, None, person=exc.reason)
        except AgentError as exc:
            return _Outcome(unit, None, error=str(exc))
        except Failure as exc:  # e.g. a model call that failed for good: this rollout only
            return _Outcome(unit, None, error=f"{type(exc).__name__}: {exc}")
        except WhileaiError:
            raise
        except Exception as exc:
            return _Outcome(unit, None, error=f"{type(exc).__name__}: {exc}")
        dropped = getattr(episode.user, "dropped", None)
        if dropped:  # an agent that swallowed the drop still loses the rollout
            return _Outcome(unit, None, person=str(dropped))
        reason = ask.reasons.get(unit.rollout_index) or (
            "rl probe" if self.k > 1 else f"{self.config.mode}: new ask"
        )
        row = build_row(
            self._ctx, episode, situation, result, world, prompt, f"{reason}; {novelty}"
        )
        verdict: Any = row["behavior_signature"]
        if self.grader is not None:
            row, verdict = await self._grade(row)
        return _Outcome(unit, row, verdict=verdict)

    async def _grade(self, row: dict[str, Any]) -> tuple[dict[str, Any], Any]:
        """Judge a fresh row under the one judge contract; the row carries the verdict and
        the allocation reads it. A broken verdict falls back to the behaviour signature."""
        from ..judges.contract import judge_once_async, judged_row

        assert self.grader is not None
        fields = await judge_once_async(self.grader, row)
        graded = judged_row(row, self.grader, fields)
        reward = fields.get("reward")
        if fields.get("judge_status") != "ok" or reward is None:
            self.report.grader_errors += 1
            return graded, row["behavior_signature"]
        return graded, passed(float(reward))

    # -- the loop --------------------------------------------------------------------------

    async def run(self) -> Report:
        # Sync agents and graders run in threads: give every concurrent rollout one, not the
        # default handful (min(32, cpus + 4)), so slow callables overlap as asked.
        asyncio.get_running_loop().set_default_executor(
            ThreadPoolExecutor(max_workers=self.config.concurrency, thread_name_prefix="rollout")
        )
        started = time.monotonic()
        deadline = started + self.config.time_budget if self.config.time_budget else None
        tasks: dict[asyncio.Task[_Outcome], _Unit] = {}
        width = ROUND_WIDTH if self.config.reproducible else self.config.concurrency
        running = asyncio.Semaphore(self.config.concurrency)
        grace_ends: float | None = None
        # Finished rollouts arrive here through a done callback each, instead of
        # `asyncio.wait(set(tasks))` per wake-up: that registered and removed a callback on
        # every task in flight each time one finished, work quadratic in --concurrency
        # (at 256 it cost more CPU than the model calls themselves).
        done: list[asyncio.Task[_Outcome]] = []
        wake = asyncio.Event()

        def arrived(task: asyncio.Task[_Outcome]) -> None:
            done.append(task)
            wake.set()

        try:
            while True:
                if deadline is not None and time.monotonic() >= deadline:
                    self.stopping = self.stopping or "time_budget"
                if self.stopping and grace_ends is None:
                    grace_ends = time.monotonic() + self.config.stop_grace
                while len(tasks) < width:
                    unit = self._next_unit()
                    if unit is None:
                        break
                    task = asyncio.ensure_future(self._bounded(unit, running))
                    task.add_done_callback(arrived)
                    tasks[task] = unit
                if not tasks:
                    break
                if self.config.reproducible:
                    timeout = None
                    when = asyncio.ALL_COMPLETED
                else:
                    timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
                    when = asyncio.FIRST_COMPLETED
                if grace_ends is not None:
                    # Stopping: the rollouts in flight get one grace period, then are cancelled.
                    timeout = max(0.0, grace_ends - time.monotonic())
                    when = asyncio.ALL_COMPLETED
                await _arrivals(done, wake, len(tasks), timeout=timeout, every=when)
                finished = done[:]
                done.clear()
                if (
                    grace_ends is not None
                    and time.monotonic() >= grace_ends
                    and len(finished) < len(tasks)
                ):
                    for task in sorted(finished, key=lambda t: tasks[t].seq):
                        tasks.pop(task)
                        self._settle(task.result())
                    self.report.rollouts_abandoned += len(tasks)
                    for task in tasks:
                        task.cancel()
                    await asyncio.gather(*tasks, return_exceptions=True)
                    self.inflight = 0
                    tasks.clear()
                    break
                for task in sorted(finished, key=lambda t: tasks[t].seq):
                    tasks.pop(task)
                    self._settle(task.result())
        finally:
            for task in tasks:
                task.cancel()
            for ask in list(self.open):
                if ask.opener is not None and not ask.opener.done():
                    ask.opener.cancel()
        for ask in list(self.open):
            if ask.rows:
                short = ask.k > 1 and ask.state in ("probing", "filling")
                self._flush(ask, final=True, cut=short)
        elapsed = time.monotonic() - started
        report = self.report
        if self.stopping:
            report.stopped = self.stopping
        elif not self.tasks_left and not self.stopped:
            report.stopped = self.tasks.done_reason  # every ask drawn and played out
        elif self.rows_done >= self.config.budget:
            report.stopped = "budget"
        else:
            report.stopped = "exhausted"
        report.rows = self.rows_done
        report.situations = len(self._situations)
        report.asks = self.asks_opened
        person_stats = getattr(self.writer, "person_stats", None)
        if callable(person_stats):
            report.person = person_stats()
        report.cells_visited = self.tasks.cells_visited(self.asks_opened, self.n)
        if self.config.until == "saturation":
            report.saturation = self.saturation.describe()
        report.tasks = self.tasks.describe()
        report.elapsed = round(elapsed, 3)
        report.rows_per_s = (
            round((self.rows_done - report.resumed_rows) / elapsed, 1) if elapsed else 0.0
        )
        return report


async def _arrivals(
    done: list[asyncio.Task[_Outcome]],
    wake: asyncio.Event,
    inflight: int,
    *,
    timeout: float | None,
    every: str,
) -> None:
    """Wait as `asyncio.wait(tasks, timeout, return_when=every)` would, reading finished
    tasks off `done` (filled by their done callbacks): until one has finished
    (FIRST_COMPLETED) or all `inflight` have (ALL_COMPLETED), or `timeout` passes."""
    loop = asyncio.get_running_loop()
    need = 1 if every == asyncio.FIRST_COMPLETED else inflight
    end = None if timeout is None else loop.time() + timeout
    while len(done) < need:
        wake.clear()
        if end is None:
            await wake.wait()
            continue
        left = end - loop.time()
        if left <= 0:
            return
        try:
            await asyncio.wait_for(wake.wait(), left)
        except asyncio.TimeoutError:
            return
