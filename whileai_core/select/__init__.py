"""The select stage: what a trainer sees.

optimize.py    graded rows in, the rows a trainer should see out (rl groups, sft picks)
gate.py        the publish gate: refuse gradient-free rl data, warn on the rest
hygiene.py     the surface features a reward should not track; pass@k survival
"""
