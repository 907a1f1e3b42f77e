"""One coverage measure: `export --env` drops from train exactly the asks `whileai
decontaminate` flags when the train asks are checked against the holdout asks."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from whileai_core.export import export_environment
from whileai_core.metrics.holdout import holdout_side
from whileai_core.spec import load_spec
from whileai_core.text.tokens import ngrams, words

from ..export.rows import row
from ..helpers import ORDERS_SPEC, run_cli

HOLDOUT = 0.3
WORDS = [
    "order", "refund", "parcel", "never", "arrived", "charged", "twice", "please", "cancel",
    "account", "email", "address", "change", "delivery", "late", "broken", "screen", "card",
    "subscription", "month", "store", "credit", "return", "label", "printer", "box",
]  # fmt: skip


def _asks(seed: int) -> list[dict[str, Any]]:
    """One graded rollout per ask; asks come in families of near copies (0-4 words of a
    base ask changed), so a family split across train and holdout leaves copies on both
    sides, some above the 0.8 coverage line and some below it."""
    rng = random.Random(seed)
    rows = []
    for family in range(30):
        base = [rng.choice(WORDS) for _ in range(rng.randrange(10, 26))]
        for member in range(rng.randrange(1, 5)):
            words = list(base)
            for at in rng.sample(range(len(words)), rng.randrange(5)):
                words[at] = f"x{rng.randrange(10**6)}"
            task = f"sc-{family}-{member}"
            rows.append(row(task, 0, float(rng.random() < 0.5), prompt=" ".join(words)))
    return rows


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_environment_export_and_decontaminate_flag_the_same_asks(tmp_path: Path) -> None:
    rows = _asks(0)
    report = export_environment(
        rows, tmp_path / "env", load_spec(ORDERS_SPEC), holdout=HOLDOUT, band=(0.0, 1.0)
    )
    train_side = [r for r in rows if not holdout_side(r["scenario_id"], HOLDOUT)]
    held_side = [r for r in rows if holdout_side(r["scenario_id"], HOLDOUT)]
    exported = {
        json.loads(line)["info"]["task_id"]
        for line in (tmp_path / "env" / "data" / "train.jsonl").read_text().splitlines()
    }
    dropped_by_env = {r["scenario_id"] for r in train_side} - exported
    done = run_cli(
        "decontaminate",
        str(_write(tmp_path / "train.jsonl", train_side)),
        "--against",
        str(_write(tmp_path / "holdout.jsonl", held_side)),
    )
    assert done.returncode == 0, done.stderr.decode()
    kept = {json.loads(line)["scenario_id"] for line in done.stdout.splitlines()}
    flagged = {r["scenario_id"] for r in train_side} - kept
    assert dropped_by_env == flagged
    assert report.decontaminated == len(flagged) >= 3
    # and the set is a test of the line: some train asks share an 8-gram with a holdout ask
    # and stay, because no holdout ask covers 80% of their words (the old any-8-gram rule
    # dropped them from the environment while decontaminate kept them)
    held_grams = {g for r in held_side for g in ngrams(words(r["prompt"]), 8)}
    sharing = {
        r["scenario_id"] for r in train_side if set(ngrams(words(r["prompt"]), 8)) & held_grams
    }
    assert sharing - dropped_by_env and dropped_by_env <= sharing | _verbatim(train_side, held_side)


def _verbatim(train: list[dict[str, Any]], held: list[dict[str, Any]]) -> set[str]:
    keys = {" ".join(words(r["prompt"])) for r in held}
    return {r["scenario_id"] for r in train if " ".join(words(r["prompt"])) in keys}
