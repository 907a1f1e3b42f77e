"""Golden files: the rows simulate, grade, optimize and export write, byte for byte.

A refactor must leave every one of these unchanged; output that changes on purpose
regenerates them in its own commit (`WHILEAI_REGEN_GOLDEN=1 pytest tests/test_golden.py`)
whose message lists each change and why. Each case is a whole CLI run in a subprocess,
so the files pin what a user's pipe receives, not an internal API.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from .helpers import SDK_ROWS, run_cli

GOLDEN = Path(__file__).parent / "golden"
REGEN = os.environ.get("WHILEAI_REGEN_GOLDEN") == "1"
SPECS = ("orders", "airline", "repo-maint")
MODES = ("explore", "sft", "rl", "adaptive")
BUDGET = {"explore": 16, "sft": 18, "rl": 96, "adaptive": 24}


def _run(*args: str, input: bytes | None = None) -> bytes:
    done = run_cli(*args, input=input)
    assert done.returncode == 0, done.stderr.decode()
    return done.stdout


def _check(name: str, produce: Callable[[], bytes]) -> bytes:
    """Compare (or, regenerating, write) one golden file; returns the bytes for later cases."""
    path = GOLDEN / name
    got = produce()
    if REGEN:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(got)
    assert path.exists(), f"{name}: no golden file; run with WHILEAI_REGEN_GOLDEN=1"
    want = path.read_bytes()
    if got != want:
        got_lines, want_lines = got.splitlines(), want.splitlines()
        first = next(
            (i for i, (a, b) in enumerate(zip(got_lines, want_lines, strict=False)) if a != b),
            min(len(got_lines), len(want_lines)),
        )
        pytest.fail(
            f"{name}: output changed at line {first + 1} "
            f"({len(got_lines)} lines now, {len(want_lines)} golden)"
        )
    return got


def _simulated(spec: str, mode: str) -> bytes:
    repeats = ["--repeats", "4"] if mode == "rl" else []
    return _run(
        "simulate",
        f"specs/{spec}",
        "--mode",
        mode,
        "--budget",
        str(BUDGET[mode]),
        "--reproducible",
        "--seed",
        "0",
        *repeats,
    )


@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize("mode", MODES)
def test_simulate_grade_pipeline_is_unchanged(spec: str, mode: str) -> None:
    rows = _check(f"simulate/{spec}-{mode}.jsonl", lambda: _simulated(spec, mode))
    graded = _check(f"grade/{spec}-{mode}.jsonl", lambda: _run("grade", "-", input=rows))
    if mode == "rl":
        kept = _check(
            f"optimize/{spec}-rl.jsonl",
            lambda: _run("optimize", "-", "--mode", "rl", "--band", "0.1,0.9", input=graded),
        )
        _check(
            f"export/{spec}-rl.openai.jsonl",
            lambda: _run(
                "export", "-", "--format", "openai", "--spec", f"specs/{spec}", input=kept
            ),
        )
        _check(
            f"export/{spec}-rl.trl.jsonl",
            lambda: _run(
                "export", "-", "--format", "trl", "--unroll", "--mask", "final", input=kept
            ),
        )
        _check(
            f"export/{spec}-rl.pairs.jsonl",
            lambda: _run("export", "-", "--pairs", "--format", "trl", input=graded),
        )
    if mode == "sft":
        _check(
            f"optimize/{spec}-sft.jsonl",
            lambda: _run("optimize", "-", "--mode", "sft", "--min-reward", "0.5", input=graded),
        )


def test_sdk_fixture_rows_are_unchanged() -> None:
    graded = _check("grade/sdk-fixture.jsonl", lambda: _run("grade", str(SDK_ROWS)))
    _check(
        "optimize/sdk-fixture-sft.jsonl",
        lambda: _run("optimize", "-", "--mode", "sft", "--min-reward", "0.5", input=graded),
    )
    _check("export/sdk-fixture.openai.jsonl", lambda: _run("export", "-", input=graded))


def test_environment_export_is_unchanged(tmp_path: Path) -> None:
    graded = (GOLDEN / "grade" / "orders-rl.jsonl").read_bytes()
    out = tmp_path / "env"
    _run(
        "export",
        "-",
        "--env",
        str(out),
        "--spec",
        "specs/orders",
        "--band",
        "0.1,0.9",
        input=graded,
    )
    # The package's own files are golden; the toolkit copy it carries (`_whileai_core/`)
    # is this tree's source byte for byte, checked as such (a golden copy of it would
    # change with every edit anywhere in whileai_core).
    from whileai_core.export.vendor import VENDORED, core_files

    source = Path(__file__).resolve().parent.parent / "whileai_core"
    carried = {p.relative_to(out / VENDORED) for p in (out / VENDORED).rglob("*") if p.is_file()}
    assert carried == set(core_files())
    assert all((out / VENDORED / f).read_bytes() == (source / f).read_bytes() for f in carried)
    own = sorted(
        p
        for p in out.rglob("*")
        if p.is_file() and p.suffix != ".pyc" and VENDORED not in p.relative_to(out).parts
    )
    for path in own:
        rel = path.relative_to(out).as_posix()
        _check(f"export/env-orders/{rel}", path.read_bytes)
    if REGEN:
        return
    golden_files = {
        p.relative_to(GOLDEN / "export" / "env-orders").as_posix()
        for p in (GOLDEN / "export" / "env-orders").rglob("*")
        if p.is_file()
    }
    assert {p.relative_to(out).as_posix() for p in own} == golden_files


def test_golden_dir_is_not_stale() -> None:
    """Regenerating from scratch leaves no orphan: every golden file has a case."""
    if REGEN:
        pytest.skip("regenerating")
    assert (GOLDEN / "simulate").is_dir()
    names = {p.name for p in (GOLDEN / "simulate").iterdir()}
    assert names == {f"{s}-{m}.jsonl" for s in SPECS for m in MODES}
