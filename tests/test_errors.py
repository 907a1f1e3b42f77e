"""One error root, and its map: every error class the library defines is a WhileaiError
and is named in the hierarchy drawn in `whileai_core/errors.py`."""

from __future__ import annotations

import ast
from pathlib import Path

import whileai_core.errors as errors

CORE = Path(errors.__file__).parent
# Code that runs inside the code-exec sandbox sees only the standard library.
SANDBOXED = {"judges/codeexec/wire.py", "judges/codeexec/runner.py"}


def _exception_classes() -> list[tuple[str, str]]:
    found = []
    for path in sorted(CORE.rglob("*.py")):
        rel = path.relative_to(CORE).as_posix()
        if rel in SANDBOXED:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                bases = {getattr(b, "id", getattr(b, "attr", "")) for b in node.bases}
                if any(b.endswith(("Error", "Exception")) or b in _KNOWN for b in bases):
                    found.append((rel, node.name))
    return found


_KNOWN = {name for name in dir(errors) if isinstance(getattr(errors, name), type)}


def test_every_error_class_is_a_whileai_error_on_the_map() -> None:
    import importlib

    doc = errors.__doc__ or ""
    for rel, name in _exception_classes():
        module = importlib.import_module("whileai_core." + rel[:-3].replace("/", "."))
        cls = getattr(module, name)
        if not issubclass(cls, BaseException):
            continue
        assert issubclass(cls, errors.WhileaiError), f"{rel}: {name} is not a WhileaiError"
        assert name in doc, f"{rel}: {name} is missing from the map in errors.py"


def test_failures_lose_one_item_and_the_rest_stop_the_stage() -> None:
    for cls in (errors.AgentError, errors.ModelCallError, errors.JudgeTimeout, errors.NoGold,
                errors.Refused, errors.SandboxUnavailable):  # fmt: skip
        assert issubclass(cls, errors.Failure)
    for cls in (errors.ConfigError, errors.BadRowError, errors.EndpointRefused, errors.StoreError):
        assert not issubclass(cls, errors.Failure)


def test_a_failure_inside_a_judge_marks_the_row_and_grading_goes_on() -> None:
    from whileai_core.judges import grade_rows
    from whileai_core.judges.contract import Judge

    def judge(row: dict) -> dict:
        if row["n"] == 1:
            raise errors.NoGold("no answer key")
        return {"reward": 1}

    rows = [{"prompt": "p", "n": i} for i in range(3)]
    out = list(grade_rows(rows, Judge(name="j", fn=judge)))
    assert [r["judge_status"] for r in out] == ["ok", "error", "ok"]
    assert "no answer key" in out[1]["reason"]
