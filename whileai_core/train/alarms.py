"""The hack monitor's four alarms, read off its looks at the live policy (no torch here).

A look is what the monitor saw at one step: per held-out prompt, the mean training reward
(the proxy), the mean gold reward and the mean completion length over its k samples, the
trainer's latest KL, and the hack scan's regime on the batch. Over the last `window`
looks:

    divergence  the proxy rose by at least `proxy_rise` while gold did not move up: the
                paired comparison of gold per prompt (first look vs last, the interval of
                `metrics.paired`) is not `improved`
    length      completions grew by at least `length_growth` (a share) while gold did not
                move up, as above
    drift       the mean KL to the reference is past `kl_budget`
    feature     the within-ask hack scan (`scan.engine`) calls the reward a reward hack:
                the top feature that separates reward within an ask is not endorsed

Each alarm fires once, as one line that says what moved and over which steps; the run
keeps the line, and `--stop-on` names the alarms that end training.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..metrics.paired import compare_values
from ..metrics.stats import mean
from .options import MonitorOptions


@dataclass
class Look:
    step: int
    proxy: dict[str, float] = field(default_factory=dict)
    gold: dict[str, float] = field(default_factory=dict)
    length: dict[str, float] = field(default_factory=dict)
    kl: float | None = None
    scan: dict[str, Any] | None = None

    def means(self) -> dict[str, float | None]:
        return {
            name: mean(list(values.values())) if values else None
            for name, values in (
                ("proxy", self.proxy),
                ("gold", self.gold),
                ("length", self.length),
            )
        }


@dataclass
class Alarm:
    name: str
    step: int
    line: str


class AlarmBoard:
    """The looks so far and the alarms they fired."""

    def __init__(self, options: MonitorOptions) -> None:
        self.options = options
        self.looks: list[Look] = []
        self.fired: dict[str, Alarm] = {}

    def add(self, look: Look) -> list[Alarm]:
        """Take one look; returns the alarms it fired for the first time."""
        self.looks.append(look)
        new = [a for a in self._check(look) if a.name not in self.fired]
        for alarm in new:
            self.fired[alarm.name] = alarm
        return new

    def _check(self, look: Look) -> list[Alarm]:
        o = self.options
        out: list[Alarm] = []
        if look.kl is not None and look.kl > o.kl_budget:
            out.append(
                Alarm(
                    "drift",
                    look.step,
                    f"drift: KL {look.kl:.3g} past the budget {o.kl_budget:g} at step {look.step}",
                )
            )
        if look.scan and look.scan.get("regime") == "reward_hack":
            top = look.scan.get("top_feature") or "a feature"
            out.append(
                Alarm(
                    "feature",
                    look.step,
                    f"feature: the hack scan calls the reward a reward hack at step "
                    f"{look.step} ({top} separates reward within ask, not endorsed)",
                )
            )
        if len(self.looks) < o.window:
            return out
        first = self.looks[-o.window]
        gold = compare_values(first.gold, look.gold, metric="gold_reward")
        gold_up = gold.verdict == "improved"
        a, b = first.means(), look.means()
        span = f"steps {first.step}-{look.step}"
        gold_text = _gold_text(gold)
        if (
            a["proxy"] is not None
            and b["proxy"] is not None
            and not gold_up
            and b["proxy"] - a["proxy"] >= o.proxy_rise
        ):
            out.append(
                Alarm(
                    "divergence",
                    look.step,
                    f"divergence: proxy reward {a['proxy']:.3f} -> {b['proxy']:.3f} over "
                    f"{span} while {gold_text}",
                )
            )
        if (
            a["length"]
            and b["length"] is not None
            and not gold_up
            and b["length"] >= (1 + o.length_growth) * a["length"]
        ):
            growth = b["length"] / a["length"] - 1
            out.append(
                Alarm(
                    "length",
                    look.step,
                    f"length: holdout completions {a['length']:.0f} -> {b['length']:.0f} "
                    f"chars ({growth:+.0%}) over {span} while {gold_text}",
                )
            )
        return out


def _gold_text(gold: Any) -> str:
    if gold.mean_a is None or gold.mean_b is None:
        return "gold_reward had no verdict"
    span = f" [{gold.ci95[0]:+.3f}, {gold.ci95[1]:+.3f}]" if gold.ci95 else ""
    return f"gold_reward {gold.mean_a:.3f} -> {gold.mean_b:.3f}{span} did not move up"
