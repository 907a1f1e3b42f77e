"""Where the rl allocation decides: probe every ask, fill the ones that split, extend a
unanimous probe only while a split is likelier than what a fresh ask offers.

A group-relative update has a gradient only where an ask's rollouts disagree, so rollouts
are spent successively: every ask is probed with `probe` rollouts (two, the least that can
show a split); an ask whose probe split is filled to k; an ask that stays unanimous after
n rollouts gets one more only while the hazard (how often a group unanimous after n split
on its next rollout, measured on this run, with 1/(n+2) as the prior) beats the fresh
value (mixed groups per rollout a new ask's probe has yielded so far). Both sides are
measured as the run goes; a resumed run relearns them from the rows already written.

A verdict is whatever the run compares: the grader's pass/fail when there is one, else the
behaviour signature (which splits more often than a judge does). This class holds the
policy and its evidence and nothing of the scheduler, so it is tested without asyncio.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import orjson

Action = Literal["final", "fill", "extend", "stop"]


@dataclass(frozen=True)
class Decision:
    """What to do with a settled group: write it as final, fill it to `target`, extend it
    to `target` by one more rollout, or stop it unanimous (resumable if nothing is left)."""

    action: Action
    target: int = 0
    reason: str = ""


def distinct(verdicts: Sequence[Any]) -> int:
    return len({_hashable(v) for v in verdicts})


class Allocation:
    """The rl policy and the evidence it has gathered on this run."""

    def __init__(self, probe: int = 2) -> None:
        self.probe = probe
        self.probes = 0
        self.probes_mixed = 0
        self._trials: Counter[int] = Counter()
        self._splits: Counter[int] = Counter()

    def decide(
        self, verdicts: Sequence[Any], *, launched: int, k: int, probing: bool, first_look: bool
    ) -> Decision:
        """The decision for a group whose launched rollouts have all settled.

        `first_look` is true the first time a probing group is decided (its probe result
        is evidence for the fresh value); later looks are evidence for the hazard.
        """
        if k == 1 or not verdicts or not probing:
            return Decision("final")
        n = len(verdicts)
        split = distinct(verdicts) > 1
        if first_look:
            self.probes += 1
            self.probes_mixed += split
        elif n >= 2:
            self._trials[n - 1] += 1
            self._splits[n - 1] += split
        if split:
            if launched < k:
                return Decision("fill", k, "rl fill: the probe split")
            return Decision("final")
        if launched >= k:  # unanimous at k: complete, with nothing left to save or resume
            return Decision("final")
        hazard, fresh = self.hazard(n), self.fresh_value()
        if hazard > fresh:
            reason = f"rl extend: hazard {hazard:.2f} > fresh {fresh:.2f}"
            return Decision("extend", launched + 1, reason)
        return Decision("stop")

    def replay(self, verdicts: Sequence[Any]) -> None:
        """Relearn what `decide` learned from a group, from its stored rows (on resume), so
        a resumed run extends unanimous probes exactly as the uninterrupted run did."""
        self.probes += 1
        if distinct(verdicts[: self.probe]) > 1:
            self.probes_mixed += 1
            return
        for n in range(self.probe + 1, len(verdicts) + 1):
            split = distinct(verdicts[:n]) > 1
            self._trials[n - 1] += 1
            self._splits[n - 1] += split
            if split:
                return

    def hazard(self, n: int) -> float:
        """Chance a group unanimous after n rollouts splits on the next: measured, with
        1/(n+2) as a two-observation prior."""
        prior = 1.0 / (n + 2)
        return (self._splits[n] + 2 * prior) / (self._trials[n] + 2)

    def fresh_value(self) -> float:
        """Mixed groups a fresh ask yields per rollout spent probing it."""
        return (self.probes_mixed + 1) / (self.probes + 2) / max(1, self.probe)


def _hashable(value: Any) -> Any:
    return (
        orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
        if isinstance(value, (dict, list))
        else value
    )
