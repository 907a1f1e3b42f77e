"""MkDocs hooks: the reference pages, generated from the code at every build, and a check
of every `whileai ...` line and `WHILEAI_*` name the pages show.

Nothing here is pasted by hand: `reference/cli.md` is drawn from the Typer app
(`whileai_cli.tree.walk`); `reference/environment.md` from the flags' `envvar`s and
`whileai_core.settings.VARIABLES`; `api/index.md` from the names `import whileai_core`
exports and `api/core.md` from the shared modules (both rendered from docstrings by
mkdocstrings); `layout.md` from each package's own docstring. A command line in a page
that names a command or an option the app does not have, or a `WHILEAI_*` name nothing
reads, is a warning, and `mkdocs build --strict` (`make docs`, `make test`) fails on it.
`tests/test_docs.py` imports this file to hold the pages to the app and the README.
"""

from __future__ import annotations

import ast
import functools
import logging
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from whileai_cli.app import COMMANDS
from whileai_cli.examples import EXAMPLES
from whileai_cli.options import RENAMED_ENV
from whileai_cli.tree import check_line, option_names, walk
from whileai_core.settings import VARIABLES

log = logging.getLogger("mkdocs.hooks.whileai")

CLI_PAGE = "reference/cli.md"
ENV_PAGE = "reference/environment.md"
API_PAGE = "api/index.md"
CORE_PAGE = "api/core.md"
LAYOUT_PAGE = "layout.md"
GENERATED = (CLI_PAGE, ENV_PAGE, API_PAGE, CORE_PAGE, LAYOUT_PAGE)
PACKAGES = ("whileai_cli", "whileai_core", "whileai_server")
# Modules documented whole on the core page: what every stage shares.
CORE_MODULES = (
    "whileai_core.row.model",
    "whileai_core.row.rules",
    "whileai_core.row.privileged",
    "whileai_core.jsonl",
    "whileai_core.errors",
    "whileai_core.registry",
    "whileai_core.judges.contract",
    "whileai_core.spec",
    "whileai_core.settings",
)
DEFAULT_PANEL = "Options"


# -- Markdown text --------------------------------------------------------------------


def _escape_plain(text: str) -> str:
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return re.sub(r"([\\*_|\[\]])", r"\\\1", text)


def cell(text: str) -> str:
    """Help text as one table cell: prose escaped for Markdown, `code spans` kept as they
    are written (a pipe inside one escaped for the table)."""
    text = text.replace("\\[", "[")  # Rich's escape in help text: `\\[` shows as `[`
    parts = " ".join(text.split()).split("`")
    if len(parts) % 2 == 0:  # an unpaired backtick: all prose
        parts = [" ".join(text.split()).replace("`", "'")]
    return "".join(
        _escape_plain(part) if i % 2 == 0 else "`" + part.replace("|", "\\|") + "`"
        for i, part in enumerate(parts)
    )


def paragraph(text: str) -> str:
    """A command's help text as Markdown paragraphs (its own blank lines kept)."""
    blocks = [b for b in re.split(r"\n\s*\n", text.strip()) if b.strip()]
    return "\n\n".join(cell(b) for b in blocks)


def anchor(path: tuple[str, ...]) -> str:
    """The heading id of a command on the CLI page: `whileai-logprobs-ref`."""
    return "-".join(("whileai", *path))


# -- the CLI reference ----------------------------------------------------------------


def _spellings(param: Any) -> str:
    names = " / ".join(f"`{o}`" for o in param.opts)
    if param.secondary_opts:
        names += " / " + " / ".join(f"`{o}`" for o in param.secondary_opts)
    return names


def _envvars(param: Any) -> list[str]:
    envvar = getattr(param, "envvar", None)
    if not envvar:
        return []
    return [envvar] if isinstance(envvar, str) else list(envvar)


def _default(param: Any) -> str:
    if param.show_default is False or param.required:
        return ""
    value = param.default
    if callable(value) or value in (None, "", (), []):
        return ""
    if param.is_flag and isinstance(value, bool):
        if param.secondary_opts:
            return f"`{param.opts[0] if value else param.secondary_opts[0]}`"
        return "on" if value else "off"
    if isinstance(value, (list, tuple)):
        value = ",".join(str(v) for v in value)
    return f"`{value}`"


def _variable_cell(names: list[str]) -> str:
    return "<br>".join(f"`{n}` (old name)" if n in RENAMED_ENV else f"`{n}`" for n in names)


def _option_rows(command: Any) -> Iterator[tuple[str, str]]:
    """(panel, table row) for each visible option of `command`, `--help` left out."""
    for param in command.params:
        if param.param_type_name != "option" or param.hidden or "--help" in param.opts:
            continue
        panel = getattr(param, "rich_help_panel", None) or DEFAULT_PANEL
        row = (
            f"| {_spellings(param)} | {_variable_cell(_envvars(param))} | "
            f"{_default(param)} | {cell(param.help or '')} |"
        )
        yield panel, row


def command_section(path: tuple[str, ...], command: Any) -> str:
    """One command's entry: its help, usage, example, arguments and options by panel."""
    ctx = command.context_class(command, info_name=path[-1])
    usage = " ".join(["whileai", *path, *command.collect_usage_pieces(ctx)])
    level = "#" * (len(path) + 2)  # ## panel, ### command, #### subcommand
    lines = [f"{level} whileai {' '.join(path)} {{#{anchor(path)}}}", ""]
    lines += [paragraph(command.help or command.short_help or ""), ""]
    lines += ["```text", usage, "```", ""]
    example = EXAMPLES.get(" ".join(path))
    if example:
        lines += ["Example:", "", "```bash", example, "```", ""]
    arguments = [p for p in command.params if p.param_type_name == "argument"]
    if arguments:
        lines += ["**Arguments**", "", "| Argument | Required | What it is |", "|---|---|---|"]
        for p in arguments:
            required = "yes" if p.required else "no"
            lines.append(
                f"| `{p.name.upper()}` | {required} | {cell(getattr(p, 'help', '') or '')} |"
            )
        lines.append("")
    panels: dict[str, list[str]] = {}
    for panel, row in _option_rows(command):
        panels.setdefault(panel, []).append(row)
    for panel, rows in panels.items():
        lines += [f"**{panel}**", "", "| Option | Variable | Default | What it does |"]
        lines += ["|---|---|---|---|", *rows, ""]
    if hasattr(command, "list_commands"):
        sub = command.list_commands(ctx)
        if sub:
            links = ", ".join(f"[`{s}`](#{anchor((*path, s))})" for s in sub)
            lines += [f"Subcommands: {links}.", ""]
    return "\n".join(lines)


def cli_reference() -> str:
    """The whole CLI reference page, in the root help's order and panels."""
    tree = dict(walk())
    root = tree[()]
    out = [
        "# CLI reference",
        "",
        "Generated from the Typer app at every docs build (`docs/hooks/reference.py`); the",
        "same text as `whileai COMMAND --help`. Flags that read an environment variable name",
        "it; [Environment variables](environment.md) lists them all in one table.",
        "",
        "## whileai {#whileai}",
        "",
        paragraph(root.help or ""),
        "",
        "```text",
        "whileai " + " ".join(root.collect_usage_pieces(root.context_class(root))),
        "```",
        "",
        "Example:",
        "",
        "```bash",
        EXAMPLES[""],
        "```",
        "",
        "| Option | Variable | Default | What it does |",
        "|---|---|---|---|",
        *(row for _panel, row in _option_rows(root)),
        "",
    ]
    by_panel: dict[str, list[str]] = {}
    for name, entry in COMMANDS.items():
        by_panel.setdefault(entry.panel, []).append(name)
    for panel, names in by_panel.items():
        out += [f"## {panel}", ""]
        for name in names:
            for path, command in tree.items():
                if path and path[0] == name:
                    out.append(command_section(path, command))
    return "\n".join(out) + "\n"


# -- the environment-variable table ---------------------------------------------------


def environment_reference() -> str:
    """Every variable: the flags that read it (from the tree), then the ones the library
    reads itself (from `whileai_core.settings.VARIABLES`)."""
    readers: dict[str, list[str]] = {}
    for path, command in walk():
        for param in command.params:
            for name in _envvars(param):
                if name in RENAMED_ENV:
                    continue
                default = _default(param)
                shown = " ".join(("whileai", *path, param.opts[0]))
                flag = f"[`{shown}`](cli.md#{anchor(path)})"
                readers.setdefault(name, []).append(flag + (f" ({default})" if default else ""))
    out = [
        "# Environment variables",
        "",
        "Generated at every docs build (`docs/hooks/reference.py`) from the flags' own",
        "variables and from `whileai_core.settings.VARIABLES`. A flag given on the command",
        "line wins over its variable; an empty variable counts as unset.",
        "",
        "## Flags a variable sets",
        "",
        "Options a cron job would set also read `WHILEAI_<NAME>`. A name means one thing",
        "everywhere; the embedded store reads `whileai serve`'s limit and quota variables",
        "(`WHILEAI_MAX_*`) too, so a row is taken or refused alike by both stores.",
        "",
        "| Variable | Read by (default) |",
        "|---|---|",
    ]
    for name in sorted(readers):
        out.append(f"| `{name}` | {'<br>'.join(readers[name])} |")
    out += [
        "",
        "## Old names still read",
        "",
        "Where a name once meant different things in different commands it became a",
        "command-scoped one. The old name is still read after the new one, with one",
        "deprecation warning on stderr.",
        "",
        "| Old name | Command | New name |",
        "|---|---|---|",
    ]
    for old, scoped in sorted(RENAMED_ENV.items()):
        for command, new in scoped.items():
            out.append(f"| `{old}` | `whileai {command}` | `{new}` |")
    out += [
        "",
        "## Read by the library itself",
        "",
        "Not tied to one flag: the store, credentials, model endpoints and defaults a",
        "Python caller gets too.",
        "",
        "| Variable | Default | What it does |",
        "|---|---|---|",
    ]
    for variable in VARIABLES:
        out.append(f"| `{variable.name}` | {cell(variable.default)} | {cell(variable.means)} |")
    return "\n".join(out) + "\n"


# -- the Python API --------------------------------------------------------------------


def api_reference() -> str:
    """A mkdocstrings entry for every name `import whileai_core` exports, under the module
    that defines it, in the front door's own order."""
    import whileai_core

    by_module: dict[str, list[str]] = {}
    for name, module in whileai_core._NAMES.items():
        by_module.setdefault("whileai_core" + module, []).append(name)
    out = [
        "# Python API",
        "",
        "Every name `import whileai_core` exports, generated at every docs build from",
        "`whileai_core._NAMES` and rendered from its docstring. The package loads each name",
        "only when it is used; [From Python](../python.md) shows them at work, and",
        "[Core modules](core.md) documents the row, error, registry and settings modules whole.",
        "",
    ]
    for module, names in by_module.items():
        out += [f"## `{module}`", ""]
        if module in CORE_MODULES:  # documented whole there; one home per object
            links = ", ".join(f"[`{n}`](core.md#{module}.{n})" for n in names)
            out += [f"{links}: on [Core modules](core.md).", ""]
            continue
        for name in names:
            out += [f"::: {module}.{name}", "    options:", "      heading_level: 3"]
            out += ["      show_if_no_docstring: true", ""]
    return "\n".join(out) + "\n"


def core_reference() -> str:
    """The modules every stage shares, each documented whole."""
    out = [
        "# Core modules",
        "",
        "The modules every stage shares, documented whole from their docstrings: the row and",
        "its rules, the answer-key (`privileged`) block, JSONL files, the one error root, the",
        "one registry, the judge contract, the spec and the settings. The names a notebook",
        "calls are on [Public names](index.md).",
        "",
    ]
    for module in CORE_MODULES:
        out += [f"::: {module}", ""]
    return "\n".join(out) + "\n"


# -- the layout ------------------------------------------------------------------------


def _summary(path: Path) -> str:
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    return " ".join(doc.split("\n\n")[0].split())


def layout_reference(root: Path) -> str:
    """Every package and top-level module of the three packages, with the first paragraph
    of its own docstring: the tree says where each thing lives, so this page cannot drift."""
    out = [
        "# Layout",
        "",
        "Where each thing lives; a module holds one job and is named for it. Generated at",
        "every docs build from each package's and module's own docstring (its first",
        "paragraph), so it says what the code says. Layers: `whileai_cli` and",
        "`whileai_server` import `whileai_core`; the core never imports either.",
        "",
        "| path | what lives there |",
        "|---|---|",
    ]
    for package in PACKAGES:
        base = root / package
        entries = sorted(
            p
            for p in base.rglob("*.py")
            if p.name != "__main__.py"
            and (p.name == "__init__.py" or p.parent == base)
            and not any(part.startswith((".", "_")) and part != "__init__.py"
                        for part in p.relative_to(root).parts)
        )  # fmt: skip
        for path in entries:
            shown = path.parent if path.name == "__init__.py" else path
            name = shown.relative_to(root).as_posix() + ("/" if shown.is_dir() else "")
            out.append(f"| `{name}` | {cell(_summary(path))} |")
    out += [
        "| `tests/` | mirrors the packages; `tests/golden/` pins simulate, grade, optimize and "
        "export output byte for byte |",
        "| `bench/` | benchmarks, run by hand (`make bench`) |",
        "| `docs/` | this site; `docs/hooks/` generates its reference pages |",
        "| `specs/` | the example specs: `orders`, `airline`, `repo-maint` |",
        "",
        "## Inside each package",
        "",
        "What each package's docstring says about its modules, as written there.",
        "",
    ]
    for package in PACKAGES:
        for init in sorted((root / package).rglob("__init__.py")):
            doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
            rest = doc.split("\n\n", 1)[1].strip() if "\n\n" in doc else ""
            if rest:
                name = init.parent.relative_to(root).as_posix()
                out += [f"### `{name}/`", "", "```text", rest, "```", ""]
    return "\n".join(out) + "\n"


# -- MkDocs events --------------------------------------------------------------------

_FENCE = re.compile(r"^(```|~~~)")
_INLINE = re.compile(r"`(whileai [^`]+)`")


def command_lines(markdown: str) -> Iterator[tuple[int, str]]:
    """(line number, text) of every shell line in a page's code blocks (fenced or
    indented) and of every inline `whileai ...` code span; `\\` continuations joined."""
    in_fence, fence_lang, pending, start = False, "", "", 0
    in_indent, blank_before = False, True
    for number, line in enumerate(markdown.splitlines(), 1):
        stripped = line.strip()
        if _FENCE.match(stripped):
            in_fence = not in_fence
            fence_lang = stripped.strip("`~").strip().lower() if in_fence else ""
            continue
        # An indented code block starts after a blank line and runs while lines stay
        # indented (a list item's indented continuation is not one).
        in_indent = not in_fence and line.startswith("    ") and (in_indent or blank_before)
        blank_before = not stripped
        code = (in_fence and fence_lang in ("", "bash", "sh", "shell", "console", "text")) or (
            in_indent
        )
        if code:
            text = pending + " " + stripped if pending else stripped
            start = start if pending else number
            if text.endswith("\\"):
                pending = text[:-1]
                continue
            pending = ""
            yield start, text
        elif not in_fence:
            for match in _INLINE.finditer(line):
                yield number, match.group(1)


_VARIABLE = re.compile(r"\b(?:WHILEAI|ZEROPROOF)_[A-Z0-9_]*[A-Z0-9]\b")
_CODE_SPAN = re.compile(r"`([^`\n]+)`")
_FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)")


@functools.cache
def known_names() -> tuple[set[str], set[str]]:
    """(every option spelling of every command, every variable the docs may name)."""
    options: set[str] = set()
    variables = set(RENAMED_ENV) | {v.name for v in VARIABLES}
    for _path, command in walk():
        options |= option_names(command)
        for param in command.params:
            variables.update(_envvars(param))
    return options, variables


def stale_commands(markdown: str) -> Iterator[str]:
    """`line N: problem` for each command line that names what the app does not have, each
    `WHILEAI_*` variable nothing reads, and each `--flag` in a code span no command takes."""
    for number, text in command_lines(markdown):
        for problem in check_line(text):
            yield f"line {number}: {problem}"
    options, variables = known_names()
    commands = set(COMMANDS)
    for number, line in enumerate(markdown.splitlines(), 1):
        for name in _VARIABLE.findall(line):
            if name not in variables:
                yield f"line {number}: no flag or setting reads {name}"
        for span in _CODE_SPAN.findall(line):
            first = span.split()[0]
            if first not in ("whileai", *commands) and not first.startswith("-"):
                continue  # another program's flags (`mkdocs build --strict`)
            for flag in _FLAG.findall(span):
                if flag not in options:
                    yield f"line {number}: no command takes {flag}"


def on_files(files: Any, config: Any) -> Any:
    from mkdocs.structure.files import File

    files.append(File.generated(config, CLI_PAGE, content=cli_reference()))
    files.append(File.generated(config, ENV_PAGE, content=environment_reference()))
    files.append(File.generated(config, API_PAGE, content=api_reference()))
    files.append(File.generated(config, CORE_PAGE, content=core_reference()))
    root = Path(config["config_file_path"]).parent
    files.append(File.generated(config, LAYOUT_PAGE, content=layout_reference(root)))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if page.file.src_uri not in GENERATED:
        for problem in stale_commands(markdown):
            log.warning("%s: %s", page.file.src_uri, problem)
    return markdown
