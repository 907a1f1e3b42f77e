"""The simulated person: every writer that voices them, their side of a conversation, and
the check every drawn line passes.

    template.py    the template writer: openers and the offline person's follow-ups, no
                   model and no key (the `template` writer in the registry)
    model.py       the model writer: a chat model voices the person (`--writer MODEL`)
    resolve.py     `resolve_writer`: where a `--writer` string becomes a writer
    person.py      the offline person's side: what the agent asked, and the answer
    voice.py       the voice check: does a drawn line read as the person (role flips,
                   parroting, the stop marker)?

It sits between the judges (the voice check reads a line with the judges' reply
evidence) and simulate (which asks a writer for each turn): the writers implement the
agents' `Writer` protocol and call the one model client, and nothing here imports the
simulation.
"""
