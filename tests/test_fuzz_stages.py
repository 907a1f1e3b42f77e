"""One row never takes a run down: over 10,000 generated lines through every row stage.

The corpus mixes the golden graded rows (each tagged with a `fuzz_id` key no stage knows),
valid rows with unusual values (content parts, string arguments, non-object results, a
row nested exactly as deep as allowed, huge strings, extreme rewards inside the bound)
and bad lines of every kind: nested past the limit (and past orjson's 1,024), longer than
a line may be, wrong types at every level, NaN/Infinity, bad UTF-8, truncated JSON,
non-objects, a boolean or overflowing reward, no ask. Every stage runs in-process
through the real CLI (validate, grade, report, optimize rl and sft, export openai/trl,
--pairs both ways, --env, push to the embedded store), on the mixed file and on a file
of the good rows alone. A stage passes when it raises nothing but a one-line
`WhileaiError`, names exactly the bad lines (file:line) and counts them, and writes
byte for byte what it writes for the good rows alone, every good row's keys kept.
"""

from __future__ import annotations

import copy
import io
import random
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest

from whileai_core.errors import WhileaiError
from whileai_core.jsonl import DEFAULT_ROW_DEPTH, ROW_DEPTH_CEILING, ReadStats
from whileai_core.row import MAX_ID_CHARS
from whileai_core.row.validate import validate_stream

from .helpers import REPO

SEED = 20250610
GOLDEN_GRADED = sorted((REPO / "tests" / "golden" / "grade").glob("*.jsonl"))
LINE_CAP = 64 * 1024  # MAX_LINE_BYTES for this test, so overlong lines stay cheap to write
Row = dict[str, Any]


# --- the corpus --------------------------------------------------------------------------


# Without all of these a row has nothing to read: it is a bad line.
CONTENT_KEYS = ("prompt", "messages", "steps", "final_text", "scenario_id")

def _nest(depth: int, leaf: str = "1", kind: str = "{") -> str:
    """JSON text of containers nested `depth` deep around `leaf`."""
    if kind == "[":
        return "[" * depth + leaf + "]" * depth
    return '{"k":' * depth + leaf + "}" * depth


def _tool_call(row: Row) -> dict[str, Any] | None:
    for message in row.get("messages") or []:
        for call in message.get("tool_calls") or []:
            return call  # type: ignore[no-any-return]
    return None


def _first_step(row: Row) -> Row:
    steps = row.setdefault("steps", [])
    if not steps:
        steps.append({"tool": "lookup", "arguments": {}, "result": {"status": "ok"}})
    return steps[0]  # type: ignore[no-any-return]


def _set_call_arguments(row: Row, value: Any) -> None:
    call = _tool_call(row)
    if call is None:
        row["messages"].append(
            {"role": "assistant", "content": "", "tool_calls": [{"name": "x", "arguments": {}}]}
        )
        call = _tool_call(row)
    assert call is not None
    target = call["function"] if isinstance(call.get("function"), dict) else call
    target["arguments"] = value


# Each makes a valid row stranger; every stage must keep (or count) the result.
def _odd_but_valid(rng: random.Random) -> list[Callable[[Row], None]]:
    return [
        lambda r: r["messages"][0].update(content=[{"type": "text", "text": r["prompt"]}]),
        lambda r: _first_step(r).update(arguments='{"order_id": "ORD-1"}'),
        lambda r: _first_step(r).update(result=rng.choice([[1, "two"], "plain text", 7, None])),
        lambda r: r.update(reward=rng.choice([0, 1, -0.5, 1e9, -1e9, 0.49999])),
        lambda r: r.update(scenario_id="s" * MAX_ID_CHARS),
        lambda r: r.update(prompt="p" * rng.randrange(20_000, 30_000)),
        lambda r: r.update(final_text="\u202e\u0000 \U0001f600 " * 2_000),
        lambda r: r.update(rollout_index=2**62),
        lambda r: r["messages"][-1].update(content=None),
        lambda r: r.update(calibration=None, markers={"m": 1e9}),
        lambda r: r.update(reward=None, judge_status="error", reason="judge crashed"),
        lambda r: r.update(prompt=None) if r.get("messages") else None,
        lambda r: r.update(unknown={"deep": "__AT_LIMIT__"}),  # exactly as deep as allowed
        lambda r: _set_call_arguments(r, '{"not": "checked"'),
        lambda r: _set_call_arguments(r, None),
        lambda r: r["messages"][0].update(content=[1, None, "x", {"type": "image_url"}, []]),
        lambda r: r["messages"].insert(1, {"role": "assistant", "tool_calls": []}),
        lambda r: r["messages"].insert(1, {"role": "assistant", "tool_calls": [{}]}),
        lambda r: r["messages"].insert(
            1, {"role": "assistant", "tool_calls": [{"function": None}]}
        ),
        lambda r: r["messages"].append({"role": "tool", "content": "no call id"}),
        lambda r: r["messages"].append({"role": "mystery", "content": "?"}),
        lambda r: r.update(messages=[]),
        lambda r: r.update(steps=[{"role": "user", "text": None}, {}, {"tool": "x"}]),
        lambda r: r.update(prompt=""),
        lambda r: r.setdefault("privileged", {}).update(reference={"total": [1, 2.5, None]}),
        lambda r: r.setdefault("privileged", {}).update(reference=12345, rubric=["a", {"b": 1}]),
        lambda r: r.update(markers={}, marker_sources={"ghost": "judge"}),
        lambda r: r.update(faults=["timeout", 3], lineage={"source": 5}, usage={"tokens": "n/a"}),
        lambda r: r.update(calibration={"extra": [1], "k": 0, "pass_rate": 2.5, "ci95": []}),
        lambda r: r.update(judge_meta={"blob": "m" * 10_000}, reason="r" * 5_000),
        lambda r: r.update(reward=0, judge_status="ok"),
        lambda r: r.update(tools_used=[], seeded=[], truncated=True),
    ]


# Each breaks one rule of a row: it edits the row, and gives the JSON text (drawn afresh
# each time) that replaces the placeholder `"__X__"` it left.
Breaker = Callable[[Row], bytes]


def _breakers(rng: random.Random) -> list[Breaker]:
    def put(edit: Callable[[Row], Any], text: Callable[[], str | bytes]) -> Breaker:
        def apply(row: Row) -> bytes:
            edit(row)
            made = text()
            return made if isinstance(made, bytes) else made.encode()

        return apply

    def one_of(*texts: str) -> Callable[[], str]:
        return lambda: rng.choice(texts)

    def priv(row: Row) -> Row:
        return row.setdefault("privileged", {})  # type: ignore[no-any-return]

    limit = DEFAULT_ROW_DEPTH
    return [
        put(lambda r: r.update(extra="__X__"), lambda: _nest(rng.randrange(limit, 1_020))),
        put(lambda r: priv(r).update(x="__X__"), lambda: _nest(rng.randrange(70, 1_000), "[]")),
        put(lambda r: _first_step(r).update(result="__X__"), lambda: _nest(300, "1", "[")),
        put(lambda r: r["messages"][0].update(content="__X__"), lambda: _nest(80, "1", "[")),
        put(lambda r: r.update(extra="__X__"), lambda: _nest(rng.randrange(1_025, 3_000))),
        put(lambda r: r.update(reward="__X__"), one_of("NaN", "Infinity", "-Infinity", "1e400")),
        put(lambda r: r.update(prompt="__X__"), lambda: b'"bad \xff\xfe utf-8"'),
        put(lambda r: r.update(prompt="__X__"), lambda: '"lone \\ud800 surrogate"'),
        put(lambda r: r.update(reward="__X__"), one_of("true", "false")),
        put(lambda r: r.update(reward="__X__"), one_of("1e308", "-1e308", "1e10", "-1.5e9")),
        put(lambda r: r.update(reward="__X__"), one_of('"1"', "[1]", "{}")),
        put(lambda r: _first_step(r).update(arguments="__X__"), one_of("[1, 2]", "5", "true")),
        put(lambda r: _set_call_arguments(r, "__X__"), one_of("[]", "3.5", "false")),
        put(lambda r: r["messages"][0].update(content="__X__"), one_of("5", "true", "{}")),
        put(lambda r: r["messages"][0].update(role="__X__"), one_of("null", "3", "[]")),
        put(lambda r: r["messages"][0].pop("role"), lambda: ""),
        put(lambda r: r.update(messages="__X__"), one_of('"hi"', "{}", "7")),
        put(lambda r: r["messages"].append("__X__"), one_of('"hi"', "[]", "null")),
        put(lambda r: r.update(steps="__X__"), one_of('"lookup then refund"', "{}")),
        put(lambda r: r["steps"].append("__X__"), one_of('"a"', "4")),
        put(lambda r: r.update(scenario_id="__X__"), one_of("12", "[]", "{}")),
        put(
            lambda r: r.update(scenario_id="__X__"),
            lambda: f'"{"s" * rng.randrange(1_025, 9_000)}"',
        ),
        put(lambda r: r.update(rollout_index="__X__"), one_of('"3"', "1.5", "true")),
        put(lambda r: r.update(judge_status="__X__"), one_of('"great"', "1")),
        put(lambda r: r.update(markers="__X__"), one_of('{"a": "high"}', "[1]", '{"a": true}')),
        put(lambda r: r.update(marker_sources="__X__"), one_of('{"a": 1}', '"judge"')),
        put(lambda r: r.update(calibration="__X__"), one_of('{"k": "8"}', "[0.5]")),
        put(lambda r: r.update(privileged="__X__"), one_of('"secret"', "[]")),
        put(lambda r: r.update(tools_used="__X__"), one_of("[1]", '"get_order"')),
        put(lambda r: r.update(seed="__X__"), one_of('"5"', "0.5")),
        put(lambda r: r.update(truncated="__X__"), one_of('"yes"', "1")),
        put(lambda r: [r.pop(k, None) for k in CONTENT_KEYS], lambda: ""),
    ]


NON_ROWS = [
    b"[]",
    b"[1, 2]",
    b"5",
    b'"row"',
    b"null",
    b"true",
    b"{",
    b"nope",
    b'\xef\xbb\xbf{"prompt": "bom"}',
    b'{"prompt": "x"} trailing',
]


@dataclass
class Corpus:
    mixed: Path
    clean: Path
    lines: int
    bad: set[int]  # line numbers of the mixed file
    good: list[Row]


def _encode(row: Row, splice: bytes | None = None) -> bytes:
    line = orjson.dumps(row)
    # row (1) > "unknown" (2) > "deep" and its containers (3 ...): exactly the limit.
    line = line.replace(b'"__AT_LIMIT__"', _nest(DEFAULT_ROW_DEPTH - 2).encode())
    if splice is not None:
        line = line.replace(b'"__X__"', splice)
    return line


def _build(tmp: Path) -> Corpus:
    rng = random.Random(SEED)
    base = [orjson.loads(line) for path in GOLDEN_GRADED for line in path.read_bytes().splitlines()]
    entries: list[tuple[bytes, bool]] = []
    odd = _odd_but_valid(rng)
    for i in range(1_600):
        row = copy.deepcopy(base[i % len(base)])
        row["fuzz_id"] = i
        if i % 5 == 0:
            rng.choice(odd)(row)
        entries.append((_encode(row), False))
    breakers = _breakers(rng)
    for i in range(8_800):
        kind = i % 10
        if kind == 0:
            entries.append((rng.choice(NON_ROWS), True))
        elif kind == 1:  # truncated: any proper prefix of an object is not JSON
            line = _encode(rng.choice(base))
            entries.append((line[: rng.randrange(1, len(line) - 1)], True))
        elif kind == 2 and i % 40 == 2:  # past the line cap (kept rare: they are big)
            row = {**rng.choice(base), "blob": "x" * (LINE_CAP + rng.randrange(1, 5_000))}
            entries.append((_encode(row), True))
        else:
            row = copy.deepcopy(rng.choice(base))
            entries.append((_encode(row, rng.choice(breakers)(row)), True))
    rng.shuffle(entries)
    mixed, clean = tmp / "mixed.jsonl", tmp / "clean.jsonl"
    bad: set[int] = set()
    lineno = 0
    with mixed.open("wb") as fh:
        for line, is_bad in entries:
            if rng.random() < 0.02:
                fh.write(b"\n" if rng.random() < 0.5 else b"   \r\n")  # blank: no row at all
                lineno += 1
            lineno += 1
            fh.write(line + (b"\r\n" if rng.random() < 0.05 else b"\n"))
            if is_bad:
                bad.add(lineno)
    good = [orjson.loads(line) for line, is_bad in entries if not is_bad]
    clean.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in good))
    return Corpus(mixed, clean, lineno, bad, good)


# --- running the stages ------------------------------------------------------------------


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Corpus:
    return _build(tmp_path_factory.mktemp("fuzz"))


@pytest.fixture(scope="module")
def validated(corpus: Corpus) -> list[str]:
    """What `whileai validate` says of the mixed file: every stage must say the same."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("whileai_core.jsonl.MAX_LINE_BYTES", LINE_CAP)
        return validate_stream([str(corpus.mixed)]).problems


@pytest.fixture(autouse=True)
def _small_line_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("whileai_core.jsonl.MAX_LINE_BYTES", LINE_CAP)


@dataclass
class Run:
    code: int
    named: list[str]  # every "file:line: problem" the reader raised or counted
    stdout: bytes
    stderr: str

    @property
    def lines(self) -> list[int]:
        return sorted(int(text.split(":")[1]) for text in self.named)


@pytest.fixture
def run(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., Run]]:
    """Run `whileai ARGS` in-process: a `WhileaiError` is the one-line exit 1 a user sees,
    anything else propagates (a traceback fails the test). Every line the reader named is
    recorded, past the 20 a report keeps."""
    named: list[str] = []
    original = ReadStats.note

    def note(self: ReadStats, error: Any, keep: int = 20) -> None:
        named.append(str(error))
        original(self, error, keep)

    monkeypatch.setattr(ReadStats, "note", note)

    def go(*args: str) -> Run:
        from whileai_cli.app import app

        named.clear()
        out, err = io.BytesIO(), io.StringIO()
        fake_stdout = io.TextIOWrapper(out, encoding="utf-8")
        monkeypatch.setattr(sys, "stdout", fake_stdout)
        monkeypatch.setattr(sys, "stderr", err)
        monkeypatch.setattr(sys.stdin, "isatty", lambda: False, raising=False)
        try:
            code = app(prog_name="whileai", args=list(args), standalone_mode=False)
        except WhileaiError as exc:
            err.write(f"whileai: error: {exc}\n")
            code = 1
        finally:
            fake_stdout.flush()
            monkeypatch.setattr(sys, "stdout", sys.__stdout__)
            monkeypatch.setattr(sys, "stderr", sys.__stderr__)
        return Run(int(code or 0), list(named), out.getvalue(), err.getvalue())

    yield go


# (name, arguments after the input file; {out} is the output path, {dir} a fresh folder)
STAGES = [
    ("grade", ["grade", "--on-error", "skip", "-o", "{out}", "--report", "{rep}"]),
    ("report", ["report", "--on-error", "skip", "--report", "{rep}"]),
    (
        "optimize-rl",
        ["optimize", "--mode", "rl", "--on-error", "skip", "-o", "{out}", "--report", "{rep}"],
    ),
    (
        "optimize-sft",
        ["optimize", "--mode", "sft", "--on-error", "skip", "-o", "{out}", "--report", "{rep}"],
    ),
    ("export-openai", ["export", "--on-error", "skip", "-o", "{out}", "--report", "{rep}"]),
    (
        "export-trl",
        ["export", "--format", "trl", "--on-error", "skip", "-o", "{out}", "--report", "{rep}"],
    ),
    (
        "pairs-openai",
        ["export", "--pairs", "--on-error", "skip", "-o", "{out}", "--report", "{rep}"],
    ),
    (
        "pairs-trl",
        [
            "export",
            "--pairs",
            "--format",
            "trl",
            "--length-matched",
            "--on-error",
            "skip",
            "-o",
            "{out}",
            "--report",
            "{rep}",
        ],
    ),
    (
        "export-env",
        [
            "export",
            "--env",
            "{dir}",
            "--spec",
            "specs/orders",
            "--on-error",
            "skip",
            "--report",
            "{rep}",
        ],
    ),
]
# Report keys that describe the input file or its bad lines, not what was made of its rows.
INPUT_KEYS = {"skipped_lines", "first_error", "inputs", "input", "directory"}


def _files(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def _stage(run: Callable[..., Run], args: list[str], source: Path, work: Path) -> tuple[Run, Any]:
    work.mkdir(parents=True)
    out, rep, folder = work / "out.jsonl", work / "report.json", work / "env"
    filled = [a.format(out=out, rep=rep, dir=folder) for a in args]
    result = run(filled[0], str(source), *filled[1:])
    report = orjson.loads(rep.read_bytes()) if rep.exists() else None
    if isinstance(report, dict):
        report = {k: v for k, v in report.items() if k not in INPUT_KEYS}
    made = out.read_bytes() if out.exists() else _files(folder) if folder.exists() else None
    return result, (report, made)


def _rows(data: bytes) -> list[Row]:
    return [orjson.loads(line) for line in data.splitlines() if line.strip()]


def test_the_corpus_is_big_and_mostly_bad(corpus: Corpus) -> None:
    assert corpus.lines >= 10_000 and len(corpus.bad) >= 8_000 and len(corpus.good) >= 1_500


def test_validate_names_exactly_the_bad_lines(
    corpus: Corpus, run: Callable[..., Run], validated: list[str]
) -> None:
    result = run("validate", str(corpus.mixed), "--json", "--max-errors", "0")
    assert result.code == 1
    assert result.lines == sorted(corpus.bad)
    report = orjson.loads(result.stdout)
    assert (report["valid"], report["bad"]) == (len(corpus.good), len(corpus.bad))
    assert report["problems"] == validated == result.named
    assert all(p.startswith(f"{corpus.mixed}:") for p in report["problems"])
    assert run("validate", str(corpus.clean)).code == 0


@pytest.mark.parametrize(("name", "args"), STAGES, ids=[s[0] for s in STAGES])
def test_every_stage_skips_exactly_the_bad_lines_and_keeps_every_good_row(
    corpus: Corpus,
    run: Callable[..., Run],
    validated: list[str],
    tmp_path: Path,
    name: str,
    args: list[str],
) -> None:
    mixed, mixed_made = _stage(run, args, corpus.mixed, tmp_path / "mixed")
    clean, clean_made = _stage(run, args, corpus.clean, tmp_path / "clean")
    assert "Traceback" not in mixed.stderr
    assert mixed.lines == sorted(corpus.bad)
    assert mixed.named == validated  # the same lines, in the same words, as validate
    assert str(len(corpus.bad)) in mixed.stderr  # the count reaches the user
    assert clean.named == []
    assert mixed.code == clean.code
    # The bad lines change nothing about what is made of the good rows.
    assert mixed_made == clean_made
    if name == "grade":
        graded = _rows(mixed_made[1])
        assert [r["fuzz_id"] for r in graded] == [r["fuzz_id"] for r in corpus.good]
        for before, after in zip(corpus.good, graded, strict=True):
            assert set(before) <= set(after)
    if name.startswith("optimize"):
        by_id = {r["fuzz_id"]: r for r in corpus.good}
        kept = _rows(mixed_made[1])
        assert kept and all(set(by_id[r["fuzz_id"]]) <= set(r) for r in kept)


def test_push_to_the_embedded_store_skips_the_bad_lines_and_stores_every_good_row(
    corpus: Corpus,
    run: Callable[..., Run],
    validated: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stored = {}
    for label, source in (("mixed", corpus.mixed), ("clean", corpus.clean)):
        monkeypatch.setenv("WHILEAI_HOME", str(tmp_path / label))
        pushed = run(
            "push", str(source), "--name", "fuzz", "--no-gate", "--on-error", "skip", "--json"
        )
        assert pushed.code == 0, pushed.stderr
        record = orjson.loads(pushed.stdout)
        dataset = record["train"]["datasetId"]
        pulled = run("pull", dataset, "-o", str(tmp_path / f"{label}.jsonl"))
        assert pulled.code == 0, pulled.stderr
        stored[label] = (pushed, (tmp_path / f"{label}.jsonl").read_bytes(), record)
    (mixed, mixed_rows, mixed_record), (clean, clean_rows, _) = stored["mixed"], stored["clean"]
    assert mixed.lines == sorted(corpus.bad) and mixed.named == validated
    assert mixed_record["skipped_lines"] == len(corpus.bad) and clean.named == []
    assert mixed_rows == clean_rows
    rows = _rows(mixed_rows)
    left_out = mixed_record["left_out_leaks"]
    assert len(rows) + left_out == len(corpus.good)
    by_id = {r["fuzz_id"]: r for r in corpus.good}
    assert all(set(by_id[r["fuzz_id"]]) - {"privileged"} <= set(r) for r in rows)
    assert all("privileged" not in r for r in rows)


def test_the_issue_rows_as_a_user_runs_them(tmp_path: Path) -> None:
    """The reported aborts, through real subprocesses: a 300-deep row and a 1e308 reward
    are one named, counted line each, and the run goes on."""
    from .helpers import run_cli

    good = [orjson.loads(line) for line in GOLDEN_GRADED[0].read_bytes().splitlines()][:16]
    lines = [orjson.dumps(r) for r in good]
    lines[3] = lines[3][:-1] + b', "x": ' + _nest(300, "1", "[").encode() + b"}"
    lines[5] = orjson.dumps({**good[5], "reward": 1e308})
    source = tmp_path / "rows.jsonl"
    source.write_bytes(b"\n".join(lines) + b"\n")
    for args in (["grade"], ["optimize", "--mode", "sft"], ["optimize", "--mode", "rl"]):
        result = run_cli(*args, str(source), "--on-error", "skip", "-o", str(tmp_path / "o"))
        err = result.stderr.decode()
        assert "Traceback" not in err and "Error:" not in err, err
        assert "2 bad line" in err, err
    result = run_cli("optimize", str(source), "--mode", "sft", "-o", str(tmp_path / "o"))
    assert result.returncode == 1
    why = "nests deeper than 64 levels (WHILEAI_MAX_DEPTH raises the limit, up to 200)"
    assert result.stderr.decode() == f"whileai: error: {source}:4: {why}\n"


@pytest.mark.parametrize("place", ["extra", "privileged", "result", "arguments", "content"])
def test_a_row_at_the_depth_ceiling_goes_through_every_stage(
    run: Callable[..., Run], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, place: str
) -> None:
    """WHILEAI_MAX_DEPTH may go up to ROW_DEPTH_CEILING only because every stage can carry
    a row that deep, wherever the depth sits (orjson writes 255 levels at most, and the
    walkers recurse once per level)."""
    monkeypatch.setenv("WHILEAI_MAX_DEPTH", str(ROW_DEPTH_CEILING))
    rows = [orjson.loads(line) for line in GOLDEN_GRADED[0].read_bytes().splitlines()][:16]
    row = rows[3]
    # (where the value goes, how deep that place already is): the row ends exactly at the
    # ceiling, the row object itself being level 1.
    where: dict[str, tuple[Callable[[Row], None], int]] = {
        "extra": (lambda r: r.update(extra="__X__"), 1),
        "privileged": (lambda r: r.setdefault("privileged", {}).update(x="__X__"), 2),
        "result": (lambda r: _first_step(r).update(result="__X__"), 3),
        "arguments": (lambda r: _first_step(r).update(arguments={"x": "__X__"}), 4),
        "content": (lambda r: r["messages"][-1].update(content="__X__"), 3),
    }
    edit, above = where[place]
    edit(row)
    kind = "[" if place == "content" else "{"
    lines = [_encode(r) for r in rows]
    lines[3] = _encode(row, _nest(ROW_DEPTH_CEILING - above, "1", kind).encode())
    source = tmp_path / "deep.jsonl"
    source.write_bytes(b"\n".join(lines) + b"\n")
    assert run("validate", str(source)).code == 0
    for name, args in STAGES:
        result, _ = _stage(run, args, source, tmp_path / name)
        assert result.named == [], (name, result.named)
    monkeypatch.setenv("WHILEAI_HOME", str(tmp_path / "home"))
    # The same variable moves the embedded store's limit: it takes what the stages took.
    pushed = run("push", str(source), "--name", "deep", "--no-gate")
    assert pushed.code == 0 and "train deep: 16 rows" in pushed.stderr, pushed.stderr
