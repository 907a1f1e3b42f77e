"""The stage from Python: the same calls the commands make, on rows you hold."""

from __future__ import annotations

import whileai_core as wa

from ..scan.test_scan import run
from .test_curate import decontam_set


def test_marks_audit_and_curate_from_the_front_door() -> None:
    rows, _ = wa.simulate_rows("specs/orders", mode="rl", budget=80, reproducible=True)
    marked = wa.mark(list(wa.grade(rows)), wa.MarkOptions(stage="sft"))
    assert all(wa.stage_of(r) == "sft" and "no_hedging" in r["markers"] for r in marked)
    assert wa.audit_rows("style", marked).as_dict()["rows"] == 80
    scan = wa.hack_scan(run("delimiter"), wa.ScanOptions(endorsed=("tool:lookup_order",)))
    assert scan["regime"] == "reward_hack" and wa.format_scan(scan)[0].startswith("hack scan")
    assert wa.scan_diff(run(), run(seed=1))["before"]["regime"] == "unknown"
    assert wa.curriculum(marked).as_dict()["rows"] == 80
    train, evals = decontam_set()
    clean = list(wa.decontaminate(train, wa.EvalIndex.of(evals)))
    assert len(clean) == 6 and "eval" in wa.STAGES
