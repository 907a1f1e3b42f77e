"""`whileai merge`: the outputs of a run's N shards as one file, in a stable order.

Every row a shard writes carries `shard` ("I/N"). The files are checked before a row is
written: every row's situation hashes to its shard, all agree on N, no shard is in two
files (an overlap) and none is missing. A file may hold several shards (the output of
`--executor ray` holds them all, in the order they finished). Then the rows go out shard
by shard (1 to N), each shard's rows in their file's order: the order never depends on
which shard finished first, and nothing is held in memory but the shard labels.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigError, NoRows
from ..jsonl import OnError, ReadStats, RowWriter, iter_lines, read_rows
from .shards import parse_shard, shard_of, task_key


@dataclass
class MergeReport:
    shards: int = 0
    rows: int = 0
    by_shard: dict[str, int] = field(default_factory=dict)
    skipped: int = 0

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    def lines(self) -> list[str]:
        parts = ", ".join(f"{label} {n}" for label, n in self.by_shard.items())
        return [f"merged {self.rows} rows from {self.shards} shards ({parts})"]


def _file_shards(path: str, on_error: OnError, stats: ReadStats) -> dict[int, int]:
    """Rows by shard index in this file, and the file's N; a ConfigError says what is wrong."""
    rows: dict[int, int] = {}
    count: int | None = None
    for source, lineno, row in iter_lines([path], on_error=on_error, stats=stats):
        label = row.get("shard")
        if not isinstance(label, str):
            raise ConfigError(
                f"{source}:{lineno}: row has no shard field: not an output of --shard I/N"
            )
        try:
            shard = parse_shard(label)
        except ConfigError:
            raise ConfigError(f"{source}:{lineno}: shard {label!r} is not I/N") from None
        if count is None:
            count = shard.count
        elif shard.count != count:
            raise ConfigError(
                f"{source}:{lineno}: shard {shard.label} in a file of {count} shards: "
                "merge one run's shards"
            )
        owner = shard_of(task_key(row), shard.count)
        if owner != shard.index:
            raise ConfigError(
                f"{source}:{lineno}: task {task_key(row)} belongs to shard {owner}/{shard.count}, "
                f"not {shard.label}"
            )
        rows[shard.index] = rows.get(shard.index, 0) + 1
    if count is None:
        if not stats.skipped:
            raise NoRows(f"{path}: no rows")
        raise ConfigError(f"{path}: no rows: a shard's output always holds some")
    rows[0] = count  # the file's N rides along under the key no shard uses
    return rows


def merge_shards(
    files: list[str], output: str | None = None, *, on_error: OnError = "fail"
) -> MergeReport:
    """Check `files` are every shard of one run once each, then write their rows in shard
    order to `output` (atomic replace) or stdout."""
    if not files:
        raise ConfigError("give the shard files to merge")
    if "-" in files:
        raise ConfigError("merge reads shard files, not stdin: give each shard's file")
    stats = ReadStats()
    seen: dict[int, str] = {}
    count: int | None = None
    counts: dict[int, int] = {}
    empty: NoRows | None = None
    for path in files:
        try:
            found = _file_shards(path, on_error, stats)
        except NoRows as exc:
            empty = empty or exc
            continue
        n = found.pop(0)
        if count is None:
            count = n
        elif n != count:
            raise ConfigError(
                f"{path} holds shards of {n} but {files[0]} of {count}: merge one run's shards"
            )
        for index, rows in sorted(found.items()):
            if index in seen:
                raise ConfigError(
                    f"overlapping shards: {seen[index]} and {path} both hold shard {index}/{n}"
                )
            seen[index] = path
            counts[index] = rows
    if count is None:  # every file held no rows: nothing to merge
        assert empty is not None
        raise empty
    if empty is not None:  # one shard's output empty beside others: a shard that failed
        raise ConfigError(f"{empty}: a shard's output always holds some")
    missing = [f"{i}/{count}" for i in range(1, count + 1) if i not in seen]
    if missing:
        raise ConfigError(f"missing shards: {', '.join(missing)} (give every shard's file)")
    report = MergeReport(shards=count, skipped=stats.skipped)
    with RowWriter(output) as out:
        for index in range(1, count + 1):
            label = f"{index}/{count}"
            for row in read_rows([seen[index]], on_error=on_error):
                if row.get("shard") == label:
                    out.write(row)
            report.by_shard[f"{index}/{count}"] = counts[index]
    report.rows = sum(counts.values())
    return report
