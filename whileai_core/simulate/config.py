"""What a simulate run is asked to do (`SimulateConfig`) and what it reports (`Report`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigError

MODES = ("explore", "sft", "rl", "adaptive")
REPEAT_POLICIES = ("adaptive", "fixed")
# (phrasings per situation, rollouts per phrasing) when the flags leave them unset.
MODE_SHAPE = {"explore": (1, 1), "sft": (3, 1), "rl": (1, 8), "adaptive": (2, 4)}


@dataclass
class SimulateConfig:
    mode: str = "explore"
    budget: int = 1000
    time_budget: float | None = None
    situations: int | None = None
    phrasings: int | None = None
    repeats: int | None = None
    fault_rate: float = 1.0
    concurrency: int = 32
    seed: int = 0
    reproducible: bool = False
    until: str = "compute"
    avg_turns: int = 12
    probe: int = 2
    stop_grace: float = 5.0
    # adaptive: probe, fill only the groups that split; fixed: k rollouts for every ask.
    repeat_policy: str = "adaptive"
    # False: no --budget was given, so a pinned task set (--tasks) sets it to what it needs.
    budget_given: bool = True

    def check(self) -> None:
        if self.mode not in MODES:
            raise ConfigError(f"--mode must be one of {', '.join(MODES)}, not {self.mode!r}")
        if self.budget < 1:
            raise ConfigError("--budget must be at least 1")
        if self.concurrency < 1:
            raise ConfigError("--concurrency must be at least 1")
        if self.until not in ("compute", "saturation"):
            raise ConfigError("--until must be 'compute' or 'saturation'")
        if not 0.0 <= self.fault_rate <= 1.0:
            raise ConfigError("--fault-rate must be between 0 and 1")
        for name in ("situations", "phrasings", "repeats"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise ConfigError(f"--{name} must be at least 1")
        if self.avg_turns < 2:
            raise ConfigError("--avg-turns must be at least 2")
        if self.probe < 1:
            raise ConfigError("--probe must be at least 1")
        if self.stop_grace < 0:
            raise ConfigError("--stop-grace must not be negative")
        if self.repeat_policy not in REPEAT_POLICIES:
            raise ConfigError(
                f"--repeat-policy must be one of {', '.join(REPEAT_POLICIES)}, "
                f"not {self.repeat_policy!r}"
            )

    @property
    def shape(self) -> tuple[int, int]:
        n, k = MODE_SHAPE[self.mode]
        return self.phrasings or n, self.repeats or k


# Every group of k > 1 is one of mixed / unanimous / cut (short of k at the stop), and one
# of complete (k rollouts) / partial; `stopped` are the unanimous groups the allocation
# stopped before k, `rollouts_saved` the rollouts a fixed k would have spent on them.
GROUP_KEYS = ("mixed", "unanimous", "cut", "stopped", "complete", "partial", "rollouts_saved")


@dataclass
class Report:
    """What a run did, for stderr and `--report FILE`."""

    mode: str
    budget: int
    rows: int = 0
    resumed_rows: int = 0
    situations: int = 0
    asks: int = 0
    groups: dict[str, int] = field(default_factory=lambda: dict.fromkeys(GROUP_KEYS, 0))
    faults_fired: dict[str, int] = field(default_factory=dict)
    seeded: dict[str, int] = field(default_factory=dict)
    agent_errors: int = 0
    first_error: str | None = None
    grader_errors: int = 0
    near_duplicates_rejected: int = 0
    # Runs aimed by traces: openers redrawn because they near-copied a source trace, and
    # rollouts dropped because every draft of their opener did.
    source_copies_redrawn: int = 0
    source_copies_dropped: int = 0
    # Rollouts dropped because the simulated person broke role on every redraw of a turn
    # (the reasons are in `person`, as dropped_<check>).
    person_dropped: int = 0
    rollouts_abandoned: int = 0
    cells: int = 0
    cells_visited: int = 0
    elapsed: float = 0.0
    rows_per_s: float = 0.0
    stopped: str = "budget"
    agent: str = ""
    writer: str = ""
    # Where the asks came from (the grid, traces' aim, a pinned task set) and how many.
    tasks: dict[str, Any] = field(default_factory=dict)
    # A run aimed by traces: what they were and what they put forward (trace_report).
    traces: dict[str, Any] = field(default_factory=dict)
    # How the simulated person answered and how conversations ended (the writer's tally;
    # a model writer adds its redraws).
    person: dict[str, Any] = field(default_factory=dict)
    # Model traffic by role and model label ("agent m", "writer m"): calls, retries,
    # failures by kind, cache hits, tokens, replies stripped of template scaffolding.
    models: dict[str, Any] = field(default_factory=dict)
    # A run played as shards on an executor: which, where, the shards skipped as complete
    # and what each reported. Empty (and left out of `as_dict`) for a run in one process.
    shards: dict[str, Any] = field(default_factory=dict)
    # --until saturation: what the rows showed and how much of it the last window added.
    saturation: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        out = dict(self.__dict__)
        if not self.shards:
            del out["shards"]
        return out

    def count_row(self, row: dict[str, Any]) -> None:
        """Tally what a finished (or resumed) row shows: faults fired, seeded behaviours."""
        for fired in row.get("faults_fired") or []:
            mode = str(fired.get("mode"))
            self.faults_fired[mode] = self.faults_fired.get(mode, 0) + 1
        seeded = row.get("seeded")
        if isinstance(seeded, list):
            for label in seeded or ["(clean)"]:
                self.seeded[label] = self.seeded.get(label, 0) + 1

    def count_group(
        self, *, k: int, n: int, mixed: bool, cut: bool, stopped: bool, sign: int = 1
    ) -> None:
        """Tally a settled group (`sign=-1` takes a tally back: a stopped group resumed)."""
        g = self.groups
        g["cut" if cut else "mixed" if mixed else "unanimous"] += sign
        g["complete" if n >= k else "partial"] += sign
        if stopped:
            g["stopped"] += sign
            g["rollouts_saved"] += sign * (k - n)

    def lines(self) -> list[str]:
        faults = ", ".join(f"{k} {v}" for k, v in sorted(self.faults_fired.items())) or "none"
        seeded = ", ".join(f"{k} {v}" for k, v in sorted(self.seeded.items())) or "none"
        g = self.groups
        out = [
            f"rows {self.rows} (resumed {self.resumed_rows}) of budget {self.budget}, "
            f"mode {self.mode}, agent {self.agent}, writer {self.writer}",
            f"situations {self.situations}, asks {self.asks}, cells visited "
            f"{self.cells_visited}/{self.cells}",
            f"groups: mixed {g['mixed']}, unanimous {g['unanimous']}, cut {g['cut']}; "
            f"complete {g['complete']}, partial {g['partial']}, stopped {g['stopped']} "
            f"(rollouts saved {g['rollouts_saved']})",
            f"faults fired: {faults}",
            f"seeded behaviours: {seeded}",
            f"agent errors: {self.agent_errors}"
            + (f" (first: {self.first_error})" if self.first_error else ""),
            f"elapsed {self.elapsed:.2f}s, {self.rows_per_s:.0f} rows/s, stopped: {self.stopped}",
        ]
        if self.grader_errors:
            out.append(f"grader errors: {self.grader_errors}")
        if self.source_copies_redrawn or self.source_copies_dropped:
            out.append(
                f"near copies of source traces: {self.source_copies_redrawn} openers redrawn, "
                f"{self.source_copies_dropped} rollouts dropped"
            )
        if self.traces:
            emphasis = "; ".join(
                f"{axis} " + ", ".join(f"{v} {n}" for v, n in values.items())
                for axis, values in self.traces.get("emphasis", {}).items()
            )
            out.append(
                f"aimed by {self.traces.get('kept', 0)} traces "
                f"({self.traces.get('flaw_rows', 0)} flaw rows): {emphasis or 'no emphasis'}"
            )
        if self.person or self.person_dropped:
            out.extend(person_lines(self.person, self.person_dropped))
        if self.rollouts_abandoned:
            out.append(f"rollouts abandoned at the stop: {self.rollouts_abandoned}")
        if self.saturation:
            sat = self.saturation
            out.append(
                f"saturation: {sat['new_trails_in_window']} new behaviours in the last "
                f"{sat['window']} rows (stops below {sat['rate'] * sat['window']:g}); "
                f"{sat['cells_seen']} cells, {sat['pairs_seen']} axis pairs, "
                f"{sat['trails_seen']} behaviours seen"
            )
        for label, m in self.models.items():
            errors = ", ".join(f"{k} {v}" for k, v in m["errors"].items()) or "none"
            stripped = m.get("scaffolding_stripped") or 0
            out.append(
                f"model {label}: {m['calls']} calls ({m['cache_hits']} cached), "
                f"{m['retries']} retries, {m['failed']} failed, errors: {errors}, "
                f"tokens in {m['input_tokens']} out {m['output_tokens']}"
                + (f", {stripped} replies stripped of template scaffolding" if stripped else "")
            )
        if self.shards:
            skipped = self.shards["skipped"]
            out.append(
                f"shards: {self.shards['count']} on {self.shards['executor']} "
                f"({self.shards['where']})"
                + (f"; already complete in the output: {', '.join(skipped)}" if skipped else "")
            )
        return out


def person_lines(person: dict[str, Any], dropped: int) -> list[str]:
    """The person's tally in three lines: turns redrawn and why, rollouts dropped and why,
    and how the rest were answered and ended."""
    redraws = {k[len("redrawn_") :]: v for k, v in person.items() if k.startswith("redrawn_")}
    drops = {k[len("dropped_") :]: v for k, v in person.items() if k.startswith("dropped_")}
    rest = {k: v for k, v in person.items()
            if not k.startswith(("redrawn_", "dropped_")) and k != "turns_redrawn"}  # fmt: skip

    def listed(counts: dict[str, Any]) -> str:
        return ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "none"

    return [
        f"person turns redrawn: {person.get('turns_redrawn', 0)} kept after a redraw; "
        f"redraws by check: {listed(redraws)}",
        f"rollouts dropped for the person: {dropped} (by check: {listed(drops)})",
        "person: " + listed(rest),
    ]
