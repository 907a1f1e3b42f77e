"""`import whileai_core` is the library: each stage one call, loaded only when used."""

from __future__ import annotations

import subprocess
import sys

import whileai_core as wa


def test_the_front_door_runs_the_pipeline_on_rows() -> None:
    rows, run = wa.simulate_rows("specs/orders", mode="rl", repeats=4, budget=64, reproducible=True)
    assert len(rows) == run.rows == 64
    graded = list(wa.grade(rows))
    assert all(r["judge_status"] == "ok" for r in graded)
    assert wa.report(graded)["tasks"] == len({r["scenario_id"] for r in rows})
    kept, why = wa.optimize(graded, wa.OptimizeOptions(band=(0.1, 0.9)))
    assert why.rows_in == 64 and len(kept) == why.rows_out
    samples = list(wa.training_samples(kept, fmt="trl"))
    # SFT leaves out rows below the pass line; each passing row is one sample.
    assert len(samples) == sum(1 for r in kept if r["reward"] >= 0.5) > 0


def test_every_public_name_resolves() -> None:
    for name in wa.__all__:
        assert getattr(wa, name) is not None, name


def test_importing_the_package_loads_no_stage() -> None:
    code = (
        "import sys, whileai_core; "
        "print(sorted(m for m in sys.modules if m.startswith('whileai_core.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['whileai_core._lazy']"
