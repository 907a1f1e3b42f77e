"""Streams: bad lines are named by file:line, skipped lines are counted, output is never torn."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from whileai_core.errors import BadRowError, WhileaiError
from whileai_core.jsonl import ReadStats, RowWriter, read_rows, repair_tail


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
