"""Near-copy checks against SDK 0.131 on the same inputs, computed live: the SDK runs in
its own venv as a subprocess on rows generated here, and its flags are compared with ours
row for row (`leakage` and the `simulate --traces` guard with its `leakage_report`,
`decontaminate` with its `decontaminate`)."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path
from typing import Any

from whileai_core.curate.decontaminate import (
    DecontaminationReport,
    EvalIndex,
    decontaminate,
    first_hit,
)
from whileai_core.simulate.config import SimulateConfig
from whileai_core.spec import load_spec
from whileai_core.text.levels import NEAR_COPY_COSINE
from whileai_core.text.similarity import PromptEmbedder, cosine
from whileai_core.traces.aim import plan_from_traces
from whileai_core.traces.leakage import find_leaks

from ..helpers import REPO, run_sdk

GOLDEN = REPO / "tests" / "golden" / "simulate"

SDK_LEAKAGE = """
import json, sys, warnings
warnings.simplefilter("ignore")
from whileai.simulations.ingest.traces import drop_leaky_rows
data = json.load(sys.stdin)
kept, report = drop_leaky_rows(data["rows"], data["sources"])
ids = {id(r) for r in kept}
flagged = [i for i, r in enumerate(data["rows"]) if id(r) not in ids]
print(json.dumps({"flagged": flagged, "n_leaky": report["n_leaky"]}))
"""

SDK_DECONTAMINATE = """
import json, sys, warnings
warnings.simplefilter("ignore")
from whileai.simulations.score.stats import decontaminate
data = json.load(sys.stdin)
out = {}
for fields in data["fields"]:
    clean, report = decontaminate(data["rows"], against=[data["evals"]], fields=fields)
    ids = {id(r) for r in clean}
    out[",".join(fields)] = [i for i, r in enumerate(data["rows"]) if id(r) not in ids]
print(json.dumps(out))
"""


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _mutate(prompt: str, rng: random.Random) -> str:
    """One edit a rewriter makes: a word swapped, dropped or added, the ids changed, the
    end cut, or a sign-off added."""
    words = prompt.split()
    kind = rng.randrange(6)
    if kind == 0:
        words[rng.randrange(len(words))] = rng.choice(["please", "now", "kindly", "today"])
    elif kind == 1:
        del words[rng.randrange(len(words))]
    elif kind == 2:
        words.insert(rng.randrange(len(words) + 1), rng.choice(["really", "urgent", "hello"]))
    elif kind == 3:
        words = [str(rng.randrange(10000)) if any(c.isdigit() for c in w) else w for w in words]
    elif kind == 4:
        words = words[: max(3, len(words) - rng.randrange(1, 4))]
    else:
        words += rng.sample(["thanks", "a lot", "for", "your", "help", "asap"], 2)
    return " ".join(words)


def _leakage_set(seed: int) -> tuple[list[dict[str, Any]], list[str]]:
    """Source prompts (orders openers) and generated rows: edited copies at every
    distance from the sources, and airline openers that copy nothing."""
    rng = random.Random(seed)
    sources = list(dict.fromkeys(r["prompt"] for r in _rows(GOLDEN / "orders-rl.jsonl")))
    rows = []
    for _ in range(150):
        prompt = rng.choice(sources)
        for _ in range(rng.randrange(1, 4)):
            prompt = _mutate(prompt, rng)
        rows.append({"prompt": prompt})
    rows += [{"prompt": r["prompt"]} for r in _rows(GOLDEN / "airline-rl.jsonl")[:40]]
    rng.shuffle(rows)
    return rows, sources


def test_leakage_and_the_traces_guard_flag_the_rows_the_sdk_flags() -> None:
    rows, sources = _leakage_set(0)
    sdk = run_sdk(SDK_LEAKAGE, {"rows": rows, "sources": sources})
    prompts = [r["prompt"] for r in rows]
    ours = [leak.index for leak in find_leaks(prompts, sources)]
    assert ours == sdk["flagged"] and len(ours) == sdk["n_leaky"]
    # the set is a test of the threshold: many rows on both sides of it, near it
    embed = PromptEmbedder()
    vectors = [embed.embed(s) for s in sources]
    best = [max(cosine(embed.embed(p), v) for v in vectors) for p in prompts]
    assert sum(0.8 <= b < NEAR_COPY_COSINE for b in best) >= 5
    assert sum(NEAR_COPY_COSINE <= b < 0.95 for b in best) >= 20
    assert 0 < len(ours) < len(rows)
    # the `simulate --traces` guard redraws exactly those openers
    plan = plan_from_traces(
        load_spec(REPO / "specs" / "orders"), SimulateConfig(), _rows(GOLDEN / "orders-rl.jsonl")
    )
    assert plan.sources is not None
    guarded = [i for i, p in enumerate(prompts) if plan.sources.nearest(p) is not None]
    assert guarded == sdk["flagged"]


VOCAB = [f"w{i}" for i in range(400)]


def _text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(VOCAB) for _ in range(n))


def _edited(text: str, edits: int, rng: random.Random) -> str:
    words = text.split()
    for at in rng.sample(range(len(words)), min(edits, len(words))):
        words[at] = f"new{rng.randrange(10**6)}"
    return " ".join(words)


def _decontamination_set(seed: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Eval rows (prompt, answer or reference, a reply) and training rows: copies of an
    eval prompt or answer with 0-3 words changed (coverage either side of 0.8), rows that
    repeat an eval task's id, replies that repeat an eval row's reply (not an answer key),
    shared template sentences, and rows that copy nothing."""
    rng = random.Random(seed)
    template = "hello i need some help with my account today please and thank you. "
    evals = []
    for i in range(40):
        row: dict[str, Any] = {
            "prompt": (template if i % 3 == 0 else "") + _text(rng, rng.randrange(6, 30)),
            "final_text": "Nothing was changed; please try again shortly. " + _text(rng, 4),
        }
        row["answer" if i % 2 else "reference"] = _text(rng, rng.randrange(5, 25))
        if i % 4 == 0:
            row["scenario_id"] = f"sc-{i}"
        evals.append(row)
    rows = []
    for i in range(160):
        source = rng.choice(evals)
        kind = i % 6
        row = {"prompt": _text(rng, 20), "final_text": _text(rng, 12)}
        if kind == 0:
            row["prompt"] = _edited(source["prompt"], rng.randrange(4), rng)
        elif kind == 1:
            key = "answer" if "answer" in source else "reference"
            row["final_text"] = _edited(source[key], rng.randrange(4), rng)
        elif kind == 2:
            row["final_text"] = source["final_text"]
        elif kind == 3:
            row["prompt"] = template + _text(rng, rng.randrange(3, 12))
        if rng.random() < 0.3:
            row["scenario_id"] = f"sc-{rng.randrange(0, 80, 2)}"
        rows.append(row)
    return rows, evals


def _ours(
    rows: list[dict[str, Any]], evals: list[dict[str, Any]], fields: tuple[str, ...]
) -> list[int]:
    for i, row in enumerate(rows):
        row["_at"] = i
    report = DecontaminationReport(fields, 0.8, 8)
    clean = {
        r["_at"] for r in decontaminate(rows, EvalIndex.of(evals), fields=fields, report=report)
    }
    for row in rows:
        del row["_at"]
    return [i for i in range(len(rows)) if i not in clean]


def test_decontaminate_flags_the_rows_the_sdk_flags() -> None:
    rows, evals = _decontamination_set(1)
    fields = [["prompt"], ["prompt", "final_text"]]
    sdk = run_sdk(SDK_DECONTAMINATE, {"rows": rows, "evals": evals, "fields": fields})
    for names in fields:
        ours = _ours(rows, evals, tuple(names))
        assert ours == sdk[",".join(names)], names
    # a set that tests every rule: each flags rows, near copies fall either side of 0.8,
    # and a reply that repeats an eval row's reply is never the flag
    index = EvalIndex.of(evals)
    hits = [first_hit(r, index, ("prompt", "final_text"), 0.8) for r in rows]
    kinds = Counter((h["kind"], h["field"]) for h in hits if h)
    assert min(kinds.values()) >= 2 and len(kinds) == 5, kinds
    edited = [i for i in range(0, len(rows), 6) if "scenario_id" not in rows[i]]
    assert sum(hits[i] is None for i in edited) >= 5
    assert all(h is None or h["kind"] == "same_task" for h in hits[2::6])


def test_where_ours_differs_from_the_sdk_and_why() -> None:
    """A short ask re-punctuated is the same ask: ours flags it verbatim (the same words),
    the SDK compares the punctuation and, under 8 words, has no near-copy rule to fall
    back on. A reply that repeats an eval row's reply is not contamination in either: the
    eval's `final_text` is a policy's reply, not its answer key."""
    evals = [{"prompt": "Cancel order 9911.", "final_text": "Nothing was changed, sorry."}]
    rows = [
        {"prompt": "cancel order 9911!"},
        {"prompt": "x", "final_text": "Nothing was changed, sorry."},
    ]
    sdk = run_sdk(
        SDK_DECONTAMINATE, {"rows": rows, "evals": evals, "fields": [["prompt", "final_text"]]}
    )
    assert sdk["prompt,final_text"] == []
    assert _ours(rows, evals, ("prompt", "final_text")) == [0]
