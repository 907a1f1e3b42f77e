"""The simulate stage: a spec in, rows out.

Where things live, so the tree answers "where is X":

    config.py      what a run is asked to do (SimulateConfig) and what it reports (Report)
    grid.py        the coverage grid: world and human axes, the pairwise covering design
    situation.py   one grid cell made concrete: entity ids, targets, the judge's reference
    faults.py      the fault plan a cell schedules and how a faulted result looks
    world.py       the mock world that answers tool calls and fires the faults
    writer.py      the template writer: openers and the offline person's follow-ups
    novelty.py     the near-duplicate filter over openers (hashing embedder)
    rowmake.py     a finished rollout turned into a row
    resume.py      reading back a partly written output for --resume
    scheduler.py   the asyncio loop that spends the budget
    run.py         `run_simulation`: resolve agent and writer, open the output, run
    recommend.py   how big a run to ask for
"""
