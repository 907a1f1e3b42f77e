"""Which models `whileai serve-model` is serving on this machine (`whileai models`).

Each serving process writes one small record, `WHILEAI_HOME/served/<port>.json` (name,
run, adapter, base, url, pid), when it starts listening and removes it when it stops.
A process killed without cleaning up leaves its record behind, so a listing keeps only
records whose process is alive and whose URL answers `GET /v1/models`; the rest are
removed as it goes.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path
from typing import Any

from ..procs import pid_alive


def served_dir() -> Path:
    from ..settings import home

    return home() / "served"


def register(record: dict[str, Any]) -> Path:
    """Write a serving process's record; returns its path (remove it with `unregister`)."""
    folder = served_dir()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{int(record['port'])}.json"
    body = {**record, "pid": os.getpid(), "started": time.time()}
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(body, indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path


def unregister(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        path.unlink()



def _answers(url: str) -> bool:
    import httpx

    try:
        return httpx.get(url.rstrip("/") + "/models", timeout=3.0).status_code == 200
    except httpx.HTTPError:
        return False


def list_served() -> list[dict[str, Any]]:
    """Every model served here now, oldest first; stale records are removed."""
    folder = served_dir()
    found = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            continue
        if (
            not isinstance(record, dict)
            or not pid_alive(record.get("pid"))
            or not _answers(str(record.get("url") or ""))
        ):
            unregister(path)
            continue
        found.append(record)
    return sorted(found, key=lambda r: r.get("started") or 0)
