"""SFT selection: rejection sampling (rlhf-book ch. 9).

`top_per_prompt` keeps each ask's best completion(s) at or above `min_reward`,
`top_k_overall` the best k across asks; the `random_*` rules are the chance controls that
ignore reward and keep the same counts, so a gain from selection can be told from a gain
from having any data at all.

A reply that hedges, flatters, apologises or pads (`markers.style`'s four tic families)
is kept out unless `keep_tics` is set, and counted: supervised fine-tuning imitates every
kept reply at full weight, so a judge that passed "What a great question, and you are
absolutely right to ask." with reward 1 would teach the flattery along with the answer.
Under the reward rules only a row that would have been eligible counts as kept out for
its tics; under the random rules, any row.
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
                if reward < opts.min_reward:
                    report.drop("below_min_reward")
                elif _tic_out(rec, opts, report):
                    pass
                else:
                    eligible.append((reward, order, rec, stamp))
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
        for _, whole, stamp in cleaned:
            group = [rec for rec in whole if not _tic_out(rec, opts, report)]
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


def _tic_out(rec: Record, opts: OptimizeOptions, report: OptimizeReport) -> bool:
    """Keep `rec` out for its style tics (counting it), unless tics are kept."""
    if opts.keep_tics or not rec.tics:
        return False
    report.drop("style_tic")
    for kind in rec.tics:
        report.style_tics[kind] = report.style_tics.get(kind, 0) + 1
    return True
