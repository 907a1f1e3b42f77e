"""Command modules, one per family of commands, each command a thin call into core;
`whileai_cli.app.COMMANDS` names the module and function behind every command."""
