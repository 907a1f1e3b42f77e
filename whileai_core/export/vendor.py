"""The copy of the toolkit an exported RL environment carries, so it installs anywhere.

An environment is installed where it trains: a fresh virtualenv, the Environments Hub,
plain `pip install`. The toolkit is not on any index under a name pip could resolve (PyPI's
`whileai` is the original SDK, a different package), so the environment carries the code
its world, person and reward run: this package's source, copied verbatim into
`<env>/_whileai_core/` and imported as `<env>._whileai_core`. Every module in it imports
its siblings relatively, and the registries name their built-ins by the package's own
name (`registry._PKG`), so the copy runs as itself, beside (never instead of) an
installed toolkit. Its third-party needs are `RUNTIME_REQUIREMENTS`, all on PyPI.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from .files import write_file

VENDORED = "_whileai_core"
# What the copy imports at run time: the toolkit's own dependencies minus the command
# line's and the server's (typer, rich, starlette, uvicorn, opentelemetry-proto).
# tests/export/test_env_fresh_venv.py holds each to the toolkit's pyproject.
RUNTIME_REQUIREMENTS = (
    "httpx>=0.27",
    "sniffio>=1.3",
    "pydantic>=2.6",
    "orjson>=3.9",
    "pyyaml>=6.0",
    "numpy>=1.24",
    "jsonschema>=4.18",
    "rstr>=3.2",
    "math-verify>=0.7",
)
_SOURCE = Path(__file__).resolve().parent.parent  # this package's root (whileai_core)
_SKIP_DIRS = frozenset({"__pycache__"})
_SUFFIXES = frozenset({".py", ".json", ".md", ".js", ".css", ".typed"})


def core_files() -> list[Path]:
    """The package's files, relative to its root, in a fixed order."""
    return sorted(
        path.relative_to(_SOURCE)
        for path in _SOURCE.rglob("*")
        if path.is_file()
        and path.suffix in _SUFFIXES
        and not _SKIP_DIRS & set(path.relative_to(_SOURCE).parts)
    )


def vendor_core(root: Path) -> list[str]:
    """Copy the package into `root/_whileai_core`; returns its packages' dotted names
    below the environment's (`_whileai_core`, `_whileai_core.judges`, ...)."""
    target = root / VENDORED
    if target.is_dir():  # an earlier export's copy: a module since removed must not linger
        shutil.rmtree(target)
    packages = set()
    for relative in core_files():
        write_file(target / relative, (_SOURCE / relative).read_bytes())
        if relative.name == "__init__.py":
            packages.add(".".join((VENDORED, *relative.parent.parts)))
    return sorted(packages)
