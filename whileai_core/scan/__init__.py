"""The hack scan (`whileai scan`): what will a grouped update learn from this reward?

- engine: the one hack-signal engine, reward and features centred within ask against
  a shuffle floor (`hack_scan`, `analyse`)
- features: the candidate features per row (the hand tier and the auto tier)
- collect: reading rows in two passes into compact columns, never the rows themselves
- run: the scan over files, and `scan --diff` (what an update moved toward)
- quick: the engine's cheap mode, the one answer to "does the reward track X" that
  optimize, the publish gate, the audit and push ask
"""
