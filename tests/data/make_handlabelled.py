"""Rewrites `tests/data/handlabelled.jsonl` from the hand-written rows.

    python tests/data/make_handlabelled.py

See `handlabelled_lib.py` for what the rows are and how they were written.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from handlabelled_clean import add_clean
from handlabelled_lib import OUT, ROOT, ROWS, write
from handlabelled_mistakes import add_mistakes


def main() -> None:
    add_mistakes()
    add_clean()
    write()
    kinds: dict[str, int] = {}
    for item in ROWS:
        head = item["label_kind"].split("/")[0]
        kinds[head] = kinds.get(head, 0) + 1
    print(f"{len(ROWS)} rows -> {OUT.relative_to(ROOT)}")
    for kind, n in sorted(kinds.items()):
        print(f"  {kind}: {n}")


if __name__ == "__main__":
    main()
