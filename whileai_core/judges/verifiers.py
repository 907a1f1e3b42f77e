"""Verifiers: rewards that are programs, not opinions.

Each verifier is a small factory in the inspect_ai style: `exact_match(ignore_case=True)`
returns a `Judge` that honours the one contract, so `--judge exact-match` and
`exact_match()` are the same object found two ways. The candidate is the row's
`final_text`; the gold is `privileged.reference`, else a flat `answer` / `target` /
`expected` / `gold` field, else the column named by `field=` (dotted paths reach inside
objects, e.g. `privileged.hidden_state.total`). A row with no gold is an error, never 0.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import math
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import orjson

from ..errors import ConfigError, JudgeTimeout, NoGold
from ..registry import JUDGES
from ..row import reply_text
from .contract import Judge, JudgeFailed, judge_once, time_left

Verdict = dict[str, Any]
GOLD_FIELDS = ("answer", "target", "expected", "gold")


def _dig(row: dict[str, Any], path: str) -> Any:
    value: Any = row
    for part in path.split("."):
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return None
    return value


def gold_of(row: dict[str, Any], field: str | None = None) -> Any:
    """The answer key: `field` when named, else privileged.reference, else a flat field."""
    if field:
        value = _dig(row, field)
        if value is None:
            raise NoGold(f"row has no gold field '{field}'")
        return value
    privileged = row.get("privileged")
    if isinstance(privileged, dict) and privileged.get("reference") is not None:
        return privileged["reference"]
    for name in GOLD_FIELDS:
        if row.get(name) is not None:
            return row[name]
    raise NoGold("row has no gold (looked at privileged.reference, " + ", ".join(GOLD_FIELDS) + ")")


def _golds(row: dict[str, Any], field: str | None) -> list[str]:
    gold = gold_of(row, field)
    items = gold if isinstance(gold, list) else [gold]
    return [g if isinstance(g, str) else orjson.dumps(g).decode() for g in items]


def _verdict(ok: bool, reason: str) -> Verdict:
    return {"reward": 1.0 if ok else 0.0, "reason": reason}


def _short(text: str, n: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


_PUNCT = re.compile(r"[^\w\s]")


def _norm(text: str, *, ignore_case: bool, ignore_punctuation: bool = False) -> str:
    if ignore_punctuation:
        text = _PUNCT.sub("", text)
    text = " ".join(text.split())
    return text.casefold() if ignore_case else text


def _make(name: str, fn: Callable[[dict[str, Any]], Verdict], **meta: Any) -> Judge:
    return Judge(name=name, fn=fn, meta={"version": name, **meta}, inline=True)


@JUDGES.register("exact-match", options=("field",))
def exact_match(
    *, ignore_case: bool = True, ignore_punctuation: bool = True, field: str | None = None
) -> Judge:
    """The whole reply equals the gold once whitespace, case and punctuation are set aside.

    Punctuation is ignored by default because "Paris." is the answer "Paris"; pass
    `ignore_punctuation=False` when the punctuation is the answer (an expression, a path).
    """

    def judge(row: dict[str, Any]) -> Verdict:
        raw = reply_text(row)
        golds = _golds(row, field)
        if raw in golds:  # the common case on verifiable tasks costs one comparison
            return _verdict(True, f"matches {_short(raw)!r}")
        cand = _norm(raw, ignore_case=ignore_case, ignore_punctuation=ignore_punctuation)
        for gold in golds:
            if cand == _norm(gold, ignore_case=ignore_case, ignore_punctuation=ignore_punctuation):
                return _verdict(True, f"matches {_short(gold)!r}")
        return _verdict(False, f"reply {_short(raw)!r} is not the gold")

    return _make("exact-match", judge)


@JUDGES.register("includes", options=("field",))
def includes(*, ignore_case: bool = True, field: str | None = None) -> Judge:
    """The gold appears somewhere in the reply. Lenient: "not 42" includes "42"."""

    def judge(row: dict[str, Any]) -> Verdict:
        cand = _norm(reply_text(row), ignore_case=ignore_case)
        for gold in _golds(row, field):
            if _norm(gold, ignore_case=ignore_case) in cand:
                return _verdict(True, f"reply includes {_short(gold)!r}")
        return _verdict(False, "reply does not include the gold")

    return _make("includes", judge)


@JUDGES.register("regex", main="pattern", options=("field",))
def regex(
    pattern: str | None = None,
    *,
    ignore_case: bool = False,
    full: bool = False,
    field: str | None = None,
) -> Judge:
    """The reply matches `pattern`, or, without one, the row's gold read as a pattern.

    `full=True` anchors the match to the whole (stripped) reply; by default it searches.
    The pattern is the user's and the reply anyone's, so a backtracking pattern on a long
    reply could run for hours: it is matched with the `regex` engine (the same syntax),
    which stops at the row's --timeout and the row is `timeout`.
    """
    import regex as engine

    flags = engine.IGNORECASE if ignore_case else 0
    compiled: engine.Pattern[str] | None = None
    if pattern is not None:
        try:
            compiled = engine.compile(pattern, flags)
        except engine.error as exc:
            raise ConfigError(f"regex {pattern!r}: {exc}") from None

    def judge(row: dict[str, Any]) -> Verdict:
        try:
            patterns = (
                [compiled]
                if compiled is not None
                else [engine.compile(g, flags) for g in _golds(row, field)]
            )
        except engine.error as exc:
            raise NoGold(f"the row's gold is not a pattern: {exc}") from None
        cand = reply_text(row).strip()
        for pat in patterns:
            try:
                hit = (
                    pat.fullmatch(cand, timeout=time_left())
                    if full
                    else pat.search(cand, timeout=time_left())
                )
            except TimeoutError:
                raise JudgeTimeout(f"/{_short(pat.pattern, 40)}/ ran past --timeout") from None
            if hit:
                return _verdict(True, f"matches /{_short(pat.pattern, 40)}/")
        return _verdict(False, f"no match for /{_short(patterns[0].pattern, 40)}/")

    return _make("regex", judge)


# Row text is capped before any pattern sees it; the answer is at the end of a reply.
MAX_ANSWER_CHARS = 20_000

_CHOICE_PATTERNS = (
    re.compile(r"answer\s*(?:is|:)?\s*[:\-]?\s*\(?([A-Z])\)?(?![A-Za-z])", re.IGNORECASE),
    # "B) ...", "B. ...", "(B) ...", a lone "B": not "I pick ..." (a letter then a space is
    # a word more often than an option)
    re.compile(r"^\(?([A-Z])(?:\)|[.:]|$)"),
    re.compile(r"\(([A-Z])\)"),
    # a standalone capital; "I" only where it is not the pronoun ("I think", "I'd")
    re.compile(r"(?<![A-Za-z'])(?!I(?:\s+[a-z]|'))([A-Z])(?![A-Za-z'])"),
)


def chosen_letter(text: str) -> str | None:
    """The option a reply picked: 'ANSWER: C', 'The answer is (c)', 'B) ...', 'I pick (B).',
    or a lone 'D'. The pronoun I is not option I."""
    stripped = text[-MAX_ANSWER_CHARS:].strip()
    for pat in _CHOICE_PATTERNS:
        hits = pat.findall(stripped)
        if hits:
            return str(hits[-1]).upper()
    return None


@JUDGES.register("multiple-choice", options=("field",))
def multiple_choice(*, field: str | None = None) -> Judge:
    """The option letter the reply chose equals the gold letter (gold 'B', '(b)' or 'B) x')."""

    def judge(row: dict[str, Any]) -> Verdict:
        picked = chosen_letter(reply_text(row))
        golds = [chosen_letter(g) or g.strip().upper() for g in _golds(row, field)]
        if picked is None:
            return _verdict(False, "no option letter found in the reply")
        ok = picked in golds
        return _verdict(ok, f"chose {picked}, gold {'/'.join(golds)}")

    return _make("multiple-choice", judge)


# A number as written: thousands commas, a leading $, a trailing %; or a fraction, as
# LaTeX (\frac{1}{2}, \dfrac, \tfrac) or a/b (not a date: no third part). The lookahead
# lets a plain number start only where a digit does: without it the pattern matched the
# empty string at every position of a long reply.
_NUMBER = re.compile(
    r"\\[dt]?frac\{\s*([-+−]?\d+(?:\.\d+)?)\s*\}\{\s*([-+−]?\d+(?:\.\d+)?)\s*\}"
    r"|(?<![\d/.])([-+−]?\d+)\s*/\s*(\d+)(?![\d/.])"
    r"|(?=[-+−]?\$?\.?\d)[-+−]?\$?(?:\d{1,3}(?:,\d{3})+|\d+)?(?:\.\d+)?(?:[eE][-+]?\d+)?%?"
)


def _float(token: str) -> float | None:
    token = token.replace("−", "-").replace("$", "").replace(",", "").rstrip("%")
    if not any(ch.isdigit() for ch in token):
        return None
    try:
        return float(token)
    except ValueError:
        return None


def numbers_in(text: str) -> list[float]:
    """Every number in the text: thousands commas, a leading $, a trailing % kept as written;
    a fraction (\\frac{1}{2}, 1/2) as its value.

    "60%" reads as 60, not 0.6: a percentage is compared in the units the gold uses.
    """
    found: list[float] = []
    for match in _NUMBER.finditer(text[-MAX_ANSWER_CHARS:]):
        top, bottom = match.group(1) or match.group(3), match.group(2) or match.group(4)
        if top is not None and bottom is not None:
            num, den = _float(top), _float(bottom)
            if num is not None and den:
                found.append(num / den)
            continue
        value = _float(match.group())
        if value is not None:
            found.append(value)
    return found


def boxed(text: str) -> str | None:
    """The body of the last \\boxed{...}, braces balanced; None when there is none."""
    start = text.rfind("\\boxed{")
    if start < 0:
        return None
    depth = 0
    for i in range(start + len("\\boxed"), len(text)):
        depth += (text[i] == "{") - (text[i] == "}")
        if depth == 0:
            return text[start + len("\\boxed{") : i]
    return None


def final_number(text: str) -> float | None:
    """The answer a reply gives as a number: what its last \\boxed{} holds when it has
    one, else its last number."""
    text = text[-MAX_ANSWER_CHARS:]
    inside = boxed(text)
    nums = numbers_in(inside) if inside is not None else []
    if not nums:
        nums = numbers_in(text)
    return nums[-1] if nums else None


@JUDGES.register("numeric", options=("field", "tolerance"))
def numeric(*, tolerance: float = 1e-6, relative: float = 0.0, field: str | None = None) -> Judge:
    """The reply's answer (its last \\boxed{} number, else its last number; fractions read
    as their value) is within `tolerance` (absolute) or `relative` of the gold."""

    def judge(row: dict[str, Any]) -> Verdict:
        got = final_number(reply_text(row))
        if got is None:
            return _verdict(False, "no number in the reply")
        for gold_text in _golds(row, field):
            gold = final_number(gold_text)
            if gold is not None and math.isclose(got, gold, abs_tol=tolerance, rel_tol=relative):
                return _verdict(True, f"{got:g} matches {gold:g}")
        return _verdict(False, f"{got:g} is not the gold {_short(_golds(row, field)[0], 30)}")

    return _make("numeric", judge, tolerance=tolerance)


def _math_parse(text: str) -> list[Any]:
    """What math-verify reads in `text`: LaTeX ($...$, \\boxed{}, sets, intervals, units)
    or a plain expression. A bare LaTeX gold with no delimiters ("\\frac{1}{2}") is read
    as if it had them. Its own timeout is off: it uses signal.alarm, which works only in
    the main thread; the judge runs it in a worker process it kills at --timeout instead
    (`mathworker.py`)."""
    from math_verify import parse

    found = parse(text, parsing_timeout=None)
    if not found and "$" not in text:
        found = parse(f"${text}$", parsing_timeout=None)
    return list(found)


@functools.cache
def _quiet_math_verify() -> None:
    # It warns on every call that its own timeout is off; that is on purpose here.
    logging.getLogger("math_verify").setLevel(logging.ERROR)


def math_verdict(row: dict[str, Any], field: str | None = None) -> Verdict:
    """The math-equal verdict on one row, in this process (the judge's worker calls it)."""
    from math_verify import verify

    _quiet_math_verify()
    reply = reply_text(row)
    answer = _math_parse(reply)
    if not answer:
        return _verdict(False, f"no answer math-verify can read in {_short(reply, 40)!r}")
    for gold_text in _golds(row, field):
        gold = _math_parse(gold_text)
        if all(isinstance(g, str) for g in gold):  # nothing but the text echoed back
            raise NoGold(f"math-verify cannot read the gold {_short(gold_text, 40)!r}")
        if verify(gold, answer, timeout_seconds=None):
            return _verdict(True, f"{_short(str(answer[-1]), 30)} = {_short(gold_text, 30)}")
    shown = _short(str(answer[-1]), 30)
    return _verdict(False, f"answer {shown} is not {_short(_golds(row, field)[0], 30)}")


@JUDGES.register("math-equal", options=("field", "timeout"))
def math_equal(*, field: str | None = None, timeout: float | None = None) -> Judge:
    """The reply's final answer equals the gold as mathematics, by Hugging Face's
    math-verify (what TRL and open-r1 reward with): 1/2 = 0.5 = \\frac{1}{2}, {1,2} =
    {2,1}, intervals, units, \\boxed{} answers. A percentage equals its fraction
    ("50%" = 1/2). It runs in a worker process (`mathworker.py`) that is killed and
    restarted when a row runs past `timeout` (--timeout; 0: 60 s), since sympy can take
    minutes on a few thousand characters of the wrong shape and a thread cannot be stopped.
    """
    import sys

    from .command import CommandJudge

    limit = timeout if timeout and timeout > 0 else 60.0
    # The worker imports this very package, wherever it was imported from here.
    root = str(Path(__file__).resolve().parents[2])
    boot = (
        f"import sys; sys.path.insert(0, {root!r}); "
        "from whileai_core.judges.mathworker import main; main()"
    )
    argv = [sys.executable, "-c", boot, field or ""]
    runner = CommandJudge("math-equal worker", timeout=limit, argv=argv, ready=True)

    def judge(row: dict[str, Any]) -> Verdict:
        verdict = runner(row)
        failure = verdict.get("failure") if isinstance(verdict, dict) else None
        if failure == "no_gold":
            raise NoGold(str(verdict.get("reason")))
        if failure is not None:
            raise RuntimeError(str(verdict.get("reason")))
        return verdict

    def notes() -> list[str]:
        n = runner.restarts
        return [f"math-equal worker restarted {n} time{'s' if n != 1 else ''}"] if n else []

    # Inline: the worker takes one row at a time, so rows queued in the runner's threads
    # would only spend their timeout waiting for it.
    return Judge(
        name="math-equal",
        fn=judge,
        meta={"version": "math-equal@math-verify"},
        inline=True,
        own_timeout=True,
        close=runner.close,
        notes=notes,
    )


_FENCE_OPEN = re.compile(r"```(?:json|JSON)?[ \t\r]*\n")


def parse_json_reply(text: str) -> Any:
    """The JSON a reply carries: the whole reply, or its first ```json fenced block (the
    first opening fence that a later ``` closes; found by scanning, not by a lazy `.*?`
    that re-reads the rest of the reply from every unclosed fence)."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        pass
    opened = _FENCE_OPEN.search(text)
    if opened:
        close = text.find("```", opened.end())
        if close >= 0:
            return orjson.loads(text[opened.end() : close])
    raise ValueError("reply is not JSON")


@JUDGES.register("json-valid")
def json_valid() -> Judge:
    """The reply is JSON (or holds one ```json block). Needs no gold."""

    def judge(row: dict[str, Any]) -> Verdict:
        try:
            parse_json_reply(reply_text(row))
        except ValueError as exc:
            return _verdict(False, str(exc).split(":")[0])
        return _verdict(True, "valid JSON")

    return _make("json-valid", judge)


@JUDGES.register("json-schema", main="schema", options=("schema",))
def json_schema(schema: dict[str, Any] | str | Path) -> Judge:
    """The reply is JSON that satisfies `schema` (a dict, or a path to a schema file),
    validated by `jsonschema`, the reference implementation: every keyword of the draft
    the schema names (2020-12 by default), `$ref` included, and `format` checked.
    """
    from ..schemas import errors, validator

    source = "schema"
    if not isinstance(schema, dict):
        path = Path(schema)
        source = str(path)
        try:
            schema = orjson.loads(path.read_bytes())
        except OSError as exc:
            raise ConfigError(f"{path}: cannot read schema ({exc.strerror or exc})") from None
        except orjson.JSONDecodeError as exc:
            raise ConfigError(f"{path}: schema is not valid JSON ({exc.msg})") from None
        if not isinstance(schema, dict):
            raise ConfigError(f"{path}: a schema must be a JSON object")
    try:
        checker = validator(schema)
    except ConfigError as exc:
        raise ConfigError(f"{source}: {exc}") from None

    def judge(row: dict[str, Any]) -> Verdict:
        try:
            value = parse_json_reply(reply_text(row))
        except ValueError:
            return _verdict(False, "reply is not JSON")
        found = errors(value, checker, limit=1)
        if found:
            return _verdict(False, f"schema: {found[0]}")
        return _verdict(True, "matches the schema")

    return _make("json-schema", judge, schema=source)


@JUDGES.register("json-field", main="path", options=("field",))
def json_field(path: str, *, expected: Any = None, field: str | None = None) -> Judge:
    """The reply is JSON whose value at dotted `path` equals `expected` (default: the gold).

    Numbers compare by value (1 == 1.0); strings compare exactly.
    """

    def judge(row: dict[str, Any]) -> Verdict:
        try:
            value = parse_json_reply(reply_text(row))
        except ValueError:
            return _verdict(False, "reply is not JSON")
        got = _dig({"_": value}, f"_.{path}") if path else value
        if got is None:
            return _verdict(False, f"reply has no field {path!r}")
        want = expected if expected is not None else gold_of(row, field)
        if isinstance(want, str) and not isinstance(got, str):
            with contextlib.suppress(orjson.JSONDecodeError):
                want = orjson.loads(want)
        ok = got == want
        return _verdict(ok, f"{path} = {_short(repr(got), 30)}" + ("" if ok else " (wrong)"))

    return _make("json-field", judge, path=path)


def _compose(kind: str, parts: Sequence[Judge], weights: Sequence[float] | None = None) -> Judge:
    if not parts:
        raise ConfigError(f"{kind}: needs at least one judge")
    if any(not p.inline for p in parts):
        return _compose_async(kind, parts, weights)
    name = f"{kind}:" + ",".join(
        p.name if weights is None else f"{p.name}={w:g}"
        for p, w in zip(parts, weights or [0.0] * len(parts), strict=True)
    )

    def judge(row: dict[str, Any]) -> Verdict:
        return _combine(kind, [(p.name, judge_once(p, row)) for p in parts], weights)

    return Judge(name=name, fn=judge, meta={"version": name}, inline=True)


def _compose_async(kind: str, parts: Sequence[Judge], weights: Sequence[float] | None) -> Judge:
    from .contract import judge_once_async

    name = f"{kind}:" + ",".join(p.name for p in parts)

    async def judge(row: dict[str, Any]) -> Verdict:
        results = [(p.name, await judge_once_async(p, row)) for p in parts]
        return _combine(kind, results, weights)

    closers = [p for p in parts if p.close is not None]
    aclosers = [p for p in parts if p.aclose is not None]

    def close() -> None:
        for p in closers:
            assert p.close is not None
            p.close()

    async def aclose() -> None:
        for p in aclosers:
            assert p.aclose is not None
            await p.aclose()

    return Judge(
        name=name,
        fn=judge,
        meta={"version": name},
        own_timeout=any(p.own_timeout for p in parts),
        close=close if closers else None,
        aclose=aclose if aclosers else None,
    )


def _combine(
    kind: str, results: list[tuple[str, dict[str, Any]]], weights: Sequence[float] | None
) -> Verdict:
    """Fold part verdicts. A part that could not judge makes the whole unjudged, never 0."""
    for name, fields in results:
        if fields["judge_status"] != "ok":
            reason = f"{name}: {fields.get('reason') or fields['judge_status']}"
            raise JudgeFailed(fields["judge_status"], reason)
    markers = {f"verifier:{name}": float(fields["reward"]) for name, fields in results}
    reasons = "; ".join(
        f"{name}: {fields.get('reason') or fields['reward']}" for name, fields in results
    )
    rewards = [float(fields["reward"]) for _, fields in results]
    if kind == "all":
        reward = min(rewards)
    elif kind == "any":
        reward = max(rewards)
    else:
        assert weights is not None
        total = sum(weights)
        reward = sum(w * r for w, r in zip(weights, rewards, strict=True)) / total
    return {"reward": reward, "reason": reasons, "markers": markers}


def all_of(*parts: Judge) -> Judge:
    """Every part passes (the lowest reward): right answer *and* right format."""
    return _compose("all", parts)


def any_of(*parts: Judge) -> Judge:
    """At least one part passes (the highest reward)."""
    return _compose("any", parts)


def weighted(parts: Sequence[tuple[Judge, float]]) -> Judge:
    """A graded rubric: the weight-normalised sum of the parts' rewards."""
    if any(w < 0 for _, w in parts) or sum(w for _, w in parts) <= 0:
        raise ConfigError("weighted: weights must be non-negative and sum to more than 0")
    return _compose("weighted", [p for p, _ in parts], [w for _, w in parts])
