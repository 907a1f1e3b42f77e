"""Rows from wherever a command is pointed: a JSONL path, stdin, or a platform dataset id.

`simulate --tasks BASE`, `simulate --traces SRC` and `leakage --sources SRC` all accept a
dataset id where a file would go, so a set pushed once is used by name. A dataset is
downloaded to a temporary file first (through the one `Store` interface), then read like
any file, so a bad line is still named `dataset ds_…:LINE`.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..jsonl import iter_located

_DATASET_ID = re.compile(r"ds_[A-Za-z0-9]+")


def is_dataset_id(source: str) -> bool:
    """A `ds_…` name that is not also a file here (a file always wins)."""
    return bool(_DATASET_ID.fullmatch(source)) and not Path(source).exists()


def iter_source_rows(source: str, *, check: bool = True) -> Iterator[dict[str, Any]]:
    """Every row of `source`, lazily; `check=False` leaves field types to the caller
    (traces from other stacks carry their own shapes)."""
    if is_dataset_id(source):
        yield from _dataset_rows(source, check=check)
        return
    if source != "-" and not Path(source).exists():
        raise ConfigError(f"{source}: no such file (nor a dataset id, which starts ds_)")
    for line in iter_located([source], check=check):
        yield line.row


def _dataset_rows(dataset_id: str, *, check: bool) -> Iterator[dict[str, Any]]:
    from . import open_store

    store = open_store()
    with tempfile.TemporaryDirectory(prefix="whileai-dataset-") as tmp:
        path = Path(tmp) / "rows.jsonl"
        try:
            with path.open("wb") as fh:
                for chunk in store.download(dataset_id):
                    fh.write(chunk)
        finally:
            store.close()
        for line in iter_located([str(path)], check=check, labels=[f"dataset {dataset_id}"]):
            yield line.row
