"""Behaviour markers: what a row shows about how the agent conducted itself, read off the
row (`whileai mark`, `whileai rank`).

Every marker is 1.0 for the good outcome. The modules, by what they hold:

- view: one row read once (the agent's texts, its calls, what it was told)
- style, lexicons: style markers (on published lexicons) and the over-refusal test
- actions, flags: what each call did; trajectory flags and their seven markers
- grounding, leaks: invented arguments; quoted privileged context
- modelspec: a constitution as a versioned object, its traits scored by a judge
- mark, rank: `whileai mark` (stamp the markers) and `whileai rank` (a quality score)

The reports over many rows are `audit/`'s; the hack scan is `scan/`'s; stage lineage is
`curate/`'s.
"""
