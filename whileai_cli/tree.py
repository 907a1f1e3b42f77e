"""The command tree as data: every command with its path, and a check that a written
`whileai ...` line names commands and options that exist.

The documentation is generated from and checked against this: the CLI reference walks
the tree (docs/hooks/), and every command line in the README, the docs pages and the
help's examples goes through `check_line`, so a renamed flag fails the docs build and
`tests/test_docs.py` instead of misleading a reader. Walking loads every command module;
nothing on the CLI's own path imports this.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterator
from typing import Any

import typer

from .app import app

# Shell words that end one command of a pipeline.
_SEPARATORS = frozenset({"|", "||", "&", "&&", ";", ">", ">>", "<", "(", ")", "$("})


def root() -> Any:
    """The root click command of `whileai`."""
    return typer.main.get_command(app)


def walk(command: Any = None, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    """(path, command) for the root (path `()`) and every command below it, in the order
    `--help` lists them; a group's subcommands follow the group."""
    command = command if command is not None else root()
    yield path, command
    if hasattr(command, "list_commands"):
        ctx = command.context_class(command, info_name=path[-1] if path else "whileai")
        for name in command.list_commands(ctx):
            yield from walk(command.get_command(ctx, name), (*path, name))


def option_names(command: Any) -> set[str]:
    """Every spelling of every option `command` takes, `--help` and `-h` included, and the
    old spellings a group still rewrites (`legacy_options`: `export --pairs`)."""
    names = {"--help", "-h", *getattr(command, "legacy_options", ())}
    for param in command.params:
        if param.param_type_name == "option":
            names.update(param.opts, param.secondary_opts)
    return names


def _takes_value(command: Any, name: str) -> bool:
    for param in command.params:
        if param.param_type_name == "option" and name in param.opts:
            return not (param.is_flag or param.count)
    return False


def _words(line: str) -> list[str]:
    lexer = shlex.shlex(line, posix=True, punctuation_chars="|&;<>()")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    try:
        return list(lexer)
    except ValueError:  # an unbalanced quote in prose: plain words are close enough
        return line.split()


def _check(words: list[str], command: Any = None, path: list[str] | None = None) -> list[str]:
    """Problems of one `whileai` command (its words after `whileai`)."""
    command = command if command is not None else root()
    path = path if path is not None else ["whileai"]
    problems: list[str] = []
    skip_value = False
    for index, word in enumerate(words):
        if skip_value:
            skip_value = False
            continue
        bare = word.strip("[]")  # usage notation: `[--json]`, `[-n 3]`
        is_option = bare.startswith("-") and len(bare) > 1 and not bare[1].isdigit()
        name = bare.split("=", 1)[0]
        known = name in option_names(command) and name not in getattr(command, "legacy_options", ())
        group = hasattr(command, "list_commands")
        if group and not known and word not in ("...", "COMMAND"):
            ctx = command.context_class(command, info_name=path[-1])
            if word not in command.list_commands(ctx) and hasattr(command, "legacy_args"):
                # An old spelling the group still takes (`export FILE --pairs`): check the
                # command line it is rewritten to.
                try:
                    rewritten = command.legacy_args(ctx, words[index:])
                except Exception as exc:  # the group's own usage error for that spelling
                    return [*problems, f"`{' '.join(path)}`: {exc}"]
                if rewritten is not None:
                    return problems + _check(rewritten[0], command, path)
        if is_option:
            if name not in option_names(command):
                problems.append(f"`{' '.join(path)}` has no option {name}")
            elif "=" not in bare and _takes_value(command, name):
                skip_value = True
            continue
        if not group:
            continue  # an argument of a command
        if word in ("...", "COMMAND"):
            return problems  # a placeholder for any command: nothing more to check
        ctx = command.context_class(command, info_name=path[-1])
        if word not in command.list_commands(ctx):
            problems.append(f"`{' '.join(path)}` has no command {word!r}")
            return problems
        command = command.get_command(ctx, word)
        path = [*path, word]
    return problems


def check_line(line: str) -> list[str]:
    """What is wrong with the `whileai` commands in one shell line (pipes, redirections and
    `# comments` allowed): unknown commands and unknown options, one message each."""
    words = _words(line)
    problems: list[str] = []
    for i, word in enumerate(words):
        before = words[i - 1] if i else "|"
        at_command = before in _SEPARATORS or "=" in before  # `WHILEAI_HOME=x whileai ...`
        if at_command and (word == "whileai" or word.endswith("/bin/whileai")):
            end = next((j for j in range(i + 1, len(words)) if words[j] in _SEPARATORS), None)
            problems += _check(words[i + 1 : end])
    return problems
