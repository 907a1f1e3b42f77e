"""Selection: RL groups in the band, SFT rejection sampling, calibration, hygiene, the CLI."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import orjson
import pytest

from whileai_core.audit.run import audit_rows
from whileai_core.errors import ConfigError, WhileaiError
from whileai_core.metrics.passat import pass_numbers, pass_report
from whileai_core.metrics.stats import wilson
from whileai_core.metrics.tally import tally
from whileai_core.select.optimize import OptimizeOptions, optimize, select

from ..helpers import SDK_ROWS, run_cli


def _row(task: str, i: int, reward: float | None, **extra: Any) -> dict[str, Any]:
    """One graded rollout of ask `task`; distinct replies so nothing is a duplicate."""
    row: dict[str, Any] = {
        "prompt": f"Please look at order {task}.",
        "scenario_id": task,
        "steps": [{"tool": "get_order", "arguments": {"order_id": task}, "result": {"n": i}}],
        "final_text": f"Reply {i} about {task}.",
        "rollout_index": i,
        "policy_version": "seeded@1",
        "reward": reward,
        "judge_status": "ok",
    }
    row.update(extra)
    return row


def _group(task: str, wins: int, n: int, **extra: Any) -> list[dict[str, Any]]:
    return [_row(task, i, 1.0 if i < wins else 0.0, **extra) for i in range(n)]


def _tasks(rows: list[dict[str, Any]]) -> list[str]:
    seen: list[str] = []
    for row in rows:
        if row["scenario_id"] not in seen:
            seen.append(row["scenario_id"])
    return seen


def test_every_junk_reason_is_dropped_and_counted() -> None:
    good = _group("g", 2, 4)
    leak = _row("g", 10, 1.0, privileged={"reference": "refund only delivered orders"})
    leak["final_text"] = "As my notes say: refund only delivered orders."
    junk = [
        _row("g", 5, 1.0, judge_status="error"),
        _row("g", 6, None, judge_status=None),
        _row("g", 7, 1.0, final_text="   "),
        _row("g", 8, 0.0, truncated=True),
        _row("g", 9, 0.0, finish_reason="length"),
        {**good[0]},  # the same trajectory twice
        leak,
    ]
    out, report = optimize([*good, *junk])
    assert report.dropped == {
        "judge_status": 1,
        "ungraded": 1,
        "empty_final_text": 1,
        "truncated": 2,
        "duplicate": 1,
        "quotes_privileged": 1,
    }
    assert len(out) == 4 and report.groups_kept == 1


def test_band_edges_are_inclusive_and_unanimous_asks_go() -> None:
    rows = [
        *_group("low-edge", 1, 5),  # 0.2: kept
        *_group("high-edge", 4, 5),  # 0.8: kept
        *_group("too-hard", 1, 10),  # 0.1
        *_group("too-easy", 9, 10),  # 0.9
        *_group("all-pass", 4, 4),
        *_group("all-fail", 0, 4),
    ]
    out, report = optimize(rows)
    assert sorted(_tasks(out)) == ["high-edge", "low-edge"]
    assert report.band_dropped == {"too_easy": 1, "too_hard": 1}
    assert report.groups_dropped["unanimous"] == 2
    assert report.dropped["out_of_band"] == 20 and report.dropped["unanimous"] == 8


def test_single_rollout_asks_say_that_rl_needs_repeats() -> None:
    rows = [_row(f"ask-{i}", 0, float(i % 2)) for i in range(6)]
    out, report = optimize(rows)
    assert out == []
    assert any("single rollout" in w and "--mode rl" in w for w in report.warnings)
    _, mixed = optimize(_group("mixed", 2, 4))
    assert not any("single rollout" in w for w in mixed.warnings)


def test_a_custom_band_moves_the_edges() -> None:
    rows = [*_group("a", 3, 10), *_group("b", 5, 10)]
    out, report = optimize(rows, OptimizeOptions(band=(0.4, 0.6)))
    assert _tasks(out) == ["b"] and report.band_dropped["too_hard"] == 1


def test_no_enforce_band_keeps_out_of_band_asks_ranked_after_in_band_ones() -> None:
    rows = [*_group("far", 1, 20), *_group("near", 9, 10), *_group("inside", 1, 2)]
    out, report = optimize(rows, OptimizeOptions(enforce_band=False))
    assert _tasks(out) == ["inside", "near", "far"]
    assert report.band_dropped == {"too_easy": 0, "too_hard": 0}
    assert out[0]["in_band"] is True and out[-1]["in_band"] is False
    assert out[-1]["band_side"] == "too_hard"


def test_kept_groups_come_round_robin_across_fault_kinds() -> None:
    def kind(task: str, condition: str) -> list[dict[str, Any]]:
        return _group(task, 1, 2, scenario_dimensions={"tool_condition": condition})

    rows = [
        *kind("t1", "timeout"),
        *kind("t2", "timeout"),
        *kind("t3", "timeout"),
        *kind("ok1", "success"),
        *kind("p1", "permission_denied"),
        *kind("p2", "permission_denied"),
    ]
    out, report = optimize(rows)
    assert _tasks(out) == ["t1", "ok1", "p1", "t2", "p2", "t3"]
    assert report.fault_kinds == {"timeout": 3, "none": 1, "permission_denied": 2}


def test_faults_that_fired_decide_the_kind_over_the_plan() -> None:
    fired = [{"tool": "get_order", "mode": "timeout", "step": 0}]
    rows = [
        *_group("a", 1, 2, faults_fired=fired, scenario_dimensions={"tool_condition": "success"}),
        *_group("b", 1, 2),
    ]
    _, report = optimize(rows)
    assert report.fault_kinds == {"timeout": 1, "none": 1}


def test_planned_and_fired_faults_share_one_name() -> None:
    fired = [{"tool": "get_order", "mode": "stale", "step": 0}]
    rows = [
        *_group("a", 1, 2, faults_fired=fired),
        *_group("b", 1, 2, scenario_dimensions={"tool_condition": "stale_result"}),
        *_group("c", 1, 2, scenario_dimensions={"tool_condition": "malformed_result"}),
    ]
    _, report = optimize(rows)
    assert report.fault_kinds == {"stale": 2, "malformed": 1}


def test_max_groups_keeps_whole_groups_balanced_across_kinds() -> None:
    rows = []
    for i in range(3):
        rows += _group(f"t{i}", 1, 2, scenario_dimensions={"tool_condition": "timeout"})
    rows += _group("s0", 1, 2)
    out, report = optimize(rows, OptimizeOptions(max_groups=2))
    assert _tasks(out) == ["t0", "s0"] and len(out) == 4
    assert report.groups_dropped["max_groups"] == 2 and report.dropped["max_groups"] == 4


def test_truncated_keep_marks_overlong_and_penalize_scores_zero() -> None:
    rows = [*_group("a", 2, 4), _row("a", 9, 1.0, truncated=True)]
    kept, _ = optimize(rows, OptimizeOptions(truncated="keep"))
    overlong = [r for r in kept if r.get("overlong")]
    assert len(overlong) == 1 and overlong[0]["reward"] == 1.0
    penalised, report = optimize(rows, OptimizeOptions(truncated="penalize"))
    cut = next(r for r in penalised if r["rollout_index"] == 9)
    assert cut["reward"] == 0.0 and cut["reward_before_penalty"] == 1.0
    assert report.truncated_seen == 1 and "truncated" not in report.dropped


def test_calibration_is_measured_before_any_trimming() -> None:
    rows = _group("a", 3, 6)
    rows.append(copy.deepcopy(rows[0]))  # a duplicate pass
    rows.append(_row("a", 7, 1.0, truncated=True))  # a truncated pass
    out, report = optimize(rows)
    assert report.dropped == {"duplicate": 1, "truncated": 1}
    stamp = out[0]["calibration"]
    lo, hi = wilson(5, 8)
    assert stamp == {
        "task_id": "a",
        "k": 8,
        "pass_rate": 0.625,
        "ci95": [round(lo, 4), round(hi, 4)],
        "policy": "seeded@1",
    }
    assert all(r["calibration"] == stamp for r in out)
    assert (out[0]["n0"], out[0]["n1"]) == (3, 3)


def test_a_carried_calibration_stamp_is_kept_not_remeasured() -> None:
    carried = {"task_id": "a", "k": 16, "pass_rate": 0.5, "ci95": [0.3, 0.7], "policy": "p"}
    out, report = optimize(_group("a", 1, 2, calibration=carried))
    assert all(r["calibration"] == carried for r in out)
    assert report.calibration_carried == 2


def test_input_rows_are_not_mutated_and_unknown_keys_survive() -> None:
    custom = {"custom": {"nested": [1, 2]}}
    rows = [*_group("a", 1, 3, **custom), _row("a", 5, 1.0, truncated=True, **custom)]
    before = copy.deepcopy(rows)
    out, _ = optimize(rows, OptimizeOptions(truncated="penalize"))
    assert rows == before
    assert all(r["custom"] == {"nested": [1, 2]} for r in out)
    assert all(set(orig) <= set(new) for orig, new in zip(rows, out, strict=True))


@pytest.mark.parametrize("truncated", ["keep", "penalize"])
def test_compact_selection_writes_exactly_the_rows_of_the_dict_path(truncated: str) -> None:
    rows = [
        *_group("a", 2, 4),
        _row("a", 8, 1.0, truncated=True),
        *_group("b", 1, 3, n0="a key selection also writes"),
        *_group("c", 1, 2, calibration=None),
    ]
    options = OptimizeOptions(truncated=truncated)  # type: ignore[arg-type]
    expected, _ = optimize(rows, options)
    selection = select(rows, options, compact=True)
    written = [orjson.loads(orjson.dumps(item)) for item in selection.encoded()]
    assert written == expected and len(selection) == 10
    assert [list(r) for r in written] == [list(r) for r in expected]  # key order too


def test_sft_top_per_prompt_keeps_the_best_completion_above_min_reward() -> None:
    rows = [
        _row("a", 0, 0.5),
        _row("a", 1, 1.0),
        _row("a", 2, 1.0),
        _row("b", 0, 0.75),
        _row("c", 0, 0.0),
    ]
    out, report = optimize(rows, OptimizeOptions(mode="sft"))
    assert [(r["scenario_id"], r["rollout_index"]) for r in out] == [("a", 1)]
    assert report.dropped == {"below_min_reward": 3, "not_selected": 1}
    partial, _ = optimize(rows, OptimizeOptions(mode="sft", min_reward=0.7, k=2))
    assert [(r["scenario_id"], r["rollout_index"]) for r in partial] == [
        ("a", 1),
        ("a", 2),
        ("b", 0),
    ]
    assert all("calibration" in r for r in partial)


def test_sft_top_k_overall_takes_the_best_k_across_prompts() -> None:
    rows = [_row("a", 0, 0.6), _row("b", 0, 0.9), _row("c", 0, 0.8), _row("d", 0, 0.1)]
    out, report = optimize(
        rows, OptimizeOptions(mode="sft", select="top_k_overall", k=2, min_reward=0.5)
    )
    assert [r["scenario_id"] for r in out] == ["b", "c"]
    assert report.groups_kept == 2


def test_sft_random_rules_are_seeded_chance_controls_that_ignore_reward() -> None:
    rows = [_row(t, i, 0.0) for t in "abc" for i in range(4)]
    per_prompt = OptimizeOptions(mode="sft", select="random_per_prompt", seed=3)
    first, _ = optimize(rows, per_prompt)
    again, _ = optimize(rows, per_prompt)
    assert first == again and len(first) == 3
    assert sorted(r["scenario_id"] for r in first) == ["a", "b", "c"]
    overall, report = optimize(rows, OptimizeOptions(mode="sft", select="random_k_overall", k=5))
    assert len(overall) == 5 and report.dropped["not_selected"] == 7


def test_rows_no_judge_scored_are_refused_not_silently_dropped() -> None:
    rows = [_row("a", 0, None), _row("a", 1, 1.0, judge_status="timeout")]
    with pytest.raises(WhileaiError, match=r"none of the 2 rows .*1 ungraded, 1 with a judge"):
        optimize(rows)
    out, report = optimize([])
    assert out == [] and report.rows_in == 0


def test_overall_rules_need_k_and_bad_bands_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="needs k"):
        optimize([], OptimizeOptions(mode="sft", select="top_k_overall"))
    with pytest.raises(ConfigError, match="band"):
        optimize([], OptimizeOptions(band=(0.8, 0.2)))


def test_reward_that_tracks_reply_length_is_flagged_not_pruned() -> None:
    rows = []
    for t in range(6):
        for i in range(4):
            win = i % 2 == 0
            rows.append(
                _row(
                    f"t{t}",
                    i,
                    1.0 if win else 0.0,
                    final_text=("long " * 40 if win else "no") + str(i),
                )
            )
    out, report = optimize(rows)
    assert len(out) == 24
    assert (
        report.correlations["reply_chars"] is not None and report.correlations["reply_chars"] > 0.9
    )
    signal = report.gate["hack_signal"]
    assert signal["features"]["reply_chars"]["above_floor"] and signal["tau"] < 0.9
    assert any("reward tracks reply_chars" in w for w in report.warnings_all())


def test_pass_at_k_that_does_not_survive_the_prune_is_reported() -> None:
    # The unanimous ask is pruned: k-way numbers over the rest would be biased.
    _, report = optimize([*_group("a", 2, 4), *_group("b", 4, 4)])
    assert report.pass_at_before["k"] == 4 and report.pass_at_before["pass_pow_k"] is not None
    assert any("cover 1 of 2 asks" in w for w in report.hygiene_warnings)
    # A dropped truncated rollout shrinks its group below k: that group leaves the k-way
    # numbers (the one minimum-k rule of metrics.passat), and the warning says so.
    shrunk = [*_group("a", 2, 4), _row("a", 7, 1.0, truncated=True), *_group("b", 2, 5)]
    _, report = optimize(shrunk)
    assert report.pass_at_before["k"] == 5 and report.pass_at_after["k_groups"] == 1
    assert any("cover 1 of 2 asks" in w for w in report.hygiene_warnings)
    # Every group shrinks below k: the numbers are gone.
    _, report = optimize([*_group("a", 2, 4), _row("a", 7, 1.0, truncated=True)])
    assert report.pass_at_after["pass_pow_k"] is None
    assert any("n/a on the selection" in w for w in report.hygiene_warnings)


def test_standalone_hygiene_helpers_read_plain_rows() -> None:
    rows = [*_group("a", 1, 4), *_group("b", 2, 4), _row("c", 0, None)]
    figures = pass_numbers(tally(rows).graded_counts())
    assert figures["tasks"] == 2 and figures["k"] == 4
    assert figures["pass_at_1"] == 0.375
    assert figures["pass_at_k"] == 1.0 and figures["pass_pow_k"] == 0.0
    assert pass_numbers(tally(rows).graded_counts(), k=5)["pass_pow_k"] is None
    longer_wins = [
        _row(f"d{i // 6}", i, 1.0 if i % 2 else 0.0, final_text="x" * (10 + 50 * (i % 2)) + str(i))
        for i in range(36)
    ]
    tracked = audit_rows("correlations", longer_wins).as_dict()["features"]["reply_chars"]
    assert tracked["r"] == pytest.approx(1.0, abs=0.01) and tracked["above_floor"]


def test_cli_keeps_every_key_of_the_sdk_fixture_rows(tmp_path: Path) -> None:
    source = [orjson.loads(line) for line in SDK_ROWS.read_bytes().splitlines() if line.strip()]
    graded = tmp_path / "graded.jsonl"
    with graded.open("wb") as fh:
        for n, row in enumerate(source):
            for i, reward in enumerate((1.0, 0.0, 1.0)):
                final = f"{row['final_text']} #{i}"
                graded_row = {**row, "final_text": final, "reward": reward, "source_line": n}
                fh.write(orjson.dumps(graded_row) + b"\n")
    report_path = tmp_path / "report.json"
    result = run_cli("optimize", str(graded), "--report", str(report_path))
    assert result.returncode == 0, result.stderr.decode()
    out = [orjson.loads(line) for line in result.stdout.splitlines()]
    report = orjson.loads(report_path.read_bytes())
    assert report["rows_out"] == len(out) > 0
    assert b"optimize --mode rl" in result.stderr
    for row in out:
        original = source[row["source_line"]]
        assert set(original) <= set(row)
        assert all(row[k] == v for k, v in original.items() if k != "final_text")
        assert row["calibration"]["k"] >= 3


def test_cli_bad_band_is_a_usage_error_naming_the_flag(tmp_path: Path) -> None:
    source = tmp_path / "rows.jsonl"
    source.write_bytes(orjson.dumps(_row("a", 0, 1.0)) + b"\n")
    for band, problem in (
        ("high,low", "expected LOW,HIGH such as 0.2,0.8"),
        ("0.9,0.1", "need 0 <= LOW <= HIGH <= 1"),
    ):
        result = run_cli("optimize", str(source), "--band", band)
        assert result.returncode == 2 and result.stdout == b""
        lines = result.stderr.decode().strip().splitlines()
        assert lines == [
            f"whileai optimize: usage error: Invalid value for '--band': {band!r}: {problem} "
            "(see 'whileai optimize --help')"
        ]
    no_k = run_cli("optimize", str(source), "--mode", "sft", "--select", "top_k_overall")
    assert no_k.returncode == 2 and b"needs --k" in no_k.stderr


def test_a_faults_fired_that_is_not_a_list_reads_as_no_fault() -> None:
    rows = _group("a", 2, 4, faults_fired=True)
    out, report = optimize(rows, OptimizeOptions(mode="rl"))
    assert len(out) == 4 and report.as_dict()["fault_kinds"] == {"none": 1}


def test_cli_exits_one_when_nothing_survives_so_a_cron_chain_stops(tmp_path: Path) -> None:
    source = tmp_path / "rows.jsonl"
    source.write_bytes(b"".join(orjson.dumps(_row(f"ask-{i}", 0, 1.0)) + b"\n" for i in range(3)))
    out = tmp_path / "train.jsonl"
    result = run_cli("optimize", str(source), "-o", str(out))
    assert result.returncode == 1
    assert b"single rollout" in result.stderr and b"no rows written" in result.stderr
    assert out.read_bytes() == b""
    kept = run_cli(
        "optimize", "-", input=b"".join(orjson.dumps(r) + b"\n" for r in _group("m", 2, 4))
    )
    assert kept.returncode == 0 and len(kept.stdout.splitlines()) == 4


def test_optimize_and_report_agree_on_the_minimum_k() -> None:
    """10 tasks x 3 rollouts: both say n/a below k=4 (optimize used to print a pass@3)."""
    rows = [r for t in range(10) for r in _group(f"t{t}", 1 + t % 2, 3)]
    _, report = optimize(rows)
    reported = pass_report(rows)
    assert report.pass_at_before["pass_pow_k"] is None and reported["pass_pow_k"] is None
    assert report.pass_at_before["k_note"] == reported["k_note"]
    assert "below k = 4" in reported["k_note"]


def test_a_record_holds_each_fact_of_its_row_in_its_own_field() -> None:
    """`Recorder.record` builds a record by position: each fact lands in its own field
    (the four flags differ here, so two swapped ones would show)."""
    from whileai_core.select.records import Recorder

    row = {
        "scenario_id": "sc-1",
        "prompt": "refund ORD-1",
        "final_text": "Refunded ORD-1.",
        "reward": 1.0,
        "judge_status": "ok",
        "truncated": True,
        "model_version": "m@2",
        "lineage": {"source": "eval"},
        "n0": 3,
        "scenario_dimensions": {"tool_condition": "timeout"},
    }
    rec = Recorder().record(row, (0, 5, 9), keep=False)
    assert (rec.obj, rec.span, rec.task) == (None, (0, 5, 9), "sc-1")
    assert (rec.reward, rec.junk) == (1.0, None)
    assert (rec.truncated, rec.carried, rec.eval_sourced, rec.clash) == (True, False, True, True)
    assert (rec.kinds, rec.policy) == (("timeout",), "m@2")
    assert rec.features == (15.0, 0.0, 1.0)
    assert rec.traj != b""
    carried = Recorder().record({**row, "calibration": {"k": 1}, "truncated": False, "n0": None})
    assert carried.obj is not None and (carried.truncated, carried.carried) == (False, True)
