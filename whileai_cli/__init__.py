"""The `whileai` command: a thin Typer tree over whileai_core."""
