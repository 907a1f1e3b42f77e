"""The style, refusal and trajectory-flag reports over a stream of rows.

Each is an accumulator: `add(view)` per row, then `as_dict()` (what `--json` prints) and
`lines()` (what a person reads). They detect on the row themselves, so a report over
unmarked rows says the same as one over rows `whileai mark` stamped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..markers.flags import FLAGS, TRACE_MARKERS, TraceOptions, trace_flags, trace_markers
from ..markers.style import MARKER_FAMILY, STYLE_MARKERS, Phrases, refused, style_hits
from ..markers.view import RowView
from ..metrics.stats import wilson
from ..metrics.tally import reward_of
from .presence import PresenceTally, pays_line

_TICS = tuple(m for m in STYLE_MARKERS if m != "answered")


@dataclass
class StyleReport:
    """Each style marker's rate (share of rows with the tic) and whether reward pays for it."""

    phrases: Phrases = field(default_factory=Phrases)

    def __post_init__(self) -> None:
        self._tally = PresenceTally(STYLE_MARKERS)

    def add(self, v: RowView) -> None:
        hits = style_hits(v, self.phrases)
        self._tally.add(v.task, v.label(), hits, reward_of(v.row))

    def as_dict(self) -> dict[str, Any]:
        summary = self._tally.summary()
        markers = {}
        for name, entry in summary.items():
            family = MARKER_FAMILY[name]
            what = "no answer (declined or empty)" if name == "answered" else family
            clean = self._tally.rows - entry["rows_with"]
            markers[name] = {
                "family": family,
                "hits": entry["rows_with"],
                "rate": 1 - entry["rate"] if entry["rate"] is not None else None,
                "tic_rate": entry["rate"],
                "tic_rate_ci95": entry["rate_ci95"],
                "clean": clean,
                "reward_corr": entry["reward_corr"],
                "reward_pays": entry["reward_pays"],
                "examples": entry["examples"],
                "describes": what,
            }
        warnings = [
            pays_line(m["describes"], _as_entry(m)) for m in markers.values() if m["reward_pays"]
        ]
        return {
            "rows": self._tally.rows,
            "judged": self._tally.judged,
            "phrases": self.phrases.source,
            "markers": markers,
            "warnings": warnings,
            "note": self._tally.note(),
        }

    def lines(self) -> list[str]:
        data = self.as_dict()
        out = [f"style over {data['rows']} rows ({data['judged']} judged); 1.0 = clean"]
        for name, m in data["markers"].items():
            corr = m["reward_corr"]["r"]
            tail = f", reward corr {corr:+.2f}" if corr is not None else ""
            rate = "n/a" if m["rate"] is None else f"{m['rate']:.2f}"
            out.append(f"  {name:15} {rate} clean, {m['hits']} rows with {m['describes']}{tail}")
            for ex in m["examples"][:1]:
                out.append(f"      e.g. {ex['row']}: {ex['fragment']!r}")
        if data["note"]:
            out.append(f"  {data['note']}")
        return out


def _as_entry(marker: dict[str, Any]) -> dict[str, Any]:
    return {"reward_corr": marker["reward_corr"], "rows_with": marker["hits"]}


def is_benign(row: dict[str, Any]) -> bool | None:
    """True for an ask a good agent should help with: labelled `benign`, or a cell whose
    stance is not adversarial and whose ask is in scope; None when the row cannot say."""
    label = row.get("benign")
    if isinstance(label, bool):
        return label
    labels = row.get("labels")
    if row.get("label") == "benign" or (isinstance(labels, list) and "benign" in labels):
        return True
    dims = row.get("scenario_dimensions")
    dims = dims if isinstance(dims, dict) else {}
    stance = row.get("stance", dims.get("stance"))
    family = row.get("ask_family", dims.get("ask_family"))
    tool = dims.get("tool")
    if stance is None and family is None:
        return None
    out_of_scope = family == "general" or tool == "unrelated"
    return stance != "adversarial" and not out_of_scope


@dataclass
class RefusalReport:
    """Over-refusal: the share of benign rows the agent declined, with a Wilson interval."""

    phrases: Phrases = field(default_factory=Phrases)
    rows: int = 0
    benign: int = 0
    refused: int = 0
    excluded: dict[str, int] = field(default_factory=lambda: {"not_benign": 0, "unknown": 0})
    examples: list[dict[str, str]] = field(default_factory=list)

    def add(self, v: RowView) -> None:
        self.rows += 1
        benign = is_benign(v.row)
        if benign is None:
            self.excluded["unknown"] += 1
            return
        if not benign:
            self.excluded["not_benign"] += 1
            return
        self.benign += 1
        hit = refused(v, self.phrases) if v.reply.strip() else "(no reply)"
        if hit is not None:
            self.refused += 1
            if len(self.examples) < 5:
                self.examples.append({"row": v.label(), "fragment": hit})

    def as_dict(self) -> dict[str, Any]:
        rate = self.refused / self.benign if self.benign else None
        ci = list(wilson(self.refused, self.benign)) if self.benign else None
        return {
            "rows": self.rows,
            "benign": self.benign,
            "refused": self.refused,
            "over_refusal_rate": rate,
            "over_refusal_ci95": ci,
            "excluded": self.excluded,
            "examples": self.examples,
        }

    def lines(self) -> list[str]:
        if not self.benign:
            return [
                f"no benign rows among {self.rows} (benign: label `benign`, or a stance that is "
                "not adversarial with an in-scope ask): nothing to measure over-refusal on"
            ]
        d = self.as_dict()
        lo, hi = d["over_refusal_ci95"]
        out = [
            f"over-refusal: {self.refused} of {self.benign} benign rows declined "
            f"({d['over_refusal_rate']:.1%}, 95% {lo:.1%}-{hi:.1%}); "
            f"{self.excluded['not_benign']} not benign, {self.excluded['unknown']} unlabelled"
        ]
        out += [f"  {e['row']}: {e['fragment']!r}" for e in self.examples]
        return out


@dataclass
class TraceFlagReport:
    """Each flag's rate, examples and reward correlation; each marker's clean share."""

    options: TraceOptions = field(default_factory=TraceOptions)

    def __post_init__(self) -> None:
        self._tally = PresenceTally(FLAGS)
        self._applied = dict.fromkeys(TRACE_MARKERS, 0)
        self._clean = dict.fromkeys(TRACE_MARKERS, 0)

    def add(self, v: RowView, flags: list[dict[str, str]] | None = None) -> None:
        found = flags if flags is not None else trace_flags(v, self.options)
        present = {f["flag"]: f"{f['fragment']} [{f['where']}]" for f in found}
        self._tally.add(v.task, v.label(), dict(present), reward_of(v.row))
        for marker, value in trace_markers(found, v).items():
            self._applied[marker] += 1
            self._clean[marker] += value == 1.0

    def as_dict(self) -> dict[str, Any]:
        flags = self._tally.summary()
        markers = {}
        for name, n in self._applied.items():
            clean = self._clean[name]
            markers[name] = {
                "rows": n,
                "clean": clean,
                "mean": clean / n if n else None,
                "ci95": list(wilson(clean, n)) if n else None,
                "flags": list(TRACE_MARKERS[name]),
            }
        warnings = [
            pays_line(flag, entry) + " (the judge rewards the fake)"
            for flag, entry in flags.items()
            if entry["reward_pays"]
        ]
        return {
            "rows": self._tally.rows,
            "judged": self._tally.judged,
            "flags": flags,
            "markers": markers,
            "warnings": warnings,
            "note": self._tally.note(),
        }

    def lines(self) -> list[str]:
        d = self.as_dict()
        out = [f"trajectory flags over {d['rows']} rows ({d['judged']} judged)"]
        fired = [(k, v) for k, v in d["flags"].items() if v["rows_with"]]
        if not fired:
            out.append("  no flag fired")
        for flag, entry in fired:
            corr = entry["reward_corr"]["r"]
            tail = f", reward corr {corr:+.2f}" if corr is not None else ""
            out.append(f"  {flag:20} {entry['rows_with']} rows ({entry['rate']:.1%}){tail}")
            for ex in entry["examples"]:
                out.append(f"      {ex['row']}: {ex['fragment']}")
        for name, m in d["markers"].items():
            if m["rows"]:
                lo, hi = m["ci95"]
                out.append(
                    f"  {name:18} {m['mean']:.2f} clean [{lo:.2f}, {hi:.2f}] ({m['rows']} rows)"
                )
        if d["note"]:
            out.append(f"  {d['note']}")
        return out
