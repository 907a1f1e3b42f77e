"""`whileai export` as a user runs it: the privileged block reaches no file in any shape,
flags that cannot work are usage errors, and an export that writes nothing exits 1."""

from __future__ import annotations

import re
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
        # The old spellings run as `export sft|pairs|hub|env`, which may name the error.
        assert len(lines) == 1, args
        assert re.match(r"whileai export( \w+)?: usage error: Invalid value", lines[0]), lines
    assert not (tmp_path / "env").exists() and not (tmp_path / "hf").exists()


def test_export_that_writes_nothing_exits_one(tmp_path: Path) -> None:
    done = run_cli("export", str(SDK_ROWS), "--pairs", "-o", str(tmp_path / "pairs.jsonl"))
    assert done.returncode == 1 and b"no pairs written" in done.stderr


def _legacy(args: list[str]) -> tuple[list[str], str] | None:
    from whileai_cli.app import load_command

    group = load_command("export")
    return group.legacy_args(group.context_class(group, info_name="export"), args)


def test_old_export_spellings_name_the_subcommand_they_mean() -> None:
    assert _legacy(["pairs", "rows.jsonl"]) is None and _legacy(["--help"]) is None
    cases = {
        # `... | whileai export` read stdin, and still does.
        (): ["sft"],
        ("rows.jsonl", "--format", "trl"): ["sft", "rows.jsonl", "--format", "trl"],
        # Options the old command took and ignored for this kind are dropped.
        ("r.jsonl", "--pairs", "-o", "p.jsonl", "--include-failures", "--holdout", "0.3"):
            ["pairs", "r.jsonl", "-o", "p.jsonl"],
        ("r.jsonl", "--hf", "hub/x", "--pairs", "-o", "ignored.jsonl", "--name", "x"):
            ["hub", "r.jsonl", "--pairs", "--name", "x", "-o", "hub/x"],
        ("-", "--env=envs/x", "--spec", "specs/orders", "--band", "0.1,0.9"):
            ["env", "-", "--spec", "specs/orders", "--band", "0.1,0.9", "-o", "envs/x"],
    }  # fmt: skip
    for old, new in cases.items():
        found = _legacy(list(old))
        assert found is not None and found[0] == new, old
        assert f"use `whileai export {new[0]}" in found[1]


def test_old_export_spellings_write_what_the_subcommands_write(tmp_path: Path) -> None:
    """Same bytes either way; the old spelling adds one stderr line naming the new form."""
    graded = str(Path(__file__).parents[1] / "golden" / "grade" / "orders-rl.jsonl")
    old = run_cli("export", graded, "--pairs", "--format", "trl", "-o", str(tmp_path / "a"))
    new = run_cli("export", "pairs", graded, "--format", "trl", "-o", str(tmp_path / "b"))
    assert old.returncode == new.returncode == 0, old.stderr.decode()
    assert (tmp_path / "a").read_bytes() == (tmp_path / "b").read_bytes() != b""
    notes = [line for line in old.stderr.decode().splitlines() if "deprecated" in line]
    assert notes == [
        "warning: `whileai export --pairs` is deprecated: use `whileai export pairs ...`"
    ]
    assert b"deprecated" not in new.stderr
    old = run_cli("export", graded, "--hf", str(tmp_path / "h1"), "--spec", str(ORDERS_SPEC))
    new = run_cli("export", "hub", graded, "-o", str(tmp_path / "h2"), "--spec", str(ORDERS_SPEC))
    assert old.returncode == new.returncode == 0, old.stderr.decode()
    files = sorted(p.relative_to(tmp_path / "h1") for p in (tmp_path / "h1").rglob("*.jsonl"))
    assert files and all(
        (tmp_path / "h1" / f).read_bytes() == (tmp_path / "h2" / f).read_bytes() for f in files
    )
