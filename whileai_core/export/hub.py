"""A Hugging Face dataset folder: what a dataset repo on the Hub holds, ready to upload.

    DIR/data/train.jsonl     the export (SFT samples or pairs), one JSONL file per split
    DIR/data/holdout.jsonl
    DIR/data/eval.jsonl
    DIR/meta/<split>.jsonl   per-sample metadata, for shapes that have no room for it
    DIR/README.md            the dataset card (huggingface_hub's DatasetCard): license,
                             language, task categories, size, title, `configs` (a data
                             file per split), `dataset_info` (features, examples and bytes
                             per split), then the shape, the trainer setting and the cut
    DIR/whileai.json         each split's source: input files, the rows it took (a digest),
                             the rule that sent them there, its export report

Splits: rows an eval scored (`lineage.source == "eval"`) go to `eval`; the others to
`holdout` or `train` by the one task-id hash push and `--env` use, so an ask never lands
on both sides. `datasets.load_dataset(DIR)` reads every split back exactly with
`datasets>=5` (older releases null-fill argument keys that differ between samples and
turn date-like strings into timestamps).
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from ..compare.lineage import is_eval_sourced
from ..errors import ConfigError
from ..jsonl import RowWriter
from ..metrics.holdout import holdout_side
from ..metrics.tally import task_key
from ..row.buffer import RowBuffer, Span
from .conversation import Row
from .files import check_target, read_json, whileai_version, write_file
from .plan import SampleExport, sidecar, summary_lines

SPLITS = ("train", "holdout", "eval")
MANIFEST = "whileai.json"
_RULES = {
    "train": "rows not scored by an eval whose task id hashes outside the holdout share",
    "holdout": "rows not scored by an eval whose task id hashes into the holdout share",
    "eval": "rows scored by an eval (lineage.source == 'eval')",
}


@dataclass
class HubReport:
    """What the folder holds, split by split."""

    directory: str
    kind: str
    format: str
    holdout_fraction: float
    splits: dict[str, dict[str, Any]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    @property
    def samples(self) -> int:
        return sum(int(s["samples"]) for s in self.splits.values())

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": "hub",
            "directory": self.directory,
            "export": self.kind,
            "format": self.format,
            "holdout_fraction": self.holdout_fraction,
            "samples": self.samples,
            "splits": {
                name: {k: v for k, v in split.items() if k != "report"}
                for name, split in self.splits.items()
            },
            "warnings": list(self.warnings),
        }


def split_of(row: Row, holdout: float) -> str:
    if is_eval_sourced(row):
        return "eval"
    return "holdout" if holdout_side(task_key(row), holdout) else "train"


def export_hub_folder(
    rows: Iterable[Row],
    directory: str | Path,
    plan: SampleExport,
    *,
    holdout: float = 0.2,
    sources: Iterable[str] = (),
    name: str | None = None,
    license: str = "other",
    language: str = "en",
) -> HubReport:
    """Write the dataset folder; `directory` is new, empty, or an earlier `--hf` export.
    The card states the data's `license` and `language` (the Hub's identifiers)."""
    root = Path(directory)
    _card_modules()  # refuse before writing anything when the card cannot be written
    _check_target(root)
    if not 0.0 <= holdout < 1.0:
        raise ConfigError(f"holdout {holdout}: must be in [0, 1)")
    buffer = RowBuffer()
    spans: dict[str, list[Span]] = {split: [] for split in SPLITS}
    digests = {split: hashlib.sha256() for split in SPLITS}
    for row in rows:
        side = split_of(row, holdout)
        spans[side].append(buffer.add(row))
        digests[side].update(orjson.dumps(row, option=orjson.OPT_SORT_KEYS) + b"\n")
    report = HubReport(str(root), plan.kind, plan.fmt, holdout)
    keep_inline = plan.keep_meta if plan.keep_meta is not None else plan.fmt == "trl"
    for split in SPLITS:
        if not spans[split]:
            continue
        data_path = root / "data" / f"{split}.jsonl"
        meta_rel = None if keep_inline else f"meta/{split}.jsonl"
        export = plan.new_report()
        with RowWriter(str(data_path)) as out, _meta_writer(root, meta_rel) as meta:
            sink = sidecar(meta) if meta else None
            out.write_many(plan.samples((buffer.load(s) for s in spans[split]), export, sink))
        data = export.as_dict()
        report.warnings.extend(f"{split}: {w}" for w in data.get("warnings", []))
        if out.count == 0:
            data_path.unlink(missing_ok=True)
            if meta_rel:
                (root / meta_rel).unlink(missing_ok=True)
        report.splits[split] = {
            "path": f"data/{split}.jsonl" if out.count else None,
            "meta": meta_rel if out.count else None,
            "rows_in": len(spans[split]),
            "samples": out.count,
            "bytes": data_path.stat().st_size if out.count else 0,
            "source": {
                "inputs": list(sources),
                "rule": _RULES[split],
                "rows_sha256": digests[split].hexdigest(),
            },
            "report": data,
        }
    write_file(root / MANIFEST, orjson.dumps(_manifest(report, plan), option=orjson.OPT_INDENT_2))
    about = CardFacts(name or root.name, license, language, features_of(root, report))
    write_file(root / "README.md", card(report, plan, about).encode())
    return report


@dataclass(frozen=True)
class CardFacts:
    """What the card's metadata says beyond the counts: the title, the data's license and
    language, and the features `datasets` reads from the files."""

    name: str
    license: str = "other"
    language: str = "en"
    features: list[dict[str, Any]] | None = None


def _card_modules() -> Any:
    try:
        import huggingface_hub
    except ImportError:
        raise ConfigError(
            "--hf writes the dataset card with huggingface_hub: pip install 'whileai-toolkit[hf]'"
        ) from None
    return huggingface_hub


def features_of(root: Path, report: HubReport) -> list[dict[str, Any]] | None:
    """`dataset_info.features` as the Hub states them: what `datasets` infers from the
    written files, in its own YAML form (None when nothing was written)."""
    files = [str(root / s["path"]) for s in report.splits.values() if s["samples"]]
    if not files:
        return None
    try:
        from datasets import Dataset
    except ImportError:
        raise ConfigError(
            "--hf states the features datasets reads: pip install 'whileai-toolkit[hf]'"
        ) from None
    import tempfile

    with tempfile.TemporaryDirectory(prefix="whileai-card-") as cache:
        loaded = Dataset.from_json(files, cache_dir=cache, keep_in_memory=True)
        features: list[dict[str, Any]] = loaded.features._to_yaml_list()
    return features


def size_category(n: int) -> str:
    """The Hub's `size_categories` bucket for `n` samples."""
    for bound, label in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"),
                         (1_000_000, "100K<n<1M"), (10_000_000, "1M<n<10M")):  # fmt: skip
        if n < bound:
            return label
    return "10M<n<100M"


def _meta_writer(root: Path, rel: str | None) -> Any:
    return RowWriter(str(root / rel)) if rel else contextlib.nullcontext()


def _check_target(root: Path) -> None:
    def is_hub_folder(folder: Path) -> bool:
        earlier = read_json(folder / MANIFEST)
        return isinstance(earlier, dict) and earlier.get("generated_by") == "whileai export --hf"

    if check_target(root, "--hf", is_hub_folder, "an earlier `whileai export --hf` folder"):
        for split in SPLITS:  # a split this export leaves empty must not linger from the last
            (root / "data" / f"{split}.jsonl").unlink(missing_ok=True)
            (root / "meta" / f"{split}.jsonl").unlink(missing_ok=True)


def _manifest(report: HubReport, plan: SampleExport) -> dict[str, Any]:
    return {
        "generated_by": "whileai export --hf",
        "whileai_version": whileai_version(),
        "export": plan.kind,
        "format": plan.fmt,
        "holdout_fraction": report.holdout_fraction,
        "splits": {
            name: {
                "path": split["path"],
                "meta": split["meta"],
                "samples": split["samples"],
                "rows_in": split["rows_in"],
                "source": split["source"],
                "report": split["report"],
            }
            for name, split in report.splits.items()
        },
    }


def _trainer_note(plan: SampleExport, shape: str) -> str:
    if plan.kind == "pairs":
        if plan.fmt == "openai":
            return "OpenAI preference fine-tuning (method `dpo`) reads these lines as they are."
        return (
            "TRL's `DPOTrainer` reads these rows as they are: `prompt` is the shared prefix "
            "up to the first agent turn where the two rollouts differ, `chosen`/`rejected` "
            "the agent's turn there."
        )
    if plan.fmt == "openai":
        return "OpenAI supervised fine-tuning reads these lines; `weight` 0/1 marks trained turns."
    if "prompt/completion" in shape:
        return (
            "TRL's `SFTTrainer` computes loss on the completion only for prompt/completion "
            "rows (its default, `completion_only_loss=None`)."
        )
    return (
        "Train with TRL's `SFTTrainer` and `assistant_only_loss=True` (a chat template with "
        "generation markers); without it the loss covers tool output and the person's turns."
    )


def card(report: HubReport, plan: SampleExport, about: CardFacts) -> str:
    """The README dataset card, through huggingface_hub's `DatasetCard`: metadata the Hub
    and `datasets` read (license, language, task categories, size, title, data files per
    split, examples and bytes and features), then prose."""
    hub = _card_modules()
    written = {n: s for n, s in report.splits.items() if s["samples"]}
    info: dict[str, Any] = {"config_name": "default"}
    if about.features is not None:
        info["features"] = about.features
    info.update(
        splits=[
            {"name": n, "num_bytes": s["bytes"], "num_examples": s["samples"]}
            for n, s in written.items()
        ],
        download_size=sum(s["bytes"] for s in written.values()),
        dataset_size=sum(s["bytes"] for s in written.values()),
    )
    data = hub.DatasetCardData(
        license=about.license,
        language=[about.language],
        task_categories=["text-generation"],
        size_categories=[size_category(report.samples)],
        pretty_name=about.name,
        tags=["whileai", "tool-use", "dpo" if plan.kind == "pairs" else "sft"],
        configs=[
            {
                "config_name": "default",
                "data_files": [{"split": n, "path": s["path"]} for n, s in written.items()],
            }
        ],
        dataset_info=info,
    )
    name = about.name
    sample = next(iter(written.values()), None)
    shape = (sample["report"].get("shape") if sample else None) or plan.kind
    table = "\n".join(
        f"| {n} | {s['samples']} | {s['rows_in']} | {s['source']['rule']} |"
        for n, s in report.splits.items()
    )
    summary = "".join(
        f"- {line.strip()}\n" for s in written.values() for line in summary_lines(s["report"])[:1]
    )
    warnings = "".join(f"- {w}\n" for w in report.warnings)
    meta = (
        "Per-sample metadata (scenario, rollout, reward, the ask) sits in each row."
        if all(s["meta"] is None for s in written.values())
        else "Per-sample metadata (scenario, rollout, reward, the ask) is in `meta/<split>.jsonl`, "
        "line for line (`line` is the sample's index): the training lines have no room for it."
    )
    body = f"""
# {name}

{"Preference pairs" if plan.kind == "pairs" else "Supervised fine-tuning samples"} written by
`whileai export --hf` in the `{plan.fmt}` shape ({shape}). Every sample starts with the
system prompt the agent ran under and carries the tool schemas it was given.

```python
from datasets import load_dataset  # datasets>=5

ds = load_dataset("path/or/repo-of-this-folder")
```

Load it with `datasets>=5`: older releases null-fill argument keys that differ between
samples and turn date-like strings into timestamps, so rows would not come back as written.

{_trainer_note(plan, shape)}

| split | samples | source rows | rule |
|---|---|---|---|
{table}

Holdout share {report.holdout_fraction:g}, by a hash of each ask's task id (the same hash
`whileai push --holdout` and `whileai export --env` use). `whileai.json` maps each split to
its inputs, a digest of the rows it took and its export report. {meta}

{summary}
{("## Warnings" + chr(10) + chr(10) + warnings) if warnings else ""}"""
    return str(hub.DatasetCard(f"---\n{data.to_yaml()}\n---\n{body}"))
