"""`-o PATH` means what `> PATH` means in a shell (issue 21, items 16 and 17).

A regular file or a new path is replaced atomically; anything else (`/dev/stdout`, a
FIFO, a character device, a socket, the `/dev/fd/N` of a process substitution) is a
stream someone else owns and is written in place, never renamed over. A killed writer's
temporary sibling is named for what it is and removed by the next run. And a line far
over the row cap is refused while it streams past, without being held.
"""

from __future__ import annotations

import os
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import orjson
import pytest

from whileai_core.jsonl import PARTIAL_TAG

from ..helpers import ORDERS_SPEC, REPO, SDK_ROWS, run_cli

ROWS = 5


def _rows_file(tmp_path: Path) -> Path:
    path = tmp_path / "rows.jsonl"
    path.write_bytes(b"".join(SDK_ROWS.read_bytes().splitlines(keepends=True)[:ROWS]))
    return path


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "whileai_cli", *args]


def _env() -> dict[str, str]:
    return {**os.environ, "NO_COLOR": "1"}


def _graded(data: bytes) -> list[dict]:
    rows = [orjson.loads(line) for line in data.splitlines() if line.strip()]
    assert all("judge_status" in row for row in rows)
    return rows


def _read_all_in_thread(opener: object) -> tuple[threading.Thread, list[bytes]]:
    got: list[bytes] = []

    def run() -> None:
        with opener() as fh:  # type: ignore[operator]
            got.append(fh.read())

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, got


def test_dev_stdout_is_written_in_place_and_stays_a_link(tmp_path: Path) -> None:
    rows = _rows_file(tmp_path)
    before = os.lstat("/dev/stdout")
    result = run_cli("grade", str(rows), "-o", "/dev/stdout", "--report", "/dev/stderr")
    assert result.returncode == 0, result.stderr
    assert len(_graded(result.stdout)) == ROWS  # through the pipe that is our stdout
    assert b'"rows"' in result.stderr or b"pass@1" in result.stderr  # the report, on stderr
    after = os.lstat("/dev/stdout")
    assert stat.S_ISLNK(after.st_mode) and after.st_ino == before.st_ino
    assert not [p for p in os.listdir("/dev") if PARTIAL_TAG in p]


def test_dash_is_stdout(tmp_path: Path) -> None:
    result = run_cli("grade", str(_rows_file(tmp_path)), "-o", "-")
    assert result.returncode == 0, result.stderr
    assert len(_graded(result.stdout)) == ROWS
    assert not (REPO / "-").exists()


def test_a_fifo_is_written_in_place(tmp_path: Path) -> None:
    fifo = tmp_path / "rows.fifo"
    os.mkfifo(fifo)
    thread, got = _read_all_in_thread(lambda: fifo.open("rb"))
    result = run_cli("grade", str(_rows_file(tmp_path)), "-o", str(fifo))
    thread.join(timeout=30)
    assert result.returncode == 0, result.stderr
    assert len(_graded(got[0])) == ROWS
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rows.fifo", "rows.jsonl"]


def test_a_character_device_stays_a_device(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("making a device node needs root")
    device = tmp_path / "null"  # a twin of /dev/null
    os.mknod(device, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    result = run_cli("grade", str(_rows_file(tmp_path)), "-o", str(device))
    assert result.returncode == 0, result.stderr
    info = os.lstat(device)
    assert stat.S_ISCHR(info.st_mode) and info.st_rdev == os.makedev(1, 3)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["null", "rows.jsonl"]


def test_process_substitution_delivers_every_row(tmp_path: Path) -> None:
    rows, out = _rows_file(tmp_path), tmp_path / "out.gz"
    python = " ".join([sys.executable, "-m", "whileai_cli"])
    script = f"{python} grade {rows} -o >(gzip > {out}); code=$?; wait $!; exit $code"
    result = subprocess.run(
        ["bash", "-c", script], capture_output=True, env=_env(), cwd=REPO, timeout=120
    )
    assert result.returncode == 0, result.stderr
    import gzip

    assert len(_graded(gzip.decompress(out.read_bytes()))) == ROWS


def test_a_unix_socket_is_connected_to_and_written(tmp_path: Path) -> None:
    path = tmp_path / "rows.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(1)

    def accept() -> socket.socket:
        conn, _ = server.accept()
        return conn

    thread, got = _read_all_in_thread(lambda: accept().makefile("rb"))
    try:
        result = run_cli("grade", str(_rows_file(tmp_path)), "-o", str(path))
        thread.join(timeout=30)
    finally:
        server.close()
    assert result.returncode == 0, result.stderr
    assert len(_graded(got[0])) == ROWS
    assert stat.S_ISSOCK(os.lstat(path).st_mode)


def test_a_symlink_is_written_through_not_replaced(tmp_path: Path) -> None:
    real, link = tmp_path / "real.jsonl", tmp_path / "link.jsonl"
    real.write_bytes(b"")
    link.symlink_to(real)
    result = run_cli("grade", str(_rows_file(tmp_path)), "-o", str(link))
    assert result.returncode == 0, result.stderr
    assert link.is_symlink() and len(_graded(real.read_bytes())) == ROWS


def test_a_folder_is_refused_in_one_line(tmp_path: Path) -> None:
    result = run_cli("grade", str(_rows_file(tmp_path)), "-o", str(tmp_path))
    assert result.returncode == 1
    assert result.stderr.decode().strip().endswith("is a folder; give a file to write")


def test_resume_refuses_a_stream(tmp_path: Path) -> None:
    fifo = tmp_path / "rows.fifo"
    os.mkfifo(fifo)
    result = run_cli("simulate", str(ORDERS_SPEC), "--budget", "2", "--resume", "-o", str(fifo))
    assert result.returncode == 1
    assert b"--resume reads the finished rows back from -o" in result.stderr
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def _partials(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if PARTIAL_TAG in p.name)


def test_a_killed_writer_leaves_a_named_partial_that_the_next_run_removes(
    tmp_path: Path,
) -> None:
    rows, out = _rows_file(tmp_path), tmp_path / "g.jsonl"
    out.write_bytes(b'{"prompt": "yesterday"}\n')
    # Rows come from a pipe the test holds open, so the run is mid-write when killed.
    proc = subprocess.Popen(
        _cli("grade", "-", "-o", str(out)),
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env=_env(), cwd=REPO,
    )  # fmt: skip
    assert proc.stdin is not None
    proc.stdin.write(rows.read_bytes())
    proc.stdin.flush()
    deadline = time.monotonic() + 60
    while not _partials(tmp_path) and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    proc.stdin.close()
    [left] = _partials(tmp_path)
    # `ls -a` says what it is: the target's name, the tag, the host and the dead writer.
    assert left.name.startswith(f".g.jsonl.{PARTIAL_TAG}.")
    assert f".{proc.pid}." in left.name
    assert out.read_bytes() == b'{"prompt": "yesterday"}\n'  # the old file is untouched
    # A partial whose writer is alive (this test) is not the next run's to remove.
    alive = tmp_path / left.name.replace(f".{proc.pid}.", f".{os.getpid()}.")
    alive.write_bytes(b"")
    result = run_cli("grade", str(rows), "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert len(_graded(out.read_bytes())) == ROWS
    assert _partials(tmp_path) == [alive]


# --- item 17: a huge line is refused while it streams past ---------------------------------


_MEASURED = """
import atexit, runpy, sys
REPORT = sys.argv[1]
def _report():
    with open("/proc/self/status") as status, open(REPORT, "w") as out:
        out.write(next(line for line in status if line.startswith("VmHWM:")))
atexit.register(_report)
sys.argv = ["whileai", *sys.argv[2:]]
runpy.run_module("whileai_cli", run_name="__main__")
"""


def _peak_rss_mb(args: list[str], *, stdin: object, tmp_path: Path) -> tuple[int, bytes, float]:
    """(exit code, stderr, the CLI's own peak RSS in MB). The child reads its VmHWM as it
    exits: wait4's ru_maxrss keeps the high-water mark of the memory the child was forked
    from, so late in a long pytest run it reports pytest's size, not the command's."""
    report = tmp_path / "vmhwm"
    assert args[:3] == [sys.executable, "-m", "whileai_cli"]
    proc = subprocess.Popen(
        [sys.executable, "-c", _MEASURED, str(report), *args[3:]],
        stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,  # type: ignore[arg-type]
        env=_env(), cwd=REPO,
    )  # fmt: skip
    assert proc.stderr is not None
    err = proc.stderr.read()
    proc.wait(timeout=600)
    kilobytes = int(report.read_text().split()[1])
    return proc.returncode, err, kilobytes / 1024


HUGE = 300 * 1024 * 1024  # over the 256 MiB cap


def _huge_line_file(tmp_path: Path) -> Path:
    good = b'{"prompt": "hi", "final_text": "ok"}\n'
    path = tmp_path / "huge.jsonl"
    with path.open("wb") as fh:
        fh.write(good + b'{"prompt": "')
        block = b"a" * (1 << 20)
        for _ in range(HUGE // len(block)):
            fh.write(block)
        fh.write(b'"}\n' + good)
    return path


@pytest.mark.parametrize("via", ["file", "pipe"])
def test_validate_refuses_a_300_mb_line_without_holding_it(tmp_path: Path, via: str) -> None:
    path = _huge_line_file(tmp_path)
    if via == "file":
        code, err, peak = _peak_rss_mb(
            _cli("validate", str(path)), stdin=subprocess.DEVNULL, tmp_path=tmp_path
        )
        where = f"{path}:2"
    else:
        cat = subprocess.Popen(["cat", str(path)], stdout=subprocess.PIPE)
        code, err, peak = _peak_rss_mb(_cli("validate", "-"), stdin=cat.stdout, tmp_path=tmp_path)
        assert cat.stdout is not None
        cat.stdout.close()
        cat.wait(timeout=60)
        where = "<stdin>:2"
    assert code == 1
    assert f"{where}: line is 314,572,815 bytes, over the 256 MiB a row may take" in err.decode()
    assert b"3 rows checked, 2 valid, 1 bad" in err
    # Held, the line alone is 300 MB (it peaked at 566 MB); refused while streaming, the
    # process stays near its ~40 MB start. A generous bound, not a timing.
    assert peak < 160, f"validate peaked at {peak:.0f} MB"
