"""SFT selection: rejection sampling (rlhf-book ch. 9).

`top_per_prompt` keeps each ask's best completion(s) at or above `min_reward`,
`top_k_overall` the best k across asks; the `random_*` rules are the chance controls that
ignore reward and keep the same counts, so a gain from selection can be told from a gain
from having any data at all.
"""

from __future__ import annotations

import random
from typing import Any

from .options import OptimizeOptions, OptimizeReport
from .records import Record
from .rl import Kept


def select_sft(
    cleaned: list[tuple[str, list[Record], dict[str, Any]]],
    opts: OptimizeOptions,
    report: OptimizeReport,
) -> Kept:
    rng = random.Random(opts.seed)
    chosen: list[tuple[Record, dict[str, Any]]] = []
    per_prompt = opts.k or 1
    if opts.select in ("top_per_prompt", "top_k_overall"):
        pool: list[tuple[float, int, Record, dict[str, Any]]] = []
        order = 0
        for _, group, stamp in cleaned:
            eligible = []
            for rec in group:
                reward = rec.effective
                if reward >= opts.min_reward:
                    eligible.append((reward, order, rec, stamp))
                else:
                    report.drop("below_min_reward")
                order += 1
            if opts.select == "top_per_prompt":
                eligible.sort(key=lambda item: (-item[0], item[1]))
                chosen.extend((rec, stamp) for _, _, rec, stamp in eligible[:per_prompt])
                report.drop("not_selected", max(0, len(eligible) - per_prompt))
                report.groups_kept += 1 if eligible else 0
            else:
                pool.extend(eligible)
        if opts.select == "top_k_overall":
            assert opts.k is not None
            pool.sort(key=lambda item: (-item[0], item[1]))
            chosen = [(rec, stamp) for _, _, rec, stamp in pool[: opts.k]]
            report.drop("not_selected", max(0, len(pool) - opts.k))
    else:
        everything: list[tuple[Record, dict[str, Any]]] = []
        for _, group, stamp in cleaned:
            if opts.select == "random_per_prompt":
                picks = rng.sample(group, min(per_prompt, len(group))) if group else []
                chosen.extend((rec, stamp) for rec in picks)
                report.drop("not_selected", len(group) - len(picks))
                report.groups_kept += 1 if picks else 0
            else:
                everything.extend((rec, stamp) for rec in group)
        if opts.select == "random_k_overall":
            assert opts.k is not None
            n = min(opts.k, len(everything))
            chosen = rng.sample(everything, n)
            report.drop("not_selected", len(everything) - n)
    if opts.select.endswith("_overall"):
        report.groups_kept = len({stamp["task_id"] for _, stamp in chosen})
    return [(rec, stamp, {}) for rec, stamp in chosen]
