"""Run every benchmark script in bench/ in turn (what `make bench` does)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def main() -> int:
    here = Path(__file__).parent
    failed = 0
    for script in sorted(here.glob("*.py")):
        if script.name == Path(__file__).name or script.name.startswith("_"):
            continue
        print(f"== {script.name}", flush=True)
        failed += subprocess.run([sys.executable, str(script)]).returncode != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
