"""Off-policy check: which policies sampled these rows, and can an update still use them.

Rows whose `model_version` differs from the model about to be trained (`--base-model`)
are `stale`; a row that does not say which model sampled it counts as stale too. A stale
row is usable by an off-policy update only with its sampler's logprob, since the
importance ratio exp(new - old) needs it; the stale rows without one are named (task and
rollout). A provider prefix and URL name the same model (`vllm:Qwen/Qwen3-4B@http://h/v1`
is `Qwen/Qwen3-4B`: `models.spec.same_model`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..metrics.tally import task_key
from ..models.spec import same_model
from .logprobs import turns_of

MAX_NAMED = 20


def row_name(row: dict[str, Any]) -> str:
    """How a report names one rollout: its task and rollout index."""
    index = row.get("rollout_index")
    task = task_key(row) or "?"
    return f"{task}#{index}" if isinstance(index, int) else task


@dataclass
class StalenessReport:
    base_model: str | None = None
    rows: int = 0
    with_logprobs: int = 0
    stale: int = 0
    stale_with_logprobs: int = 0
    unknown_sampler: int = 0
    versions: Counter[str] = field(default_factory=Counter)
    models: Counter[str] = field(default_factory=Counter)
    stale_without: list[str] = field(default_factory=list)

    def add(self, row: dict[str, Any]) -> None:
        self.rows += 1
        model = row.get("model_version")
        version = row.get("policy_version") or model or "unknown"
        self.versions[str(version)] += 1
        self.models[str(model or "unknown")] += 1
        has = bool(turns_of(row))
        self.with_logprobs += has
        if not self.base_model:
            return
        if not isinstance(model, str) or not model:
            self.unknown_sampler += 1
        elif same_model(model, self.base_model):
            return
        self.stale += 1
        if has:
            self.stale_with_logprobs += 1
        elif len(self.stale_without) < MAX_NAMED:
            self.stale_without.append(row_name(row))

    def as_dict(self) -> dict[str, Any]:
        n = self.rows
        return {
            "base_model": self.base_model,
            "rows": n,
            "versions": dict(self.versions.most_common()),
            "models": dict(self.models.most_common()),
            "logprob_coverage": self.with_logprobs / n if n else None,
            "stale": self.stale if self.base_model else None,
            "stale_share": self.stale / n if self.base_model and n else None,
            "unknown_sampler": self.unknown_sampler,
            "stale_with_logprobs": self.stale_with_logprobs,
            "stale_without_logprobs": self.stale - self.stale_with_logprobs,
            "stale_without_logprobs_rows": self.stale_without,
            "warnings": self.warnings(),
        }

    def warnings(self) -> list[str]:
        out = []
        if len(self.versions) > 1:
            out.append(
                f"rows come from {len(self.versions)} policy versions: an on-policy update "
                "wants one, an off-policy one needs the sampler's logprob on every row"
            )
        missing = self.stale - self.stale_with_logprobs
        if missing:
            named = ", ".join(self.stale_without)
            more = (
                f" and {missing - len(self.stale_without)} more"
                if missing > len(self.stale_without)
                else ""
            )
            out.append(
                f"{missing} stale row(s) carry no logprob, so no importance ratio can be "
                f"formed for them: {named}{more}"
            )
        if self.unknown_sampler:
            out.append(
                f"{self.unknown_sampler} row(s) do not say which model sampled them "
                "(no model_version): counted stale"
            )
        return out

    def lines(self) -> list[str]:
        d = self.as_dict()
        cover = "n/a" if d["logprob_coverage"] is None else f"{d['logprob_coverage']:.0%}"
        out = [
            f"staleness: {d['rows']} rows from {len(self.versions)} policy version(s); "
            f"logprob coverage {cover}"
        ]
        for version, count in list(d["versions"].items())[:10]:
            out.append(f"  {version}: {count}")
        if self.base_model:
            out.append(
                f"stale against {self.base_model}: {self.stale} row(s), "
                f"{self.stale_with_logprobs} with logprobs (usable off-policy), "
                f"{self.stale - self.stale_with_logprobs} without"
            )
        return out


def staleness_report(
    rows: Iterable[dict[str, Any]], *, base_model: str | None = None
) -> StalenessReport:
    report = StalenessReport(base_model=base_model)
    for row in rows:
        report.add(row)
    return report
