"""The named levels at which two texts count as the same, one per question asked.

A stage names the level it applies; a threshold lives here once, so two stages asking the
same question cannot drift to two answers (`leakage` and the `--traces` guard, or
`decontaminate` and the environment export, read the same constant).
"""

from __future__ import annotations

# A prompt is a near copy of another when the cosine of their hash embeddings
# (`similarity.PromptEmbedder`) reaches this; the same text (case and spacing aside) always
# is. SDK 0.131's `leakage_report` default: `leakage` and the `simulate --traces` guard.
NEAR_COPY_COSINE = 0.9

# A text is contaminated by an eval text that covers at least this share of its words with
# shared word n-grams of this length (the Llama 2 rule, SDK 0.131's `decontaminate`):
# `decontaminate` and the environment export's train/holdout split.
COVERAGE_NGRAM = 8
COVERAGE_OVERLAP = 0.8

# Two asks are one ask when the Jaccard of their prompts' word 3-gram shingles reaches this
# (`audit near-duplicates`, the publish gate's count).
SHINGLE_WORDS = 3
NEAR_DUPLICATE_JACCARD = 0.8

# MinHash bands x rows. Openers: 3 x 6 catches Jaccard 0.9 about nine times in ten and 0.5
# about one time in twenty (a cheap filter that may let a near copy through). Asks: 8 x 4
# finds pairs at Jaccard 0.8 ~99.9% of the time; each is then confirmed exactly.
NOVELTY_BANDS = (3, 6)
NEAR_DUPLICATE_BANDS = (8, 4)
