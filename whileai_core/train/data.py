"""What a trainer is handed: the source read, and shaped as `export` shapes it per method.

A source is a JSONL file, a dataset id on the store, or (GRPO) the folder `export --env`
wrote. Its lines are either graded rows (simulate's, the SDK's, pulled traces) or lines an
export already wrote; the first line says which, and rows go through the exporter itself
(one home for each shape, never a second copy here):

    sft    rows -> `training_samples(fmt="trl")`: conversational `messages` (trained with
           TRL's assistant-only loss) or, with --mask final, `prompt`/`completion`
    dpo    rows -> `preference_pairs(fmt="trl")`: `prompt`/`chosen`/`rejected`
    rm     the same pass-vs-fail pairs: the passing turn is `chosen`
    grpo   rows + spec -> `export_environment`: the prompt-only `data/grpo` file and the
           package's `whileai_reward`, which grades each completion through its task's world

The holdout is rows (its tasks are replayed by the policy); by default it is the source's
holdout sibling: the dataset `push --holdout` stored beside it, or for an environment
folder, the tasks of its `holdout` split.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError
from ..export.pairs import is_pair_line

if TYPE_CHECKING:
    from ..spec import Spec
    from ..store.base import Store

Line = dict[str, Any]
# Columns TRL reads, per shape; a line's other keys (export's inline metadata) are left
# out so every line of the dataset has the same columns.
SFT_COLUMNS = ("messages", "prompt", "completion", "tools")
PAIR_COLUMNS = ("prompt", "chosen", "rejected", "tools")
GRPO_COLUMNS = ("prompt", "task_id", "world", "tools")


@dataclass
class Source:
    """Where the lines came from, for the run's record and the holdout default."""

    label: str
    path: Path | None = None  # the JSONL file read (a pulled dataset is written to one)
    dataset_id: str | None = None
    environment: Path | None = None  # an exported environment package's folder
    holdout_dataset: str | None = None  # the stored sibling push --holdout made


@dataclass
class Shaped:
    """The trainer's lines and what shaping them said (counts, warnings)."""

    lines: list[Line]
    shape: str
    report: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    reward: Callable[..., Any] | None = None  # GRPO's reward function
    environment: Path | None = None


def _line_problem(line: Any) -> str | None:
    """Rows answer to the row rules; an export's line need only be an object."""
    from ..row.rules import row_problem

    if not isinstance(line, dict):
        return "not a JSON object"
    return row_problem(line) if is_row(line) else None


def read_jsonl(path: Path) -> list[Line]:
    """Every line of a JSONL file as an object; a bad one is a BadRowError (file:line)."""
    from ..jsonl import read_rows

    return list(read_rows([str(path)], check=_line_problem))


def is_row(line: Line) -> bool:
    """A graded row rather than an export's line: rows carry the rollout's own fields."""
    return any(key in line for key in ("schema_version", "steps", "final_text", "judge_status"))


def resolve_source(source: str, store_opener: Callable[[], Store], scratch: Path) -> Source:
    """A file, an environment folder, or a dataset id (pulled into `scratch`)."""
    path = Path(source)
    if path.is_dir():
        if (path / "data" / "grpo" / "train.jsonl").is_file():
            return Source(label=str(path), environment=path.resolve())
        raise ConfigError(f"{source}: a folder, but not an environment `export --env` wrote")
    if path.is_file():
        return Source(label=str(path), path=path)
    if "/" in source or source.endswith(".jsonl"):
        raise ConfigError(f"{source}: no such file")
    from ..platform.push import pull_rows

    scratch.mkdir(parents=True, exist_ok=True)
    target = scratch / f"{source}.jsonl"
    store = store_opener()
    try:
        store.get_dataset(source)  # a clear NotFound before anything is written
        pull_rows(store, source, str(target))
        sibling = next(
            (
                d["datasetId"]
                for d in store.list_datasets()
                if d.get("purpose") == "holdout" and d.get("parentDatasetId") == source
            ),
            None,
        )
    finally:
        store.close()
    return Source(label=source, path=target, dataset_id=source, holdout_dataset=sibling)


def _columns(line: Line, keep: tuple[str, ...]) -> Line:
    return {k: line[k] for k in keep if line.get(k) is not None}


def shape_lines(
    method: str,
    source: Source,
    *,
    spec: Spec | None = None,
    mask: str = "all",
    scratch: Path,
    reward: str | None = None,
    holdout: float = 0.2,
) -> Shaped:
    """The lines `method`'s trainer reads from `source`."""
    if method == "grpo":
        return _grpo(source, spec=spec, scratch=scratch, reward=reward, holdout=holdout)
    if source.environment is not None:
        raise ConfigError(
            f"{source.label}: an environment folder trains GRPO; --method {method} reads rows "
            "or the file export wrote"
        )
    assert source.path is not None
    lines = read_jsonl(source.path)
    if not lines:
        raise ConfigError(f"{source.label}: no lines to train on")
    if method == "sft":
        return _sft(lines, source, spec, mask)
    return _pairs(lines, source, spec, method)


def _context(spec: Spec | None) -> Any:
    from ..export.context import Context

    return Context.of_spec(spec)


def _sft(lines: list[Line], source: Source, spec: Spec | None, mask: str) -> Shaped:
    from ..export.training import TrainingReport, training_samples

    if is_row(lines[0]):
        report = TrainingReport("trl", mask, False, None)
        samples = list(
            training_samples(
                lines,
                fmt="trl",
                mask=mask,  # type: ignore[arg-type]
                context=_context(spec),
                keep_meta=False,
                report=report,
            )
        )
        out = [_columns(s, SFT_COLUMNS) for s in samples]
        shaped = Shaped(out, report.shape(), report.as_dict(), list(report.warnings))
    else:
        bad = next(
            (
                i
                for i, line in enumerate(lines, 1)
                if "messages" not in line and not ("prompt" in line and "completion" in line)
            ),
            None,
        )
        if bad is not None:
            raise ConfigError(
                f"{source.label}:{bad}: not an SFT line (messages, or prompt and completion) "
                "and not a graded row"
            )
        out = [_columns(line, SFT_COLUMNS) for line in lines]
        shaped = Shaped(out, "trl lines as given")
    if not out:
        raise ConfigError(f"{source.label}: no SFT sample survived the export ({shaped.report})")
    return shaped


def _pairs(lines: list[Line], source: Source, spec: Spec | None, method: str) -> Shaped:
    from ..export.pairs import PairsReport, preference_pairs

    if is_row(lines[0]):
        report = PairsReport("trl", length_matched=False)
        pairs = list(
            preference_pairs(
                lines, fmt="trl", context=_context(spec), keep_meta=False, report=report
            )
        )
        out = [_columns(p, PAIR_COLUMNS) for p in pairs]
        shaped = Shaped(out, "trl preference pairs", report.as_dict(), list(report.warnings))
    else:
        bad = next((i for i, line in enumerate(lines, 1) if not is_pair_line(line)), None)
        if bad is not None:
            raise ConfigError(
                f"{source.label}:{bad}: not a preference pair (prompt, chosen, rejected) "
                "and not a graded row"
            )
        out = [_columns(line, PAIR_COLUMNS) for line in lines]
        shaped = Shaped(out, "trl preference pairs as given")
    if not out:
        raise ConfigError(
            f"{source.label}: no pass-vs-fail pair in it ({method} learns from an ask with a "
            "passing and a failing rollout)"
        )
    return shaped


def _grpo(
    source: Source, *, spec: Spec | None, scratch: Path, reward: str | None, holdout: float
) -> Shaped:
    env = source.environment
    report: dict[str, Any] = {}
    if env is not None:
        lines = read_jsonl(env / "data" / "grpo" / "train.jsonl")
    else:
        assert source.path is not None
        lines = read_jsonl(source.path)
        if lines and is_row(lines[0]):
            if spec is None:
                raise ConfigError(
                    f"{source.label}: GRPO from rows needs --spec (the world and reward the "
                    "environment export builds)"
                )
            from ..export.environment import export_environment

            env = scratch / "environment" / "whileai_train_env"
            exported = export_environment(lines, env, spec, band=(0.0, 1.0), holdout=holdout)
            report = exported.as_dict()
            lines = read_jsonl(env / "data" / "grpo" / "train.jsonl")
        else:  # prompt-only lines: an environment's data/grpo file, or the user's own
            bad = next((i for i, x in enumerate(lines, 1) if "prompt" not in x), None)
            if bad is not None:
                raise ConfigError(f"{source.label}:{bad}: a GRPO line needs its `prompt`")
            env = _environment_of(source.path)
    if not lines:
        raise ConfigError(f"{source.label}: no GRPO prompt to train on")
    fn = load_reward(reward, env)
    return Shaped(
        [x if env is None else _columns(x, GRPO_COLUMNS) for x in lines],
        "trl prompt-only (GRPO)",
        report,
        reward=fn,
        environment=env,
    )


def _environment_of(grpo_file: Path) -> Path | None:
    """The package a `data/grpo/<split>.jsonl` file belongs to, when it sits in one."""
    folder = grpo_file.resolve().parent.parent.parent
    return folder if (folder / "__init__.py").is_file() else None


def import_environment(folder: Path) -> Any:
    """The exported package itself (its folder's parent goes on sys.path)."""
    parent = str(folder.parent)
    if parent not in sys.path:
        sys.path.insert(0, parent)
    return importlib.import_module(folder.name)


def load_reward(ref: str | None, env: Path | None) -> Callable[..., Any]:
    """`--reward` (a TRL reward function, module:function or file.py:function), else the
    environment's `whileai_reward`."""
    if ref:
        from ..plugins import load_callable

        return load_callable(ref, what="reward function")
    if env is None:
        raise ConfigError("GRPO needs a reward: --reward module:function, or an environment")
    fn: Callable[..., Any] = import_environment(env).whileai_reward
    return fn


def holdout_rows_of(env: Path) -> list[Line]:
    """An environment's holdout split as rows a pinned simulate replays: each task's
    prompt, scenario and world, as the export stored them."""
    rows = []
    for task in (
        read_jsonl(env / "data" / "holdout.jsonl")
        if (env / "data" / "holdout.jsonl").is_file()
        else []
    ):
        info = task.get("info") or {}
        row = {
            "scenario_id": info.get("scenario_id") or info.get("task_id"),
            "prompt": task.get("question"),
        }
        for key in ("world_state", "faults", "scenario_dimensions", "selection_reason"):
            if info.get(key) is not None:
                row[key] = info[key]
        rows.append(row)
    return rows
