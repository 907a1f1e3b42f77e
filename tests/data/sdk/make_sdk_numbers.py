"""What the original SDK (whileai 0.131) computes on the inputs of issue 23's "numbers that
disagree" list (run by hand in the SDK's venv):

    /work/main/.venv-sdk/bin/python tests/data/sdk/make_sdk_numbers.py

Standard library and the SDK only. Writes `sdk_numbers.json`: each case's input and the
SDK's output. `tests/test_sdk_numbers.py` reads it, needs no SDK, and checks ours: the
same number where ours was wrong, and where ours differs on purpose, the reason (also in
the docs) as an assertion.
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).parent

# Per-token KL: the row's totals say 8.1 nats over 8 generated tokens; its steps carry the
# same difference over 27 tokens (they count more than the policy generated).
KL_ROW = {
    "scenario_id": "kl-a",
    "rollout_index": 0,
    "prompt": "p",
    "final_text": "done",
    "steps": [
        {"text": "hi", "logprob": -4.0, "n_tokens": 12, "ref_logprob": -7.0},
        {"role": "user", "text": "u"},
        {"text": "done", "logprob": -6.0, "n_tokens": 15, "ref_logprob": -11.1},
    ],
    "logprob": -10.0,
    "n_tokens": 8,
    "ref_logprob": -18.1,
}


def delta_rows() -> tuple[list[dict], list[dict]]:
    """Two stances, five tasks each, one rollout a task: after, four of each five fail."""
    before, after = [], []
    for stance in ("mistaken", "hurried"):
        for t in range(5):
            base = {"scenario_id": f"{stance}-{t}", "rollout_index": 0, "stance": stance}
            before.append({**base, "reward": 1, "judge_status": "ok"})
            after.append({**base, "reward": 1 if t == 4 else 0, "judge_status": "ok"})
    return before, after


def main() -> None:
    from whileai.simulations.score.delta import delta_report
    from whileai.simulations.score.judging import normalize_judge_result
    from whileai.simulations.score.logprobs import mean_kl
    from whileai.simulations.score.passat import pass_at
    from whileai.simulations.verify.math import Numeric
    from whileai.simulations.verify.text import MultipleChoice

    out: dict = {}
    out["multiple_choice"] = {
        reply: list(MultipleChoice().check(reply, "B", {}))
        for reply in ("I pick (B).", "I think it is C", "I'd go with B.")
    }
    out["numeric"] = {
        reply: list(Numeric().check(reply, "0.5", {}))
        for reply in ("\\boxed{\\frac{1}{2}}", "The answer is 1/2", "so \\(\\dfrac{1}{2}\\)")
    }
    out["judge_score"] = normalize_judge_result({"score": 1})
    rows = [{"task_id": t, "reward": 0.7} for t in "abcdefgh" for _ in range(4)]
    partial = pass_at(rows)
    out["pass_at_partial"] = {"pass_at_1": partial.pass_at_1, "text": str(partial)}
    out["mean_kl"] = {"row": KL_ROW, "sdk": mean_kl([json.loads(json.dumps(KL_ROW))])}
    before, after = delta_rows()
    report = delta_report(before, after, by="stance")
    out["delta_by_stance"] = {
        "groups_down": report["groups_down"],
        "groups": {
            g: {k: r.get(k) for k in ("delta", "ci95", "n_paired", "verdict", "p_value")}
            for g, r in report["groups"].items()
        },
    }
    (HERE / "sdk_numbers.json").write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
