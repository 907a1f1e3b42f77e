"""Rows written by the original SDK's own seeded agent (whileai 0.131), for measuring the
style markers on tics someone else planted (run by hand in the SDK's venv):

    /work/main/.venv-sdk/bin/python tests/data/sdk/make_sdk_tics.py

`whileai.seeded_agent` answers honestly and, on a labelled share of rollouts, prefixes one
phrase of a tic family (hedging, sycophancy, apology, boilerplate) to its reply, or claims
success through a fault, or quotes the row's privileged context; every row says what was
planted in `seeded`. Two kinds of run, on the tools and system prompt of
tests/fixtures/orders-spec.json: the four style tics only at rate 0.6 (many planted rows),
and every behaviour at the SDK's default rate (0.35: clean rows beside fault claims and
leaks). `sdk_tics.jsonl` keeps the keys a marker reads. `tests/markers/test_lexicons.py`
reads it and needs no SDK.
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).parent
SPEC = HERE.parent.parent / "fixtures" / "orders-spec.json"
KEEP = ("scenario_id", "rollout_index", "prompt", "steps", "final_text", "seeded")
STYLE = ["hedging", "sycophancy", "apology", "boilerplate"]


def main() -> None:
    import whileai as wai

    spec = json.loads(SPEC.read_text())
    tools = spec["tools"]
    out = []
    runs = [(seed, STYLE, 0.6) for seed in (1, 2, 3, 4)] + [(seed, None, 0.35) for seed in (5, 6)]
    for seed, behaviors, rate in runs:
        agent = wai.seeded_agent(tools, rate=rate, seed=seed, behaviors=behaviors)
        data = wai.simulate(
            agent,
            tools=tools,
            system_prompt=spec["system_prompt"],
            simulator=False,
            budget=400,
            seed=seed,
            reproducible=True,
        )
        for row in data.trajectories:
            kept = {k: row[k] for k in KEEP if k in row}
            if "leak" in (row.get("seeded") or []):
                kept["privileged"] = row.get("privileged")
            kept["run"] = f"seed{seed}-{'style' if behaviors else 'all'}"
            out.append(kept)
    (HERE / "sdk_tics.jsonl").write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in out))


if __name__ == "__main__":
    main()
