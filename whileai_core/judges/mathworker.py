"""The math-equal judge's worker: math-verify in a child process the judge can kill.

math-verify hands LaTeX to sympy, which can take minutes on a few thousand characters of
the wrong shape ("((((...", "x^x^x^..."). Its own timeout is a SIGALRM, which works only
on a process's main thread, and a Python thread cannot be stopped, so in the grading
process nothing could hold such a row to --timeout. Here it runs in a child: the judge
(`verifiers.math_equal`, through `command.CommandJudge`) sends one row per line, reads
one verdict per line, and kills and restarts the child when a row runs past its time.

Protocol: one line `{"ready": true}` once imported; then per row a verdict, or
`{"failure": "no_gold" | "error", "reason": ...}` for a row it could not judge.
"""

from __future__ import annotations

import sys

import orjson


def main() -> None:
    from ..errors import NoGold
    from .verifiers import math_verdict

    # Warm up (sympy's parsers load on first use) before saying ready, so that cost is
    # not charged to the first row's timeout.
    math_verdict({"final_text": "1", "answer": "1"})
    field = sys.argv[1] if len(sys.argv) > 1 and sys.argv[1] else None
    out = sys.stdout.buffer
    out.write(b'{"ready": true}\n')
    out.flush()
    for line in sys.stdin.buffer:
        try:
            answer: object = math_verdict(orjson.loads(line), field)
        except NoGold as exc:
            answer = {"failure": "no_gold", "reason": str(exc)}
        except Exception as exc:  # one row's failure is that row's, never the worker's
            answer = {"failure": "error", "reason": f"{type(exc).__name__}: {exc}"}
        out.write(orjson.dumps(answer) + b"\n")
        out.flush()


if __name__ == "__main__":
    main()
