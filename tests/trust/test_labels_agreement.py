"""`whileai label` (who said what, nothing dropped silently) and `whileai agreement`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from whileai_core.trust import attach_labels, judge_agreement

from ..helpers import SDK_ROWS, run_cli

SDK_TRUST = json.loads((Path(__file__).parent / "data" / "sdk_trust.json").read_text())


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


ROWS = [
    {"scenario_id": "a", "rollout_index": 0, "prompt": "ask a", "final_text": "x"},
    {"scenario_id": "a", "rollout_index": 1, "prompt": "ask a", "final_text": "y"},
    {"prompt": "bare ask", "rollout_index": 0, "final_text": "z"},
]


def test_labels_attach_by_scenario_or_prompt_and_report_what_matched_nothing(
    tmp_path: Path,
) -> None:
    labels = _write(
        tmp_path / "labels.jsonl",
        [
            {"scenario_id": "a", "rollout_index": 1, "gold_reward": 0, "note": "claimed a refund"},
            {"prompt": "bare ask", "rollout_index": 0, "gold_reward": "pass"},
            {"scenario_id": "zzz", "rollout_index": 0, "gold_reward": 1},
        ],
    )
    rows = _write(tmp_path / "rows.jsonl", ROWS)
    done = run_cli("label", str(rows), "--labels", str(labels), "--annotator", "ana", "--json")
    assert done.returncode == 0, done.stderr.decode()
    out = [json.loads(line) for line in done.stdout.splitlines()]
    assert "gold_reward" not in out[0]
    assert out[1]["gold_reward"] == 0 and out[1]["label_source"] == "human:ana"
    assert out[1]["gold_labels"] == {"ana": {"gold_reward": 0, "note": "claimed a refund"}}
    assert out[2]["gold_reward"] == 1
    report = json.loads(done.stderr)
    assert report["matched"] == 2 and report["unmatched"] == 1
    assert report["unmatched_labels"][0]["where"].endswith("labels.jsonl:3")
    text = run_cli("label", str(rows), "--labels", str(labels), "--annotator", "ana").stderr
    assert b"unmatched: " in text and b"labels.jsonl:3: no row with scenario 'zzz'" in text


def test_annotators_are_kept_side_by_side_and_a_tie_is_no_gold() -> None:
    first, _ = attach_labels(
        ROWS[:1], [{"scenario_id": "a", "rollout_index": 0, "gold_reward": 1}], annotator="ana"
    )
    second, report = attach_labels(
        first, [{"scenario_id": "a", "rollout_index": 0, "gold_reward": 0}], annotator="bo"
    )
    row = second[0]
    assert row["gold_labels"] == {"ana": {"gold_reward": 1}, "bo": {"gold_reward": 0}}
    assert row["gold_reward"] is None and row["gold_conflict"] is True
    assert report.conflicts == 1 and row["label_source"] == "human:ana,human:bo"
    third, _ = attach_labels(
        second, [{"scenario_id": "a", "rollout_index": 0, "gold_reward": 1}], annotator="cy"
    )
    assert third[0]["gold_reward"] == 1 and "gold_conflict" not in third[0]


def test_a_label_without_rollout_index_on_a_task_with_several_rollouts_is_reported() -> None:
    out, report = attach_labels(ROWS, [{"scenario_id": "a", "gold_reward": 1}], annotator="ana")
    assert out[0]["gold_reward"] == 1 and "gold_reward" not in out[1]
    assert report.ambiguous and "rollout_index" in report.ambiguous[0]["why"]


def test_a_bad_label_names_its_file_and_line(tmp_path: Path) -> None:
    labels = _write(
        tmp_path / "labels.jsonl",
        [
            {"scenario_id": "a", "rollout_index": 0, "gold_reward": 1},
            {"scenario_id": "a", "rollout_index": 1, "gold_reward": 0.5},
        ],
    )
    done = run_cli(
        "label",
        str(_write(tmp_path / "r.jsonl", ROWS)),
        "--labels",
        str(labels),
        "--annotator",
        "ana",
    )
    assert done.returncode == 1
    assert b"labels.jsonl:2: gold_reward must be 0 or 1, got 0.5" in done.stderr
    missing = run_cli("label", str(tmp_path / "r.jsonl"), "--labels", str(labels))
    assert missing.returncode == 1
    assert b"labels.jsonl:1: no annotator: give --annotator NAME" in missing.stderr


def test_no_label_matching_any_row_exits_1(tmp_path: Path) -> None:
    labels = _write(
        tmp_path / "l.jsonl", [{"scenario_id": "nope", "rollout_index": 0, "gold_reward": 1}]
    )
    done = run_cli(
        "label",
        str(_write(tmp_path / "r.jsonl", ROWS)),
        "--labels",
        str(labels),
        "--annotator",
        "ana",
        "-o",
        str(tmp_path / "out.jsonl"),
    )
    assert done.returncode == 1 and (tmp_path / "out.jsonl").read_text().count("\n") == 3


def _graded(rewards: list[float | None], **extra: Any) -> list[dict[str, Any]]:
    return [
        {
            "scenario_id": f"t{i}",
            "rollout_index": 0,
            "final_text": "x",
            "reward": r,
            "judge_status": "ok" if r is not None else "error",
            **extra,
        }
        for i, r in enumerate(rewards)
    ]


def test_agreement_between_two_runs_uses_the_second_as_gold(tmp_path: Path) -> None:
    a = _graded([1.0, 1.0, 0.0, 0.0, 1.0, None], judge_name="judge-a")
    b = [
        *_graded([1.0, 0.0, 0.0, 1.0, 1.0, 1.0], judge_name="judge-b")[:5],
        {"scenario_id": "only-b", "rollout_index": 0, "reward": 1.0},
    ]
    report = judge_agreement(a, b).as_dict()
    assert report["n"] == 5 and report["agreement"] == pytest.approx(3 / 5)
    assert report["confusion"] == {"tp": 2, "fp": 1, "fn": 1, "tn": 1}
    assert report["counts"]["unpaired"] == 1 and report["counts"]["gold_only"] == 1
    assert report["judge"] == "judge-a" and report["gold"] == "judge-b"
    done = run_cli(
        "agreement",
        str(_write(tmp_path / "a.jsonl", a)),
        str(_write(tmp_path / "b.jsonl", b)),
        "--json",
    )
    assert done.returncode == 0 and json.loads(done.stdout)["kappa"] == pytest.approx(
        report["kappa"]
    )
    text = run_cli("agreement", str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl")).stdout
    assert b"agreement 0.600" in text and b"with judge-b as gold" in text


def test_agreement_of_one_file_reads_its_gold_reward() -> None:
    rows = [
        {**r, "gold_reward": g} for r, g in zip(_graded([1.0, 0.0, 1.0]), [1, 0, 0], strict=True)
    ]
    report = judge_agreement(rows).as_dict()
    assert report["gold"] == "gold_reward" and report["agreement"] == pytest.approx(2 / 3)


def test_without_annotator_every_line_names_its_own(tmp_path: Path) -> None:
    labels = _write(
        tmp_path / "l.jsonl",
        [
            {"scenario_id": "a", "rollout_index": 0, "gold_reward": 1, "annotator": "ana"},
            {"scenario_id": "a", "rollout_index": 1, "gold_reward": 0, "annotator": "bo"},
        ],
    )
    done = run_cli("label", str(_write(tmp_path / "r.jsonl", ROWS)), "--labels", str(labels))
    assert done.returncode == 0, done.stderr.decode()
    out = [json.loads(line) for line in done.stdout.splitlines()]
    assert out[0]["gold_labels"] == {"ana": {"gold_reward": 1}}
    assert out[1]["label_source"] == "human:bo"


def _sdk_rows() -> list[dict[str, Any]]:
    return [json.loads(line) for line in SDK_ROWS.read_text().splitlines() if line.strip()]


def test_sdk_rows_sharing_a_key_are_told_apart_by_the_prompt(tmp_path: Path) -> None:
    """The SDK's rows repeat (scenario_id, rollout_index) across phrasings of one task."""
    rows = _sdk_rows()
    twins = [r for r in rows if r["scenario_id"] == "sc-7f3f7ffb92"]
    assert len(twins) == 3 and len({r["prompt"] for r in twins}) == 3
    labels = [
        {
            "scenario_id": r["scenario_id"],
            "rollout_index": 0,
            "prompt": r["prompt"],
            "gold_reward": g,
        }
        for r, g in zip(twins, (1, 0, 1), strict=True)
    ]
    out, report = attach_labels(rows, labels, annotator="ana")
    got = [r["gold_reward"] for r in out if r["scenario_id"] == "sc-7f3f7ffb92"]
    assert got == [1, 0, 1]
    assert report.matched == 3 and not report.ambiguous and not report.duplicates
    assert report.labelled_rows == 3


def test_two_lines_naming_one_shared_key_are_reported_not_silently_merged(tmp_path: Path) -> None:
    rows = _write(tmp_path / "sdk.jsonl", _sdk_rows())
    labels = _write(
        tmp_path / "l.jsonl",
        [
            {"scenario_id": "sc-7a1b66e65e", "rollout_index": 0, "gold_reward": 1},
            {"scenario_id": "sc-7a1b66e65e", "rollout_index": 0, "gold_reward": 0},
        ],
    )
    done = run_cli("label", str(rows), "--labels", str(labels), "--annotator", "ana", "--json")
    assert done.returncode == 0, done.stderr.decode()
    report = json.loads(done.stderr)
    dup = report["duplicate_labels"]
    assert [d["where"].rsplit(":", 1)[1] for d in dup] == ["2"]
    assert dup[0]["why"].endswith("l.jsonl:1 for annotator ana: it replaced that label")
    ambiguous = report["ambiguous_labels"]
    assert len(ambiguous) == 2 and all("give the row's prompt" in a["why"] for a in ambiguous)
    out = [json.loads(line) for line in done.stdout.splitlines()]
    labelled = [r for r in out if "gold_reward" in r and r["scenario_id"] == "sc-7a1b66e65e"]
    assert len(labelled) == 1 and labelled[0]["gold_reward"] == 0
    text = run_cli("label", str(rows), "--labels", str(labels), "--annotator", "ana").stderr
    assert b"duplicate: " in text and b"ambiguous: " in text


def test_labels_carry_the_provenance_the_sdk_counts_as_a_persons(tmp_path: Path) -> None:
    """whileai 0.131's judge_trust reads `gold_kind`: with label_source alone it printed
    NOT MEASURED on our labelled rows; with gold_kind "human" it measures them
    (tests/trust/data/sdk_trust.json, `provenance`)."""
    before, now = (SDK_TRUST["provenance"][k] for k in ("label_source_only", "with_gold_kind"))
    assert before["printed"] == "NOT MEASURED" and now["ok"] is True
    out, _ = attach_labels(
        ROWS[:1], [{"scenario_id": "a", "rollout_index": 0, "gold_reward": 1}], annotator="ana"
    )
    assert {k: out[0].get(k) for k in now["keys"]} == now["keys"]
    # the SDK's rule for several kinds: a model's beside a person's is model gold, two
    # trusted kinds side by side are "mixed"
    mixed, _ = attach_labels(
        out,
        [{"scenario_id": "a", "rollout_index": 0, "gold_reward": 1, "kind": "verifier"}],
        annotator="tests",
    )
    assert mixed[0]["gold_kind"] == "mixed"
    assert mixed[0]["label_source"] == "human:ana,program:tests"
    model, _ = attach_labels(
        out,
        [{"scenario_id": "a", "rollout_index": 0, "gold_reward": 1, "kind": "model"}],
        annotator="gpt",
    )
    assert model[0]["gold_kind"] == "model"


def test_the_sdks_list_of_labels_is_read_as_earlier_votes() -> None:
    row = {
        **ROWS[0],
        "gold_labels": [{"label": 0, "annotator": "sdk-ana", "kind": "human", "ts": 1.0}],
        "gold_reward": 0,
        "gold_kind": "human",
    }
    out, report = attach_labels(
        [row], [{"scenario_id": "a", "rollout_index": 0, "gold_reward": 0}], annotator="bo"
    )
    assert out[0]["gold_labels"] == {"sdk-ana": {"gold_reward": 0}, "bo": {"gold_reward": 0}}
    assert out[0]["gold_reward"] == 0 and report.replaced == 0
