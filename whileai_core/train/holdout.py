"""The holdout, before and after: the policy plays the held-out tasks, one judge grades.

Each side is a pinned `simulate` (`--tasks HOLDOUT`: the same asks, worlds and fault
plans, one rollout each) whose agent is the policy itself, served for the length of the
evaluation by `serve.ModelServer` on a loopback port, so the rollout is played by the
same agent loop, world and simulated person as any `simulate --agent URL`. The judge is
built fresh for each side from the same `--judge` value (grade's default when none), so
before and after are graded alike. The pass rate is over judged rows only: a rollout the
judge could not grade is counted, never scored 0.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..metrics.tally import passed

if TYPE_CHECKING:
    from ..spec import Spec


@dataclass
class HoldoutSide:
    """One side's graded rollouts and its pass rate."""

    label: str
    rows: list[dict[str, Any]] = field(default_factory=list)

    @property
    def judged(self) -> list[float]:
        return [
            float(r["reward"])
            for r in self.rows
            if r.get("judge_status") == "ok" and isinstance(r.get("reward"), (int, float))
        ]

    @property
    def pass_rate(self) -> float | None:
        rewards = self.judged
        return sum(passed(r) for r in rewards) / len(rewards) if rewards else None

    @property
    def unjudged(self) -> int:
        return len(self.rows) - len(self.judged)


def make_judge(ref: str | None, spec: Spec) -> Any:
    """A fresh judge for `ref` (grade's default when None), scoped to `spec`."""
    from ..judges.registry import JudgeOptions, parse_judge

    return parse_judge(ref, JudgeOptions(spec=spec))


def play_holdout(
    model: Any,
    tokenizer: Any,
    holdout: str,
    spec: Spec,
    *,
    judge: str | None,
    label: str,
    max_new_tokens: int,
    seed: int = 0,
) -> HoldoutSide:
    """The policy (`model`, `tokenizer`) on every task of `holdout` (a file or a dataset
    id), once each, graded by `judge`."""
    from ..api import plan_run
    from ..models.options import ModelOptions
    from ..simulate.config import SimulateConfig
    from ..simulate.run import run_simulation
    from .serve import ModelServer

    side = HoldoutSide(label)
    config = SimulateConfig(
        mode="explore",
        budget_given=False,
        concurrency=1,
        seed=seed,
        reproducible=True,
        repeats=1,
        repeat_policy="fixed",
    )
    plan = plan_run(spec, config, tasks_from=holdout)
    with ModelServer(model, tokenizer, name=label, max_new_tokens=max_new_tokens) as server:
        options = ModelOptions(model=label, temperature=0.0, max_tokens=max_new_tokens)
        run_simulation(
            plan.spec,
            config,
            agent_ref=server.base_url,
            options=options,
            grader=make_judge(judge, plan.spec),
            sink=side.rows.append,
            plan=plan,
        )
    return side


def holdout_delta(before: HoldoutSide, after: HoldoutSide) -> dict[str, Any]:
    """The before/after delta report (`whileai delta`'s) over the two sides."""
    from ..compare.delta import delta_report

    return delta_report(before.rows, after.rows).as_dict()
