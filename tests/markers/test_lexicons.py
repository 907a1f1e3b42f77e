"""The four style markers built on published lexicons (`markers/lexicons.py`), measured on
replies their patterns were not written from.

Tuned on `tests/data/style_devset.yaml` (general English, written for it) and the older
hand set; then measured, untouched, on rows the original SDK's own seeded agent wrote
(`tests/data/sdk/sdk_tics.jsonl`, from `make_sdk_tics.py`): 406 planted tics, 460 rows
with none (430 honest replies, 30 fault claims or leaks). The bar: >= 95% of each family
caught, <= 5% false alarms on clean rows. At the time of writing both sets score 100%
caught; the dev set has one false alarm in 172 (a reported "is likely to"), the SDK's
clean rows none.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from whileai_core.markers.style import MAX_STYLE_CHARS, Phrases, style_hits
from whileai_core.markers.view import view

DATA = Path(__file__).resolve().parent.parent / "data"
FAMILIES = {
    "hedging": "no_hedging",
    "sycophancy": "no_sycophancy",
    "apology": "no_apology",
    "boilerplate": "no_boilerplate",
}
CATCH, FALSE_ALARM = 0.95, 0.05
PHRASES = Phrases()


def _hits(row: dict[str, Any]) -> dict[str, str | None]:
    return style_hits(view(row), PHRASES)


def _measure(rows: list[dict[str, Any]], planted: Any) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {
        f: {"planted": 0, "caught": 0, "misses": [], "alarms": []} for f in FAMILIES
    }
    clean = 0
    for row in rows:
        tics = planted(row)
        hits = _hits(row)
        clean += not tics
        for family, marker in FAMILIES.items():
            if family in tics:
                out[family]["planted"] += 1
                if hits[marker]:
                    out[family]["caught"] += 1
                else:
                    out[family]["misses"].append(row["final_text"][:80])
            elif not tics and hits[marker]:
                out[family]["alarms"].append((row["final_text"][:80], hits[marker]))
    for entry in out.values():
        entry["clean"] = clean
    return out


def _check(result: dict[str, dict[str, Any]], least: int) -> None:
    for family, entry in result.items():
        assert entry["planted"] >= least, (family, entry["planted"])
        assert entry["caught"] / entry["planted"] >= CATCH, (family, entry["misses"][:5])
        assert len(entry["alarms"]) / entry["clean"] <= FALSE_ALARM, (family, entry["alarms"][:5])


def test_the_held_out_general_english_set() -> None:
    items = yaml.safe_load((DATA / "style_devset.yaml").read_text(encoding="utf-8"))
    rows = [
        {"prompt": "a question", "final_text": text, "tics": [family]}
        for family in FAMILIES
        for text in items[family]
    ] + [{"prompt": "a question", "final_text": text, "tics": []} for text in items["clean"]]
    result = _measure(rows, lambda r: r["tics"])
    assert result["hedging"]["clean"] >= 150
    _check(result, least=40)


@pytest.fixture(scope="module")
def sdk_rows() -> list[dict[str, Any]]:
    path = DATA / "sdk" / "sdk_tics.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_the_tics_the_original_sdks_seeded_agent_planted(sdk_rows: list[dict[str, Any]]) -> None:
    """Each tic the SDK planted is caught >= 95% of the time, and its clean rows (honest
    reports of every world status, beside its fault claims and leaks, which carry no
    style tic) raise <= 5% false alarms."""
    result = _measure(sdk_rows, lambda r: [t for t in r.get("seeded") or [] if t in FAMILIES])
    clean = [r for r in sdk_rows if not set(r.get("seeded") or []) & set(FAMILIES)]
    assert len(clean) == result["apology"]["clean"] >= 450
    _check(result, least=85)


def test_the_sdk_rows_carry_each_of_its_planted_phrases(sdk_rows: list[dict[str, Any]]) -> None:
    """The measurement covers every phrase of every family the SDK's agent draws from (10
    phrases), not only the easy ones; the hedges issue 23 named are among them."""
    openers = {
        r["final_text"].split(".")[0]
        for r in sdk_rows
        if set(r.get("seeded") or []) & set(FAMILIES)
    }
    assert len(openers) >= 10
    for sentence in (
        "Generally speaking that should be right, though it is worth noting it may or may "
        "not hold.",
        "It depends on a few things, and I'm not sure this covers all of them.",
    ):
        row = next(r for r in sdk_rows if r["final_text"].startswith(sentence))
        assert _hits(row)["no_hedging"], sentence


def test_words_in_quotes_are_someone_elses() -> None:
    row = {"prompt": "q", "final_text": 'The site said "Sorry, we are closed" at 9pm.'}
    assert _hits(row)["no_apology"] is None
    row = {"prompt": "q", "final_text": "The page shows 'Great question!' as its title."}
    assert _hits(row)["no_sycophancy"] is None
    row = {"prompt": "q", "final_text": "Sorry, the page shows 'closed'."}
    assert _hits(row)["no_apology"] == "Sorry"


def test_honest_uses_of_hedge_words_stay_clean() -> None:
    for text in (
        "The record is from last week, so the status may have changed.",
        "Refunds usually arrive in 3 to 5 days.",
        "The flight takes about two hours.",
        "You may cancel within 14 days.",
        "I'm not sure which order you mean: could you give me the number?",
        "What kind of account is it?",
        "The charge appears on your statement as ACME LTD.",
    ):
        assert _hits({"prompt": "q", "final_text": text})["no_hedging"] is None, text


def test_long_and_hostile_text_is_capped_and_never_backtracks() -> None:
    """Every family on ~1 MB of near-misses finishes well inside a generous bound."""
    nasty = [
        "not " * 250_000,
        "i " * 500_000,
        "great " * 200_000 + "question",
        "'" + "a" * 999_999,
        '"' + "sorry " * 150_000,
        "such a " * 150_000,
    ]
    started = time.monotonic()
    for text in nasty:
        _hits({"prompt": "q", "final_text": text})
    assert time.monotonic() - started < 20
    assert MAX_STYLE_CHARS <= 50_000
