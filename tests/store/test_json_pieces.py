"""`json_pieces.loads_in_pieces`: the same value (or the same refusal) as `orjson.loads`,
parsed in calls of at most `PIECE` bytes, so a 16 MiB export never holds the interpreter
lock in one parse (issue 21, item 5)."""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from whileai_core.row.limits import json_depth
from whileai_core.store import json_pieces
from whileai_core.store.json_pieces import loads_in_pieces

# Strings full of what the index must not mistake for structure: quotes, runs of
# backslashes, brackets, commas and colons.
_text = st.text(alphabet='ab\\"{}[],: é\n', max_size=12)
_scalar = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**63), 2**63 - 1), st.floats(allow_nan=False,
    allow_infinity=False), _text,
)  # fmt: skip
_json = st.recursive(
    _scalar,
    lambda inner: st.one_of(st.lists(inner, max_size=5), st.dictionaries(_text, inner, max_size=5)),
    max_leaves=40,
)
_space = st.sampled_from(["", " ", "\n\t", "\r\n  "])


@st.composite
def _documents(draw: st.DrawFn) -> bytes:
    """A JSON text of a random value, with random whitespace around every token."""

    def text(value: Any) -> str:
        pad = draw(_space)
        if isinstance(value, list):
            return pad + "[" + ",".join(text(v) for v in value) + draw(_space) + "]" + pad
        if isinstance(value, dict):
            members = (
                draw(_space) + json.dumps(k) + draw(_space) + ":" + text(v)
                for k, v in value.items()
            )
            return pad + "{" + ",".join(members) + draw(_space) + "}" + pad
        return pad + json.dumps(value) + pad

    return text(draw(_json)).encode()


@st.composite
def _broken(draw: st.DrawFn) -> bytes:
    """A document with a few bytes inserted or deleted: usually malformed, sometimes not."""
    raw = bytearray(draw(_documents()))
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(raw)))
        if draw(st.booleans()) and raw:
            del raw[min(at, len(raw) - 1)]
        else:
            raw[at:at] = draw(
                st.sampled_from([b",", b":", b"[", b"]", b"{", b"}", b'"', b"\\", b'"k":1'])
            )
    return bytes(raw)


@pytest.fixture(autouse=True)
def tiny_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pieces of 16 bytes and index blocks of 7, so small documents take every path."""
    monkeypatch.setattr(json_pieces, "PIECE", 16)
    monkeypatch.setattr(json_pieces, "_BLOCK", 7)


def _orjson(raw: bytes) -> tuple[str, Any]:
    try:
        return "ok", orjson.loads(raw)
    except orjson.JSONDecodeError:
        return "refused", None


def _pieces(raw: bytes) -> tuple[str, Any]:
    try:
        return "ok", loads_in_pieces(raw, 10_000)[0]
    except json.JSONDecodeError:
        return "refused", None


@settings(max_examples=400, deadline=None)
@given(_documents())
def test_a_document_parses_to_what_orjson_makes_of_it_with_its_depth(raw: bytes) -> None:
    value, depth = loads_in_pieces(raw, 10_000)
    assert value == orjson.loads(raw)
    assert depth == json_depth(value, 10_000)


@settings(max_examples=600, deadline=None)
@given(_broken())
def test_a_broken_document_is_refused_exactly_when_orjson_refuses_it(raw: bytes) -> None:
    assert _pieces(raw) == _orjson(raw)


@pytest.mark.parametrize(
    "raw",
    [
        b'["a\\\\", "b"]',  # an escaped backslash ends the string
        b'["a\\\\\\"", ",", "]"]',  # escaped backslash, then an escaped quote
        b'{"k\\\\\\\\": [1, 2, 3], "v": "\\"}\\""}',
        b'[[1,2],[3,4],{"a":[5,6]},"' + b"\\\\" * 9 + b'"]',  # a run across block edges
    ],
)
def test_backslash_runs_pair_from_their_start(raw: bytes) -> None:
    assert loads_in_pieces(raw, 100)[0] == orjson.loads(raw)


@pytest.mark.parametrize(
    "raw",
    [
        b'{"a": 1, "b": 2, "c": [1, 2, 3, 4]',  # never closed
        b"[1, 2, 3, 4, 5, 6, 7, 8, 9]]",
        b'{"a": [1, 2, 3, 4, 5, 6, 7, 8}]',  # crossed brackets
        b'{"a": 1, "b" 2, "c": 3, "d": 4}',  # a member without its colon
        b'{"a": 1: 2, "b": 3, "c": 4}',
        b'[1, 2, 3, 4, 5, "six", 7, 8, 9,]',
        b"[1, 2, 3, 4, 5, 6, 7, 8, 9] [1]",
        b'{1: 2, "aaaaaaaaaaaaaaaaaa": 3}',  # a key that is not a string
        b'["aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',  # a string never closed
    ],
)
def test_malformed_documents_are_refused(raw: bytes) -> None:
    with pytest.raises(json.JSONDecodeError):
        loads_in_pieces(raw, 100)


def test_no_parse_call_sees_more_than_a_piece(monkeypatch: pytest.MonkeyPatch) -> None:
    """What keeps the event loop answering: orjson, which holds the interpreter lock for a
    whole call, never gets more than PIECE bytes at once."""
    seen: list[int] = []
    real = orjson.loads

    def spy(raw: Any) -> Any:
        seen.append(len(raw))
        return real(raw)

    monkeypatch.setattr(json_pieces, "PIECE", 4096)
    monkeypatch.setattr(json_pieces, "_BLOCK", 64 * 1024)
    monkeypatch.setattr(json_pieces.orjson, "loads", spy)
    spans = [
        {"traceId": f"{i:032x}", "attributes": [{"key": "k", "value": {"stringValue": "v" * 300}}]}
        for i in range(2000)
    ]
    raw = orjson.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]})
    assert len(raw) > 600_000
    value, depth = loads_in_pieces(raw, 64)
    assert value == real(raw) and depth == 10
    assert len(seen) >= 2000 and max(seen) <= 4096


def test_a_document_nested_past_the_bound_is_not_parsed() -> None:
    raw = b"[" * 40 + b"1" + b"]" * 40
    assert loads_in_pieces(raw, 39) == (None, 40)
    assert loads_in_pieces(raw, 40)[1] == 40
