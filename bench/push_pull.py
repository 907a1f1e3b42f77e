"""Push then pull a ~100 MB JSONL file through `whileai serve` on loopback.

Prints MB/s for each leg and the server's peak RSS (VmHWM), which must stay far below
the file size: uploads are streamed to disk, finalize reads line by line, downloads are
streamed from disk. Run by hand:

    .venv/bin/python bench/push_pull.py [--mb 100]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import orjson

from whileai_core.testing import serve_process

REPO = Path(__file__).resolve().parent.parent
FIXTURE = REPO / "tests" / "fixtures" / "sdk-rows-orders-explore.jsonl"


def _status_kb(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def _make_file(path: Path, megabytes: int) -> int:
    rows = [orjson.loads(line) for line in FIXTURE.read_bytes().splitlines() if line.strip()]
    target = megabytes * 1024 * 1024
    size = 0
    n = 0
    with path.open("wb") as fh:
        while size < target:
            row = dict(rows[n % len(rows)], scenario_id=f"sc-{n // 4}", rollout_index=n % 4)
            line = orjson.dumps(row) + b"\n"
            fh.write(line)
            size += len(line)
            n += 1
    return n


def _run(args: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(
        args, env=env, check=True, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=int, default=100)
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="whileai-bench-") as tmp:
        work = Path(tmp)
        data = work / "rows.jsonl"
        rows = _make_file(data, opts.mb)
        size_mb = data.stat().st_size / 1e6
        env = {**os.environ, "WHILEAI_HOME": str(work / "home"), "NO_COLOR": "1"}
        with serve_process(work / "srv", env=env) as (server, url):
            idle_rss = _status_kb(server.pid, "VmRSS")
            key = httpx.post(f"{url}/signup", json={"email": "bench@example.com"}).json()["api_key"]
            cli_env = {**env, "WHILEAI_API_URL": url, "WHILEAI_API_KEY": key}

            # 1. Wire only: create, PUT the file (streamed), finalize (validates every line).
            with httpx.Client(base_url=url, headers={"X-Api-Key": key}, timeout=600) as client:
                created = client.post("/datasets", json={"name": "raw"}).json()
                t0 = time.perf_counter()
                with data.open("rb") as fh:
                    httpx.put(
                        created["uploadUrl"],
                        content=iter(lambda: fh.read(1 << 20), b""),
                        timeout=600,
                    ).raise_for_status()
                t_put = time.perf_counter() - t0
                t0 = time.perf_counter()
                record = client.post(f"/datasets/{created['datasetId']}/finalize").json()
                t_finalize = time.perf_counter() - t0
                assert record["rows"] == rows, record

            # 2. The CLI end to end: `whileai push` (strip privileged, spool, hash, upload,
            #    finalize) and `whileai pull -o`.
            whileai = [sys.executable, "-m", "whileai_cli"]
            t_push = _run([*whileai, "push", str(data), "--name", "cli", "--no-gate"], cli_env)
            listed = httpx.get(f"{url}/datasets", headers={"X-Api-Key": key}).json()["datasets"]
            cli_id = next(d["datasetId"] for d in listed if d["name"] == "cli")
            out = work / "back.jsonl"
            t_pull = _run([*whileai, "pull", cli_id, "-o", str(out)], cli_env)
            assert out.stat().st_size == data.stat().st_size
            peak_rss = _status_kb(server.pid, "VmHWM")
    print(f"file: {size_mb:.1f} MB, {rows} rows")
    print(f"PUT upload (wire):       {size_mb / t_put:8.1f} MB/s  ({t_put:.2f} s)")
    print(f"finalize (validate all): {size_mb / t_finalize:8.1f} MB/s  ({t_finalize:.2f} s)")
    print(f"whileai push (CLI):      {size_mb / t_push:8.1f} MB/s  ({t_push:.2f} s)")
    print(f"whileai pull (CLI):      {size_mb / t_pull:8.1f} MB/s  ({t_pull:.2f} s)")
    print(
        f"server RSS: idle {idle_rss / 1024:.0f} MB, peak {peak_rss / 1024:.0f} MB "
        f"(file {size_mb:.0f} MB)"
    )


if __name__ == "__main__":
    main()
