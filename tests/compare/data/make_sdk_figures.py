"""Write the SDK-agreement rows and the original SDK's figures on them (run by hand).

    python3 -m venv /tmp/sdk-compare && /tmp/sdk-compare/bin/pip install whileai==0.131
    /tmp/sdk-compare/bin/python tests/compare/data/make_sdk_figures.py

Standard library and the SDK only. It writes `sdk/*.jsonl` (the row sets, seeded, so a
re-run writes the same bytes) and `sdk_figures.json` (what `compare_runs`,
`delta_report` and `eval_variance` of whileai 0.131 said on them). The test
`tests/compare/test_sdk_agreement.py` reads both and needs no SDK.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

HERE = Path(__file__).parent
OUT = HERE / "sdk"
CATEGORIES = ("billing", "shipping", "returns")
TASKS = 40
K = 4


def run(
    seed: int,
    *,
    effect: float = 0.0,
    grounding: float = 0.95,
    first_action: float = 0.4,
    polite: float = 0.85,
    down: str | None = None,
    tasks: range = range(TASKS),
) -> list[dict]:
    """A run of a fixed eval: each task has one true pass rate (same in every run)."""
    layout = random.Random(99)
    rates = [layout.uniform(0.15, 0.7) for _ in range(TASKS)]
    rng = random.Random(seed)
    rows = []
    for t in tasks:
        category = CATEGORIES[t % 3]
        p = rates[t] + effect
        if down is not None and category == down:
            p = rates[t] - 0.1
        for i in range(K):
            rows.append(
                {
                    "scenario_id": f"sdk-task-{t:02d}",
                    "rollout_index": i,
                    "category": category,
                    "reward": 1 if rng.random() < min(1.0, max(0.0, p)) else 0,
                    "judge_status": "ok",
                    "markers": {
                        "argument_grounding": 1.0 if rng.random() < grounding else 0.0,
                        "first_action": 1.0 if rng.random() < first_action else 0.0,
                        "polite": 1.0 if rng.random() < polite else 0.0,
                    },
                }
            )
    return rows


SETS = {
    "base": run(1),
    "improved": run(2, effect=0.3),
    "same": run(3),
    "inventing": run(4, effect=0.3, grounding=0.55),
    "partial": run(5, effect=0.3, tasks=range(10, TASKS)),
    "few": run(6, effect=0.3, tasks=range(37, TASKS)),
    "overopt": run(7, first_action=0.95),
    "groupdown": run(8, effect=0.5, down="returns"),
    "rerun1": run(11),
    "rerun2": run(12),
    "rerun3": run(13),
}

COMPARE_CASES = [
    ("base", "improved", "pass_at_1"),
    ("base", "same", "pass_at_1"),
    ("base", "inventing", "marker:argument_grounding"),
    ("base", "inventing", "marker:polite"),
    ("base", "partial", "pass_at_1"),
    ("base", "few", "pass_at_1"),
    ("improved", "base", "pass_at_1"),
]

DELTA_CASES = [
    {"before": "base", "after": "inventing", "must_not_regress": ["argument_grounding"]},
    {"before": "base", "after": "improved", "must_not_regress": ["argument_grounding"]},
    {"before": "base", "after": "same"},
    {"before": "base", "after": "overopt", "proxy": "marker:first_action"},
    {"before": "base", "after": "groupdown", "by": "category"},
    {"before": "base", "after": "same", "run_std": 0.2},
    {"before": "base", "after": "improved", "run_std": 0.02},
    {"before": "base", "after": "improved", "run_std": 0.2},
    {"before": "improved", "after": "base"},
]


def main() -> None:
    import whileai.simulations as zps

    OUT.mkdir(exist_ok=True)
    for name, rows in SETS.items():
        with (OUT / f"{name}.jsonl").open("w") as fh:
            for row in rows:
                fh.write(json.dumps(row, sort_keys=True) + "\n")
    figures: dict = {"sdk": zps.__name__, "version": _version(), "compare": [], "delta": []}
    for a, b, metric in COMPARE_CASES:
        r = zps.compare_runs(SETS[a], SETS[b], metric=metric)
        figures["compare"].append(
            {
                "a": a,
                "b": b,
                "metric": metric,
                **{
                    k: _plain(r[k])
                    for k in (
                        "paired",
                        "n_paired",
                        "n_only_a",
                        "n_only_b",
                        "paired_share",
                        "mean_a",
                        "mean_b",
                        "delta",
                        "ci95",
                        "p_value",
                        "verdict",
                        "note",
                    )
                },
            }
        )
    for case in DELTA_CASES:
        kw = {k: v for k, v in case.items() if k not in ("before", "after")}
        kw.setdefault("by", False)  # the SDK splits by `category` on its own; we do not
        r = zps.delta_report(SETS[case["before"]], SETS[case["after"]], target="pass_at_1", **kw)
        figures["delta"].append(
            {
                **case,
                "ok": r["ok"],
                "target_verdict": r["target_verdict"],
                "target_delta": r["target_delta"],
                "improved": r["improved"],
                "regressions": r["regressions"],
                "slipped": r["slipped"],
                "within_noise": r["within_noise"],
                "over_optimized": r["over_optimized"],
                "groups_down": r["groups_down"],
                "groups": {g: {"delta": v["delta"]} for g, v in (r["groups"] or {}).items()},
                "metrics": {
                    m: {k: _plain(v[k]) for k in ("mean_a", "mean_b", "delta", "verdict")}
                    for m, v in r["metrics"].items()
                },
                "not_comparable": r["not_comparable"],
            }
        )
    v = zps.eval_variance(SETS["rerun1"], SETS["rerun2"], SETS["rerun3"])
    figures["variance"] = {
        "runs": ["rerun1", "rerun2", "rerun3"],
        "means": v["means"],
        "mean": v["mean"],
        "run_std": v["run_std"],
        "run_std_by_metric": v["run_std_by_metric"],
        "tasks_in_every_run": v["tasks_in_every_run"],
    }
    (HERE / "sdk_figures.json").write_text(json.dumps(figures, indent=1, sort_keys=True) + "\n")


def _plain(value):  # type: ignore[no-untyped-def]
    return list(value) if isinstance(value, tuple) else value


def _version() -> str:
    from importlib.metadata import version

    return version("whileai")


if __name__ == "__main__":
    main()
