"""`python -m whileai_cli` runs the same command as `whileai`."""

from .app import main

main()
