"""What the policy will learn: the checks a trainer runs on rows before spending GPU time.

Every marker here is 1.0 for the good outcome. The modules, by what they hold:

- view: one row read once (the agent's texts, its calls, what it was told)
- style, lexicons: style markers (on published lexicons) and the over-refusal test
- actions, flags: what each call did; trajectory flags and their seven markers
- grounding, leaks: invented arguments; quoted privileged context
- stages, modelspec: stage lineage; constitutions and trait scoring
- mark, audit, presence, reports, lengths, duplicates: `whileai mark` and `whileai audit`
- features, scancollect, scan, scanrun: the hack scan and `scan --diff`
- quickscan: the hack scan's cheap mode, the one answer to "does the reward track X"
- curriculum, decontaminate: tasks easy to hard; rows that copy an eval
"""
