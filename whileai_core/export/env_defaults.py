"""The world, the reward and the person an exported environment uses when none is named:
whileai's own, from the copy of the toolkit the environment carries (`vendor.py`).

- The world is the mock world the rows were simulated against, rebuilt from a task's
  `info`: the tools, the world state and the fault plan. A task with a person brief
  knows the records the person holds (an id the agent makes up is `not_found`, as in
  simulate); without one, the world state applies to any entity the agent names.
- The reward is the verdict of the judge `whileai grade` uses by default, resolved
  through the one judge registry at each call (of the carried copy: a fix to that judge
  reaches the environment when it is exported again). A judge that returns no verdict
  raises: verifiers records the rollout as errored instead of training on a made-up 0.
- The person is the template writer's offline person simulate uses, given the task's
  person brief (who they are, what they know); a task without one has no person.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from ..errors import JudgeFailed
from ..judges.contract import Judge, judge_once
from ..judges.registry import DEFAULT_JUDGE, parse_judge
from ..people.template import TemplateUser
from ..simulate.grid import seed_int
from ..simulate.world import WORLD_STATE_EFFECTS, World, known_values


def mock_world(info: dict[str, Any]) -> World:
    """A fresh mock world for one rollout of the task `info` describes."""
    state = info.get("world_state")
    faults = info.get("faults")
    person = info.get("person")
    brief = person if isinstance(person, dict) and person.get("entities") else None
    targets = brief.get("targets") if brief is not None else None
    return World(
        info.get("tools") or [],
        world_state=state if state in WORLD_STATE_EFFECTS else "entity exists",
        faults=faults if isinstance(faults, dict) else None,
        seed=seed_int("env", info.get("task_id") or ""),
        targets=targets if isinstance(targets, dict) else None,
        known=known_values(brief) if brief is not None else None,
    )


@lru_cache(maxsize=1)
def default_judge() -> Judge:
    """The judge `whileai grade` runs when no `--judge` is given."""
    return parse_judge(DEFAULT_JUDGE)


def graded_reward(row: dict[str, Any]) -> dict[str, Any]:
    """The default judge's verdict on a finished rollout (reward, reason, markers)."""
    fields = judge_once(default_judge(), row)
    if fields.get("judge_status") != "ok" or fields.get("reward") is None:
        reason = f"judge {default_judge().name}: {fields.get('reason') or 'no verdict'}"
        raise JudgeFailed(str(fields.get("judge_status") or "error"), reason)
    return fields


def offline_person(info: dict[str, Any], max_replies: int) -> TemplateUser | None:
    """The person of the task, or None when the task carries no person brief."""
    brief = info.get("person")
    if not isinstance(brief, dict) or not brief or max_replies <= 0:
        return None
    return TemplateUser(brief, seed_int("env-person", info.get("task_id") or ""), max_replies)
