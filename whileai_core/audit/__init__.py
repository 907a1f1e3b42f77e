"""`whileai audit KIND ROWS`: one read of the rows, one report of what a trainer would learn.

- run: the audit itself, every report an accumulator fed one row at a time
- reports: the style, refusal and trajectory-flag reports over the markers (`markers/`)
- presence: how often a yes/no behaviour shows up, and whether the reward pays for it
- lengths: reply length and the surface numbers a reward should not track

Whether the reward tracks something is always asked of the hack scan's cheap mode
(`scan.quick`), so the audit, optimize, the publish gate and `whileai scan` agree.
"""
