"""The command as a user meets it: exit codes, one-line errors, data on stdout only."""

from __future__ import annotations

import os
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from whileai_cli.app import app

from ..helpers import SDK_ROWS, run_cli

runner = CliRunner()


def test_version_and_help() -> None:
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and result.stdout.startswith("whileai ")
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0
    for command in ("validate", "schema", "spec"):
        assert command in result.stdout


def test_validate_fixture_rows_exit_zero() -> None:
    result = run_cli("validate", str(SDK_ROWS))
    assert result.returncode == 0, result.stderr
    assert result.stdout == b""
    assert b"40 rows checked, 40 valid, 0 bad" in result.stderr


def test_validate_reads_a_real_pipe() -> None:
    result = run_cli("validate", "-", "--json", input=SDK_ROWS.read_bytes())
    assert result.returncode == 0, result.stderr
    report = orjson.loads(result.stdout)
    assert report["rows"] == 40 and report["ok"] is True


def test_validate_names_every_bad_row_and_exits_one(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(
        SDK_ROWS.read_bytes().splitlines(keepends=True)[0]
        + b'{"prompt": "x", "steps": "oops"}\n'
        + b"[1]\n"
        + b'{"prompt": "x", "judge_status": "fine"}\n'
    )
    result = run_cli("validate", str(bad), "--json")
    assert result.returncode == 1
    err = result.stderr.decode()
    assert f"{bad}:2:" in err and f"{bad}:3:" in err and f"{bad}:4:" in err
    assert orjson.loads(result.stdout)["bad"] == 3
    assert "Traceback" not in err


def test_validate_lists_problems_in_file_order_past_twenty(tmp_path: Path) -> None:
    bad = tmp_path / "bad[red].jsonl"
    lines = [b'{"prompt": "x", "steps": "oops"}\n' if i % 2 else b"not json\n" for i in range(30)]
    bad.write_bytes(b"".join(lines))
    result = run_cli("validate", str(bad), "--json")
    assert result.returncode == 1
    problems = orjson.loads(result.stdout)["problems"]
    assert [int(p.split(".jsonl:")[1].split(":")[0]) for p in problems] == list(range(1, 31))
    printed = [line for line in result.stderr.decode().splitlines() if ".jsonl:" in line]
    assert len(printed) == 30 and printed[0].startswith(f"{bad}:1: not valid JSON")


def test_validate_fail_fast_stops_at_first_bad_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"prompt": "ok"}\n{"prompt": \n')
    result = run_cli("validate", str(bad), "--on-error", "fail")
    assert result.returncode == 1
    assert result.stderr.decode().strip().startswith(f"whileai: error: {bad}:2: not valid JSON")
    assert len(result.stderr.decode().strip().splitlines()) == 1


def test_on_error_reads_its_environment_variable(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"prompt": \n')
    result = run_cli("validate", str(bad), env={"WHILEAI_ON_ERROR": "fail"})
    assert result.returncode == 1 and b"whileai: error:" in result.stderr


def test_usage_error_is_one_line_and_exits_two() -> None:
    result = run_cli("validate", "--no-such-flag")
    assert result.returncode == 2
    assert result.stderr.decode().splitlines() == [
        "whileai validate: usage error: No such option: --no-such-flag "
        "(see 'whileai validate --help')"
    ]
    result = run_cli("no-such-command")
    assert result.returncode == 2 and len(result.stderr.decode().splitlines()) == 1
    assert run_cli().returncode == 2  # a bare `whileai` shows the help instead


def test_schema_prints_json_schema() -> None:
    result = runner.invoke(app, ["schema"])
    assert result.exit_code == 0
    assert "prompt" in orjson.loads(result.stdout)["properties"]


def test_spec_json_and_bad_spec_one_line(tmp_path: Path) -> None:
    result = runner.invoke(app, ["spec", "specs/orders", "--json"])
    assert result.exit_code == 0, result.output
    data = orjson.loads(result.stdout)
    assert {t["name"] for t in data["tools"]} >= {"get_order", "refund_order", "cancel_order"}
    assert data["rubric"] is True
    broken = tmp_path / "spec.json"
    broken.write_text('{"tools": [{"name": "a"}, {"name": "a"}]}')
    result = run_cli("spec", str(broken))
    assert result.returncode == 1
    lines = result.stderr.decode().strip().splitlines()
    assert lines == [f"whileai: error: {broken}: duplicate tool name 'a'"]


def test_debug_shows_a_traceback(tmp_path: Path) -> None:
    result = run_cli("--debug", "spec", str(tmp_path / "missing"))
    assert result.returncode == 1 and b"Traceback" in result.stderr


def test_model_refs_print_as_written_not_as_emoji(capsys: pytest.CaptureFixture[str]) -> None:
    from whileai_cli.console import out, say

    say("model openai:m: 3 calls")
    out().print("agent vllm:smile: ok")
    captured = capsys.readouterr()
    assert "openai:m: 3 calls" in captured.err
    assert "vllm:smile: ok" in captured.out


def test_every_command_loads_and_its_summary_is_its_docstring() -> None:
    """The root help is drawn from the command table without importing a command; the
    table's summaries must say what the commands themselves say."""
    import inspect

    import typer

    from whileai_cli.app import COMMANDS, load_command

    for name, entry in COMMANDS.items():
        command = load_command(name)
        assert command.name == name
        module = __import__(f"whileai_cli.commands.{entry.module}", fromlist=[entry.attr])
        target = getattr(module, entry.attr)
        if isinstance(target, typer.Typer):
            doc = target.info.help or ""
        else:
            doc = inspect.getdoc(target) or ""
        assert doc.split("\n")[0] == entry.summary, name


def test_root_help_imports_no_command_module() -> None:
    import subprocess
    import sys

    code = (
        "import sys; from whileai_cli.app import app\n"
        "try:\n    app(['--help'], prog_name='whileai')\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith('whileai_cli.commands.')))\n"
        "print(sorted(m for m in ('rich', 'pydantic', 'httpx') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.strip().splitlines()[-2:] == ["[]", "[]"]


@pytest.mark.parametrize("command", ["optimize", "push", "scan", "serve"])
def test_every_command_runs_one_blas_thread_unless_told(
    command: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The gate scan that optimize, push, scan and the server run multiplies small
    matrices: a second OpenBLAS thread only spins. The root sets one thread for every
    command before numpy loads, and an explicit OPENBLAS_NUM_THREADS wins."""
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    assert runner.invoke(app, [command, "--help"]).exit_code == 0
    assert os.environ["OPENBLAS_NUM_THREADS"] == "1"
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "4")
    assert runner.invoke(app, [command, "--help"]).exit_code == 0
    assert os.environ["OPENBLAS_NUM_THREADS"] == "4"
