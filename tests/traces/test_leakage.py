"""leakage: planted near copies of source prompts are flagged, every one and nothing else,
with the built-in embedder and with an embedding model on the loopback stub."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from whileai_core.testing import OpenAIStub, hashed_embedding, http_error
from whileai_core.text.similarity import PromptEmbedder, cosine
from whileai_core.traces.leakage import best_matches, find_leaks

from ..helpers import run_cli


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _near_copy(prompt: str, rng: random.Random) -> str:
    """A copy a person would call the same ask: re-cased, re-spaced, re-punctuated, or a
    long prompt with one word more."""
    kind = rng.randrange(4)
    if kind == 0:
        return prompt
    if kind == 1:
        return "  " + prompt.upper() + "  "
    if kind == 2:
        return prompt.replace(",", "").replace(".", "!") + "??"
    return prompt + " thanks"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, set[int]]:
    """Sources (orders openers), and generated rows: airline openers plus planted copies."""
    tmp = tmp_path_factory.mktemp("leak")
    sources, generated = tmp / "sources.jsonl", tmp / "generated.jsonl"
    for spec, out in (("orders", sources), ("airline", generated)):
        proc = run_cli("simulate", f"specs/{spec}", "--budget", "200", "-o", str(out))
        assert proc.returncode == 0, proc.stderr
    rng = random.Random(3)
    source_prompts = [r["prompt"] for r in _rows(sources)]
    rows = _rows(generated)
    long_ones = [p for p in source_prompts if len(p.split()) >= 40]
    planted = set()
    for i in range(30):
        base = rng.choice(long_ones)
        at = rng.randrange(len(rows) + 1)
        rows.insert(at, {"prompt": _near_copy(base, rng), "planted": i})
    for i, row in enumerate(rows):
        if "planted" in row:
            planted.add(i + 1)
    generated.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return sources, generated, planted


def _brute_force(generated: Path, sources: Path, threshold: float) -> set[int]:
    e = PromptEmbedder()
    src = [e.embed(r["prompt"]) for r in _rows(sources)]
    out = set()
    for i, row in enumerate(_rows(generated), start=1):
        v = e.embed(row["prompt"])
        if max(cosine(v, s) for s in src) >= threshold - 1e-12:
            out.add(i)
    return out


def test_planted_near_copies_are_flagged_and_nothing_else(corpus: tuple) -> None:
    sources, generated, planted = corpus
    proc = run_cli("leakage", str(generated), "--sources", str(sources), "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["n_leaky"] == len(planted) == 30
    assert {ex["row"] for ex in report["examples"]} == set(sorted(planted)[:20])
    assert report["n_exact"] >= 1 and report["n_near"] >= 1
    assert _brute_force(generated, sources, 0.9) == planted  # exact, not approximate


def test_drop_removes_the_flagged_rows_unchanged(corpus: tuple, tmp_path: Path) -> None:
    sources, generated, planted = corpus
    out = tmp_path / "kept.jsonl"
    proc = run_cli("leakage", str(generated), "--sources", str(sources), "--drop", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    kept = _rows(out)
    assert kept == [row for i, row in enumerate(_rows(generated), start=1) if i not in planted]
    assert b"kept " in proc.stderr and b"dropped 30" in proc.stderr
    again = run_cli("leakage", str(out), "--sources", str(sources), "--json")
    assert json.loads(again.stdout)["n_leaky"] == 0


def test_exact_matches_are_flagged_at_any_threshold() -> None:
    sources = ["Where is my order ORD-1234?", "cancel it"]
    leaks = find_leaks(["where is my  order ord-1234?", "something else"], sources, threshold=1.0)
    assert [(leak.index, leak.exact) for leak in leaks] == [(0, True)]


def test_an_embedding_model_on_the_stub_flags_the_same_rows(corpus: tuple) -> None:
    sources, generated, planted = corpus
    with OpenAIStub() as stub:
        url = stub.base_url
        proc = run_cli(
            "leakage", str(generated), "--sources", str(sources), "--embedder", stub.base_url,
            "--model", "embed-small", "--json",
        )  # fmt: skip
        bodies = [r.body for r in stub.requests if r.path.endswith("/embeddings")]
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["embedder"] == url
    assert bodies and all(b["model"] == "embed-small" and len(b["input"]) <= 64 for b in bodies)
    # the same answer as the pure-Python comparison of the stub's own vectors
    src = [hashed_embedding(r["prompt"]) for r in _rows(sources)]
    gen = [hashed_embedding(r["prompt"]) for r in _rows(generated)]
    flagged = {i for i, m in enumerate(best_matches(gen, src, 0.9), start=1) if m}
    exact = {i for i, r in enumerate(_rows(generated), start=1)
             if " ".join(r["prompt"].lower().split()) in
             {" ".join(r2["prompt"].lower().split()) for r2 in _rows(sources)}}  # fmt: skip
    assert report["n_leaky"] == len(flagged | exact)  # exactly what all pairs give
    assert planted <= flagged | exact  # every planted copy, whatever embedder
    assert len((flagged | exact) - planted) <= 2  # and a hashed 256-d space collides little


def test_a_failing_embedder_is_one_clear_error(corpus: tuple) -> None:
    sources, generated, _ = corpus
    with OpenAIStub(embed_error=http_error(404, message="no such model")) as stub:
        proc = run_cli(
            "leakage", str(generated), "--sources", str(sources), "--embedder", stub.base_url,
            "--model", "nope",
        )  # fmt: skip
    assert proc.returncode == 1 and proc.stdout == b""
    last = proc.stderr.decode().strip().splitlines()[-1]
    assert last.startswith("whileai: error:") and "404" in last and "no such model" in last
    usage = run_cli("leakage", str(generated))
    assert usage.returncode == 2 and b"--sources" in usage.stderr
