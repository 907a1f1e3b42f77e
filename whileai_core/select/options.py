"""What a selection is asked to do (`OptimizeOptions`) and what it reports (`OptimizeReport`)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal, get_args

from ..errors import ConfigError
from ..metrics.band import DEFAULT_BAND, Band

Mode = Literal["rl", "sft"]
TruncatedPolicy = Literal["drop", "keep", "penalize"]
SelectRule = Literal["top_per_prompt", "top_k_overall", "random_per_prompt", "random_k_overall"]
# The rules `check` accepts: read off the Literal, so the two cannot drift apart.
SELECT_RULES: tuple[str, ...] = get_args(SelectRule)


@dataclass
class OptimizeOptions:
    """Every knob of a selection; the CLI flags map onto these one to one."""

    mode: Mode = "rl"
    band: Band = DEFAULT_BAND
    enforce_band: bool = True
    truncated: TruncatedPolicy = "drop"
    max_groups: int | None = None
    select: SelectRule = "top_per_prompt"
    min_reward: float = 1.0
    k: int | None = None
    seed: int = 0
    # SFT: rows whose reply carries a style tic (hedging, sycophancy, apology, boilerplate)
    # are kept out of the training set unless this is set: rejection sampling trains on
    # every kept reply at full weight, tic included.
    keep_tics: bool = False
    # What the reward should track (hack-scan feature substrings); when set, the hack
    # scan runs over the kept rows and rides in the report.
    endorsed: tuple[str, ...] = ()

    def check(self) -> None:
        lo, hi = self.band
        if not 0.0 <= lo <= hi <= 1.0:
            raise ConfigError(f"band {lo:g},{hi:g}: need 0 <= low <= high <= 1")
        if self.mode not in ("rl", "sft"):
            raise ConfigError(f"mode {self.mode!r}: expected 'rl' or 'sft'")
        if self.truncated not in ("drop", "keep", "penalize"):
            raise ConfigError(f"truncated {self.truncated!r}: expected drop, keep or penalize")
        if self.select not in SELECT_RULES:
            raise ConfigError(f"select {self.select!r}: expected one of {', '.join(SELECT_RULES)}")
        if self.k is not None and self.k < 1:
            raise ConfigError(f"k {self.k}: must be at least 1")
        if self.max_groups is not None and self.max_groups < 0:
            raise ConfigError(f"max_groups {self.max_groups}: must not be negative")
        if self.mode == "sft" and self.select.endswith("_overall") and self.k is None:
            raise ConfigError(f"select {self.select} needs k (how many rows to keep overall)")


@dataclass
class OptimizeReport:
    """Counts of everything the selection did; `as_dict()` is what `--report` writes."""

    mode: str = "rl"
    rows_in: int = 0
    rows_out: int = 0
    groups_in: int = 0
    groups_kept: int = 0
    dropped: dict[str, int] = field(default_factory=dict)
    band: Band = DEFAULT_BAND
    enforce_band: bool = True
    band_dropped: dict[str, int] = field(default_factory=lambda: {"too_easy": 0, "too_hard": 0})
    groups_dropped: dict[str, int] = field(default_factory=dict)
    truncated_policy: str = "drop"
    truncated_seen: int = 0
    fault_kinds: dict[str, int] = field(default_factory=dict)
    select: str | None = None
    # SFT: rows kept out for their style tics, by family (a row may count in several).
    style_tics: dict[str, int] = field(default_factory=dict)
    calibration_carried: int = 0
    eval_sourced: int = 0
    correlations: dict[str, float | None] = field(default_factory=dict)
    pass_at_before: dict[str, Any] = field(default_factory=dict)
    pass_at_after: dict[str, Any] = field(default_factory=dict)
    gate: dict[str, Any] = field(default_factory=dict)
    hack_scan: dict[str, Any] | None = None
    hygiene_warnings: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    skipped_lines: int = 0

    def drop(self, reason: str, n: int = 1) -> None:
        self.dropped[reason] = self.dropped.get(reason, 0) + n

    def drop_group(self, reason: str, rows: int, *, as_row_reason: str | None = None) -> None:
        self.groups_dropped[reason] = self.groups_dropped.get(reason, 0) + 1
        self.drop(as_row_reason or reason, rows)

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["band"] = list(self.band)
        return data

    def lines(self) -> list[str]:
        """The report for a person, one fact a line (warnings are separate: `warnings_all`)."""
        out = [
            f"optimize --mode {self.mode}: {self.rows_in} rows in {self.groups_in} asks -> "
            f"{self.rows_out} rows in {self.groups_kept} asks"
        ]
        dropped = ", ".join(f"{n} {reason}" for reason, n in sorted(self.dropped.items()))
        if dropped:
            out.append(f"  dropped rows: {dropped}")
        if self.mode == "rl":
            bd = self.band_dropped
            lo, hi = self.band
            easy, hard = bd["too_easy"], bd["too_hard"]
            out.append(f"  band {lo:g}-{hi:g}: {easy} too easy, {hard} too hard")
            if self.fault_kinds:
                kinds = ", ".join(f"{kind} {n}" for kind, n in self.fault_kinds.items())
                out.append(f"  groups by fault kind: {kinds}")
        if self.mode == "sft" and self.dropped.get("style_tic"):
            kinds = ", ".join(f"{kind} {n}" for kind, n in sorted(self.style_tics.items()))
            out.append(
                f"  kept out for style tics: {self.dropped['style_tic']} rows ({kinds}); "
                "--keep-tics keeps them"
            )
        if self.hack_scan is not None:
            scan = self.hack_scan
            top = f", top feature {scan['top_feature']}" if scan.get("top_feature") else ""
            out.append(f"  hack scan: {scan['regime']}{top}")
        return out

    def warnings_all(self) -> list[str]:
        found = [*self.hygiene_warnings, *self.warnings, *self.gate.get("warnings", [])]
        if self.skipped_lines:
            found.insert(0, f"{self.skipped_lines} bad lines skipped")
        return found
