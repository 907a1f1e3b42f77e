"""Resolve `module:function` and `path/file.py:function` references to callables.

Agents, judges and `--execute` worlds are all named this way, so they resolve in one place
with one error message. A `module:` reference finds modules in the current directory too,
as `python -m` would: the `whileai` console script's own `sys.path` starts at its bin
directory, so `--agent my_agent:run` next to `my_agent.py` would otherwise not import.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .errors import ConfigError


def load_callable(ref: str, *, what: str = "callable") -> Callable[..., Any]:
    """Import `module:attr` or `path.py:attr` and return the attribute, which must be callable."""
    module_part, sep, attr = ref.rpartition(":")
    if not sep or not module_part or not attr:
        raise ConfigError(f"{what} {ref!r}: expected 'module:function' or 'path/file.py:function'")
    if module_part.endswith(".py") or "/" in module_part:
        path = Path(module_part)
        if not path.is_file():
            raise ConfigError(f"{what} {ref!r}: no such file {module_part}")
        name = f"_whileai_plugin_{abs(hash(str(path.resolve())))}"
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise ConfigError(f"{what} {ref!r}: cannot load {module_part}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except Exception as exc:
            raise ConfigError(f"{what} {ref!r}: importing {module_part} failed: {exc}") from None
    else:
        _cwd_on_path()
        try:
            module = importlib.import_module(module_part)
        except Exception as exc:
            raise ConfigError(f"{what} {ref!r}: cannot import {module_part}: {exc}") from None
    target: Any = module
    for part in attr.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise ConfigError(f"{what} {ref!r}: {module_part} has no attribute {attr}") from None
    if not callable(target):
        raise ConfigError(f"{what} {ref!r}: {attr} is not callable")
    return target


def _cwd_on_path() -> None:
    """Put the current directory on `sys.path` (after what is installed, so a stray local
    file never shadows a real package) unless it is already there."""
    cwd = os.getcwd()
    if "" in sys.path or cwd in sys.path:
        return
    sys.path.append(cwd)
    importlib.invalidate_caches()
