"""Where a trained adapter is, and what it was trained as.

`whileai train` saves the adapter with `whileai-run.json` beside it (the run id, the base,
the method, and a reward model's threshold). Commands that use an adapter take either the
run's id (its record on the store names the folder) or the folder itself.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import ConfigError

RUN_FILE = "whileai-run.json"


def adapter_folder(ref: str) -> Path:
    """The adapter folder `ref` names: a folder, or a run id whose record has one."""
    path = Path(ref)
    if path.is_dir():
        return path
    from ..store import open_store

    store = open_store()
    try:
        record = store.get_run(ref)
    finally:
        store.close()
    adapter = record.get("adapter")
    if not adapter:
        raise ConfigError(f"run {ref} has no adapter ({record.get('status')}): nothing to load")
    if not Path(adapter).is_dir():
        raise ConfigError(f"run {ref}: its adapter {adapter} is not on this machine")
    return Path(adapter)


def run_file(folder: Path) -> dict[str, Any]:
    path = folder / RUN_FILE
    if not path.is_file():
        raise ConfigError(f"{folder}: no {RUN_FILE}; not an adapter `whileai train` saved")
    about: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return about
