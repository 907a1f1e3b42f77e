"""The answer key never leaves, however a row spells it (issue 21, items 9 and 10).

Each attack is a row a hostile or careless writer could hand us: the privileged block in a
tool message next to an integer past Python's digit limit (so Python's JSON reader gives
up on it), after a prefix, after a byte-order mark, as a Python repr, under a top-level
`Privileged` / `PRIVILEGED` key, and nested 1,100 brackets deep (past the recursion limit).
Every way out refuses or strips it with the one check (`privileged.prepare_to_ship`):
`export`, `push` and `pull` as a user runs them, and the server's finalize for a client
that uploads rows as they are.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import orjson

from whileai_core.row.privileged import carries_privileged, has_privileged

from ..helpers import ORDERS_SPEC, SDK_ROWS, run_cli
from ..platform_fixtures import LiveServer

REFERENCE = "the order already shipped so refuse the cancellation politely"
BLOCK = '{"privileged":{"reference":"' + REFERENCE + '"},"n":' + "9" * 5000 + "}"

# A tool message's content, as each attack writes it.
IN_TOOL_RESULT = {
    "past the digit limit": BLOCK,
    "after a prefix": "Result: " + BLOCK,
    "after a byte-order mark": "\ufeff" + BLOCK,
    "as a Python repr": repr({"privileged": {"reference": REFERENCE}, "n": 1}),
    "past the recursion limit": "[" * 1100 + '{"privileged":1}' + "]" * 1100,
    "as HTML entities": "{&#34;&#112;rivileged&#34;: {&#34;reference&#34;: 1}}",
}
TOP_LEVEL_KEYS = ("Privileged", "PRIVILEGED")


def _base() -> dict[str, Any]:
    row: dict[str, Any] = orjson.loads(SDK_ROWS.read_bytes().splitlines()[0])
    assert row["messages"][2]["role"] == "tool"
    return row


def attack_rows() -> list[dict[str, Any]]:
    """One clean row, then one row per attack."""
    rows = [_base()]
    for content in IN_TOOL_RESULT.values():
        row = _base()
        row["messages"][2]["content"] = content
        rows.append(row)
    for key in TOP_LEVEL_KEYS:
        row = _base()
        row[key] = {"reference": REFERENCE, "hidden_state": {"world_state": "shipped"}}
        rows.append(row)
    return rows


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    return path


def assert_nothing_of_it(data: bytes) -> None:
    lowered = data.lower()
    assert REFERENCE.encode() not in lowered
    assert b"rivileged" not in lowered
    for line in data.splitlines():
        if line.strip():
            value = orjson.loads(line)
            assert not carries_privileged(value) and not has_privileged(value)


def test_every_attack_validates_and_export_refuses_it_by_name(tmp_path: Path) -> None:
    source = _write(tmp_path / "rows.jsonl", attack_rows())
    assert run_cli("validate", str(source)).returncode == 0  # each row is a valid row
    for on_error in ("fail", "skip"):
        out = tmp_path / f"sft-{on_error}.jsonl"
        done = run_cli("export", str(source), "--include-failures", "-o", str(out),
                       "--on-error", on_error)  # fmt: skip
        err = done.stderr.decode()
        assert done.returncode == 0, err
        assert "Traceback" not in err and "RecursionError" not in err
        assert f"refused rows: {len(IN_TOOL_RESULT)} privileged_residue" in err
        samples = out.read_bytes()
        # The clean row and the two top-level spellings (their samples never held the key).
        assert len(samples.splitlines()) == 1 + len(TOP_LEVEL_KEYS)
        assert_nothing_of_it(samples)


def test_push_leaves_out_or_strips_every_attack_and_pull_shows_none(
    store_env: str, tmp_path: Path
) -> None:
    source = _write(tmp_path / "rows.jsonl", attack_rows())
    for on_error in ("fail", "skip"):
        done = run_cli("push", str(source), "--name", f"attacks-{on_error}", "--no-gate",
                       "--json", "--on-error", on_error)  # fmt: skip
        err = done.stderr.decode()
        assert done.returncode == 0, err
        assert "Traceback" not in err and "RecursionError" not in err
        result = orjson.loads(done.stdout)
        assert result["left_out_privileged"] == len(IN_TOOL_RESULT)
        assert result["first_left_out_privileged"] == f"{source}:2"
        assert f"left out {len(IN_TOOL_RESULT)} rows that still name the privileged" in err
        assert result["stripped"] == len(TOP_LEVEL_KEYS)
        assert result["train"]["rows"] == 1 + len(TOP_LEVEL_KEYS)
        pulled = run_cli("pull", result["train"]["datasetId"])
        assert pulled.returncode == 0, pulled.stderr.decode()
        assert len(pulled.stdout.splitlines()) == 1 + len(TOP_LEVEL_KEYS)
        assert_nothing_of_it(pulled.stdout)


def test_a_push_of_nothing_but_attacks_stores_nothing_and_says_why(
    store_env: str, tmp_path: Path
) -> None:
    source = _write(tmp_path / "rows.jsonl", attack_rows()[1 : 1 + len(IN_TOOL_RESULT)])
    done = run_cli("push", str(source), "--name", "only-attacks", "--no-gate")
    assert done.returncode == 1
    assert "that still name the privileged block" in done.stderr.decode()
    listed = run_cli("datasets", "--json", "--pending")
    assert orjson.loads(listed.stdout)["datasets"] == []


def _raw_upload(server: LiveServer, body: bytes) -> tuple[httpx.Client, str, httpx.Response]:
    """Rows uploaded as they are, the way a client that strips nothing (the original SDK)
    sends them: create, PUT the body to the upload link, finalize."""
    client = server.client(server.signup())
    created = client.post("/datasets", json={"name": "raw"}).json()
    assert httpx.put(created["uploadUrl"], content=body).status_code == 200
    return client, created["datasetId"], client.post(f"/datasets/{created['datasetId']}/finalize")


def test_the_servers_finalize_strips_or_leaves_out_every_attack(
    server: LiveServer, tmp_path: Path
) -> None:
    body = _write(tmp_path / "rows.jsonl", attack_rows()).read_bytes()
    client, dataset_id, response = _raw_upload(server, body)
    assert response.status_code == 200, response.text
    record = response.json()
    assert record["rows"] == 1 + len(TOP_LEVEL_KEYS)
    assert record["privilegedRemoved"] == len(TOP_LEVEL_KEYS)
    assert record["leftOut"] == {"privileged_residue": len(IN_TOOL_RESULT)}
    assert record["leftOutLines"] == {"privileged_residue": list(range(2, 2 + len(IN_TOOL_RESULT)))}
    assert any("left out" in w and "privileged block" in w for w in record["warnings"])
    link = client.get(f"/datasets/{dataset_id}/download").json()["downloadUrl"]
    stored = httpx.get(link).content
    assert len(stored.splitlines()) == 1 + len(TOP_LEVEL_KEYS)
    assert_nothing_of_it(stored)
    # preview and the public rows read the same stored body
    preview = client.get(f"/datasets/{dataset_id}/preview").json()
    assert_nothing_of_it(b"\n".join(orjson.dumps(r) for r in preview["rows"]))


def test_an_upload_of_only_attacks_is_refused_and_leaves_no_pending_dataset(
    server: LiveServer, tmp_path: Path
) -> None:
    rows = attack_rows()[1 : 1 + len(IN_TOOL_RESULT)]
    client, dataset_id, response = _raw_upload(
        server, _write(tmp_path / "r.jsonl", rows).read_bytes()
    )
    assert response.status_code == 400 and "every row was left out" in response.json()["error"]
    assert client.get(f"/datasets/{dataset_id}").status_code == 404
    assert client.get("/datasets", params={"status": "pending"}).json()["datasets"] == []


def test_hub_and_env_exports_carry_nothing_of_any_attack(tmp_path: Path) -> None:
    attacks = attack_rows()
    # The block in the prompt too: an env's question is the prompt.
    attacks[1]["prompt"] = attacks[1]["messages"][0]["content"] = "Status? " + BLOCK
    rows = [  # each ask passed once and failed once: a mixed group the RL gate admits
        {**row, "scenario_id": f"ask-{i}", "rollout_index": k, "reward": float(k == 0),
         "judge_status": "ok"}
        for i, row in enumerate(attacks)
        for k in range(2)
    ]  # fmt: skip
    source = _write(tmp_path / "rows.jsonl", rows)
    for flag in ("--hf", "--env"):
        folder = tmp_path / flag.strip("-")
        done = run_cli("export", str(source), flag, str(folder), "--spec", str(ORDERS_SPEC))
        err = done.stderr.decode()
        assert done.returncode == 0, err
        assert "Traceback" not in err and "RecursionError" not in err
        written = [p for p in folder.rglob("*") if p.suffix in (".json", ".jsonl")]
        assert written, flag
        for path in written:
            data = path.read_bytes().replace(b"privileged_residue", b"")
            assert REFERENCE.encode() not in data.lower(), path
            if path.suffix == ".jsonl":
                assert_nothing_of_it(data)
