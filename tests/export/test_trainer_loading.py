"""Exports as trainers meet them: loaded by `datasets` (every shape, and the `--hf` folder
with `load_dataset(DIR)`) exactly as written, and rendered through the Qwen2.5 chat
template TRL's wheel ships, with the spec's tools."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from jinja2.ext import loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment

from whileai_core.spec import load_spec

from ..helpers import REPO, run_cli
from .rows import read
from .side import trl_template

SPEC = load_spec(REPO / "specs" / "orders")
GRADED = REPO / "tests" / "golden" / "grade" / "orders-rl.jsonl"

_LOAD = """
import json, sys
import datasets
jobs = json.loads(sys.argv[1])
out = {}
for name, (kind, target) in jobs.items():
    if kind == "folder":
        loaded = datasets.load_dataset(target)
        out[name] = {split: list(loaded[split]) for split in loaded}
    else:
        out[name] = list(datasets.load_dataset("json", data_files=target, split="train"))
json.dump(out, open(sys.argv[2], "w"))
"""


def _load_with_datasets(tmp_path: Path, jobs: dict[str, tuple[str, str]]) -> dict[str, Any]:
    """What `datasets` (offline, with a private cache) gives back for each file or folder."""
    cache = tmp_path / "hf-cache"
    env = {
        **os.environ,
        "HF_DATASETS_OFFLINE": "1",
        "HF_HUB_OFFLINE": "1",
        "HF_HOME": str(cache),
        "HF_DATASETS_CACHE": str(cache / "datasets"),
    }
    result_path = tmp_path / "loaded.json"
    done = subprocess.run(
        [sys.executable, "-c", _LOAD, json.dumps(jobs), str(result_path)],
        capture_output=True, env=env, timeout=240, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    loaded: dict[str, Any] = json.loads(result_path.read_text())
    return loaded


def _export(tmp_path: Path, name: str, *args: str) -> Path:
    out = tmp_path / f"{name}.jsonl"
    done = run_cli("export", str(GRADED), "--spec", "specs/orders", "-o", str(out), *args)
    assert done.returncode == 0, done.stderr.decode()
    return out


SHAPES = {
    "sft-openai": ["--format", "openai"],
    "sft-openai-unroll": ["--format", "openai", "--unroll"],
    "sft-trl": ["--format", "trl"],
    "sft-trl-final": ["--format", "trl", "--mask", "final"],
    "sft-trl-unroll": ["--format", "trl", "--unroll", "--include-failures"],
    "pairs-openai": ["--format", "openai", "--pairs"],
    "pairs-trl": ["--format", "trl", "--pairs"],
    "pairs-trl-whole": ["--format", "trl", "--pairs", "--completions", "continuation"],
}


def test_every_export_loads_with_datasets_exactly_as_written(tmp_path: Path) -> None:
    files = {name: _export(tmp_path, name, *args) for name, args in SHAPES.items()}
    env = tmp_path / "orders_env"
    done = run_cli("export", str(GRADED), "--env", str(env), "--spec", "specs/orders",
                   "--band", "0,1")  # fmt: skip
    assert done.returncode == 0, done.stderr.decode()
    files |= {f"env-{split}": env / "data" / f"{split}.jsonl" for split in ("train", "holdout")}
    loaded = _load_with_datasets(tmp_path, {n: ("file", str(p)) for n, p in files.items()})
    for name, path in files.items():
        written = read(path)
        assert written, name
        assert loaded[name] == written, name


def test_hf_folder_loads_every_split_unchanged_and_says_where_each_came_from(
    tmp_path: Path,
) -> None:
    rows = read(GRADED)
    # Rows an eval scored go to their own split.
    for source in rows[:8]:
        source["lineage"] = {**source.get("lineage", {}), "source": "eval"}
    graded = tmp_path / "graded.jsonl"
    graded.write_text("".join(json.dumps(r) + "\n" for r in rows))
    folder = tmp_path / "orders-sft"
    done = run_cli("export", str(graded), "--hf", str(folder), "--format", "trl", "--spec",
                   "specs/orders", "--include-failures", "--license", "apache-2.0")  # fmt: skip
    assert done.returncode == 0, done.stderr.decode()
    manifest = json.loads((folder / "whileai.json").read_text())
    assert set(manifest["splits"]) == {"train", "holdout", "eval"}
    loaded = _load_with_datasets(tmp_path, {"hub": ("folder", str(folder))})["hub"]
    assert set(loaded) == {"train", "holdout", "eval"}
    for split, entry in manifest["splits"].items():
        written = read(folder / entry["path"])
        assert loaded[split] == written and entry["samples"] == len(written) > 0
        assert entry["source"]["inputs"] == [str(graded)] and entry["source"]["rows_sha256"]
    assert manifest["splits"]["eval"]["rows_in"] == 8
    assert "lineage.source == 'eval'" in manifest["splits"]["eval"]["source"]["rule"]
    card = (folder / "README.md").read_text()
    _, front, body = card.split("---\n", 2)
    meta = yaml.safe_load(front)
    files = meta["configs"][0]["data_files"]
    assert {f["split"]: f["path"] for f in files} == {
        s: e["path"] for s, e in manifest["splits"].items()
    }
    sizes = {s["name"]: s["num_examples"] for s in meta["dataset_info"]["splits"]}
    assert sizes == {s: e["samples"] for s, e in manifest["splits"].items()}
    assert "datasets>=5" in body and "assistant_only_loss=True" in body
    # The card as huggingface_hub reads it: the Hub's required metadata, and the features
    # exactly as `datasets` infers them from the files.
    from datasets import Dataset
    from huggingface_hub import DatasetCard

    data = DatasetCard.load(folder / "README.md").data
    assert data.license == "apache-2.0" and data.language == ["en"]
    assert data.task_categories == ["text-generation"] and data.size_categories == ["n<1K"]
    assert data.pretty_name == "orders-sft"
    files = [str(folder / e["path"]) for e in manifest["splits"].values()]
    inferred = Dataset.from_json(files, cache_dir=str(tmp_path / "cache")).features
    assert data.dataset_info["features"] == inferred._to_yaml_list()
    assert {f["name"] for f in data.dataset_info["features"]} >= {"messages", "tools"}


def test_hf_folder_refuses_a_folder_it_did_not_write(tmp_path: Path) -> None:
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "notes.txt").write_text("mine\n")
    done = run_cli("export", str(GRADED), "--hf", str(theirs))
    assert done.returncode == 1 and b"not an earlier `whileai export --hf` folder" in done.stderr
    assert (theirs / "notes.txt").read_text() == "mine\n"


# -- the Qwen2.5 template ------------------------------------------------------------------


def _render(template: str, messages: list[dict[str, Any]], tools: Any, **kw: Any) -> str:
    """Render like transformers' apply_chat_template: a sandboxed Jinja environment with
    trimmed blocks and `tojson` keeping non-ASCII text."""

    def tojson(value: Any, indent: int | None = None) -> str:
        return json.dumps(value, ensure_ascii=False, indent=indent)

    def raise_exception(message: str) -> None:
        raise ValueError(message)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[loopcontrols])  # fmt: skip
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    return env.from_string(template).render(messages=messages, tools=tools, **kw)


def _system_block(text: str) -> str:
    return text.split("<|im_end|>", 1)[0]


@pytest.fixture(scope="module")
def qwen() -> str:
    return trl_template("qwen2_5")


def test_sft_samples_render_with_the_specs_system_prompt_and_object_arguments(
    tmp_path: Path, qwen: str
) -> None:
    path = _export(tmp_path, "sft", "--format", "trl")
    loaded = _load_with_datasets(tmp_path, {"sft": ("file", str(path))})["sft"]
    assert loaded
    default = "You are Qwen, created by Alibaba Cloud."
    calls = 0
    for sample in loaded:
        text = _render(qwen, sample["messages"], sample["tools"])
        system = _system_block(text)
        assert system.startswith("<|im_start|>system\n" + SPEC.policy) and default not in text
        assert '"name": "get_order"' in system  # the spec's tools, in the system turn
        for message in sample["messages"]:
            for call in message.get("tool_calls") or []:
                calls += 1
                args = json.dumps(call["function"]["arguments"], ensure_ascii=False)
                # An object after "arguments": — not a JSON string quoted a second time.
                assert f'"arguments": {args}}}' in text and args.startswith("{")
    assert calls > 0


def test_prompt_completion_rows_render_the_completion_after_the_prompt(
    tmp_path: Path, qwen: str
) -> None:
    for name, args in (("final", ["--mask", "final"]), ("unroll", ["--unroll"])):
        for sample in read(_export(tmp_path, name, "--format", "trl", *args)):
            prompt = _render(qwen, sample["prompt"], sample["tools"], add_generation_prompt=True)
            whole = _render(qwen, sample["prompt"] + sample["completion"], sample["tools"])
            assert prompt.startswith("<|im_start|>system\n" + SPEC.policy)
            assert whole.startswith(prompt)
            assert whole[len(prompt):].endswith("<|im_end|>\n")


def test_dpo_prompts_are_prefixes_of_both_sides(tmp_path: Path, qwen: str) -> None:
    pairs = read(_export(tmp_path, "pairs", "--format", "trl", "--pairs"))
    rollouts = {r["scenario_id"]: r for r in read(GRADED)}
    assert pairs
    for pair in pairs:
        prompt = _render(qwen, pair["prompt"], pair["tools"], add_generation_prompt=True)
        assert _system_block(prompt).startswith("<|im_start|>system\n" + SPEC.policy)
        for side in ("chosen", "rejected"):
            whole = _render(qwen, pair["prompt"] + pair[side], pair["tools"])
            assert whole.startswith(prompt), side
            assert all(m["role"] == "assistant" for m in pair[side])
        # The prompt is the two rollouts' shared beginning, system turn first.
        assert pair["prompt"][0] == {"role": "system", "content": SPEC.policy}
        assert pair["prompt"][1]["content"] == rollouts[pair["scenario_id"]]["prompt"]
