"""One export's settings, and writing its samples (plus their metadata sidecar) to files.

`SampleExport` holds what `whileai export` was asked for (SFT or pairs, the shape, the
mask, the spec's context) so the plain file writer and the Hub folder writer run the very
same export. `summary_lines` is the report as a person reads it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from ..jsonl import RowWriter
from .context import Context
from .conversation import Row
from .pairs import UNPAIRED_REASONS, Completions, PairsReport, preference_pairs
from .training import Format, MaskMode, MetaSink, TrainingReport, training_samples

Report = TrainingReport | PairsReport


@dataclass(frozen=True)
class SampleExport:
    """What to write: SFT samples or preference pairs, in which shape, under which context."""

    kind: Literal["sft", "pairs"] = "sft"
    fmt: Format = "openai"
    mask: MaskMode = "all"
    unroll: bool = False
    max_tool_output_chars: int | None = None
    context: Context = field(default_factory=Context)
    include_failures: bool = False
    length_matched: bool = False
    completions: Completions = "turn"
    keep_meta: bool | None = None

    def new_report(self) -> Report:
        if self.kind == "pairs":
            return PairsReport(self.fmt, self.length_matched, completions=self.completions)
        return TrainingReport(self.fmt, self.mask, self.unroll, self.max_tool_output_chars)

    def samples(
        self, rows: Iterable[Row], report: Report, on_meta: MetaSink | None = None
    ) -> Iterator[dict[str, Any]]:
        if isinstance(report, PairsReport):
            return preference_pairs(
                rows,
                fmt=self.fmt,
                length_matched=self.length_matched,
                completions=self.completions,
                context=self.context,
                keep_meta=self.keep_meta,
                on_meta=on_meta,
                report=report,
            )
        return training_samples(
            rows,
            fmt=self.fmt,
            mask=self.mask,
            unroll=self.unroll,
            max_tool_output_chars=self.max_tool_output_chars,
            context=self.context,
            include_failures=self.include_failures,
            keep_meta=self.keep_meta,
            on_meta=on_meta,
            report=report,
        )


def write_samples(
    rows: Iterable[Row], plan: SampleExport, output: str | None, meta_path: str | None = None
) -> Report:
    """Write the export to `output` (None: stdout) and, with `meta_path`, each sample's
    metadata to that sidecar, one line per sample in the same order (`line` = its index)."""
    report = plan.new_report()
    with contextlib.ExitStack() as stack:
        out = stack.enter_context(RowWriter(output))
        on_meta = sidecar(stack.enter_context(RowWriter(meta_path))) if meta_path else None
        out.write_many(plan.samples(rows, report, on_meta))
    return report


def sidecar(writer: RowWriter) -> MetaSink:
    """A metadata sink writing one line per sample, `line` = the sample's index."""

    def write(data: dict[str, Any]) -> None:
        writer.write({"line": writer.count, **data})

    return write


def summary_lines(data: dict[str, Any]) -> list[str]:
    """The export report as a person reads it (warnings are separate: `data['warnings']`)."""
    rt = data.get("tool_call_roundtrip") or {}
    if data["kind"] == "training":
        head = (
            f"export --format {data['format']}: {data['rows_in']} rows -> {data['samples']} "
            f"samples, {data['shape']} ({data['trained_messages']} trained / "
            f"{data['masked_messages']} masked messages, mask {data['mask']}"
            f"{', unrolled' if data['unroll'] else ''})"
        )
        tail = (
            f"  tool_call_roundtrip: encoding {rt['encoding']}, {rt['checked']} checked, "
            f"{rt['invalid']} invalid; {data['tool_outputs_truncated']} tool outputs cut; "
            f"{data['rebuilt_from_steps']} rebuilt from steps; metadata {data['meta']}"
        )
        return [head, tail]
    if data["kind"] == "pairs":
        what = "agent turns" if data["completions"] == "turn" else "whole continuations"
        env_text = "yes" if data["completions_contain_tool_output"] else "no"
        unpaired = [f"{data['asks_without_contrast']} without a pass and a fail"]
        unpaired += [
            f"{n} {UNPAIRED_REASONS.get(reason, reason)}"
            for reason, n in sorted(data.get("asks_unpaired", {}).items())
        ]
        return [
            f"export --pairs --format {data['format']}: {data['pairs']} pairs ({what} at the "
            f"first divergence) from {data['asks_with_pairs']} of {data['asks']} asks; chosen "
            f"{data['mean_chosen_chars']} / rejected {data['mean_rejected_chars']} chars on "
            "average",
            f"  asks without a pair: {', '.join(unpaired)}",
            f"  tool_call_roundtrip: encoding {rt['encoding']}, {rt['invalid']} invalid; "
            f"completions contain tool output: {env_text}; "
            f"metadata {data['meta']}",
        ]
    if data["kind"] == "hub":
        parts = ", ".join(f"{n} {s['samples']}" for n, s in data["splits"].items())
        return [
            f"export --hf {data['directory']}: {data['export']} in the {data['format']} "
            f"shape; samples per split: {parts}"
        ]
    return []
