"""Streams: bad lines are named by file:line, skipped lines are counted, output is never torn."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from whileai_core.errors import BadRowError, ConfigError, WhileaiError
from whileai_core.jsonl import ReadStats, RowWriter, iter_located, read_rows, repair_tail


def _write(path: Path, data: bytes) -> str:
    path.write_bytes(data)
    return str(path)


GOOD = b'{"prompt": "hello", "steps": []}\n'


@pytest.mark.parametrize(
    ("bad_line", "expected"),
    [
        (b'{"prompt": "cut off', "not valid JSON"),
        (b"[1, 2, 3]", "not a JSON object (got an array)"),
        (b'{"prompt": "x", "steps": "lookup then refund"}', "field 'steps' must be an array"),
        (b'{"prompt": "x", "reward": "1"}', "field 'reward' must be a number"),
        (b'{"prompt": "x", "steps": ["a"]}', "field 'steps[0]' must be an object"),
    ],
)
def test_bad_line_names_file_and_line(tmp_path: Path, bad_line: bytes, expected: str) -> None:
    path = _write(tmp_path / "rows.jsonl", GOOD + bad_line + b"\n" + GOOD)
    with pytest.raises(BadRowError) as info:
        list(read_rows([path]))
    assert info.value.line == 2
    assert str(info.value).startswith(f"{path}:2: ")
    assert expected in str(info.value)


def test_skip_counts_bad_lines_and_keeps_good_ones(tmp_path: Path) -> None:
    path = _write(tmp_path / "rows.jsonl", GOOD + b"nope\n" + b"[]\n" + GOOD)
    stats = ReadStats()
    rows = list(read_rows([path], on_error="skip", stats=stats))
    assert len(rows) == 2
    assert (stats.rows, stats.skipped) == (2, 2)
    assert stats.first_error is not None and ":2:" in stats.first_error


def test_empty_file_yields_nothing(tmp_path: Path) -> None:
    assert list(read_rows([_write(tmp_path / "empty.jsonl", b"")])) == []


def test_binary_file_is_a_clear_error(tmp_path: Path) -> None:
    path = _write(tmp_path / "blob.bin", bytes(range(256)) * 8)
    with pytest.raises(BadRowError, match=r"blob.bin:\d+: not valid JSON"):
        list(read_rows([path]))


def test_ten_megabyte_line_is_read(tmp_path: Path) -> None:
    big = orjson.dumps({"prompt": "x" * 10_000_000}) + b"\n"
    path = _write(tmp_path / "big.jsonl", big + GOOD)
    rows = list(read_rows([path]))
    assert len(rows[0]["prompt"]) == 10_000_000 and len(rows) == 2


def test_missing_file_and_directory_are_errors(tmp_path: Path) -> None:
    with pytest.raises(WhileaiError, match="cannot open"):
        list(read_rows([str(tmp_path / "absent.jsonl")]))
    with pytest.raises(WhileaiError, match="is a directory"):
        list(read_rows([str(tmp_path)]))


def test_replace_writer_leaves_old_file_on_failure(tmp_path: Path) -> None:
    target = tmp_path / "out.jsonl"
    target.write_bytes(GOOD)
    with pytest.raises(RuntimeError), RowWriter(str(target)) as writer:
        writer.write({"a": 1})
        raise RuntimeError("stage failed")
    assert target.read_bytes() == GOOD
    assert list(tmp_path.iterdir()) == [target]
    with RowWriter(str(target)) as writer:
        writer.write({"a": 1})
    assert target.read_bytes() == b'{"a":1}\n'


def test_append_writer_cuts_a_half_line_first(tmp_path: Path) -> None:
    target = tmp_path / "run.jsonl"
    target.write_bytes(GOOD + b'{"prompt": "half wri')
    with RowWriter(str(target), mode="append") as writer:
        writer.write({"prompt": "next"})
    lines = target.read_bytes().splitlines()
    assert [orjson.loads(x)["prompt"] for x in lines] == ["hello", "next"]


def test_repair_tail_is_a_no_op_on_clean_files(tmp_path: Path) -> None:
    target = tmp_path / "run.jsonl"
    target.write_bytes(GOOD)
    assert repair_tail(target) == 0
    assert target.read_bytes() == GOOD


def test_an_atomic_replace_gives_the_file_the_mode_a_plain_write_would(tmp_path: Path) -> None:
    import os
    import stat

    umask = os.umask(0o022)
    try:
        fresh = tmp_path / "fresh.jsonl"
        with RowWriter(str(fresh)) as writer:
            writer.write({"a": 1})
        assert stat.S_IMODE(fresh.stat().st_mode) == 0o644
        kept = tmp_path / "kept.jsonl"
        kept.write_text("")
        kept.chmod(0o640)
        with RowWriter(str(kept)) as writer:
            writer.write({"a": 1})
        assert stat.S_IMODE(kept.stat().st_mode) == 0o640
    finally:
        os.umask(umask)


# --- the row limits every reader applies --------------------------------------------------


def _nested(levels: int) -> bytes:
    """A row `levels` deep: the row object is level 1, its `extra` array level 2, ..."""
    inner = b"[" * (levels - 1) + b"1" + b"]" * (levels - 1)
    return b'{"prompt": "x", "extra": ' + inner + b"}"


def test_a_row_as_deep_as_the_limit_is_read_and_one_level_more_is_named(tmp_path: Path) -> None:
    path = _write(tmp_path / "deep.jsonl", _nested(64) + b"\n" + _nested(65) + b"\n" + GOOD)
    stats = ReadStats()
    rows = list(read_rows([path], on_error="skip", stats=stats))
    assert len(rows) == 2 and stats.skipped == 1
    assert stats.first_error == (
        f"{path}:2: nests deeper than 64 levels (WHILEAI_MAX_DEPTH raises the limit, up to 200)"
    )


@pytest.mark.parametrize("levels", [300, 1_000, 1_024, 1_025, 5_000])
def test_rows_nested_past_what_stages_can_carry_are_named_not_fatal(
    tmp_path: Path, levels: int
) -> None:
    path = _write(tmp_path / "deep.jsonl", _nested(levels) + b"\n" + GOOD)
    with pytest.raises(BadRowError, match=r"deep.jsonl:1: (nests deeper|not valid JSON)"):
        list(read_rows([path]))
    assert len(list(read_rows([path], on_error="skip"))) == 1


def test_whileai_max_depth_moves_the_limit_up_to_its_ceiling(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _write(tmp_path / "deep.jsonl", _nested(150) + b"\n")
    monkeypatch.setenv("WHILEAI_MAX_DEPTH", "150")
    assert len(list(read_rows([path]))) == 1
    monkeypatch.setenv("WHILEAI_MAX_DEPTH", "149")
    with pytest.raises(BadRowError, match="nests deeper than 149 levels"):
        list(read_rows([path]))
    for bad in ("201", "lots"):
        monkeypatch.setenv("WHILEAI_MAX_DEPTH", bad)
        with pytest.raises(ConfigError, match="WHILEAI_MAX_DEPTH"):
            list(read_rows([path]))


def test_an_overlong_line_is_named_and_passed_over_in_chunks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Longer than the cap and than the reader's chunk, so it is skipped a chunk at a time.
    monkeypatch.setattr("whileai_core.jsonl.MAX_LINE_BYTES", 1000)
    long = orjson.dumps({"prompt": "x" * 3_000_000})
    data = GOOD + long + b"\n" + GOOD + long  # the last one has no newline at all
    path = _write(tmp_path / "long.jsonl", data)
    stats = ReadStats()
    located = list(iter_located([path], on_error="skip", stats=stats))
    assert [line.lineno for line in located] == [1, 3]
    assert stats.errors == [
        f"{path}:2: line is 3,000,014 bytes, over the 1,000 bytes a row may take",
        f"{path}:4: line is 3,000,013 bytes, over the 1,000 bytes a row may take",
    ]
    # The spans still point at the right bytes (optimize reads rows again by seeking).
    for line in located:
        assert data[line.start : line.end] == GOOD


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (b'{"prompt": "x", "reward": true}', "field 'reward' must be a number, got a boolean"),
        (
            b'{"prompt": "x", "steps": [{"tool": "t", "arguments": [1]}]}',
            "field 'steps[0].arguments' must be a string or an object, got an array",
        ),
        (b'{"prompt": "x", "reward": 1e308}', "field 'reward' must be a finite number between"),
        (b'{"prompt": "x", "reward": NaN}', "not valid JSON"),
        (b'{"prompt": "x", "reward": 1e400}', "not valid JSON"),
        (b'{"prompt": "\xff"}', "not valid JSON"),
    ],
)
def test_the_issue_rows_are_named_by_every_reader_and_by_validate_in_the_same_words(
    tmp_path: Path, line: bytes, expected: str
) -> None:
    from whileai_core.row.validate import validate_stream

    path = _write(tmp_path / "rows.jsonl", GOOD + line + b"\n" + GOOD)
    stats = ReadStats()
    assert len(list(read_rows([path], on_error="skip", stats=stats))) == 2
    assert stats.first_error is not None and expected in stats.first_error
    assert validate_stream([path]).problems == [stats.first_error]
