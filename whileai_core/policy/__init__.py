"""What the policy will learn: the checks a trainer runs on rows before spending GPU time.

view.py          one row read once: the agent's texts, its calls, what it was told
style.py         style markers (boilerplate, hedging, apology, sycophancy, answered)
actions.py       what each call did: read, write, delete, command; test runs
flags.py         trajectory flags (lie.*, hack.*, risk.*) and their seven markers
grounding.py     argument grounding: every tool argument came from the conversation
"""
