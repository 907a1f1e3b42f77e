"""Push and pull: rows from files or stdin to a store and back, streamed.

A push reads its input once, removes every `privileged` block and spools the rows; a
second pass over the spool stamps each graded row that carries no `calibration` with its
task's (`optimize.calibration_stamp`, the same stamp optimize writes: task id, k, pass
rate with its Wilson interval, policy), splits a holdout by task when asked (a task is
wholly on one side, and the same task lands on the same side every run) and hashes each
side; the publish gate runs over the result, then it uploads. The idempotency key is the
hash of what would be stored plus the dataset's metadata (the stamp is a function of the
rows, so a rerun stores the same bytes): a retried push (after a timeout, a killed
process, a cron rerun) finds the dataset the first attempt made instead of a second one.
"""

from __future__ import annotations

import hashlib
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Any

import orjson

from ..errors import BadRowError, ConfigError, NoRows, WhileaiError
from ..jsonl import OnError, ReadStats, RowWriter, dumps, iter_lines, read_rows
from ..metrics.holdout import holdout_side
from ..metrics.tally import reward_of, task_key
from ..row.limits import env_name, format_size
from ..row.privileged import prepare_to_ship
from ..store.base import NewDataset, Store, StoreError, check_purpose
from ..store.limits import Limits

UPLOAD_CHUNK = 1024 * 1024


@dataclass
class _Spool:
    path: Path
    handle: IO[bytes]
    digest: Any = field(default_factory=hashlib.sha256)
    rows: int = 0

    def write(self, line: bytes) -> None:
        self.handle.write(line)
        self.digest.update(line)
        self.rows += 1


@dataclass(slots=True)
class _Pending:
    """A spooled row's task, whether it still needs that task's calibration stamp, and
    where it was read (to name it if the store could not take it)."""

    task: str
    stamp_task: bool
    has_key: bool  # a non-object `calibration` (null, a string) to overwrite
    source: str
    lineno: int


class _Tasks:
    """Per task, what `calibration_stamp` reads of each row: its reward and policy. Rows
    that agree on those share one small dict (and a task's name is kept once), so a big
    push costs a reference per row, not a copy of it."""

    def __init__(self) -> None:
        self.groups: dict[str, list[dict[str, Any]]] = {}
        self._names: dict[str, str] = {}
        self._shared: dict[tuple[float | None, str | None, str | None], dict[str, Any]] = {}

    def add(self, row: dict[str, Any]) -> str:
        name = task_key(row)
        task = self._names.setdefault(name, name)
        group = self.groups.setdefault(task, [])
        policy, model = (row.get(k) for k in ("policy_version", "model_version"))
        key = (
            reward_of(row),
            policy if isinstance(policy, str) else None,
            model if isinstance(model, str) else None,
        )
        view = self._shared.setdefault(
            key, {"reward": key[0], "policy_version": key[1], "model_version": key[2]}
        )
        group.append(view)
        return task

    def stamps(self) -> dict[str, dict[str, Any]]:
        from ..select.calibration import calibration_stamp

        return {task: calibration_stamp(task, group) for task, group in self.groups.items()}


def _with_stamp(line: bytes, stamp: dict[str, Any], has_key: bool) -> bytes:
    """`line` (one JSON object and a newline) with `calibration` appended, without a parse
    unless the row already has the key (a null one: replaced, as optimize does)."""
    if has_key:
        return dumps({**orjson.loads(line), "calibration": stamp})
    body = line.rstrip(b"\n")
    added = orjson.dumps({"calibration": stamp})
    if body == b"{}":
        return added + b"\n"
    return body[:-1] + b"," + added[1:] + b"\n"


def _file_chunks(path: Path) -> Iterator[bytes]:
    with path.open("rb") as fh:
        while chunk := fh.read(UPLOAD_CHUNK):
            yield chunk


def upload_file(store: Store, spec: NewDataset, path: Path) -> dict[str, Any]:
    """Create (or find, by idempotency key), upload and finalize one dataset."""
    created = store.create_dataset(spec)
    if created.get("existing"):
        return created
    store.upload(created["datasetId"], _file_chunks(path), path.stat().st_size)
    record = store.finalize(created["datasetId"])
    record["existing"] = False
    return record


def _idempotency_key(spec: NewDataset, content_sha: str, holdout: float, side: str) -> str:
    meta = orjson.dumps(
        [spec.name, spec.purpose, spec.mode, spec.agent, spec.parent, spec.description, holdout],
    )
    return hashlib.sha256(meta + content_sha.encode() + side.encode()).hexdigest()


def push_rows(
    store: Store,
    inputs: Iterable[str],
    *,
    name: str,
    purpose: str = "train",
    mode: str | None = None,
    agent: str | None = None,
    parent: str | None = None,
    description: str | None = None,
    holdout: float = 0.0,
    gate: bool = True,
    endorsed: tuple[str, ...] = (),
    strict_hacks: bool = False,
    agent_spec: dict[str, Any] | None = None,
    on_error: OnError = "fail",
) -> dict[str, Any]:
    """Push rows as a dataset (and a linked holdout dataset when `holdout` > 0).
    `agent_spec` (`tools`, `system_prompt`; see `agent_spec`) goes on the agent's record.

    With `endorsed`, the gate also carries the hack scan of the rows to be stored (RL-shaped
    sets); `strict_hacks` refuses a set the scan calls `reward_hack`, storing nothing.

    Returns `{"train": record, "holdout": record | None, "gate": report | None,
    "stripped": rows that carried privileged data, "left_out_leaks": rows left out for
    repeating their own answer key, "left_out_privileged": rows left out because part of
    the block could not be removed, "first_left_out_privileged": the first of those as file:line,
    "skipped_lines": bad lines left out
    (`on_error="skip"`; "fail" refuses the whole push at the first, naming file:line)}`;
    `existing` on a record says a retry found it already stored.
    """
    read = ReadStats()
    # What the embedded store (and a server left at its defaults) takes as one line.
    line_cap = Limits.from_env().max_line_bytes
    check_purpose(purpose)
    if strict_hacks and not endorsed:
        raise ConfigError(
            "--strict-hacks needs --endorsed: without knowing what the reward should track "
            "the scan cannot call anything a reward hack"
        )
    if not 0 <= holdout < 1:
        raise ConfigError(f"--holdout must be in [0, 1), got {holdout}")
    with tempfile.TemporaryDirectory(prefix="whileai-push-") as tmp:
        staged = Path(tmp) / "staged.jsonl"
        main_path, hold_path = Path(tmp) / "main.jsonl", Path(tmp) / "holdout.jsonl"
        stripped = leaked = residue = 0
        first_residue: str | None = None
        tasks = _Tasks()
        pending: list[_Pending] = []
        with staged.open("wb") as sfh:
            for source, lineno, row in iter_lines(inputs, on_error=on_error, stats=read):
                # The one decision every way out makes (`privileged.prepare_to_ship`): a row
                # that leaks its answer key, or names the block where it cannot be removed,
                # stays home; the rest go without it.
                shipped = prepare_to_ship(row)
                if shipped.row is None:
                    if shipped.refused == "quotes_privileged":
                        leaked += 1
                    else:
                        residue += 1
                        first_residue = first_residue or f"{source}:{lineno}"
                    continue
                clean = shipped.row
                if shipped.stripped:
                    stripped += 1
                task = tasks.add(clean)
                graded = reward_of(clean) is not None
                needs = graded and not isinstance(clean.get("calibration"), dict)
                has_key = needs and "calibration" in clean
                pending.append(_Pending(task, needs, has_key, source, lineno))
                sfh.write(dumps(clean))
        stamps = tasks.stamps() if any(p.stamp_task for p in pending) else {}
        with staged.open("rb") as sfh, main_path.open("wb") as mfh, hold_path.open("wb") as hfh:
            main, side = _Spool(main_path, mfh), _Spool(hold_path, hfh)
            for line, entry in zip(sfh, pending, strict=True):
                if entry.stamp_task:
                    line = _with_stamp(line, stamps[entry.task], entry.has_key)
                if len(line) > line_cap + 1:  # the store would refuse the whole dataset for it
                    problem = _too_long(len(line) - 1, line_cap)
                    error = BadRowError(entry.source, entry.lineno, problem)
                    if on_error == "fail":
                        raise error
                    read.note(error)
                    continue
                target = side if holdout_side(entry.task, holdout) else main
                target.write(line)
        if main.rows + side.rows == 0:
            left = [f"{leaked} that repeat their answer key"] if leaked else []
            if residue:
                left.append(f"{residue} that still name the privileged block")
            why = f" but {' and '.join(left)}" if left else ""
            if read.skipped:
                why += f" ({read.skipped} bad lines skipped; first: {read.first_error})"
            if not why:  # the input held nothing at all: not bad input, nothing to do
                raise NoRows("nothing to push: the input has no rows")
            raise ConfigError(f"nothing to push: the input has no rows{why}")
        gate_report: dict[str, Any] | None = None
        if gate:
            from ..select.gate import publish_gate

            spooled = read_rows([str(main_path), str(hold_path)])
            gate_report = publish_gate(spooled).as_dict()
            if endorsed and gate_report["rl_shaped"]:
                _scan_into(gate_report, [str(main_path), str(hold_path)], endorsed, strict_hacks)
        base = NewDataset(
            name=name,
            purpose=purpose,
            mode=mode,
            agent=agent,
            description=description,
            parent=parent,
        )
        main_key = _idempotency_key(base, main.digest.hexdigest(), holdout, "main")
        train = None
        if main.rows:
            train = upload_file(store, replace(base, idempotency_key=main_key), main_path)
        held = None
        if side.rows:
            hold_spec = replace(
                base,
                name=f"{name}-holdout",
                purpose="holdout",
                parent=train["datasetId"] if train else parent,
                idempotency_key=_idempotency_key(base, side.digest.hexdigest(), holdout, "held"),
            )
            try:
                held = upload_file(store, hold_spec, hold_path)
            except StoreError:
                # The push is the pair: a train set whose holdout was refused (a quota, a
                # bad line) would be trained on with nothing held out. It goes too.
                if train is not None and not train.get("existing"):
                    store.delete_dataset(train["datasetId"])
                raise
    if agent and agent_spec:
        store.create_agent(agent, None, agent_spec)
    return {
        "train": train,
        "holdout": held,
        "gate": gate_report,
        "stripped": stripped,
        "left_out_leaks": leaked,
        "left_out_privileged": residue,
        "first_left_out_privileged": first_residue,
        "skipped_lines": read.skipped,
        "first_error": read.first_error,
    }


class HackScanRefusal(WhileaiError):
    """`--strict-hacks` and a set whose reward the hack scan calls a reward hack."""

    def __init__(self, scan: dict[str, Any]) -> None:
        self.scan = scan
        super().__init__(
            f"hack scan: reward_hack (top feature {scan['top_feature']}, r={scan['top_r']:+.2f}, "
            f"not endorsed: {', '.join(scan['endorsed'])})"
        )


def _scan_into(
    gate_report: dict[str, Any], paths: list[str], endorsed: tuple[str, ...], strict: bool
) -> None:
    from ..scan.engine import ScanOptions, hack_scan

    scan = hack_scan(lambda: read_rows(paths), ScanOptions(endorsed=endorsed))
    gate_report["hack_scan"] = scan
    gate_report["warnings"].extend(scan["warnings"])
    if strict and scan["regime"] == "reward_hack":
        raise HackScanRefusal(scan)


def _too_long(size: int, cap: int) -> str:
    return (
        f"row is {size:,} bytes as pushed (calibration stamp included), over the "
        f"{format_size(cap)} a store line may take ({env_name('max_line_bytes')})"
    )


def pull_rows(store: Store, dataset_id: str, output: str | None) -> int:
    """Write a dataset's JSONL to `output` (atomically) or stdout; returns bytes written."""
    if output not in (None, "-") and Path(str(output)).is_dir():
        raise ConfigError(f"{output}: is a directory; give -o a file to write")
    size = 0
    with RowWriter(output) as writer:
        for chunk in store.download(dataset_id):
            writer.write_raw(chunk)
            size += len(chunk)
    return size


def agent_spec(path: str) -> dict[str, Any]:
    """What a spec says an agent is, for its record: its tools (OpenAI function shape) and
    its system prompt."""
    from ..spec import load_spec

    spec = load_spec(path)
    return {"tools": spec.openai_tools(), "system_prompt": spec.policy}
