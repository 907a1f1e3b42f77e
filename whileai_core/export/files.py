"""What every folder export (an RL environment package, a Hub dataset folder) writes with."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from ..errors import ConfigError
from ..jsonl import write_output


def write_file(path: Path, data: bytes) -> None:
    """Write through a temporary sibling so a reader never sees half a file (the one
    output writer, `jsonl.write_output`)."""
    write_output(str(path), data)


def whileai_version() -> str:
    """The installed toolkit's version, which exported folders record. The distribution
    is `whileai-toolkit` (PyPI's `whileai` is the original SDK, another package); run from
    a source tree, or from the copy an environment carries, it is the package's own."""
    from importlib.metadata import PackageNotFoundError, version

    from .. import DISTRIBUTION, __version__

    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:
        return __version__


def read_json(path: Path) -> Any:
    """A JSON file's value, or None when it is missing or not JSON."""
    try:
        return orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None


def check_target(root: Path, flag: str, earlier: Callable[[Path], bool], what: str) -> bool:
    """Refuse a folder holding anything but an earlier export of this kind: writing there
    would replace someone's own README.md. True when `root` holds an earlier export."""
    if root.exists() and not root.is_dir():
        raise ConfigError(f"{root}: {flag} needs a folder, and this is a file")
    if not root.is_dir() or not any(root.iterdir()):
        return False
    if not earlier(root):
        raise ConfigError(f"{root}: not empty and not {what}; export into a new or empty folder")
    return True
