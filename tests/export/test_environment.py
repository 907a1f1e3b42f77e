"""The RL environment export: the gate, the split, the package's files and what they pin,
the person's brief; everything here runs without verifiers (test_verifiers_env runs it)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from whileai_core.curate.decontaminate import EvalIndex
from whileai_core.errors import ConfigError
from whileai_core.export import export_environment
from whileai_core.export.env_defaults import default_judge, graded_reward, offline_person
from whileai_core.export.environment import DEFAULT_REWARD, VERIFIERS_RANGE
from whileai_core.judges.registry import parse_judge
from whileai_core.metrics.holdout import holdout_side
from whileai_core.select.gate import PublishGateError
from whileai_core.spec import is_key_param, load_spec

from ..helpers import ORDERS_SPEC, REPO
from .rows import REFERENCE, graded_set, read, row

GOLDEN_GRADED = REPO / "tests" / "golden" / "grade" / "orders-rl.jsonl"
WORLD = "whileai_core.simulate.world:World"


def test_environment_package_is_gated_split_and_decontaminated(tmp_path: Path) -> None:
    rows = graded_set()
    # An ask that repeats a holdout ask's wording must not stay in train.
    held = next(r for r in rows if holdout_side(r["scenario_id"], 0.3))
    twin = [row("sc-twin", i, float(i % 2), prompt=held["prompt"] + " Thanks.") for i in range(4)]
    spec = load_spec(ORDERS_SPEC)
    report = export_environment(
        [*rows, *twin], tmp_path / "env", spec,
        reward="whileai_core.metrics.tally:reward_of", world=WORLD, name="orders-env",
        holdout=0.3,
    )  # fmt: skip
    root = tmp_path / "env"
    assert report.name == "orders_env"
    assert report.band_dropped == {"too_easy": 1, "too_hard": 1}
    assert report.decontaminated >= 1
    spec_json = json.loads((root / "spec.json").read_text())
    assert spec_json["system_prompt"] == spec.policy
    assert spec_json["tools"] == spec.openai_tools()
    assert spec_json["tool_kinds"] == {t.name: t.kind for t in spec.tools}
    assert spec_json["reward"] == "whileai_core.metrics.tally:reward_of"
    assert spec_json["max_turns"] == 12
    train, holdout = read(root / "data/train.jsonl"), read(root / "data/holdout.jsonl")
    assert len(train) == report.train and len(holdout) == report.holdout > 0
    train_ids = {t["info"]["task_id"] for t in train}
    holdout_ids = {t["info"]["task_id"] for t in holdout}
    assert not train_ids & holdout_ids and "sc-twin" not in train_ids
    assert all(holdout_side(i, 0.3) for i in holdout_ids)
    assert "sc-easy" not in train_ids | holdout_ids
    held = EvalIndex.of({"prompt": t["question"]} for t in holdout)
    assert all(held.texts.match(t["question"], 0.8) is None for t in train)
    assert all(t["info"]["calibration"]["k"] >= 4 for t in train)
    readme = (root / "README.md").read_text()
    assert "1 asks\n  dropped as too easy" in readme and "Decontamination" in readme
    assert "vf-eval orders_env" in readme


def test_the_package_carries_the_toolkit_and_pins_the_verifiers_it_is_written_for(
    tmp_path: Path,
) -> None:
    """PyPI's `whileai` is another package (the original SDK): the environment depends on
    no toolkit at all, it carries the code it runs (`_whileai_core`) and needs only what
    PyPI resolves."""
    from whileai_core.export.vendor import RUNTIME_REQUIREMENTS

    export_environment(graded_set(), tmp_path / "env", load_spec(ORDERS_SPEC))
    pyproject = (tmp_path / "env" / "pyproject.toml").read_text()
    needs = ", ".join(f'"{r}"' for r in RUNTIME_REQUIREMENTS)
    assert f"dependencies = [{needs}]" in pyproject and "whileai" not in needs
    carried = tmp_path / "env" / "_whileai_core"
    assert (carried / "export" / "env_defaults.py").is_file()
    assert '"orders_s._whileai_core.judges"' in pyproject or "._whileai_core.judges" in pyproject
    assert f'rl = ["verifiers{VERIFIERS_RANGE}' in pyproject and VERIFIERS_RANGE == ">=0.4,<0.5"
    init = (tmp_path / "env" / "__init__.py").read_text()
    assert '"WhileaiTaskset", "WhileaiHarness", "WhileaiEnv"' in init
    assert "verifiers.v1" in (tmp_path / "env" / "environment.py").read_text()


def test_environment_package_installs_and_reads_tasks_without_verifiers(tmp_path: Path) -> None:
    export_environment(graded_set(), tmp_path / "env", load_spec(ORDERS_SPEC), name="orders_rl")
    target = tmp_path / "site"
    install = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--no-build-isolation",
         "--no-index", "--quiet", "--target", str(target), str(tmp_path / "env")],
        capture_output=True, timeout=120,
    )  # fmt: skip
    assert install.returncode == 0, install.stderr.decode()[-2000:]
    script = (
        "import orders_rl\n"
        "print(len(orders_rl.load_tasks('train')), orders_rl.load_spec()['name'])\n"
        "try:\n"
        "    orders_rl.WhileaiTaskset\n"
        "except ImportError as exc:\n"
        "    print('needs', 'verifiers' in str(exc))\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        env={**os.environ, "PYTHONPATH": str(target)},
        cwd=tmp_path,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr.decode()
    count, name, _, needs = run.stdout.decode().split()
    assert int(count) > 0 and name == "orders_rl" and needs == "True"


def test_simulated_tasks_carry_the_persons_brief_and_nothing_judge_only(tmp_path: Path) -> None:
    rows = read(GOLDEN_GRADED)
    report = export_environment(
        rows, tmp_path / "env", load_spec(REPO / "specs" / "orders"), band=(0.0, 1.0)
    )
    tasks = read(tmp_path / "env/data/train.jsonl") + read(tmp_path / "env/data/holdout.jsonl")
    assert report.with_person == len(tasks) > 0
    by_task = {r["scenario_id"]: r for r in rows}
    for task in tasks:
        person = task["info"]["person"]
        assert set(person) <= {"tools", "tool_kinds", "phrases", "world", "human", "targets",
                               "arguments", "entities"}  # fmt: skip
        # The ids the person holds are the ones the person gave in the simulated
        # conversation (a detail such as a refund reason may never have been asked for).
        said = json.dumps(by_task[task["info"]["task_id"]]["messages"])
        ids = {k: v for k, v in person["entities"].items() if is_key_param(k)}
        assert all(str(v) in said for v in ids.values()), (ids, said[:400])
        assert "reference" not in json.dumps(task) and "hidden_state" not in json.dumps(task)
    vague = next(t for t in tasks if t["info"].get("ask_family") == "vague")
    person = offline_person(vague["info"], 5)
    assert person is not None
    answer = asyncio.run(person.reply([{"role": "assistant", "content": "Which order is it?"}]))
    assert answer and any(str(v) in answer for v in vague["info"]["person"]["targets"].values())


def test_the_default_reward_is_the_judge_whileai_grade_uses() -> None:
    assert DEFAULT_REWARD == "whileai_core.export.env_defaults:graded_reward"
    assert default_judge().name == parse_judge(None).name
    graded = read(GOLDEN_GRADED)
    for source in graded[:12]:
        assert graded_reward(source)["reward"] == source["reward"]


def test_environment_export_applies_the_publish_gate(tmp_path: Path) -> None:
    unmixed = [row("a", i, 1.0) for i in range(3)] + [row("b", i, 0.0) for i in range(3)]
    with pytest.raises(PublishGateError, match="no mixed group"):
        export_environment(unmixed, tmp_path / "env", load_spec(ORDERS_SPEC))
    with pytest.raises(ConfigError, match="importable by name"):
        export_environment(
            graded_set(), tmp_path / "env", load_spec(ORDERS_SPEC),
            reward="judge.py:score", world=WORLD,
        )  # fmt: skip


def test_rows_without_coordinates_warn_that_the_default_reward_is_conduct_only(
    tmp_path: Path,
) -> None:
    report = export_environment(graded_set(), tmp_path / "env", load_spec(ORDERS_SPEC))
    assert any("reduces to the conduct grade" in w for w in report.warnings)


def test_env_export_never_writes_over_a_folder_it_did_not_make(tmp_path: Path) -> None:
    theirs = tmp_path / "project"
    theirs.mkdir()
    (theirs / "README.md").write_text("my project\n")
    with pytest.raises(ConfigError, match="not empty and not an earlier whileai environment"):
        export_environment(graded_set(), theirs, load_spec(ORDERS_SPEC))
    assert (theirs / "README.md").read_text() == "my project\n"
    env = tmp_path / "env"
    export_environment(graded_set(), env, load_spec(ORDERS_SPEC))
    (env / "NOTES.md").write_text("kept\n")
    export_environment(graded_set(), env, load_spec(ORDERS_SPEC))  # a re-export refreshes it
    assert (env / "NOTES.md").read_text() == "kept\n"


def test_environment_leaves_out_a_task_whose_question_repeats_its_answer_key(
    tmp_path: Path,
) -> None:
    rows = graded_set()
    for source in rows:
        if source["scenario_id"] == "sc-01":
            source["prompt"] += " " + REFERENCE
            source["messages"][0]["content"] += " " + REFERENCE
    report = export_environment(rows, tmp_path / "env", load_spec(ORDERS_SPEC))
    shipped = b"".join(p.read_bytes() for p in (tmp_path / "env" / "data").glob("*.jsonl"))
    assert REFERENCE.lower().encode() not in shipped.lower()
    assert b"sc-02" in shipped  # the other tasks still ship
    assert report.refused_privileged >= 4


def test_push_and_env_export_put_every_task_on_the_same_side(tmp_path: Path) -> None:
    """One holdout hash (sha256, as pushed sets were made): push --holdout and
    export --env --holdout used to disagree on 17 of ~200 tasks at a share of 0.1."""
    from whileai_core.platform.push import push_rows
    from whileai_core.store import open_store

    rows = [
        row(f"sc-{t:03d}", i, float(i % 2), prompt=f"ask number {t} about order {t * 7}")
        for t in range(200)
        for i in range(2)
    ]
    source = tmp_path / "rows.jsonl"
    source.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    report = export_environment(
        rows, tmp_path / "env", load_spec(ORDERS_SPEC), band=(0.0, 1.0), holdout=0.1
    )
    env_held = {t["info"]["task_id"] for t in read(tmp_path / "env/data/holdout.jsonl")}
    assert report.holdout == len(env_held) > 0
    store = open_store()
    pushed = push_rows(store, [str(source)], name="split", holdout=0.1, gate=False)
    assert pushed["holdout"] is not None
    held_rows = b"".join(store.download(pushed["holdout"]["datasetId"]))
    push_held = {orjson.loads(x)["scenario_id"] for x in held_rows.splitlines()}
    assert push_held == env_held
