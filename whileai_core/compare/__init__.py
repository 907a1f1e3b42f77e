"""Before and after: is run B different from run A, by how much, and can the eval tell?

    compare.py     compare_runs: one metric, paired by task, interval and p-value
    delta.py       delta_report: pass@1 and every shared marker, guards, groups, noise
    variance.py    eval_variance: how much the eval moves when it is simply re-run
    sides.py       reading a side's rows into per-task values, with its read counts
    evaluate.py    grading held-out rollouts as an eval, and the failures as traces
    logprobs.py    logprob coverage and confidence, mean KL to a reference
    staleness.py   which policies sampled the rows; the off-policy ones without logprobs
    lineage.py     the eval stamp every selector and export reads
    reference.py   scoring the agent's turns under a reference model

The statistics themselves live in `whileai_core.metrics` (paired, power, distributions).
"""
