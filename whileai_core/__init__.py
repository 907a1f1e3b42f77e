"""whileai_core: the library behind the `whileai` command.

Everything the CLI does is a function here, so a notebook can do it too. The package
imports nothing heavy at start-up; import the module you need (`whileai_core.row`,
`whileai_core.jsonl`, `whileai_core.spec`, ...).
"""

__version__ = "0.1.0"
