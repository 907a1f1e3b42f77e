"""An RL environment package: the tasks, the world and the reward, not the rollouts.

On-policy RL samples its own rollouts, so what a trainer needs from graded rows is what
they came from. `export_environment` writes an installable verifiers 0.4 package:

    DIR/pyproject.toml       installable with plain pip from PyPI alone: the toolkit's
                             code it runs is carried (DIR/_whileai_core, see vendor.py),
                             verifiers behind the `[rl]` extra
    DIR/README.md            how to run it, and the gate that was applied, in numbers
    DIR/__init__.py          `load_tasks(split)` (stdlib only) and, through `__all__`, the
                             taskset, harness and env verifiers loads
    DIR/environment.py       those three, written against `verifiers.v1`
    DIR/spec.json            system prompt, tool schemas verbatim and their kinds, turn
                             cap, reward, world
    DIR/data/train.jsonl     one task per ask: question + info (coordinates, faults,
    DIR/data/holdout.jsonl   calibration, the person's brief); privileged never ships
    DIR/data/grpo/*.jsonl    the same tasks in TRL's GRPO shape (`grpo_line`): prompt,
                             tools, and the reward's columns; DIR/grpo.py the reward

The gate: the set must pass `publish_gate`; asks whose calibrated pass rate lies outside
the band are dropped (no advantage); the split is by task id through a hash, so a task
always lands on the same side; and train asks that copy a holdout ask are dropped from
train (decontamination: the rule and level `whileai decontaminate` applies, by the one
coverage measure in `text.coverage`). The export itself needs no `verifiers`.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from ..errors import ConfigError
from ..metrics.band import DEFAULT_BAND, in_band
from ..metrics.holdout import holdout_side
from ..metrics.tally import group_by_task
from ..people.template import person_brief
from ..row.privileged import (
    Strictness,
    answer_key_leaks,
    carries_privileged,
    leaks_answer_key,
    strip_privileged,
)
from ..select.calibration import calibration_stamp
from ..select.gate import publish_gate
from ..simulate.situation import situation_of_row
from ..spec import Spec, record_readers
from ..text.levels import COVERAGE_NGRAM, COVERAGE_OVERLAP
from .files import check_target, read_json, whileai_version, write_file
from .vendor import RUNTIME_REQUIREMENTS, VENDORED, vendor_core

_REF = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*$")
_INFO_KEYS = (
    "scenario_dimensions",
    "world_state",
    "faults",
    "ask_family",
    "stance",
    "tier",
    "tool_known",
    "intent_known",
)
# What `--env` names when no reward or world is given (see env_defaults).
DEFAULT_REWARD = "whileai_core.export.env_defaults:graded_reward"
DEFAULT_WORLD = "whileai_core.export.env_defaults:mock_world"
# The package's modules are real, typed and linted code in this repository, copied as is.
_TEMPLATE = Path(__file__).resolve().parent / "env_package"
# The package's own modules, copied from _TEMPLATE.
_MODULES = ("__init__.py", "environment.py", "rows.py", "grpo.py")
# The verifiers releases the package is written against (`verifiers.v1`).
VERIFIERS_RANGE = ">=0.4,<0.5"


@dataclass
class EnvironmentReport:
    """What the environment export kept, dropped and split."""

    directory: str = ""
    name: str = ""
    rows_in: int = 0
    tasks_in: int = 0
    refused_privileged: int = 0
    band: tuple[float, float] = DEFAULT_BAND
    band_dropped: dict[str, int] = field(default_factory=lambda: {"too_easy": 0, "too_hard": 0})
    uncalibrated: int = 0
    graded_mixed: int = 0
    train: int = 0
    holdout: int = 0
    decontaminated: int = 0
    with_person: int = 0
    holdout_fraction: float = 0.2
    gate: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": "environment",
            "directory": self.directory,
            "name": self.name,
            "rows_in": self.rows_in,
            "tasks_in": self.tasks_in,
            "refused_privileged": self.refused_privileged,
            "band": list(self.band),
            "band_dropped": dict(self.band_dropped),
            "uncalibrated": self.uncalibrated,
            "graded_mixed": self.graded_mixed,
            "train": self.train,
            "holdout": self.holdout,
            "decontaminated": self.decontaminated,
            "with_person": self.with_person,
            "holdout_fraction": self.holdout_fraction,
            "gate": self.gate,
            "warnings": list(self.warnings),
        }


def check_ref(ref: str, what: str) -> str:
    """A reward or world must import by name in the trainer's process: `package.module:attr`."""
    if not _REF.match(ref) or ref.partition(":")[0].endswith(".py"):
        raise ConfigError(
            f"{what} {ref!r}: expected 'module:attr' importable by name (a file path does not "
            "travel to the trainer)"
        )
    return ref


def export_environment(
    rows: Iterable[dict[str, Any]],
    directory: str | Path,
    spec: Spec,
    *,
    reward: str = DEFAULT_REWARD,
    world: str = DEFAULT_WORLD,
    name: str | None = None,
    max_turns: int = 12,
    band: tuple[float, float] = DEFAULT_BAND,
    holdout: float = 0.2,
) -> EnvironmentReport:
    """Write the environment package to `directory`: a new or empty folder, or one an
    earlier export wrote (its files are replaced; nothing else in it is touched)."""
    _check_target(Path(directory))
    check_ref(reward, "reward")
    check_ref(world, "world")
    if not 0.0 <= holdout < 1.0:
        raise ConfigError(f"holdout {holdout}: must be in [0, 1)")
    if max_turns < 1:
        raise ConfigError(f"max_turns {max_turns}: must be at least 1")
    env_name = _module_name(name or spec.name)
    materialised = list(rows)
    report = EnvironmentReport(
        directory=str(directory), name=env_name, band=band, holdout_fraction=holdout
    )
    report.rows_in = len(materialised)
    report.gate = publish_gate(materialised, band=band).as_dict()
    report.warnings.extend(_importable_warnings(reward, world))
    tasks: list[tuple[str, dict[str, Any]]] = []
    groups = group_by_task(materialised)
    report.tasks_in = len(groups)
    for task_id, group in groups.items():
        clean = [
            row
            for row in group
            if not leaks_answer_key(row) and not _task_shows_key(task_id, row, env_name)
        ]
        report.refused_privileged += len(group) - len(clean)
        if not clean:
            continue
        carried = clean[0].get("calibration")
        stamp = carried if isinstance(carried, dict) else calibration_stamp(task_id, group)
        rate, k = stamp.get("pass_rate"), stamp.get("k") or 0
        if rate is None or k < 2:
            report.uncalibrated += 1
        elif not in_band(float(rate), band):
            report.band_dropped["too_easy" if rate > band[1] else "too_hard"] += 1
            continue
        elif 0 < rate < 1:
            report.graded_mixed += 1
        task = _task(task_id, clean[0], stamp, env_name)
        situation = situation_of_row(spec, clean[0])
        person = person_brief(situation) if situation is not None else None
        if person and not _shows_key(clean[0], person) and not carries_privileged(person):
            task["info"]["person"] = person
        tasks.append((task_id, task))
    if (
        reward == DEFAULT_REWARD
        and tasks
        and not any(isinstance(t["info"].get("scenario_dimensions"), dict) for _, t in tasks)
    ):
        report.warnings.append(
            "no task carries grid coordinates (scenario_dimensions): the default checklist "
            "reward reduces to the conduct grade, a process reward; a policy trained on it "
            "alone learns to call nothing. Name a --reward that checks the outcome"
        )
    if report.uncalibrated:
        report.warnings.append(
            f"{report.uncalibrated} asks have fewer than 2 graded rollouts: their difficulty is a "
            "guess; calibrate with 8-16 rollouts per ask (`simulate --mode rl`) before training"
        )
    train, held = _split(tasks, holdout)
    train, report.decontaminated = _decontaminate(train, held)
    report.train, report.holdout = len(train), len(held)
    report.with_person = sum(1 for task in [*train, *held] if "person" in task["info"])
    if not train:
        report.warnings.append("no train tasks survived the gate")
    _write_package(Path(directory), env_name, spec, reward, world, max_turns, train, held, report)
    return report


def _module_name(raw: str) -> str:
    name = re.sub(r"\W+", "_", raw.strip().lower()).strip("_") or "whileai_env"
    return name if not name[0].isdigit() else f"env_{name}"


def _importable_warnings(reward: str, world: str) -> list[str]:
    warnings = []
    for what, ref in (("reward", reward), ("world", world)):
        module = ref.partition(":")[0]
        try:
            importlib.import_module(module)
        except Exception:
            warnings.append(
                f"{what} module {module!r} does not import here; it must import in the trainer"
            )
    return warnings


def _task_shows_key(task_id: str, row: dict[str, Any], env: str) -> bool:
    """True when the task built from `row` would carry one of its answer-key texts (a
    question that repeats the reference: stripping the block does not remove a copy, and
    a prompt that states the expected outcome makes the reward free), or would still name
    the block where the strip could not take it out (`carries_privileged`, the test every
    way out runs)."""
    task = _task(task_id, row, {}, env)
    return _shows_key(row, task) or carries_privileged(task)


def _shows_key(row: dict[str, Any], built: Any) -> bool:
    """Whether `built` (a task, a person brief: text no agent wrote) holds a whole answer
    key of the row: the one check at `Strictness.VERBATIM`."""
    return bool(answer_key_leaks(row, Strictness.VERBATIM, [orjson.dumps(built).decode()]))


def _task(task_id: str, row: dict[str, Any], stamp: dict[str, Any], env: str) -> dict[str, Any]:
    question = row.get("prompt")
    if not isinstance(question, str) or not question:
        question = next(
            (
                str(m.get("content"))
                for m in row.get("messages") or []
                if isinstance(m, dict) and m.get("role") == "user"
            ),
            "",
        )
    info: dict[str, Any] = {"task_id": task_id, "scenario_id": row.get("scenario_id")}
    info.update({k: row[k] for k in _INFO_KEYS if k in row})
    info["calibration"] = stamp
    task = {"question": question, "answer": "", "task": env, "info": info}
    cleaned: dict[str, Any] = strip_privileged(task)
    return cleaned


def _split(
    tasks: list[tuple[str, dict[str, Any]]], fraction: float
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    train: list[dict[str, Any]] = []
    held: list[dict[str, Any]] = []
    for task_id, task in tasks:
        (held if holdout_side(task_id, fraction) else train).append(task)
    return train, held


def _decontaminate(
    train: list[dict[str, Any]], held: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], int]:
    from ..curate.decontaminate import copies_an_eval

    copied = copies_an_eval([t["question"] for t in train], [t["question"] for t in held])
    kept = [t for t, copy in zip(train, copied, strict=True) if not copy]
    return kept, len(train) - len(kept)


def _check_target(root: Path) -> None:
    check_target(root, "--env", _is_environment, "an earlier whileai environment")


def _is_environment(root: Path) -> bool:
    earlier = read_json(root / "spec.json")
    return (
        isinstance(earlier, dict)
        and {"reward", "world", "tools"} <= set(earlier)
        and (root / "environment.py").is_file()
    )


def _write_package(
    root: Path,
    name: str,
    spec: Spec,
    reward: str,
    world: str,
    max_turns: int,
    train: list[dict[str, Any]],
    held: list[dict[str, Any]],
    report: EnvironmentReport,
) -> None:
    (root / "data").mkdir(parents=True, exist_ok=True)
    spec_json = {
        "name": name,
        "system_prompt": spec.policy,
        "tools": [tool.openai() for tool in spec.tools],
        "tool_kinds": {tool.name: tool.kind for tool in spec.tools},
        "record_readers": record_readers(spec.tools),
        "max_turns": max_turns,
        "reward": reward,
        "world": world,
        "band": list(report.band),
        "policy_sha": spec.policy_sha,
    }
    write_file(root / "spec.json", orjson.dumps(spec_json, option=orjson.OPT_INDENT_2) + b"\n")
    for split, tasks in (("train", train), ("holdout", held)):
        lines = b"".join(orjson.dumps(t) + b"\n" for t in tasks)
        write_file(root / "data" / f"{split}.jsonl", lines)
        grpo = b"".join(orjson.dumps(grpo_line(t, spec_json)) + b"\n" for t in tasks)
        write_file(root / "data" / "grpo" / f"{split}.jsonl", grpo)
    vendored = vendor_core(root)
    write_file(root / "pyproject.toml", _pyproject(name, vendored).encode())
    for module in _MODULES:
        write_file(root / module, (_TEMPLATE / module).read_bytes())
    write_file(root / "README.md", _readme(name, spec_json, report).encode())


def grpo_line(task: dict[str, Any], spec_json: dict[str, Any]) -> dict[str, Any]:
    """A task as TRL's conversational prompt-only row: the system prompt and the person's
    opening turn as `prompt`, and the columns the reward reads (`task_id`; `world`, the
    world state, fault plan and grid coordinates as one JSON string, so no dataset
    library reshapes it; `tools`), which GRPOTrainer hands the reward and never renders
    into the model's input. The person's brief stays out: only the environment's person
    reads it."""
    info = task["info"]
    world = {k: v for k, v in info.items() if k not in ("task_id", "calibration", "person")}
    prompt = [{"role": "user", "content": task["question"]}]
    if spec_json.get("system_prompt"):
        prompt.insert(0, {"role": "system", "content": spec_json["system_prompt"]})
    return {
        "prompt": prompt,
        "task_id": str(info.get("task_id") or ""),
        "world": orjson.dumps(world, option=orjson.OPT_SORT_KEYS).decode(),
        "tools": spec_json["tools"],
    }


def _pyproject(name: str, vendored: list[str]) -> str:
    """Installable with plain pip from any index: the toolkit's code it runs is carried
    (`_whileai_core`), so it depends only on what PyPI resolves."""
    packages = ", ".join(f'"{p}"' for p in [name, *(f"{name}.{v}" for v in vendored)])
    requirements = ", ".join(f'"{r}"' for r in RUNTIME_REQUIREMENTS)
    return f"""[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "{name.replace("_", "-")}"
version = "0.1.0"
description = "RL environment exported by whileai: tasks, world, person and reward"
readme = "README.md"
requires-python = ">=3.10"
# The world, the person and the default reward are the toolkit's own code, carried in
# {VENDORED}/ (a copy of whileai_core {whileai_version()}); these are what it imports.
dependencies = [{requirements}]

[project.optional-dependencies]
rl = ["verifiers{VERIFIERS_RANGE}; python_version >= '3.11'"]

[tool.setuptools]
packages = [{packages}]
package-dir = {{ "{name}" = "." }}

[tool.setuptools.package-data]
"{name}" = ["spec.json", "README.md", "data/*.jsonl", "data/grpo/*.jsonl"]
"*" = ["py.typed", "*.md", "*.json", "*.js", "*.css"]
"""


def _readme(name: str, spec_json: dict[str, Any], report: EnvironmentReport) -> str:
    lo, hi = report.band
    bd = report.band_dropped
    gate = report.gate
    # The gate's own warnings describe the input rows; the asks they name were dropped here.
    warnings = "".join(f"- {w}\n" for w in report.warnings)
    return f"""# {name}

An RL environment exported by `whileai export --env`: the tasks, the world that answers
tool calls, and the reward that grades a finished trajectory. On-policy RL samples its own
rollouts from here.

```bash
pip install '.[rl]'             # verifiers {VERIFIERS_RANGE} (Python >= 3.11); nothing else
vf-eval {name} -m <policy> --client.base-url <url> --client.api-key-var <KEY VAR> -n 8 -r 8
vf-eval {name} --env.taskset.split holdout -m <policy> ...   # the held-out asks
```

`load_tasks(split)` reads the task files without verifiers. verifiers finds the taskset,
the harness and the env through the package's `__all__`: the policy runs in an in-process
chat loop whose tool calls the world answers (a fresh one per rollout), the offline person
simulate uses answers its questions back ({report.with_person} of the tasks carry the
person's brief; the rest end at the agent's first reply), and the reward grades the
finished conversation.

## What is inside

- `spec.json`: the system prompt, the {len(spec_json["tools"])} tool schemas verbatim, the turn
  cap ({spec_json["max_turns"]} model calls), the reward `{spec_json["reward"]}` and the
  world `{spec_json["world"]}` (both imported by name in the trainer; a name under
  `whileai_core.` is the copy of the toolkit this package carries in `_whileai_core/`).
  The default reward is the judge `whileai grade` uses, the toolkit's version that
  exported this package: re-export to take a fix to that judge.
- `data/train.jsonl` ({report.train} tasks) and `data/holdout.jsonl` ({report.holdout} tasks):
  one task per ask, `question` plus `info` (task id, grid coordinates, fault plan, world state,
  calibration). The privileged block (hidden state, reference) is never shipped: a reward that
  needs it must recompute it from the task's coordinates.

## The gate that was applied

- Publish gate on {report.rows_in} graded rows over {report.tasks_in} asks:
  {gate.get("graded_mixed", 0)} asks with both a pass and a fail.
- Difficulty band {lo:g}-{hi:g} on each ask's calibrated pass rate: {bd["too_easy"]} asks
  dropped as too easy, {bd["too_hard"]} as too hard (always or never solved: no advantage).
  {report.uncalibrated} asks had fewer than 2 graded rollouts and were kept uncalibrated.
- {report.refused_privileged} rollouts that quoted their privileged block were left out.
- Split by task id (a hash, so a task always lands on the same side):
  {report.holdout_fraction:g} of asks to holdout.
- Decontamination: {report.decontaminated} train asks that copy a holdout ask (verbatim,
  or word {COVERAGE_NGRAM}-grams covering {COVERAGE_OVERLAP:.0%} of their words) were
  dropped from train, as `whileai decontaminate` drops them.

{("## Warnings" + chr(10) + chr(10) + warnings) if warnings else ""}"""
