"""`export --format trl` on samples already held (the original SDK's `to_trl`): the OpenAI
files `export` writes, SFT lines and preference lines, reshape into what TRL loads without
going back to the graded rows, and come out as the direct TRL export of those rows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..helpers import REPO, run_cli

GRADED = REPO / "tests" / "golden" / "grade" / "orders-rl.jsonl"


def _export(tmp_path: Path, name: str, *args: str) -> list[dict[str, Any]]:
    out = tmp_path / name
    done = run_cli("export", *args, "-o", str(out))
    assert done.returncode == 0, done.stderr.decode()
    return [json.loads(line) for line in out.read_text().splitlines()]


def test_openai_preference_lines_reshape_into_trls_pairs(tmp_path: Path) -> None:
    spec = ("--spec", "specs/orders")
    _export(tmp_path, "p.openai.jsonl", str(GRADED), "--pairs", "--format", "openai", *spec)
    held = _export(tmp_path, "p.trl.jsonl", str(tmp_path / "p.openai.jsonl"), "--pairs",
                   "--format", "trl")  # fmt: skip
    direct = _export(tmp_path, "d.trl.jsonl", str(GRADED), "--pairs", "--format", "trl", *spec)
    assert len(held) == len(direct) > 0
    keys = ("prompt", "chosen", "rejected", "tools")
    assert [{k: p[k] for k in keys} for p in held] == [{k: p[k] for k in keys} for p in direct]
    # ...and back: TRL's pairs reshape into OpenAI's lines as they were written.
    again = _export(tmp_path, "p.again.jsonl", str(tmp_path / "p.trl.jsonl"), "--pairs",
                    "--format", "openai")  # fmt: skip
    first = [json.loads(x) for x in (tmp_path / "p.openai.jsonl").read_text().splitlines()]
    assert again == first


def test_openai_sft_lines_reshape_into_trls_messages(tmp_path: Path) -> None:
    spec = ("--spec", "specs/orders")
    _export(tmp_path, "s.openai.jsonl", str(GRADED), "--format", "openai", *spec)
    held = _export(tmp_path, "s.trl.jsonl", str(tmp_path / "s.openai.jsonl"), "--format", "trl")
    direct = _export(tmp_path, "d.trl.jsonl", str(GRADED), "--format", "trl", *spec)
    assert len(held) == len(direct) > 0
    assert [(s["messages"], s["tools"]) for s in held] == [
        (s["messages"], s["tools"]) for s in direct
    ]
    from datasets import load_dataset

    loaded = load_dataset("json", data_files=str(tmp_path / "s.trl.jsonl"), split="train")
    assert loaded.num_rows == len(held)
