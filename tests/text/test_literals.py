"""The literal gate before a regex search: it may let through a line the pattern does not
match (the search then says no), never hold back one it does."""

from __future__ import annotations

import re
from pathlib import Path

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from whileai_core.people import voice
from whileai_core.text.literals import GatedPatterns, required_literals

DATA = Path(__file__).resolve().parents[1] / "data"


def test_a_gate_is_read_off_the_pattern() -> None:
    assert required_literals(re.compile(r"\bhow (?:can|may) i (?:help|assist)\b", re.I)) == {
        "how can i ",
        "how may i ",
    }
    assert required_literals(r"\bthank you for (?:contacting|your patience)\b") == {
        "thank you for "
    }
    # An optional part multiplies out; a part that may be absent is no gate alone.
    assert required_literals(r"ab(?:cd)?ef") == {"abcdef", "abef"}
    # Fewer strings win once they are long enough to be rare.
    assert required_literals(r"could you(?: please)? help") == {"could you"}
    # Punctuation is rare in a person's line: a tool call's brace gates on its own.
    assert required_literals(r"[{\[]\s*\"[a-z]{1,9}\"\s*:|\w=\w") == {'"', "="}


def test_no_gate_where_none_can_be_said() -> None:
    assert required_literals(r"\b\w{4,12}\b") is None
    assert required_literals(r"(?:ab|\d+)x?") is None  # one branch holds no literal
    assert required_literals(re.compile(r"how  can", re.VERBOSE)) is None


def _person_lines() -> list[str]:
    lines = []
    for name in ("realperson-orders.jsonl", "realperson-airline.jsonl"):
        for raw in (DATA / name).read_bytes().splitlines():
            row = orjson.loads(raw)
            lines += [m["content"] for m in row.get("messages", []) if m.get("content")]
    return lines


def test_the_voice_check_reads_every_line_as_it_did_ungated() -> None:
    """Every line of the real-model person samples (both roles: the model broke role in
    many) and some hostile ones: the gated reader answers as every pattern searched."""
    lines = [
        *_person_lines(),
        "\u0130 am an AI assistant.",  # folds to two characters: searched ungated
        "I\u2019m sorry, but I can\u2019t help with that.",
        '{"name": "get_order", "arguments": {}}',
        "order_id=ORD-1",
        "<|im_start|>assistant",
    ]
    assert len(lines) > 500
    for patterns in (voice._AGENT_SIDE, voice._SPELLED_SIDE):
        gated = GatedPatterns(patterns)
        for line in lines:
            assert gated.search_any(line) == any(p.search(line) for p in patterns), line
    assert voice.reads_as_agent("\u0130 am an AI assistant.")


# Patterns built from the pieces the readers use, and lines from a small alphabet that
# often spells them: the gate never holds back a line the pattern matches.
_WORDS = ["i", "am", "can", "help", "you", "the", "order", "'m", "not", "cannot"]
_word = st.sampled_from(_WORDS).map(re.escape)
# Every quantifier is bounded, so no drawn pattern backtracks without end on its line.
_piece = st.recursive(
    st.one_of(_word, _word, _word, st.sampled_from([r"\b", r"\w{1,3}", r"[,.]", r"\s", "[mn]"])),
    lambda inner: st.one_of(
        st.lists(inner, min_size=2, max_size=4).map(" ".join),
        st.lists(inner, min_size=2, max_size=3).map(lambda xs: "(?:" + "|".join(xs) + ")"),
        inner.map(lambda x: f"(?:{x})?"),
        inner.map(lambda x: f"(?:{x}){{1,2}}"),
    ),
    max_leaves=8,
)


@settings(max_examples=400, deadline=None)
@given(pattern=_piece, flags=st.sampled_from([0, re.IGNORECASE]), data=st.data())
def test_the_gate_never_holds_back_a_match(pattern: str, flags: int, data: st.DataObject) -> None:
    compiled = re.compile(pattern, flags)
    # A line the pattern matches, drawn from the pattern itself (ASCII: the gate's domain).
    line = data.draw(st.from_regex(compiled, alphabet=st.characters(max_codepoint=127)))
    assert compiled.search(line)
    assert GatedPatterns([compiled]).search_any(line), (pattern, line, required_literals(compiled))
