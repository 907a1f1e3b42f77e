"""`whileai export` as a user runs it: the privileged block reaches no file in any shape,
flags that cannot work are usage errors, and an export that writes nothing exits 1."""

from __future__ import annotations

from pathlib import Path

from ..helpers import ORDERS_SPEC, SDK_ROWS, run_cli
from .rows import assert_clean, graded_set, leaky, steps_only, write


def test_privileged_never_reaches_any_exported_file(tmp_path: Path) -> None:
    # One leak in a passing row (SFT sees it) and one in a failing row (pairs see it).
    graded = write(tmp_path / "graded.jsonl", [*graded_set(), leaky("sc-05", 8), steps_only()])
    outputs = []
    for fmt in ("openai", "trl"):
        for extra in ([], ["--pairs"], ["--unroll", "--max-tool-output-chars", "40"],
                      ["--mask", "final", "--include-failures"]):  # fmt: skip
            out = tmp_path / f"{fmt}-{len(outputs)}.jsonl"
            meta = tmp_path / f"{fmt}-{len(outputs)}.meta.jsonl"
            done = run_cli("export", str(graded), "--format", fmt, "--spec", str(ORDERS_SPEC),
                           "-o", str(out), "--meta", str(meta), *extra)  # fmt: skip
            assert done.returncode == 0, done.stderr.decode()
            assert b"quotes_privileged" in done.stderr
            outputs += [out, meta]
    hub = tmp_path / "hub"
    done = run_cli("export", str(graded), "--hf", str(hub), "--spec", str(ORDERS_SPEC))
    assert done.returncode == 0, done.stderr.decode()
    env = tmp_path / "env"
    done = run_cli("export", str(graded), "--env", str(env), "--spec", str(ORDERS_SPEC))
    assert done.returncode == 0, done.stderr.decode()
    for folder in (hub, env):
        outputs += [p for p in folder.rglob("*") if p.suffix in (".json", ".jsonl")]
    outputs.append(hub / "README.md")
    assert len(outputs) >= 20
    for path in outputs:
        data = path.read_bytes().replace(str(tmp_path).encode(), b"")  # (this test's name)
        assert data.strip(), path
        if path.name in ("whileai.json", "README.md", "spec.json"):
            # Reports count refusals by name; the block itself must not be there.
            data = data.replace(b"quotes_privileged", b"").replace(b"privileged_residue", b"")
        assert_clean(data)


def test_export_flag_combinations_that_cannot_work_are_usage_errors(tmp_path: Path) -> None:
    for args in (
        ["--env", str(tmp_path / "env")],
        ["--env", str(tmp_path / "env"), "--pairs", "--spec", str(ORDERS_SPEC)],
        ["--hf", str(tmp_path / "hf"), "--env", str(tmp_path / "env"), "--spec", str(ORDERS_SPEC)],
        ["--hf", str(tmp_path / "hf"), "--meta", str(tmp_path / "m.jsonl")],
        ["--pairs", "--completions", "continuation", "--format", "openai"],
        ["-o", str(tmp_path / "x.jsonl"), "--meta", str(tmp_path / "x.jsonl")],
        ["--meta", "-"],
        ["--band", "0.8,0.2"],
        ["--env", str(tmp_path / "env"), "--spec", str(ORDERS_SPEC), "--holdout", "1"],
    ):
        done = run_cli("export", str(SDK_ROWS), *args)
        assert done.returncode == 2 and done.stdout == b"", args
        lines = done.stderr.decode().strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("whileai export: usage error: Invalid value")
    assert not (tmp_path / "env").exists() and not (tmp_path / "hf").exists()


def test_export_that_writes_nothing_exits_one(tmp_path: Path) -> None:
    done = run_cli("export", str(SDK_ROWS), "--pairs", "-o", str(tmp_path / "pairs.jsonl"))
    assert done.returncode == 1 and b"no pairs written" in done.stderr
