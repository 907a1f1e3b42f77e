"""The documentation against the code: the generated CLI reference covers every command
the app registers, every command line the README and the docs pages show names real
commands and options, every command's help carries a runnable example, and every
`WHILEAI_*` variable the code reads is declared where the variable table is generated
from. `make docs` (run by `make test`) builds the site itself with `--strict`.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

import pytest
from typer.testing import CliRunner

from whileai_cli.app import app
from whileai_cli.examples import EXAMPLES
from whileai_cli.tree import check_line, option_names, walk
from whileai_core.settings import VARIABLES

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted((ROOT / "docs").glob("**/*.md"))


@pytest.fixture(scope="module")
def hooks() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "docs/hooks/reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_cli_reference_covers_every_command_and_option(hooks: ModuleType) -> None:
    page = hooks.cli_reference()
    sections = re.split(r"\n(?=#{2,4} whileai )", page)
    commands = [(path, command) for path, command in walk() if path]
    assert len(commands) > 50  # the whole tree was walked, group members included
    for path, command in commands:
        heading = f"whileai {' '.join(path)} {{#{hooks.anchor(path)}}}"
        [section] = [s for s in sections if s.lstrip("#").strip().startswith(heading)]
        # Old spellings a group rewrites (`export --pairs`) are in its help, not its options.
        legacy = set(getattr(command, "legacy_options", ()))
        for name in option_names(command) - {"--help", "-h"} - legacy:
            hidden = any(p.hidden for p in command.params if name in (*p.opts, *p.secondary_opts))
            assert hidden or f"`{name}`" in section, (path, name)
        for param in command.params:
            if param.param_type_name == "argument":
                assert f"`{param.name.upper()}`" in section, (path, param.name)


def test_every_command_has_an_example_that_names_real_flags() -> None:
    paths = {" ".join(path) for path, _command in walk()}
    assert set(EXAMPLES) == paths
    for path, example in EXAMPLES.items():
        assert example.startswith(f"whileai {path}".rstrip()), path
        assert "[" not in example, f"{path}: Typer's help would read [..] as markup"
        assert check_line(example) == [], (path, check_line(example))


def test_help_shows_the_example_and_the_panels() -> None:
    runner = CliRunner()
    grade = runner.invoke(app, ["grade", "--help"], env={"COLUMNS": "200"})
    assert grade.exit_code == 0
    assert "Example: whileai grade rows.jsonl" in grade.output
    simulate = runner.invoke(app, ["simulate", "--help"], env={"COLUMNS": "200"})
    for panel in ("Who plays", "What the run plays", "Model calls", "Scale: shards and Ray"):
        assert panel in simulate.output
    serve = runner.invoke(app, ["serve", "--help"], env={"COLUMNS": "200"})
    for panel in ("Where it listens and keeps data", "What one request may cost"):
        assert panel in serve.output


def test_the_checker_catches_stale_commands(hooks: ModuleType) -> None:
    assert check_line("whileai grade rows.jsonl --judgee exact-match") == [
        "`whileai grade` has no option --judgee"
    ]
    assert check_line("cat x | whileai simulat specs/orders") == [
        "`whileai` has no command 'simulat'"
    ]
    assert check_line("whileai logprobs refs x.jsonl") == [
        "`whileai logprobs` has no command 'refs'"
    ]
    page = "Run it:\n\n```bash\nwhileai export pairs rows.jsonl \\\n  --pairz\n```\n\n"
    page += "then `WHILEAI_NOPE`.\n"
    assert list(hooks.stale_commands(page)) == [
        "line 4: `whileai export pairs` has no option --pairz",
        "line 8: no flag or setting reads WHILEAI_NOPE",
    ]
    # An old spelling a group still takes is checked as the command it is rewritten to.
    assert check_line("whileai export rows.jsonl --pairs --format trl -o p.jsonl") == []
    assert check_line("whileai export rows.jsonl --env envs/x --pairz") == [
        "`whileai export env` has no option --pairz"
    ]


@pytest.mark.parametrize("path", [ROOT / "README.md", *PAGES], ids=lambda p: p.name)
def test_commands_in_the_readme_and_the_docs_exist(hooks: ModuleType, path: Path) -> None:
    assert list(hooks.stale_commands(path.read_text(encoding="utf-8"))) == []


def test_readme_is_a_newcomers_page() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) < 400
    starts = [line.strip().split("#")[0].strip() for line in lines]
    assert "make demo" in starts and "make test" in starts


def test_every_variable_the_code_names_is_declared(hooks: ModuleType) -> None:
    """A `WHILEAI_*` name anywhere in the packages is a flag's variable, an old name still
    read, or declared in `settings.VARIABLES`: the generated table then lists it."""
    _options, known = hooks.known_names()
    found: dict[str, Path] = {}
    for package in ("whileai_cli", "whileai_core", "whileai_server"):
        for source in (ROOT / package).rglob("*.py"):
            for name in hooks._VARIABLE.findall(source.read_text(encoding="utf-8")):
                found.setdefault(name, source)
    missing = {name: str(where.relative_to(ROOT)) for name, where in found.items()}
    missing = {n: w for n, w in missing.items() if n not in known}
    assert missing == {}
    names = [v.name for v in VARIABLES]
    assert len(names) == len(set(names))


def test_environment_reference_lists_every_variable(hooks: ModuleType) -> None:
    page = hooks.environment_reference()
    _options, known = hooks.known_names()
    for name in known:
        assert f"`{name}`" in page, name


def test_layout_lists_every_package(hooks: ModuleType) -> None:
    page = hooks.layout_reference(ROOT)
    for init in ROOT.glob("whileai_*/**/__init__.py"):
        assert f"`{init.parent.relative_to(ROOT).as_posix()}/`" in page
