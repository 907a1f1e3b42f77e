"""The one metrics module: every per-task tally, pass rate and interval is computed here.

    tally.py       which task a row belongs to, its reward, the pass line, grouping
    stats.py       Wilson intervals, the bootstrap, the unbiased pass^k / pass@k estimators
    passat.py      the pass@1 / pass^k / pass@k report over rows
    taskvalues.py  per-task values of pass@1 and every marker, the unit comparisons use
    paired.py      A against B by task: bootstrap of the difference, sign-flip p-value
    power.py       spreads, the smallest detectable delta, tasks a holdout needs
    distributions.py  normal and Student t quantiles, standard library only
    grouped.py     the one correlation engine: reward vs features centred within ask, the
                   shuffle null, pooled r
    agreement.py   one pass/fail signal against another as gold: confusion counts, Cohen's
                   kappa, agreement with its Wilson interval, pass_when_gold_fail
"""
