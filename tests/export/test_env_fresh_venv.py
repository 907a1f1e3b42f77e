"""The exported RL environment installs and runs with plain pip in a fresh virtualenv:
nothing of this project in it but the folder `export --env` wrote, and verifiers. `make`
builds that venv (side/envfresh: the golden graded rows exported, `pip install
'./orders_env[rl]'`); here `vf-eval` runs in it against the loopback stub, a reward per
rollout, and the reward is the verdict `whileai grade` gives the same conversation."""

from __future__ import annotations

import filecmp
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from whileai_core.export import export_environment
from whileai_core.export.vendor import RUNTIME_REQUIREMENTS
from whileai_core.spec import load_spec
from whileai_core.testing import OpenAIStub

from ..helpers import REPO, run_cli
from .rows import read
from .side import BUILD_FRESH, ENV_FRESH, fresh_env_python
from .test_verifiers_env import GRADED, _pick, _policy


def _same_tree(left: Path, right: Path) -> bool:
    """The same files with the same bytes (what pip's in-tree build left aside)."""
    compared = filecmp.dircmp(left, right, ignore=["__pycache__", "build", "orders.egg-info"])
    if compared.left_only or compared.right_only or compared.funny_files:
        return False
    _, mismatch, errors = filecmp.cmpfiles(left, right, compared.common_files, shallow=False)
    if mismatch or errors:
        return False
    return all(_same_tree(left / d, right / d) for d in compared.common_dirs)


def test_the_runtime_requirements_are_the_toolkits_own() -> None:
    if sys.version_info < (3, 11):
        pytest.skip("tomllib is Python >= 3.11")
    import tomllib

    declared = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    assert set(RUNTIME_REQUIREMENTS) <= set(declared)


def test_vf_eval_in_a_fresh_venv_with_only_the_exported_folder_and_verifiers(
    tmp_path: Path,
) -> None:
    python = fresh_env_python()
    spec = load_spec(REPO / "specs" / "orders")
    export_environment(read(GRADED), tmp_path / "orders_env", spec, band=(0.0, 1.0))
    if not _same_tree(tmp_path / "orders_env", ENV_FRESH / "orders_env"):
        pytest.skip(f"side/envfresh was exported by older code: {BUILD_FRESH}")
    # Nothing of the toolkit is installed there: the package carries what it runs.
    script = (
        "import importlib.metadata as m, importlib.util as u\n"
        "names = sorted(d.metadata['Name'] for d in m.distributions())\n"
        "print(u.find_spec('whileai_core'), u.find_spec('whileai'),\n"
        "      [n for n in names if 'whileai' in n.lower()])\n"
    )
    probe = subprocess.run(
        [str(python), "-c", script], capture_output=True, text=True, cwd=tmp_path,
        env={"PATH": os.environ["PATH"]},
    )  # fmt: skip
    assert probe.stdout.split() == ["None", "None", "[]"], probe.stderr
    tasks = read(ENV_FRESH / "orders_env" / "data" / "train.jsonl")
    vague, asker = _pick(tasks)
    ids = [vague["info"]["task_id"], asker["info"]["task_id"]]
    rows_file, out = tmp_path / "graded-by-env.jsonl", tmp_path / "runs"
    with OpenAIStub(default=_policy(asker["question"])) as stub:
        env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "STUB_KEY": "stub-key",
               "WHILEAI_ENV_ROWS": str(rows_file), "NO_COLOR": "1"}  # fmt: skip
        done = subprocess.run(
            [str(python.parent / "vf-eval"), "orders", "-m", "stub-policy",
             "--client.base-url", stub.base_url, "--client.api-key-var", "STUB_KEY",
             "--select.include.ids", *ids, "-n", "2", "-r", "1", "--no-push", "-o", str(out)],
            capture_output=True, env=env, timeout=300, cwd=tmp_path,
        )  # fmt: skip
    assert done.returncode == 0, (done.stdout + done.stderr).decode()[-4000:]
    [traces_file] = out.glob("*/traces.jsonl")
    episodes = read(traces_file)
    assert len(episodes) == 2 and all(e["ok"] and not e["errors"] for e in episodes)
    rewards = {
        e["task"]["data"]["id"]: e["traces"][0]["rewards"]["whileai_reward"]["score"]
        for e in episodes
    }
    assert set(rewards) == set(ids) and all(isinstance(r, float) for r in rewards.values())
    rows = read(rows_file)
    source = tmp_path / "env-rows.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows))
    graded = run_cli("grade", str(source))
    assert graded.returncode == 0, graded.stderr.decode()
    regraded = {r["scenario_id"]: r["reward"] for r in map(json.loads, graded.stdout.splitlines())}
    assert regraded == rewards
