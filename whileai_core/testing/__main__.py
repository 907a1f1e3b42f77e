"""`python -m whileai_core.testing [--latency S] [--tool NAME]`: run the stub by hand."""

from .openai_stub import serve_main

serve_main()
