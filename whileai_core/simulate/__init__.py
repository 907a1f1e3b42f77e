"""The simulate stage: a spec in, rows out.

Where things live, so the tree answers "where is X":

    config.py      what a run is asked to do (SimulateConfig) and what it reports (Report)
    grid.py        the coverage grid: world and human axes, the pairwise covering design
    situation.py   one grid cell made concrete: entity ids, targets, the judge's reference
    faults.py      where faults are scheduled: the plan a cell carries, how a fault looks
    world.py       the mock world that answers tool calls and fires the faults
    execute.py     the `--execute` world: the user's own backend instead of the mock
    openers.py     writing an ask's opener: novel within the run, never a source's copy
    novelty.py     the near-duplicate filter over openers (hashing embedder)
    allocation.py  where the rl allocation decides: probe, fill, extend, stop
    scheduler.py   the asyncio loop that spends the budget and writes settled groups
    rowmake.py     a finished rollout turned into a row
    resume.py      reading back a partly written output for --resume
    run.py         `run_simulation`: resolve agent and writer, open the output, run
    recommend.py   how big a run to ask for

The person a run talks to (the writers, the offline person, the voice check) is
`people/`'s: simulate asks a writer for each turn and never builds one itself.
"""
