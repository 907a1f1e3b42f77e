"""Text compared with text: the one home of near-duplicate and near-copy checks.

Every stage that asks "is this text a copy of that one" asks it here, each at a named
level (`levels.py`) instead of with a private tokenizer and threshold:

    tokens.py      words, the exact-match key, word n-grams and hashed n-gram features
    minhash.py     one MinHash index with banded keys (the novelty filter, near-duplicate asks)
    coverage.py    one n-gram coverage measure (decontaminate, the environment export's split)
    similarity.py  one similarity for prompts: the hash embedding, exact cosine search
                   (leakage, the `simulate --traces` near-copy guard)
    levels.py      the named thresholds each of those stages uses
    literals.py    the literals every match of a regex holds: a cheap gate before a search
                   (readers that try many patterns on every line)
"""
