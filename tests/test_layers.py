"""The import layering of `whileai_core` (written down in `whileai_core/layers.py`),
checked over the source with the AST: no new dependency, nothing imported.

- core never imports `whileai_cli` or `whileai_server`, at any depth;
- module-level imports form no cycle (importing `a.b.c` imports the packages `a` and
  `a.b` first, so their `__init__` counts as imported too);
- a module-level import goes to its own layer or one below, except `UPWARD`'s entries;
- a function-local import that goes up is one `LAZY_UPWARD` lists.

The checker itself is tested on a synthetic package, so a broken checker cannot pass
silently.
"""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from whileai_core.layers import LAYERS, LAZY_UPWARD, UPWARD

ROOT = Path(__file__).resolve().parents[1]
FOREIGN = ("whileai_cli", "whileai_server")
Layers = tuple[tuple[str, frozenset[str]], ...]


@dataclass
class Graph:
    """Every module of one package and what it imports: at module level (`top`), inside
    functions (`lazy`), and anything it names from `FOREIGN` packages at all."""

    modules: set[str] = field(default_factory=set)
    top: dict[str, set[str]] = field(default_factory=dict)
    lazy: dict[str, set[str]] = field(default_factory=dict)
    foreign: dict[str, set[str]] = field(default_factory=dict)


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _targets(
    node: ast.Import | ast.ImportFrom, module: str, is_package: bool, modules: set[str]
) -> list[str]:
    """What one import statement imports: `from pkg import name` is `pkg.name` when that is
    a module of the package, else `pkg` (the package `__init__`s on the way count for
    cycles, see `_with_packages`)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        base = module.split(".")
        if not is_package:
            base = base[:-1]
        base = base[: len(base) - (node.level - 1)]
        source = ".".join(base + ([node.module] if node.module else []))
    else:
        source = node.module or ""
    names = [f"{source}.{alias.name}" for alias in node.names]
    inside = [name for name in names if name in modules]
    return inside if len(inside) == len(names) else [source, *inside]


@dataclass
class _Imports:
    """One module's imports, sorted by where they run."""

    module: str
    is_package: bool
    modules: set[str]
    top: set[str] = field(default_factory=set)
    lazy: set[str] = field(default_factory=set)
    foreign: set[str] = field(default_factory=set)

    def visit(self, nodes: list[ast.AST], into: set[str]) -> None:
        for node in nodes:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for target in _targets(node, self.module, self.is_package, self.modules):
                    if target.split(".")[0] in FOREIGN:
                        self.foreign.add(target)
                    into.add(target)
            elif isinstance(node, ast.If) and _is_type_checking(node):
                self.visit(list(node.body), set())  # typing only; a foreign name still counts
                self.visit(list(node.orelse), into)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.visit(list(node.body), self.lazy)
            else:
                self.visit(list(ast.iter_child_nodes(node)), into)


def build_graph(root: Path, package: str) -> Graph:
    """Parse every module under `root/package`."""
    graph = Graph()
    files = sorted((root / package).rglob("*.py"))
    graph.modules = {_module_name(path, root) for path in files}
    for path in files:
        module = _module_name(path, root)
        found = _Imports(module, path.name == "__init__.py", graph.modules)
        found.visit(list(ast.parse(path.read_text(encoding="utf-8")).body), found.top)
        graph.top[module] = _known(found.top, graph.modules, module)
        graph.lazy[module] = _known(found.lazy, graph.modules, module) - graph.top[module]
        graph.foreign[module] = found.foreign
    return graph


def _known(targets: set[str], modules: set[str], module: str) -> set[str]:
    """The package's own modules among `targets`."""
    return {t for t in targets if t in modules and t != module}


def _with_packages(targets: set[str], module: str) -> set[str]:
    """Importing `a.b.c` runs `a/__init__` and `a/b/__init__` first."""
    out = set()
    for target in targets:
        parts = target.split(".")
        for end in range(1, len(parts) + 1):
            name = ".".join(parts[:end])
            if not module.startswith(name + ".") and name != module:
                out.add(name)
    return out


def cycles(graph: Graph) -> list[list[str]]:
    """Every strongly connected set of modules (more than one) under module-level imports."""
    edges = {m: _with_packages(t, m) & graph.modules for m, t in graph.top.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def strong(v: str) -> None:  # Tarjan; the package is small enough to recurse
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(edges[v]):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(edges):
        if v not in index:
            strong(v)
    return found


def layer_of(module: str, layers: Layers) -> int:
    """The index of the layer holding `module`'s package (or root module)."""
    parts = module.split(".")
    name = parts[1] if len(parts) > 1 else "__init__"
    for number, (_label, names) in enumerate(layers):
        if name in names:
            return number
    raise AssertionError(f"{module}: its package {name!r} is in no layer of layers.py")


def upward(imports: Mapping[str, set[str]], layers: Layers) -> Iterator[tuple[str, str]]:
    for module, targets in sorted(imports.items()):
        for target in sorted(targets):
            if layer_of(target, layers) > layer_of(module, layers):
                yield module, target


def problems(
    graph: Graph,
    layers: Layers,
    known_upward: Mapping[tuple[str, str], str],
    lazy_upward: Mapping[tuple[str, str], str],
) -> list[str]:
    """What breaks the layering, one line each (empty when it holds)."""
    out = [f"{m} imports {', '.join(sorted(t))}" for m, t in graph.foreign.items() if t]
    out += [f"import cycle: {' -> '.join(group)}" for group in cycles(graph)]
    top_up = set(upward(graph.top, layers))
    out += [f"upward import: {m} -> {t}" for m, t in sorted(top_up - set(known_upward))]
    lazy_up = set(upward(graph.lazy, layers))
    out += [
        f"unlisted lazy upward import: {m} -> {t}" for m, t in sorted(lazy_up - set(lazy_upward))
    ]
    stale = (set(known_upward) - top_up) | (set(lazy_upward) - lazy_up)
    out += [f"listed but gone (remove it from layers.py): {m} -> {t}" for m, t in sorted(stale)]
    return out


def test_whileai_core_keeps_its_layering() -> None:
    graph = build_graph(ROOT, "whileai_core")
    assert len(graph.modules) > 200  # the whole package was read
    assert problems(graph, LAYERS, UPWARD, LAZY_UPWARD) == []


def test_every_package_is_in_one_layer() -> None:
    graph = build_graph(ROOT, "whileai_core")
    placed = [name for _label, names in LAYERS for name in names]
    assert len(placed) == len(set(placed))
    for module in graph.modules:
        layer_of(module, LAYERS)


def _tree(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


FAKE_LAYERS: Layers = (
    ("low", frozenset({"__init__", "base", "base2"})),
    ("mid", frozenset({"models"})),
    ("high", frozenset({"sim"})),
)


def test_the_checker_finds_an_upward_import_a_cycle_and_a_foreign_import(tmp_path: Path) -> None:
    _tree(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/base.py": "import os\n",
        "pkg/models/__init__.py": "",
        "pkg/models/writer.py": "from ..sim.person import facts\n",
        "pkg/models/client.py": "from .. import base\n",
        "pkg/sim/__init__.py": "",
        "pkg/sim/person.py": "from ..models import client\nfacts = 1\n",
        "pkg/sim/plan.py": (
            "def plan():\n    from . import aim\n"
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from whileai_cli import x\n"
        ),
        "pkg/sim/aim.py": "from .plan import plan\n",
        "pkg/base2.py": "def f():\n    from .sim import aim\n",
    })  # fmt: skip
    lazy_up = ["unlisted lazy upward import: pkg.base2 -> pkg.sim.aim"]
    assert problems(build_graph(tmp_path, "pkg"), FAKE_LAYERS, {}, {}) == [
        "pkg.sim.plan imports whileai_cli",
        "upward import: pkg.models.writer -> pkg.sim.person",
        *lazy_up,
    ]
    # A cycle needs both directions at module level: plan now imports aim at the top.
    (tmp_path / "pkg/sim/plan.py").write_text("from . import aim\n")
    graph = build_graph(tmp_path, "pkg")
    assert problems(graph, FAKE_LAYERS, {}, {})[0] == "import cycle: pkg.sim.aim -> pkg.sim.plan"
    listed = {("pkg.models.writer", "pkg.sim.person"): "moves down", ("pkg.a", "pkg.b"): "gone"}
    lazy = {("pkg.base2", "pkg.sim.aim"): "optional backend"}
    assert problems(graph, FAKE_LAYERS, listed, lazy) == [
        "import cycle: pkg.sim.aim -> pkg.sim.plan",
        "listed but gone (remove it from layers.py): pkg.a -> pkg.b",
    ]
