"""`whileai mark`: stamp behaviour markers on rows, streaming, one row in one row out.

Families: `style` (no_boilerplate, no_hedging, no_apology, no_sycophancy, answered), `trace`
(the seven trajectory markers, with the fired flags and their fragments on
`row["trace_flags"]`), `grounding` (argument_grounding), and a model spec's traits
(scored by a judge). Each marker's source is recorded in `row["marker_sources"]` as
`mark:<family>`, so a later `whileai grade` replaces its own verdict's markers and keeps
these. `--stage` stamps the pipeline stage; a model spec stamps its version.
Memory is one row (plus the judge's in-flight rows when traits are scored).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..curate.stages import check_stage, stamp_stage
from ..errors import ConfigError
from ..jsonl import OnError, ReadStats, RowWriter, read_rows
from ..models.options import ModelOptions
from ..spec import Spec, load_spec
from .flags import TraceOptions, trace_flags, trace_markers
from .grounding import GroundingOptions, grounding_marker, invented
from .modelspec import (
    Constitution,
    TraitTally,
    constitution_from,
    is_constitution,
    score_traits,
    stamp_spec,
    trait_judges,
)
from .style import Phrases, read_structured, style_markers
from .view import view

Row = dict[str, Any]
FAMILIES = ("style", "trace", "grounding")


@dataclass
class MarkOptions:
    families: tuple[str, ...] = FAMILIES
    stage: str | None = None
    phrases: Phrases = field(default_factory=Phrases)
    trace: TraceOptions = field(default_factory=TraceOptions)
    grounding: GroundingOptions = field(default_factory=GroundingOptions)
    constitution: Constitution | None = None
    trait_judge: str | None = None
    models: ModelOptions = field(default_factory=ModelOptions)
    concurrency: int = 8
    timeout: float | None = 60.0

    def check(self) -> None:
        unknown = set(self.families) - set(FAMILIES)
        if unknown:
            raise ConfigError(f"unknown marker family {sorted(unknown)}; families: {FAMILIES}")
        if self.stage is not None:
            check_stage(self.stage)
        if self.constitution is not None and not self.trait_judge:
            raise ConfigError(
                "a model spec's traits need a judge: --judge openai:MODEL, a URL, or "
                "module:function (called as fn(row, trait))"
            )


def load_specs(targets: Sequence[str]) -> tuple[Spec | None, Constitution | None]:
    """`--spec` values: an agent spec (folder, or a file with `tools`) and/or a model spec
    (a file with `traits`), told apart by what they hold."""
    agent: Spec | None = None
    constitution: Constitution | None = None
    for target in targets:
        path = Path(target)
        if path.is_file() and path.suffix in (".json", ".yaml", ".yml"):
            data = read_structured(target)
            if is_constitution(data):
                if constitution is not None:
                    raise ConfigError(f"{target}: a second model spec; give one")
                constitution = constitution_from(data, target)
                continue
        if agent is not None:
            raise ConfigError(f"{target}: a second agent spec; give one")
        agent = load_spec(target)
    return agent, constitution


@dataclass
class PolicyFlags:
    """What `--spec`, `--phrases`, `--kinds`, `--ignore-keys` and `--allow` resolve to."""

    agent: Spec | None
    constitution: Constitution | None
    phrases: Phrases
    trace: TraceOptions
    grounding: GroundingOptions


def resolve_flags(
    specs: Sequence[str] = (),
    phrases: str | None = None,
    kinds: str | None = None,
    ignore_keys: str | None = None,
    allow: str | None = None,
) -> PolicyFlags:
    from .actions import parse_kinds
    from .grounding import split_list
    from .style import load_phrases

    agent, constitution = load_specs(specs)
    return PolicyFlags(
        agent,
        constitution,
        load_phrases(phrases),
        TraceOptions(kinds=parse_kinds(kinds), spec=agent),
        GroundingOptions(split_list(ignore_keys), split_list(allow), agent),
    )


def with_markers(row: Row, markers: dict[str, float], source: str) -> Row:
    """`row` with `markers` merged in and `marker_sources` naming `source` for each, kept in
    the order `markers` lists them (what the row model reads back)."""
    if not markers:
        return row
    old = row.get("markers")
    merged = dict(old) if isinstance(old, dict) else {}
    merged.update(markers)
    raw = row.get("marker_sources")
    sources = dict(raw) if isinstance(raw, dict) else {}
    sources.update(dict.fromkeys(markers, source))
    out = dict(row)
    out["markers"] = merged
    out["marker_sources"] = {k: sources[k] for k in merged if isinstance(sources.get(k), str)}
    return out


@dataclass
class MarkReport:
    rows: int = 0
    families: tuple[str, ...] = ()
    stage: str | None = None
    model_spec: dict[str, Any] | None = None
    markers: dict[str, dict[str, float]] = field(default_factory=dict)
    flags: dict[str, int] = field(default_factory=dict)
    traits: TraitTally = field(default_factory=TraitTally)
    skipped_lines: int = 0
    failed: int = 0  # rows a detector could not read: passed on unmarked
    first_failure: str | None = None

    def count(self, markers: dict[str, float]) -> None:
        for name, value in markers.items():
            entry = self.markers.setdefault(name, {"rows": 0, "sum": 0.0})
            entry["rows"] += 1
            entry["sum"] += value

    def as_dict(self) -> dict[str, Any]:
        return {
            "rows": self.rows,
            "families": list(self.families),
            "stage": self.stage,
            "model_spec": self.model_spec,
            "markers": {
                name: {"rows": int(e["rows"]), "mean": e["sum"] / e["rows"]}
                for name, e in self.markers.items()
            },
            "flags_fired": self.flags,
            "trait_failures": self.traits.failed,
            "first_trait_failure": self.traits.first_failure,
            "skipped_lines": self.skipped_lines,
            "unmarked_rows": self.failed,
            "first_unmarked": self.first_failure,
        }

    def lines(self) -> list[str]:
        what = ", ".join(self.families) or "no marker family"
        out = [f"mark: {self.rows} rows ({what})"]
        if self.stage:
            out.append(f"  stage {self.stage} stamped")
        if self.model_spec:
            spec = self.model_spec
            out.append(f"  model spec {spec['version']}: {len(spec['traits'])} traits")
        for name, e in self.markers.items():
            out.append(f"  {name:18} mean {e['sum'] / e['rows']:.2f} over {int(e['rows'])} rows")
        if self.flags:
            out.append("  flags: " + ", ".join(f"{k} {v}" for k, v in self.flags.items()))
        return out

    def warnings(self) -> list[str]:
        found = []
        if self.skipped_lines:
            found.append(f"{self.skipped_lines} bad lines skipped")
        if self.failed:
            found.append(f"{self.failed} rows passed on unmarked; first: {self.first_failure}")
        for trait, n in self.traits.failed.items():
            found.append(f"trait {trait}: judge failed on {n} rows (left unmarked, not 0)")
        if self.traits.first_failure:
            found.append(f"first trait failure: {self.traits.first_failure}")
        return found


def mark_row(row: Row, opts: MarkOptions, report: MarkReport | None = None) -> Row:
    """One row with the chosen deterministic families stamped (traits are `mark_rows`')."""
    v = view(row)
    out = row
    if "style" in opts.families:
        markers = style_markers(v, opts.phrases)
        out = with_markers(out, markers, "mark:style")
        if report is not None:
            report.count(markers)
    if "trace" in opts.families:
        flags = trace_flags(v, opts.trace)
        markers = trace_markers(flags, v)
        out = with_markers(out, markers, "mark:trace")
        out = {**out, "trace_flags": flags}
        if report is not None:
            report.count(markers)
            for f in flags:
                report.flags[f["flag"]] = report.flags.get(f["flag"], 0) + 1
    if "grounding" in opts.families:
        markers = grounding_marker(invented(v, opts.grounding))
        out = with_markers(out, markers, "mark:grounding")
        if report is not None:
            report.count(markers)
    if opts.stage is not None:
        out = stamp_stage(out, opts.stage)
    if opts.constitution is not None:
        out = stamp_spec(out, opts.constitution)
    return out if out is not row else dict(row)


def mark_rows(rows: Iterable[Row], opts: MarkOptions, report: MarkReport) -> Iterator[Row]:
    opts.check()
    report.families = opts.families
    report.stage = opts.stage
    if opts.constitution is not None:
        report.model_spec = opts.constitution.stamp()
    for row in _with_traits(rows, opts, report):
        report.rows += 1
        yield row


def _guarded(rows: Iterable[Row], opts: MarkOptions, report: MarkReport) -> Iterator[Row]:
    """Each row marked, or passed on unmarked and counted when a detector fails on it:
    one odd row never stops a run, and a row it could not read gets no marker, not a 0."""
    for row in rows:
        try:
            yield mark_row(row, opts, report)
        except Exception as exc:
            report.failed += 1
            report.first_failure = report.first_failure or f"{type(exc).__name__}: {exc}"
            yield row


def _with_traits(rows: Iterable[Row], opts: MarkOptions, report: MarkReport) -> Iterator[Row]:
    marked = _guarded(rows, opts, report)
    if opts.constitution is None or not opts.trait_judge:
        yield from marked
        return
    judges = trait_judges(opts.constitution, opts.trait_judge, opts.models)
    scored = score_traits(
        marked, judges, tally=report.traits, concurrency=opts.concurrency, timeout=opts.timeout
    )
    for row, markers in scored:
        report.count(markers)
        yield with_markers(row, markers, "mark:spec")


def mark(rows: Iterable[Row], options: MarkOptions | None = None) -> list[Row]:
    """The rows with markers stamped (all three deterministic families by default)."""
    return list(mark_rows(rows, options or MarkOptions(), MarkReport()))


def mark_files(
    inputs: Sequence[str],
    opts: MarkOptions,
    *,
    output: str | None = None,
    on_error: OnError = "fail",
) -> MarkReport:
    stats = ReadStats()
    report = MarkReport()
    with RowWriter(output) as writer:
        writer.write_many(
            mark_rows(read_rows(inputs, on_error=on_error, stats=stats), opts, report)
        )
    report.skipped_lines = stats.skipped
    return report
