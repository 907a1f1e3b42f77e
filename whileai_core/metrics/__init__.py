"""The one metrics module: every per-task tally, pass rate and interval is computed here.

    tally.py       which task a row belongs to, its reward, the pass line, grouping
    stats.py       Wilson intervals, the bootstrap, the unbiased pass^k / pass@k estimators
    passat.py      the pass@1 / pass^k / pass@k report over rows
    agreement.py   one pass/fail signal against another as gold: confusion counts, Cohen's
                   kappa, agreement with its Wilson interval, pass_when_gold_fail
"""
