"""Write labelled row sets and the original SDK's trust verdicts on them (run by hand).

    /work/main/.venv-sdk/bin/python tests/trust/data/make_sdk_trust.py

Standard library and whileai 0.131 only. Each set is a confusion table laid out as rows
by `rows_of` (reward = the judge's call, gold_reward = a person's, gold_kind "human" the
way the SDK's attach_labels marks a person's labels). `sdk_trust.json` holds each table
and what `whileai.simulations.judge_trust` said on its rows; the test
`tests/trust/test_bar.py` lays out the same rows from the table and needs no SDK.
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).parent

# name -> (tp, fp, fn, tn): judge pass/gold pass, pass/fail, fail/pass, fail/fail.
SETS = {
    # issue 23: "judge passed 81 of 153 gold failures (53%)"
    "leaky": (150, 81, 17, 72),
    # a judge that fails every row would agree more often (0.93 against 0.85)
    "majority": (81, 3, 12, 4),
    # a judge both tools should trust
    "good": (57, 2, 3, 38),
}


def rows_of(name: str, tp: int, fp: int, fn: int, tn: int) -> list[dict]:
    cells = [(1, 1)] * tp + [(1, 0)] * fp + [(0, 1)] * fn + [(0, 0)] * tn
    return [
        {
            "scenario_id": f"{name}-{i:03d}",
            "rollout_index": 0,
            "prompt": f"ask {i}",
            "final_text": "The order was looked up and the result reported as it came back.",
            "reward": judge,
            "judge_name": "judge-under-test",
            "gold_reward": gold,
            "gold_kind": "human",
        }
        for i, (judge, gold) in enumerate(cells)
    ]


# How `whileai label --annotator ana` marks a labelled row, before issue 23 and now; the
# SDK's judge_trust is run on the "good" table with each, to see whether it counts them.
PROVENANCE = {
    "label_source_only": {"label_source": "human:ana"},
    "with_gold_kind": {"label_source": "human:ana", "gold_kind": "human"},
}


def main() -> None:
    import whileai.simulations as sdk

    figures = {}
    for name, cells in SETS.items():
        rows = rows_of(name, *cells)
        report = sdk.judge_trust([dict(r) for r in rows])
        agreement = report["agreement"]
        figures[name] = {
            "cells": dict(zip(("tp", "fp", "fn", "tn"), cells, strict=True)),
            "ok": report["ok"],
            "gold_kind": report["gold_kind"],
            "agreement": agreement["agreement"],
            "kappa": agreement["kappa"],
            "pass_when_gold_fail": agreement["pass_when_gold_fail"],
            "warnings": report["warnings"],
        }
    provenance = {}
    for how, keys in PROVENANCE.items():
        rows = []
        for row in rows_of("good", *SETS["good"]):
            row.pop("gold_kind")
            rows.append({**row, **keys})
        report = sdk.judge_trust(rows)
        provenance[how] = {
            "keys": keys,
            "ok": report["ok"],
            "gold_kind": report["gold_kind"],
            "printed": str(report).splitlines()[0],
        }
    figures["provenance"] = provenance
    (HERE / "sdk_trust.json").write_text(json.dumps(figures, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
