"""`whileai audit KIND ROWS`: one report over row files (style, refusals, flags, leaks, ...)."""

from __future__ import annotations

from typing import Annotated, Literal

import typer

from whileai_core.text.levels import NEAR_DUPLICATE_JACCARD

from ..options import (
    AllowOpt,
    IgnoreKeysOpt,
    Inputs,
    JsonOpt,
    KindsOpt,
    OnErrorOpt,
    PhrasesOpt,
    ReportFile,
    SpecsOpt,
)

Kind = Literal[
    "style", "refusals", "flags", "grounding", "leaks", "stages",
    "correlations", "duplicates", "near-duplicates", "lengths",
]  # fmt: skip


def audit(
    kind: Annotated[
        Kind,
        typer.Argument(
            help="style | refusals | flags | grounding | leaks | stages | correlations | "
            "duplicates | near-duplicates | lengths",
            show_default=False,
        ),
    ],
    inputs: Inputs = None,
    spec: SpecsOpt = None,
    phrases: PhrasesOpt = None,
    kinds: KindsOpt = None,
    ignore_keys: IgnoreKeysOpt = None,
    allow: AllowOpt = None,
    threshold: Annotated[
        float,
        typer.Option(
            "--threshold",
            min=0.0,
            max=1.0,
            help="near-duplicates: the word 3-gram Jaccard at which two prompts are one.",
        ),
    ] = NEAR_DUPLICATE_JACCARD,
    on_error: OnErrorOpt = "fail",
    json: JsonOpt = False,
    report_file: ReportFile = None,
) -> None:
    """Report: style tics, over-refusal, trajectory flags, grounding, leaks, stages, repeats.

    Every report reads the rows once and keeps per-ask counts, never the rows; each says
    how many rows it could measure, and warns when the reward pays for what it found."""
    from whileai_core.audit.run import AuditOptions, audit_files
    from whileai_core.markers.mark import resolve_flags

    from ..console import check_report_path, emit_report, print_lines, warn
    from ..options import resolve_inputs

    check_report_path(report_file)
    flags = resolve_flags(spec or (), phrases, kinds, ignore_keys, allow)
    options = AuditOptions(flags.phrases, flags.trace, flags.grounding, threshold)
    data, lines = audit_files(kind, resolve_inputs(inputs), options, on_error=on_error)
    if not emit_report(data, json=json, report_file=report_file, data_on_stdout=False):
        print_lines(lines)
    for message in data.get("warnings") or []:
        warn(message)
    if data.get("skipped_lines"):
        warn(f"skipped {data['skipped_lines']} bad line(s)")
