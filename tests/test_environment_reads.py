"""Every environment variable is read through `whileai_core.settings`, and every name
read there is declared (in `settings.VARIABLES`, or as a CLI flag's variable), so the
generated variable table lists every variable the code reads.

An AST check, not a grep: it sees `os.environ`, `os.getenv` and their aliases however
they are imported, and not the word "environ" in a docstring.
"""

from __future__ import annotations

import ast
import importlib.util
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from whileai_core.settings import LEGACY_PREFIX, VARIABLES

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("whileai_core", "whileai_cli", "whileai_server")
SETTINGS = "whileai_core/settings.py"
# Where a child process's environment is built, not read: each place, and why.
CHILD_ENVIRONMENTS = {
    # A throwaway local Ray: its raylet and workers read RAY_AUTH_MODE when they start.
    "whileai_core/scale/ray_executor.py": 1,
    # The exported RL environment's own file (a package of its own once exported, run by
    # verifiers in another venv): WHILEAI_ENV_ROWS names where it appends graded rows.
    "whileai_core/export/env_package/rows.py": 1,
}
_ENV_NAMES = frozenset({"environ", "environb", "getenv", "getenvb", "putenv", "unsetenv"})


def environment_reads(source: str) -> Iterator[int]:
    """The line of every touch of the process environment in `source`: `os.environ`,
    `os.getenv(...)` and the rest, through `import os as o` or `from os import environ`."""
    tree = ast.parse(source)
    modules = {"os", "posix"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in ("os", "posix"):
                    modules.add(alias.asname or alias.name)
        elif isinstance(node, ast.ImportFrom) and node.module in ("os", "posix"):
            for alias in node.names:
                if alias.name in _ENV_NAMES:
                    yield node.lineno
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and node.attr in _ENV_NAMES
            and isinstance(node.value, ast.Name)
            and node.value.id in modules
        ):
            yield node.lineno


def _sources() -> Iterator[tuple[str, str]]:
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            yield path.relative_to(ROOT).as_posix(), path.read_text(encoding="utf-8")


def test_the_checker_sees_every_spelling() -> None:
    source = (
        "import os\nimport os as o\nfrom os import getenv as g, path\n"
        "a = os.environ['X']\nb = o.getenv('Y')\nc = g('Z')\n"
        "d = 'os.environ in a string'\nos.environ.setdefault('W', '1')\n"
    )
    assert sorted(environment_reads(source)) == [3, 4, 5, 8]
    assert list(environment_reads("import os\nx = os.path.join('a')\n")) == []


def test_only_settings_reads_the_environment() -> None:
    found: dict[str, list[int]] = {}
    for name, source in _sources():
        lines = sorted(environment_reads(source))
        if lines and name != SETTINGS:
            found[name] = lines
    allowed = {name: lines for name, lines in found.items() if name in CHILD_ENVIRONMENTS}
    assert {n: len(lines) for n, lines in allowed.items()} == CHILD_ENVIRONMENTS
    assert {n: lines for n, lines in found.items() if n not in CHILD_ENVIRONMENTS} == {}


@pytest.fixture(scope="module")
def hooks() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "docs/hooks/reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _names_read(source: str) -> Iterator[str]:
    """Variable names passed as literals to `read(...)` / `env_setting(...)`."""
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        func = node.func
        called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        first = node.args[0]
        if not isinstance(first, ast.Constant) or not isinstance(first.value, str):
            continue
        if called == "read":
            yield first.value
        elif called == "env_setting":
            yield "WHILEAI_" + first.value
            yield LEGACY_PREFIX + first.value


def test_every_variable_read_by_name_is_declared(hooks: ModuleType) -> None:
    _options, known = hooks.known_names()
    read = {name for _path, source in _sources() for name in _names_read(source)}
    assert len(read) > 10  # the scan found the reads
    assert sorted(read - known) == []
    assert {v.name for v in VARIABLES} <= known
